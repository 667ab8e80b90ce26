"""Cell values: what USER_ENTERED input becomes, how values are stored (SQLite values plus a
type) and how they are shown (API values, formatted text, grid-data objects)."""

from __future__ import annotations

import math
import re
from datetime import date
from functools import lru_cache
from typing import Any, NamedTuple

from mock_servers.core.formulas import FormulaError, Serial, date_serial, serial_date
from mock_servers.core.formulas.values import ERROR_CODES, Scalar, format_number

CellInput = str | int | float | bool | None
_NUMBER = re.compile(r"(?P<sign>[-+]?)(?P<cur>\$?)(?P<num>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)"
                     r"(?P<exp>[eE][-+]?\d+)?(?P<pct>%?)", re.ASCII)
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
# Texts the Sheets UI (en_US) reads as a date, time or date-time, which this server does not
# store: month/day[/year], year/month/day, an unpadded or timed ISO date, a clock time.
_CLOCK = r"\d{1,2}:[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:\s*[AaPp]\.?[Mm]\.?)?|\d{1,2}\s*[AaPp]\.?[Mm]\.?"
_OTHER_DATE = re.compile(
    r"(?:(?P<md>(?P<m>\d{1,2})/(?P<d>\d{1,2})(?:/(?P<y>\d{2}|\d{4}))?)"
    r"|(?P<ymd>(?P<y2>\d{4})[-/](?P<m2>\d{1,2})[-/](?P<d2>\d{1,2})))"
    rf"(?P<clock> (?:{_CLOCK}))?|(?P<time>{_CLOCK})", re.ASCII)
_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
                "october", "november", "december")
_MONTH = r"(?P<name>[A-Za-z]{3,9})\.?"
# ... and month names: "Jan 5", "January 5, 2025", "5 Jan 2025", "March 2025".
_NAMED_DATE = re.compile(
    rf"{_MONTH} (?P<d>\d{{1,2}})(?:,? (?P<y>\d{{4}}))?|(?P<d2>\d{{1,2}}) {_MONTH.replace('name', 'name2')}"
    r"(?:,? (?P<y2>\d{4}))?|" + _MONTH.replace("name", "name3") + r",? (?P<y3>\d{4})", re.ASCII | re.I)


def _month(name: str) -> int | None:
    """1..12 for a month's name or its first three letters (any case), else None."""
    low = name.lower()
    found = [n for n, full in enumerate(_MONTH_NAMES, 1) if low == full or low == full[:3]]
    return found[0] if found else None


def _named_date(text: str) -> bool:
    found = _NAMED_DATE.fullmatch(text)
    if found is None:
        return False
    name = found["name"] or found["name2"] or found["name3"]
    month = _month(name)
    day = found["d"] or found["d2"] or "1"
    year = found["y"] or found["y2"] or found["y3"] or "2000"
    try:
        return month is not None and bool(date(int(year), month, int(day)))
    except ValueError:
        return False


class Entry(NamedTuple):
    """A cell as stored: what was entered, its formula, its value (JSON) and value type."""

    input: str
    formula: str | None
    value: float | str | None
    value_type: str


def _literal(text: str) -> tuple[Any, str] | None:
    """The number, date or boolean a typed text means, else None (it stays text)."""
    stripped = text.strip()
    found = _NUMBER.fullmatch(stripped)
    if found:
        value = float((found.group("num") + (found.group("exp") or "")).replace(",", ""))
        if not math.isfinite(value):
            return None
        value = -value if found.group("sign") == "-" else value
        return (value / 100 if found.group("pct") else value), "number"
    found = _ISO_DATE.fullmatch(stripped)
    if found:
        try:
            return float(date_serial(date(*map(int, found.groups())))), "date"
        except ValueError:
            return None
    if stripped.upper() in ("TRUE", "FALSE"):
        return stripped.upper() == "TRUE", "bool"
    return None


def sheets_date_time(text: str) -> bool:
    """Whether the Sheets UI reads `text` as a date or time this server does not store (it takes
    dates as YYYY-MM-DD only, and no times): 3/15/2025, 3/15, 2025/3/15, 2025-3-5,
    2025-03-15 10:00, 10:30, 3:30 PM, Jan 5, March 15, 2025, 5 Jan 2025, March 2025.
    Impossible dates such as 31/12/2025 stay text there too."""
    stripped = text.strip()
    if _named_date(stripped):
        return True
    found = _OTHER_DATE.fullmatch(stripped)
    if found is None or (found["ymd"] and not found["clock"] and _ISO_DATE.fullmatch(found["ymd"])):
        return False
    if found["time"]:
        return True
    year, month, day = ((found["y"] or "2000", found["m"], found["d"]) if found["md"] else
                        (found["y2"], found["m2"], found["d2"]))
    try:
        date(int(year), int(month), int(day))
    except ValueError:
        return False
    return True


