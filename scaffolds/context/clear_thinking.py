"""Thinking-block clearing (see docs/concepts/context.md): strip reasoning from all but the newest K messages."""

from __future__ import annotations

from typing import Any

from scaffolds.budget import Budget
from scaffolds.context.config import ClearThinkingConfig
from scaffolds.context.view import Renderer


def decide(renderer: Renderer, budget: Budget,
           config: ClearThinkingConfig) -> dict[str, Any] | None:
    """The changes of one firing, or None (under the trigger, or nothing left to strip)."""
    if config.trigger != "always" and not budget.over(renderer.predicted, config.trigger):
        return None
    shown = list(renderer.reasoning_mids)
    strip = shown[:max(0, len(shown) - config.keep_last_turns)]
    if not strip:
        return None
    return {"strip": strip, "reasoning_placeholder": config.placeholder}
