"""Hard truncation (spec §3.4.1), applied last whenever P > B.

Oldest turn groups go first (an assistant message with its results and notes), never the pinned
messages or the newest `min_recent_turns` groups. If that is not enough, the largest kept tool
result loses its middle (`oversize_result: truncate_content`).
"""

from __future__ import annotations

from typing import Any

from loca.core.tokens import count_tokens
from scaffolds.context.config import TruncateConfig
from scaffolds.context.view import Renderer, ViewEntry
from scaffolds.prompts import get_prompt

MARKER = "truncation/marker@1"
_SHRINK_TRIES = 8


class Overflow(Exception):
    """The next request cannot fit the input budget."""


def plan(renderer: Renderer, limit: int, config: TruncateConfig) -> dict[str, Any] | None:
    """Changes that bring P to at most `limit`, None when it already fits; raises `Overflow`."""
    predicted = renderer.predicted
    if predicted <= limit:
        return None
    if not config.enabled:
        raise Overflow(f"the request needs {predicted} tokens, over the input budget {limit}, "
                       f"and hard truncation is disabled")
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
        kept = [e for g in groups for e in g if e.mid not in hidden and e.message.role == "tool"]
        shorten = _shorten(max(kept, key=lambda e: e.tokens), predicted - limit) if kept else None
        if shorten is not None:
            changes["shorten"] = [shorten[0]]
            predicted -= shorten[1]
    if predicted > limit:
        raise Overflow(f"the request needs {predicted} tokens after hard truncation, over the "
                       f"input budget {limit}")
    return changes


def _shorten(entry: ViewEntry, excess: int) -> tuple[list[Any], int] | None:
    """`[mid, head, tail, marker]` cutting at least `excess` tokens from the result, and the
    tokens it frees; None when even an empty middle cannot free that much."""
    content = entry.message.content or ""
    target = entry.tokens - excess
    keep = int(len(content) * max(0, target) / max(1, entry.tokens))
    for _ in range(_SHRINK_TRIES):
        head = keep // 2
        tail = keep - head
        marker = get_prompt(MARKER).render(omitted=len(content) - keep)
        tokens = count_tokens(content[:head] + marker + content[len(content) - tail:])
        if tokens <= target:
            return [entry.mid, head, tail, marker], entry.tokens - tokens
        if keep == 0:
            return None
        keep = int(keep * 0.8)
    return None