def entered(raw: CellInput) -> Entry | None:
    """USER_ENTERED semantics: numbers, dates (YYYY-MM-DD) and TRUE/FALSE typed as text become
    values, a leading `=` a formula (its value computed later), a leading `'` forces text.
    None for `""` (the cell is cleared)."""
    if isinstance(raw, bool):
        return Entry("TRUE" if raw else "FALSE", None, float(raw), "bool")
    if isinstance(raw, (int, float)):
        value = float(raw)
        return Entry(format_number(value), None, value, "number")
    text = raw or ""
    return (_typed_short if len(text) <= _CACHED_CHARS else _typed)(text)


def _typed(text: str) -> Entry | None:
    """`entered` for text."""
    if text == "":
        return None
    if text.startswith("=") and text.strip() != "=":
        return Entry(text, text, None, "empty")
    if text.startswith("'"):
        return Entry(text, None, text[1:], "string")
    literal = _literal(text)
    if literal is not None:
        return Entry(text, None, float(literal[0]), literal[1])
    return Entry(text, None, text, "string")


_CACHED_CHARS = 64  # short texts repeat (names, dates, statuses): their entries are cached
_typed_short = lru_cache(maxsize=8192)(_typed)


def stored(value: Scalar) -> tuple[float | str | None, str]:
    """A formula's result as stored: (value, value type)."""
    if value is None:
        return None, "empty"
    if isinstance(value, FormulaError):
        return value.code, "error"
    if isinstance(value, bool):
        return float(value), "bool"
    if isinstance(value, Serial):
        return float(value), "date"
    if isinstance(value, float):
        return value, "number"
    return value, "string"


def loaded(value: float | str | None, value_type: str) -> Scalar:
    """A stored value as the formula engine sees it."""
    if value is None:
        return None
    if value_type == "number":
        return float(value)
    if value_type == "date":
        return Serial(value)
    if value_type == "bool":
        return bool(value)
    if value_type == "error":
        return ERROR_CODES.get(str(value), FormulaError(str(value)))
    return str(value)


def _number(value: float) -> int | float:
    return int(value) if value == int(value) and abs(value) < 2**53 else value


def shown(value: float | str | None, value_type: str) -> Any:
    """A stored value as the API returns it: a JSON number, boolean or string; a date as
    YYYY-MM-DD, an error as its code, empty as ""."""
    if value is None:
        return ""
    if value_type == "number":
        return _number(float(value))
    if value_type == "date":
        return serial_date(float(value)).isoformat()
    if value_type == "bool":
        return bool(value)
    return value


# `shown` in SQL, for a `gs_cell` row. SHOWN_KIND_SQL is NULL for text, errors, numbers below
# 2**53 and whole-day dates, whose shown value SHOWN_SQL gives; for the rest (booleans, larger
# numbers, other dates) it is the value type, SHOWN_SQL the stored value, and `shown` finishes.
# 2415018.5 is the Julian day of serial 0.
_SQL_WHOLE = "value = CAST(value AS INTEGER)"
SHOWN_KIND_SQL = ("CASE WHEN value_type = 'bool' OR (value_type = 'number' AND NOT abs(value) < 9007199254740992.0) "
                  f"OR (value_type = 'date' AND NOT ({_SQL_WHOLE} AND value BETWEEN -693593 AND 2958465)) "
                  "THEN value_type END")
SHOWN_SQL = (f"CASE WHEN {SHOWN_KIND_SQL} IS NOT NULL THEN value "
             f"WHEN value_type = 'number' AND {_SQL_WHOLE} THEN CAST(value AS INTEGER) "
             "WHEN value_type = 'date' THEN date(2415018.5 + value) ELSE value END")


def formatted(value: float | str | None, value_type: str) -> str:
    """The value as the sheet displays it."""
    if value is None:
        return ""
    if value_type == "number":
        return format_number(float(value))
    if value_type == "bool":
        return "TRUE" if value else "FALSE"
    return str(shown(value, value_type))


_ERROR_TYPES = {"#DIV/0!": "DIVIDE_BY_ZERO", "#N/A": "N_A", "#REF!": "REF", "#VALUE!": "VALUE",
                "#NAME?": "NAME", "#NUM!": "NUM", "#NULL!": "NULL_VALUE", "#ERROR!": "ERROR"}


def user_entered_value(entry_input: str, formula: str | None, value: float | str | None,
                       value_type: str) -> dict[str, Any]:
    """The grid-data `userEnteredValue` object."""
    if formula is not None:
        return {"formulaValue": formula}
    if value_type in ("number", "date"):
        return {"numberValue": _number(float(value or 0))}
    if value_type == "bool":
        return {"boolValue": bool(value)}
    return {"stringValue": entry_input if value is None else value}


def effective_value(value: float | str | None, value_type: str) -> dict[str, Any] | None:
    """The grid-data `effectiveValue` object (None for an empty result)."""
    if value is None:
        return None
    if value_type in ("number", "date"):
        return {"numberValue": _number(float(value))}
    if value_type == "bool":
        return {"boolValue": bool(value)}
    if value_type == "error":
        return {"errorValue": {"type": _ERROR_TYPES.get(str(value), "ERROR"), "message": value}}
    return {"stringValue": value}
