"""Date and time functions with the warehouses' calendar rules, as SQL functions of ours (each
gives NULL for a NULL argument). Date parts are named as the warehouses write them (`DAYS`,
`mm`, `yyyy` ...); weeks start on Monday (Snowflake's WEEK, ISOWEEK) unless the part names
another day (`WEEK_SUNDAY`: BigQuery's WEEK); `DAYOFWEEK` counts Sunday as 0 (Snowflake),
`DAYOFWEEK_FROM_1` as 1 (BigQuery). A value that names its offset (a TIMESTAMP_TZ) keeps it:
parts and arithmetic are of its wall-clock time, as the warehouse computes them."""

from __future__ import annotations

import calendar
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

from mock_servers.core.errors import Code
from mock_servers.sqlfront import moments, raised

_DAYS = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")
_UNITS = {"YEAR": "year", "YEARS": "year", "Y": "year", "YY": "year", "YYYY": "year", "YR": "year",
          "QUARTER": "quarter", "QUARTERS": "quarter", "Q": "quarter", "QTR": "quarter",
          "MONTH": "month", "MONTHS": "month", "MM": "month", "MON": "month",
          "WEEK": "week", "WEEKS": "week", "W": "week", "WK": "week", "WEEKOFYEAR": "week",
          "ISOWEEK": "isoweek", "ISOYEAR": "isoyear",
          "DAY": "day", "DAYS": "day", "D": "day", "DD": "day",
          "HOUR": "hour", "HOURS": "hour", "H": "hour", "HH": "hour",
          "MINUTE": "minute", "MINUTES": "minute", "MI": "minute", "MIN": "minute",
          "SECOND": "second", "SECONDS": "second", "S": "second", "SEC": "second",
          "DAYOFWEEK": "dayofweek", "DOW": "dayofweek", "DAYOFWEEK_FROM_1": "dayofweek1",
          "DAYOFYEAR": "dayofyear", "DOY": "dayofyear", "EPOCH_SECOND": "epoch", "EPOCH": "epoch",
          **{f"WEEK_{day}": f"week{n}" for n, day in enumerate(_DAYS)}}
_SPANS = {"day": timedelta(days=1), "hour": timedelta(hours=1), "minute": timedelta(minutes=1),
          "second": timedelta(seconds=1)}
_MONTHS = {"year": 12, "quarter": 3, "month": 1}


def unit_name(text: str) -> str | None:
    """The canonical name of a date part, None when unknown: `week<n>` is a week starting on
    weekday n (0 Monday)."""
    return _UNITS.get(text.strip().strip("'\"").upper())


def _start(part: str) -> int | None:
    """The first weekday (0 Monday) of a week part, None for another part."""
    if part in ("week", "isoweek"):
        return 0
    return int(part[4:]) if part.startswith("week") and part[4:].isdigit() else None


def _moment(value: Any) -> tuple[datetime, bool] | None:
    """(the moment, whether the value was a bare date), None when the value is no date."""
    moment = moments.parse(value) if isinstance(value, str) else None
    return None if moment is None else (moment, len(value.strip()) <= 10)


def _text(moment: datetime, was_date: bool) -> str:
    return moment.date().isoformat() if was_date else moments.text(moment)


def _add_months(moment: datetime, months: int) -> datetime:
    total = moment.year * 12 + moment.month - 1 + months
    year, month = divmod(total, 12)
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


def date_add(unit: str, amount: Any, value: Any) -> str | None:
    found, part = _moment(value), unit_name(str(unit))
    if found is None or amount is None or part is None:
        return None
    moment, was_date = found
    steps = int(amount)
    if part in _MONTHS:
        return _text(_add_months(moment, steps * _MONTHS[part]), was_date)
    if _start(part) is not None:
        return _text(moment + steps * timedelta(weeks=1), was_date)
    if part not in _SPANS:
        raise raised.fail(f"date part {str(unit).upper()} cannot be added")
    return _text(moment + steps * _SPANS[part], was_date and part == "day")


