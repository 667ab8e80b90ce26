"""Hard truncation (see docs/concepts/context.md), applied last whenever P > B.

Oldest turn groups go first (an assistant message with its results and notes), never the pinned
messages or the newest `min_recent_turns` groups. If that is not enough, the largest kept tool
results lose their middle, largest first, as many as it takes (`oversize_result:
truncate_content`; a turn may hold hundreds of parallel results, none large enough alone).
"""

from __future__ import annotations

from typing import Any

from loca.core.tokens import count_tokens
from scaffolds.budget import Budget
from scaffolds.context.config import TruncateConfig
from scaffolds.context.view import Renderer
from scaffolds.messages import Message
from scaffolds.prompts import get_prompt

MARKER = "truncation/marker@1"
MIN_KEPT_TOKENS = 64
"""A result is never cut below this (the marker and a little of each end)."""
_SHRINK_TRIES = 8


class Overflow(Exception):
    """The next request cannot fit the input budget."""


def plan(renderer: Renderer, budget: Budget, config: TruncateConfig) -> dict[str, Any] | None:
    """Changes that bring P within the input budget, None when it already fits; raises
    `Overflow`."""
    predicted, limit = renderer.predicted, budget.input_budget
    if predicted <= limit:
        return None
    if not config.enabled:
        raise Overflow(f"the request needs {predicted:,} tokens, over the input budget "
                       f"{budget.describe()}, and hard truncation is disabled")
    groups = renderer.groups()
    droppable = groups[:len(groups) - config.min_recent_turns] if config.min_recent_turns \
        else groups
    hide: list[int] = []
    for group in droppable:
        if predicted <= limit:
            break
        hide.extend(e.mid for e in group)
        predicted -= sum(e.tokens for e in group)
    changes: dict[str, Any] = {"hide": hide}
    if predicted > limit and config.oversize_result == "truncate_content":
        hidden = set(hide)
        results = sorted((e for g in groups for e in g
                          if e.mid not in hidden and e.message.role == "tool"),
                         key=lambda e: (-e.tokens, e.mid))
        shorten = []
        for entry in results:
            if predicted <= limit or entry.tokens <= MIN_KEPT_TOKENS:
                break
            cut = _shorten(renderer.original(entry.mid), entry.tokens,
                           max(MIN_KEPT_TOKENS, entry.tokens - (predicted - limit)))
            if cut is not None:
                shorten.append(cut[0])
                predicted -= entry.tokens - cut[1]
        if shorten:
            changes["shorten"] = shorten
    if predicted > limit:
        raise Overflow(_overflow(renderer, budget, predicted, config))
    return changes


def _overflow(renderer: Renderer, budget: Budget, predicted: int, config: TruncateConfig) -> str:
    """Why a request does not fit: the budget's terms and what truncation may not remove."""
    pinned = sum(e.tokens for e in renderer.entries.values() if e.mid in renderer.pinned)
    rest = predicted - renderer.tools_tokens - pinned
    return (f"the request needs {predicted:,} tokens after hard truncation, over the input budget "
            f"{budget.describe()}. Of it, the tool schemas take {renderer.tools_tokens:,}, the "
            f"pinned messages (system prompt, task, summary) {pinned:,} and the newest turns, "
            f"which truncation keeps (min_recent_turns={config.min_recent_turns}; results cut "
            f"to {MIN_KEPT_TOKENS} tokens each at the least), {rest:,}")


def _shorten(source: Message, tokens: int, target: int) -> tuple[list[Any], int] | None:
    """`[mid, head, tail, marker]` keeping the start and end of a result (`tokens` as shown
    now) within `target` tokens, and its new size; None when the marker alone is too large."""
    content = source.content or ""
    keep = int(len(content) * target / max(1, tokens))
    for _ in range(_SHRINK_TRIES):
        head = keep // 2
        tail = keep - head
        marker = get_prompt(MARKER).render(omitted=len(content) - keep)
        size = count_tokens(content[:head] + marker + content[len(content) - tail:])
        if size <= target:
            return [source.mid, head, tail, marker], size
        if keep == 0:
            return None
        keep = int(keep * 0.8)
    return None
