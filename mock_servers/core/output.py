"""Tool outputs: compact JSON and the per-world output cap."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson

from mock_servers.core import paging


def orjson_text(obj: Any) -> str | None:
    """`obj` as `dump_json` writes it with orjson; None for what orjson refuses."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return None


def dump_json(obj: Any) -> str:
    """Compact, UTF-8, key order as built; non-string keys as strings. Written by orjson; what
    it refuses (an integer beyond 64 bits, a lone surrogate, a float subclass) by the json
    module, which writes the same text except that floats under 1e-4 keep Python's exponent
    form there (`1e-05`, where orjson writes `0.00001`). JSON has no NaN: a non-finite float
    is null (tool arguments refuse them, and SQLite stores them as NULL)."""
    text = orjson_text(obj)
    if text is None:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text


def _truncate_strings(obj: Any, limit: int) -> Any:
    if isinstance(obj, str) and len(obj) > limit:
        return obj[:limit] + f"…[truncated {len(obj) - limit} chars]"
    if isinstance(obj, dict):
        return {k: _truncate_strings(v, limit) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_truncate_strings(v, limit) for v in obj]
    return obj


def most_that_fit(low: int, high: int, fits: Callable[[int], bool]) -> int:
    """The largest n in low..high with `fits(n)` (a test that holds up to some n and fails
    after it), found by bisection; `low` when none above it fits (`low` itself is not tested)."""
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def items_that_fit(count: int, render: Callable[[int], Any], limit: int) -> int:
    """The largest k in 0..count whose `render(k)` serialises to at most `limit` characters."""
    return most_that_fit(0, count, lambda k: len(dump_json(render(k))) <= limit)


def _cut(obj: dict[str, Any], fit: int, page_keys: tuple[str, str] | None) -> tuple[int, str]:
    """How many of the `fit` items that fit to show, and the notice. With the envelope's
    page-number and page-size keys, the notice names the page that continues right after the
    last item shown."""
    if page_keys:
        page_key, size_key = page_keys
        page, size = obj.get(page_key), obj.get(size_key)
        if isinstance(page, int) and isinstance(size, int):
            shown, next_page, next_size = paging.cut(page, size, fit)
            return shown, (f"output cap reached after {shown} items; request the next page "
                           f"with {page_key}={next_page} and {size_key}={next_size}")
    return fit, f"output cap reached after {fit} items; request the next page"


def cap_json(obj: Any, max_chars: int, list_keys: tuple[str, ...] = ("items",),
             page_keys: tuple[str, str] | None = None) -> str:
    """Serialise `obj` within `max_chars`: cut the list under the first of `list_keys` it has at an
    item boundary (with a notice and `has_more`; with `page_keys`, the notice names the page that
    continues the cut one), else shorten the longest strings. Never cuts mid-structure."""
    text = dump_json(obj)
    if len(text) <= max_chars:
        return text
    if isinstance(obj, dict):
        key = next((k for k in list_keys if isinstance(obj.get(k), list)), None)
        if key is not None:
            items = obj[key]

            def fits(n: int) -> bool:  # with room for the notice, at least 90 characters
                room = "x" * max(90, len(_cut(obj, n, page_keys)[1]))
                return len(dump_json({**obj, key: items[:n], "notice": room})) <= max_chars

            fit = most_that_fit(0, len(items), fits)
            if fit > 0:
                shown, notice = _cut(obj, fit, page_keys)
                cut = {**obj, key: items[:shown]}
                if "has_more" in cut:
                    cut["has_more"] = True
                cut["notice"] = notice
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