def _truncated(moment: datetime, part: str) -> datetime:
    """The start of the `part` (year ... second) that holds `moment`, in its wall-clock time."""
    first = _start(part)
    if first is not None:
        day = moment.date() - timedelta(days=(moment.weekday() - first) % 7)
        return datetime(day.year, day.month, day.day)
    if part == "isoyear":
        day = date.fromisocalendar(moment.isocalendar()[0], 1, 1)
        return datetime(day.year, day.month, day.day)
    if part in _MONTHS:
        return datetime(moment.year, moment.month - (moment.month - 1) % _MONTHS[part] if part != "year" else 1, 1)
    if part == "day":
        return datetime(moment.year, moment.month, moment.day)
    if part == "hour":
        return moment.replace(minute=0, second=0, microsecond=0, tzinfo=None)
    if part == "minute":
        return moment.replace(second=0, microsecond=0, tzinfo=None)
    return moment.replace(microsecond=0, tzinfo=None)


def date_trunc(unit: str, value: Any) -> str | None:
    found, part = _moment(value), unit_name(str(unit))
    if found is None or part is None:
        return None
    if part in ("dayofweek", "dayofweek1", "dayofyear", "epoch"):
        raise raised.fail(f"date part {str(unit).upper()} cannot truncate a date")
    moment, was_date = found
    return _text(_truncated(moment, part).replace(tzinfo=moment.tzinfo), was_date)


