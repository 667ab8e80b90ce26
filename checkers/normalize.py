"""The normalisations checkers compare with (names as in the task spec)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from datetime import UTC, date, datetime, time
from decimal import Decimal, InvalidOperation

_WS = re.compile(r"\s+")


def S(value: object) -> str:
    """Text: NFC, trimmed, whitespace runs collapsed; case-sensitive."""
    text = "" if value is None else str(value)
    return _WS.sub(" ", unicodedata.normalize("NFC", text)).strip()


def Si(value: object) -> str:
    return S(value).casefold()


def E(value: object) -> str:
    return S(value).lower()


def N(value: object) -> Decimal | None:
    """A number from a numeric cell or a plain decimal string; None when missing or not a number."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    text = S(value)
    if not re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)", text):
        return None
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def I(value: object) -> int | None:  # noqa: E743 - the spec's name
    number = N(value)
    if number is None or number != number.to_integral_value():
        return None
    return int(number)


def as_date(value: object) -> date | None:
    """`MM/DD/YYYY` (zero padding optional) or a native date cell."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    match = re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4})", S(value))
    if not match:
        return None
    month, day, year = (int(g) for g in match.groups())
    try:
        return date(year, month, day)
    except ValueError:
        return None


def as_time(value: object) -> time | None:
    """`HH:MM` (or `H:MM`) in 24-hour form, or a native time cell."""
    if isinstance(value, datetime):
        return value.time().replace(second=0, microsecond=0)
    if isinstance(value, time):
        return value.replace(second=0, microsecond=0)
    match = re.fullmatch(r"(\d{1,2}):(\d{2})", S(value))
    if not match:
        return None
    hour, minute = int(match.group(1)), int(match.group(2))
    return time(hour, minute) if hour < 24 and minute < 60 else None


def is_tbd(value: object) -> bool:
    return Si(value) == "tbd"


def T(value: object) -> datetime | None:
    """An instant: ISO 8601 text with `Z` or an offset (or an aware datetime), in UTC; naive
    values are rejected (None)."""
    if isinstance(value, datetime):
        moment = value
    else:
        text = S(value)
        if not text:
            return None
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            return None
    if moment.tzinfo is None:
        return None
    return moment.astimezone(UTC)


def _same(norm: Callable[[object], object]) -> Callable[[object, object], bool]:
    def compare(got: object, want: object) -> bool:
        value = norm(got)
        return value is not None and value == norm(want)
    return compare


# normalisation name (as in loca.core.outputs.NORMS) -> equality of an agent value and an expected one
COMPARE: dict[str, Callable[[object, object], bool]] = {
    "S": lambda g, w: S(g) == S(w),
    "Si": lambda g, w: Si(g) == Si(w),
    "E": lambda g, w: E(g) == E(w),
    "N": _same(N),
    "I": _same(I),
    "T": _same(T),
    "date": _same(as_date),
    "time": _same(as_time),
}
