"""Tool outputs: compact JSON and the per-world output cap."""

from __future__ import annotations

import json
from typing import Any


def dump_json(obj: Any) -> str:
    """Compact, UTF-8, key order as built, no NaN."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _truncate_strings(obj: Any, limit: int) -> Any:
    if isinstance(obj, str) and len(obj) > limit:
        return obj[:limit] + f"…[truncated {len(obj) - limit} chars]"
    if isinstance(obj, dict):
        return {k: _truncate_strings(v, limit) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_truncate_strings(v, limit) for v in obj]
    return obj


def cap_json(obj: Any, max_chars: int, list_keys: tuple[str, ...] = ("items",)) -> str:
    """Serialise `obj` within `max_chars`: cut the list under the first of `list_keys` it has at an
    item boundary (with a notice and `has_more`), else shorten the longest strings. Never cuts
    mid-structure."""
    text = dump_json(obj)
    if len(text) <= max_chars:
        return text
    if isinstance(obj, dict):
        key = next((k for k in list_keys if isinstance(obj.get(k), list)), None)
        if key is not None:
            items = obj[key]
            lo, hi = 0, len(items)
            while lo < hi:  # largest prefix that fits, leaving room for the notice
                mid = (lo + hi + 1) // 2
                trial = {**obj, key: items[:mid], "notice": "x" * 90}
                if len(dump_json(trial)) <= max_chars:
                    lo = mid
                else:
                    hi = mid - 1
            if lo > 0:
                cut = {**obj, key: items[:lo]}
                if "has_more" in cut:
                    cut["has_more"] = True
                cut["notice"] = f"output cap reached after {lo} items; request the next page"
                return dump_json(cut)
    limit = max_chars // 2
    while limit > 16:
        text = dump_json(_truncate_strings(obj, limit))
        if len(text) <= max_chars:
            return text
        limit //= 2
    raise ValueError("output cannot be reduced under the cap")


def cap_text(text: str, max_chars: int, how_to_narrow: str) -> str:
    """Cut plain text at a line boundary and say how to get the rest."""
    if len(text) <= max_chars:
        return text
    budget = max(0, max_chars - 200)
    cut = text.rfind("\n", 0, budget)
    head = text[: cut if cut > 0 else budget]
    return f"{head}\n[output truncated: showing {len(head)} of {len(text)} characters; {how_to_narrow}]"
