"""Tool-result clearing (see docs/concepts/context.md): when P passes the trigger, clear the oldest results."""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

from scaffolds.budget import Budget
from scaffolds.context.config import ClearToolResultsConfig, placeholder_text
from scaffolds.context.view import Renderer, ViewEntry, constant_tokens


def units(renderer: Renderer, unit: str, protected_tools: Collection[str]) -> list[list[ViewEntry]]:
    """Results that may still be cleared, oldest first: one unit per turn (`turn`) or per call."""
    out: list[list[ViewEntry]] = []
    for entry in renderer.entries.values():
        message = entry.message
        if message.role != "tool" or "result_cleared" in entry.variants \
                or message.name in protected_tools:
            continue
        if unit == "turn" and out and out[-1][0].turn == entry.turn:
            out[-1].append(entry)
        else:
            out.append([entry])
    return out


def decide(renderer: Renderer, budget: Budget, config: ClearToolResultsConfig,
           protected_tools: Collection[str]) -> dict[str, Any] | None:
    """The changes of one firing, or None (under the trigger, nothing eligible, too little freed)."""
    if not budget.over(renderer.predicted, config.trigger):
        return None
    candidates = units(renderer, config.unit, protected_tools)
    eligible = candidates[:max(0, len(candidates) - config.protect_recent)]
    if config.keep_last is not None:
        count = max(0, len(eligible) - config.keep_last)
    else:
        count = math.floor((config.clear_fraction or 0.0) * len(eligible))
    chosen = [entry for group in eligible[:count] for entry in group]
    placeholder = placeholder_text(config.placeholder)
    if config.style == "placeholder":  # a result no larger than the placeholder stays as it is
        chosen = [e for e in chosen if e.tokens > constant_tokens(placeholder)]
        freed = sum(e.tokens - constant_tokens(placeholder) for e in chosen)
    else:
        freed = sum(e.tokens for e in chosen)
    if not chosen or freed < config.clear_at_least:
        return None
    return {"clear": [e.mid for e in chosen], "style": config.style, "placeholder": placeholder,
            "arguments": config.clear_arguments}