def date_diff(unit: str, start: Any, end: Any) -> int | None:
    """How many `unit` boundaries lie between the two values (Snowflake's DATEDIFF, BigQuery's
    DATE_DIFF and DATETIME_DIFF)."""
    first, last, part = _moment(start), _moment(end), unit_name(str(unit))
    if first is None or last is None or part is None:
        return None
    if part in ("dayofweek", "dayofweek1", "dayofyear", "epoch"):
        raise raised.fail(f"date part {str(unit).upper()} cannot count a difference")
    a, b = first[0], last[0]
    if a.tzinfo is not None and b.tzinfo is not None and a.utcoffset() != b.utcoffset():
        a, b = moments.in_utc(a), moments.in_utc(b)  # two offsets: compared as instants
    a, b = a.replace(tzinfo=None), b.replace(tzinfo=None)
    if part == "year":
        return b.year - a.year
    if part == "quarter":
        return (b.year * 4 + (b.month - 1) // 3) - (a.year * 4 + (a.month - 1) // 3)
    if part == "month":
        return (b.year - a.year) * 12 + b.month - a.month
    if part == "isoyear":
        return b.isocalendar()[0] - a.isocalendar()[0]
    span = timedelta(weeks=1) if _start(part) is not None else _SPANS[part]
    return int((_truncated(b, part) - _truncated(a, part)) // span)


def elapsed(unit: str, start: Any, end: Any) -> int | None:
    """How many whole `unit`s passed from `start` to `end` (BigQuery's TIMESTAMP_DIFF), toward
    zero; units are days at most."""
    first, last, part = _moment(start), _moment(end), unit_name(str(unit))
    if first is None or last is None or part is None:
        return None
    if part not in _SPANS:
        raise raised.fail(f"Unsupported date part {str(unit).upper()} in TIMESTAMP_DIFF; use MICROSECOND to DAY")
    span = moments.in_utc(last[0]) - moments.in_utc(first[0])
    whole = abs(span) // _SPANS[part]
    return whole if span >= timedelta(0) else -whole


def date_part(unit: str, value: Any) -> int | None:
    found, part = _moment(value), unit_name(str(unit))
    if found is None or part is None:
        return None
    moment = found[0]
    first = _start(part)
    if part in ("week", "isoweek"):
        return moment.isocalendar()[1]
    if first is not None:  # weeks from the year's first such weekday; days before it: week 0
        january = date(moment.year, 1, 1)
        opening = january + timedelta(days=(first - january.weekday()) % 7)
        return 0 if moment.date() < opening else (moment.date() - opening).days // 7 + 1
    if part == "isoyear":
        return moment.isocalendar()[0]
    if part == "quarter":
        return (moment.month - 1) // 3 + 1
    if part in ("dayofweek", "dayofweek1"):
        return (moment.weekday() + 1) % 7 + (part == "dayofweek1")  # Sunday first
    if part == "dayofyear":
        return moment.timetuple().tm_yday
    if part == "epoch":
        return int((moments.in_utc(moment) - datetime(1970, 1, 1)).total_seconds())
    return int(getattr(moment, part))


def last_day(value: Any, unit: str = "month") -> str | None:
    found, part = _moment(value), unit_name(str(unit))
    if found is None or part is None:
        return None
    moment = found[0]
    if _start(part) is not None:
        return (_truncated(moment, part) + timedelta(days=6)).date().isoformat()
    if part not in _MONTHS:
        raise raised.fail(f"LAST_DAY takes YEAR, QUARTER, MONTH or WEEK, not {str(unit).upper()}")
    month = {"month": moment.month, "quarter": 3 * ((moment.month - 1) // 3) + 3, "year": 12}[part]
    return date(moment.year, month, calendar.monthrange(moment.year, month)[1]).isoformat()


def in_zone(value: Any, name: Any, local: Any) -> str | None:
    """`local` 1: the wall-clock time in zone `name` of an instant (a UTC text, or a text that
    names its zone); 0: the instant (a UTC text) of a wall-clock time in that zone."""
    moment = moments.parse(value) if isinstance(value, str) else None
    if moment is None or name is None:
        return None
    zone = moments.zone(str(name))
    if zone is None:
        raise raised.fail(f"Invalid time zone: {name}")
    if local:
        return moments.text(moment.replace(tzinfo=moment.tzinfo or UTC).astimezone(zone).replace(tzinfo=None))
    return moments.text(moments.in_utc(moment if moment.tzinfo else moment.replace(tzinfo=zone)))


_FORMAT_ELEMENTS = frozenset("aAbBcCdDeFgGhHIjmMnpRSTtuUVwWxXyYZz%")  # what strftime and the warehouses share


def _checked_format(pattern: str) -> str:
    """`pattern`, whose every `%` element is one both the warehouse and Python's strftime read
    alike (`%-d`: sqlglot's spelling of an unpadded number); another is UNIMPLEMENTED (it would
    be written out wrongly, not refused)."""
    elements = pattern.split("%")
    skip = False
    for piece in elements[1:]:
        if skip:
            skip = False
            continue
        if not piece:
            skip = True  # `%%`
            continue
        if piece.lstrip("-")[:1] not in _FORMAT_ELEMENTS:
            raise raised.fail(f"format element %{piece[:1]} is not supported", Code.UNIMPLEMENTED)
    return pattern


def format_moment(pattern: Any, value: Any) -> str | None:
    """A date or timestamp text formatted with strftime directives (`%Y-%m-%d`, `%H:%M`)."""
    found = _moment(value) if pattern is not None else None
    return found[0].strftime(_checked_format(str(pattern))) if found else None


def parse_moment(pattern: Any, text: Any, as_date: Any) -> str | None:
    """A text read with strptime directives, as a date or a timestamp text; a text that does not
    match is an error, as in the warehouse."""
    if pattern is None or text is None:
        return None
    reading = _checked_format(str(pattern)).replace("%-", "%").replace("%e", "%d")  # strptime reads either
    try:
        moment = datetime.strptime(str(text), reading)
    except ValueError:
        raise raised.fail(f"'{str(text)[:100]}' does not match the format '{str(pattern)[:100]}'") from None
    return _text(moments.in_utc(moment), bool(as_date))


FUNCTIONS: dict[str, tuple[int, Callable[..., Any]]] = {
    "SF_DATEADD": (3, date_add), "SF_DATEDIFF": (3, date_diff), "SF_DATE_TRUNC": (2, date_trunc),
    "SF_DATE_PART": (2, date_part), "SF_LAST_DAY": (2, last_day), "SF_TIMESTAMP_DIFF": (3, elapsed),
    "SF_IN_ZONE": (3, in_zone), "FORMAT_MOMENT": (2, format_moment), "PARSE_MOMENT": (3, parse_moment)}
