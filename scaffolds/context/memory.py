"""The memory strategy's part in the context (see docs/concepts/context.md): the protocol appended to the task
message, the memory tools kept out of tool-result clearing, and the near-limit warning.

The warning is injected once when `warn_fraction × T ≤ P < T`, T being the lowest trigger of
tool-result clearing or compaction; it re-arms when either fires or when the warning has left
the view (hard truncation dropped it).
"""

from __future__ import annotations

from scaffolds.budget import Budget
from scaffolds.context.config import MemoryConfig, Strategies
from scaffolds.context.view import Renderer
from scaffolds.harness.memory_tools import COMMANDS, tool_name
from scaffolds.prompts import get_prompt

RESETS = ("clear_tool_results", "compaction")
"""The strategies whose firing re-arms the warning (and whose trigger it warns about)."""


def tool_names(config: MemoryConfig) -> list[str]:
    return [tool_name(c, config.naming) for c in COMMANDS]


def protected_tools(config: MemoryConfig | None) -> list[str]:
    """Memory tools whose results tool-result clearing leaves alone."""
    if config is None or config.clear_results:
        return []
    return tool_names(config)


def protocol(config: MemoryConfig) -> str:
    return get_prompt(config.protocol).render(tools=", ".join(tool_names(config)))


class NearLimitWarning:
    """The state of the near-limit warning of one episode."""

    def __init__(self, strategies: Strategies, budget: Budget) -> None:
        assert strategies.memory is not None
        triggers = [s.trigger for s in (strategies.clear_tool_results, strategies.compaction)
                    if s is not None]
        self.trigger = min(budget.tokens(t) for t in triggers)
        self.low = strategies.memory.warn_fraction * self.trigger
        self.prompt = strategies.memory.warning_prompt
        self.mid: int | None = None
        """The warning in force (None: armed)."""

    def fired(self, strategy: str) -> None:
        if strategy in RESETS:
            self.mid = None

    def due(self, renderer: Renderer, used: int) -> str | None:
        """The warning text when it must be shown now, else None."""
        if self.mid is not None and self.mid not in renderer.entries:
            self.mid = None  # truncation or compaction took it out of the view
        if self.mid is not None or not self.low <= used < self.trigger:
            return None
        return get_prompt(self.prompt).render(used=used, trigger=self.trigger)

    def shown(self, mid: int) -> None:
        self.mid = mid
