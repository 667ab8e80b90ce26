"""Formula values and the coercions spreadsheets apply between them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

EPOCH = date(1899, 12, 30)  # day 0 of spreadsheet date serials


class FormulaError(Exception):
    """An error value (`#DIV/0!`, `#N/A`, ...): returned as a value, raised to unwind."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FormulaError) and other.code == self.code

    def __hash__(self) -> int:
        return hash(self.code)

    def __repr__(self) -> str:
        return self.code


DIV0, NA, REF, VALUE, NAME, NUM, ERROR = (FormulaError(c) for c in (
    "#DIV/0!", "#N/A", "#REF!", "#VALUE!", "#NAME?", "#NUM!", "#ERROR!"))
ERROR_CODES = {e.code: e for e in (DIV0, NA, REF, VALUE, NAME, NUM, ERROR, FormulaError("#NULL!"))}


class Serial(float):
    """A number that is a date (days since 1899-12-30), shown as a date."""


Scalar = None | float | str | bool | FormulaError


@dataclass(frozen=True)
class Block:
    """The values of a rectangle, row by row."""

    rows: list[list[Scalar]]

    @property
    def height(self) -> int:
        return len(self.rows)

    @property
    def width(self) -> int:
        return len(self.rows[0]) if self.rows else 0

    def flat(self) -> list[Scalar]:
        return [v for row in self.rows for v in row]


Value = Scalar | Block


def date_serial(day: date) -> Serial:
    return Serial((day - EPOCH).days)


def serial_date(serial: float) -> date:
    if not -693593 <= serial < 2958466:
        raise NUM
    return EPOCH + timedelta(days=int(serial // 1))


_NUMBER = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*", re.ASCII)
_ISO_DATE = re.compile(r"\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*", re.ASCII)


def text_number(text: str) -> float | None:
    """The number a text spells (`"12"`, `" 3.5 "`, an ISO date), else None."""
    if _NUMBER.fullmatch(text):
        return float(text)
    found = _ISO_DATE.fullmatch(text)
    if found:
        try:
            return date_serial(date(*map(int, found.groups())))
        except ValueError:
            return None
    return None


def scalar(value: Value) -> Scalar:
    """A single value: a one-cell block is its cell; a larger one is #VALUE!."""
    if isinstance(value, Block):
        if value.height == 1 and value.width == 1:
            return value.rows[0][0]
        raise VALUE
    return value


def number(value: Value) -> float:
    """As a number (empty 0, TRUE 1, numeric text parsed); errors propagate."""
    value = scalar(value)
    if isinstance(value, FormulaError):
        raise value
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        parsed = text_number(value)
        if parsed is None:
            raise VALUE
        return parsed
    return value


def text(value: Value) -> str:
    """As text: numbers without a needless `.0`, booleans TRUE/FALSE."""
    value = scalar(value)
    if isinstance(value, FormulaError):
        raise value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return format_number(value)
    return value


def format_number(value: float) -> str:
    if isinstance(value, Serial):
        return serial_date(value).isoformat()
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(round(value, 10)).rstrip("0").rstrip(".") if abs(value) >= 1e-6 else repr(value)


def boolean(value: Value) -> bool:
    value = scalar(value)
    if isinstance(value, FormulaError):
        raise value
    if value is None:
        return False
    if isinstance(value, str):
        if value.upper() in ("TRUE", "FALSE"):
            return value.upper() == "TRUE"
        raise VALUE
    return bool(value)


def _rank(value: Scalar) -> int:
    return 0 if isinstance(value, (int, float)) and not isinstance(value, bool) else (
        1 if isinstance(value, str) else 2)


def compare(left: Scalar, right: Scalar) -> int:
    """-1, 0 or 1 as spreadsheets order values: numbers < text < booleans, text without case;
    an empty cell is 0 against a number, "" against text, FALSE against a boolean."""
    if left is None:
        left = "" if isinstance(right, str) else (False if isinstance(right, bool) else 0.0)
    if right is None:
        right = "" if isinstance(left, str) else (False if isinstance(left, bool) else 0.0)
    a, b = _rank(left), _rank(right)
    if a != b:
        return -1 if a < b else 1
    if isinstance(left, str) and isinstance(right, str):
        x: Any = left.casefold()
        y: Any = right.casefold()
    else:
        x, y = left, right
    return int(x > y) - int(x < y)
