"""Context management (see docs/concepts/context.md): a pure render of the ledger, budget terms, strategies."""

from scaffolds.context.compose import ContextPipeline, Prepared
from scaffolds.context.config import ContextConfig
from scaffolds.context.presets import StrategyChoice, choose, load_file
from scaffolds.context.truncate import Overflow
from scaffolds.context.view import Renderer, View, render

__all__ = ["ContextConfig", "ContextPipeline", "Overflow", "Prepared", "Renderer",
           "StrategyChoice", "View", "choose", "load_file", "render"]
