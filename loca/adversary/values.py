"""Wrong values and allowed renderings of right ones, for the generic agents."""

from __future__ import annotations

import string
from datetime import date, datetime, timedelta
from typing import Any

from loca.adversary.base import NotApplicable

_NEXT = {c: n for seq in (string.digits, string.ascii_lowercase, string.ascii_uppercase)
         for c, n in zip(seq, seq[1:] + seq[0], strict=True)}


def altered(value: Any) -> Any:
    """A wrong version of `value` that no normalisation a checker allows brings back: a number
    plus one, a flag flipped, a date a day later, bytes with one more, a text with its first
    letter or digit replaced by the next one (case kept, so a case-blind comparison sees it)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, datetime | date):
        return value + timedelta(days=1)
    if isinstance(value, bytes):
        return value + b"x"
    if isinstance(value, str):
        at = next((i for i, c in enumerate(value) if c in _NEXT), None)
        return value + "x" if at is None else value[:at] + _NEXT[value[at]] + value[at + 1:]
    raise NotApplicable(f"no way to alter a {type(value).__name__}")


def alterable(value: Any) -> bool:
    """Whether `value` is one `altered` changes (empty text and missing values are not)."""
    if isinstance(value, str | bytes):
        return bool(value.strip())
    return isinstance(value, bool | int | float | datetime | date)
