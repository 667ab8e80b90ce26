"""The SQL functions SQLite lacks, as Python functions registered on a call's connection: date
arithmetic with the warehouses' calendar rules, string helpers, REGEXP with a time bound, and
the statistical aggregates. Each returns None for a NULL argument, like SQL."""

from __future__ import annotations

import calendar
import math
import sqlite3
import statistics
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import regex

from mock_servers.sqlfront import guards, moments, raised

MAX_TEXT = 16_777_216  # the longest string a function may build (Snowflake's VARCHAR limit)
REGEX_SECONDS = 0.5  # one regular-expression match may take this long, then the query fails
_UNITS = {"YEAR": "year", "YEARS": "year", "Y": "year", "YY": "year", "YYYY": "year", "YR": "year",
          "QUARTER": "quarter", "QUARTERS": "quarter", "Q": "quarter", "QTR": "quarter",
          "MONTH": "month", "MONTHS": "month", "MM": "month", "MON": "month",
          "WEEK": "week", "WEEKS": "week", "W": "week", "WK": "week",
          "DAY": "day", "DAYS": "day", "D": "day", "DD": "day",
          "HOUR": "hour", "HOURS": "hour", "H": "hour", "HH": "hour",
          "MINUTE": "minute", "MINUTES": "minute", "MI": "minute", "MIN": "minute",
          "SECOND": "second", "SECONDS": "second", "S": "second", "SEC": "second",
          "DAYOFWEEK": "dayofweek", "DOW": "dayofweek", "DAYOFYEAR": "dayofyear", "DOY": "dayofyear",
          "EPOCH_SECOND": "epoch", "EPOCH": "epoch"}


def unit_name(text: str) -> str | None:
    """The canonical name of a date part (`DAYS`, `mm`, `yyyy` ...), None when unknown."""
    return _UNITS.get(text.strip().strip("'\"").upper())


def _moment(value: Any) -> tuple[datetime, bool] | None:
    """(the moment, whether the value was a bare date), None when the value is no date. A
    moment that names its offset (a TIMESTAMP_TZ) keeps it: parts and arithmetic are of its
    wall-clock time, as the warehouse computes them."""
    moment = moments.parse(value) if isinstance(value, str) else None
    return None if moment is None else (moment, len(value.strip()) <= 10)


def _text(moment: datetime, was_date: bool) -> str:
    return moment.date().isoformat() if was_date else moments.text(moment)


def _add_months(moment: datetime, months: int) -> datetime:
    total = moment.year * 12 + moment.month - 1 + months
    year, month = divmod(total, 12)
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


_SPANS = {"week": timedelta(weeks=1), "day": timedelta(days=1), "hour": timedelta(hours=1),
          "minute": timedelta(minutes=1), "second": timedelta(seconds=1)}


def date_add(unit: str, amount: Any, value: Any) -> str | None:
    found, part = _moment(value), unit_name(str(unit))
    if found is None or amount is None or part is None:
        return None
    moment, was_date = found
    steps = int(amount)
    if part in ("year", "quarter", "month"):
        moment = _add_months(moment, steps * {"year": 12, "quarter": 3, "month": 1}[part])
    else:
        moment = moment + steps * _SPANS[part]
        was_date = was_date and part in ("week", "day")
    return _text(moment, was_date)


def _truncated(moment: datetime, part: str) -> datetime:
    if part == "year":
        return datetime(moment.year, 1, 1)
    if part == "quarter":
        return datetime(moment.year, 3 * ((moment.month - 1) // 3) + 1, 1)
    if part == "month":
        return datetime(moment.year, moment.month, 1)
    if part == "week":
        start = moment.date() - timedelta(days=moment.weekday())
        return datetime(start.year, start.month, start.day)
    if part == "day":
        return datetime(moment.year, moment.month, moment.day)
    if part == "hour":
        return moment.replace(minute=0, second=0, microsecond=0)
    if part == "minute":
        return moment.replace(second=0, microsecond=0)
    return moment.replace(microsecond=0)


def date_trunc(unit: str, value: Any) -> str | None:
    found, part = _moment(value), unit_name(str(unit))
    if found is None or part not in ("year", "quarter", "month", "week", "day", "hour", "minute", "second"):
        return None
    moment, was_date = found
    return _text(_truncated(moment, part).replace(tzinfo=moment.tzinfo), was_date)


def date_diff(unit: str, start: Any, end: Any) -> int | None:
    """How many `unit` boundaries lie between the two values (Snowflake's DATEDIFF)."""
    first, last, part = _moment(start), _moment(end), unit_name(str(unit))
    if first is None or last is None or part is None or part in ("dayofweek", "dayofyear", "epoch"):
        return None
    a, b = first[0], last[0]
    if a.tzinfo is not None and b.tzinfo is not None and a.utcoffset() != b.utcoffset():
        a, b = moments.in_utc(a), moments.in_utc(b)  # two offsets: compared as instants
    a, b = a.replace(tzinfo=None), b.replace(tzinfo=None)
    if part in ("year", "quarter", "month"):
        months = (b.year - a.year) * 12 + b.month - a.month
        return {"year": b.year - a.year, "quarter": (b.year * 4 + (b.month - 1) // 3)
                - (a.year * 4 + (a.month - 1) // 3), "month": months}[part]
    span = _SPANS[part]
    return int((_truncated(b, part) - _truncated(a, part)) // span)


def elapsed(unit: str, start: Any, end: Any) -> int | None:
    """How many whole `unit`s passed from `start` to `end` (BigQuery's TIMESTAMP_DIFF), toward
    zero; units are days at most."""
    first, last, part = _moment(start), _moment(end), unit_name(str(unit))
    if first is None or last is None or part is None:
        return None
    if part not in _SPANS or part == "week":
        raise raised.fail(f"Unsupported date part {str(unit).upper()} in TIMESTAMP_DIFF; use MICROSECOND to DAY")
    span = moments.in_utc(last[0]) - moments.in_utc(first[0])
    whole = abs(span) // _SPANS[part]
    return whole if span >= timedelta(0) else -whole


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


def date_part(unit: str, value: Any) -> int | None:
    found, part = _moment(value), unit_name(str(unit))
    if found is None or part is None:
        return None
    moment = found[0]
    if part == "quarter":
        return (moment.month - 1) // 3 + 1
    if part == "week":
        return moment.isocalendar()[1]
    if part == "dayofweek":
        return (moment.weekday() + 1) % 7  # Sunday 0
    if part == "dayofyear":
        return moment.timetuple().tm_yday
    if part == "epoch":
        return int((moments.in_utc(moment) - datetime(1970, 1, 1)).total_seconds())
    return int(getattr(moment, part))


def last_day(value: Any, unit: str = "month") -> str | None:
    found, part = _moment(value), unit_name(str(unit))
    if found is None or part not in ("month", "quarter", "year", "week"):
        return None
    moment = found[0]
    if part == "week":
        end = moment.date() + timedelta(days=6 - moment.weekday())
        return end.isoformat()
    month = {"month": moment.month, "quarter": 3 * ((moment.month - 1) // 3) + 3, "year": 12}[part]
    return date(moment.year, month, calendar.monthrange(moment.year, month)[1]).isoformat()


def split_part(value: Any, delimiter: Any, index: Any) -> str | None:
    if value is None or delimiter is None or index is None:
        return None
    parts = str(value).split(str(delimiter)) if delimiter != "" else [str(value)]
    n = int(index)
    if n == 0:
        n = 1
    position = n - 1 if n > 0 else len(parts) + n
    return parts[position] if 0 <= position < len(parts) else ""


def regexp(pattern: Any, value: Any) -> int | None:
    """SQLite's `value REGEXP pattern`: a search, bounded in time."""
    if pattern is None or value is None:
        return None
    try:
        return int(regex.search(str(pattern), str(value), timeout=REGEX_SECONDS) is not None)
    except TimeoutError:
        raise raised.fail(f"the regular expression {str(pattern)[:100]!r} took too long") from None
    except regex.error as exc:
        raise raised.fail(f"bad regular expression {pattern!r}: {exc}") from None


def _strings(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: Any) -> Any:
        return None if any(a is None for a in args) else fn(*args)
    return wrapped


def _pad(left: bool) -> Callable[..., str | None]:
    def pad(value: Any, length: Any, fill: Any = " ") -> str | None:
        if value is None or length is None or fill is None:
            return None
        text, size, filler = str(value), int(length), str(fill)
        if size > MAX_TEXT:
            raise raised.fail(f"padding to {size} characters exceeds the maximum of {MAX_TEXT}")
        if len(text) >= size or not filler:
            return text[:max(size, 0)]
        extra = (filler * size)[:size - len(text)]
        return extra + text if left else text + extra
    return pad


class _Values:
    """A Python aggregate over the non-null numeric values of a group."""

    def __init__(self) -> None:
        self.values: list[float] = []

    def step(self, value: Any) -> None:
        if isinstance(value, int | float) and not isinstance(value, bool):
            self.values.append(float(value))

    def result(self, fn: Callable[[list[float]], float], least: int) -> float | None:
        return fn(self.values) if len(self.values) >= least else None


def _aggregate(fn: Callable[[list[float]], float], least: int) -> type:
    class Aggregate(_Values):
        def finalize(self) -> float | None:
            return self.result(fn, least)
    return Aggregate


def format_moment(pattern: Any, value: Any) -> str | None:
    """A date or timestamp text formatted with strftime directives (`%Y-%m-%d`, `%H:%M`)."""
    found = _moment(value) if pattern is not None else None
    return found[0].strftime(str(pattern))[:MAX_TEXT] if found else None


def parse_moment(pattern: Any, text: Any, as_date: Any) -> str | None:
    """A text read with strptime directives, as a date or a timestamp text; a text that does not
    match is an error, as in the warehouse."""
    if pattern is None or text is None:
        return None
    try:
        moment = datetime.strptime(str(text), str(pattern))
    except ValueError:
        raise raised.fail(f"'{str(text)[:100]}' does not match the format '{str(pattern)[:100]}'") from None
    return _text(moments.in_utc(moment), bool(as_date))


SCALARS: dict[str, tuple[int, Callable[..., Any]]] = {
    "SF_DATEADD": (3, date_add), "SF_DATEDIFF": (3, date_diff), "SF_DATE_TRUNC": (2, date_trunc),
    "SF_DATE_PART": (2, date_part), "SF_LAST_DAY": (2, last_day), "SPLIT_PART": (3, split_part),
    "SF_TIMESTAMP_DIFF": (3, elapsed), "SF_IN_ZONE": (3, in_zone),
    "REGEXP": (2, regexp),
    "CONTAINS": (2, _strings(lambda a, b: int(str(b) in str(a)))),
    "STARTS_WITH": (2, _strings(lambda a, b: int(str(a).startswith(str(b))))),
    "ENDS_WITH": (2, _strings(lambda a, b: int(str(a).endswith(str(b))))),
    "SF_LEFT": (2, _strings(lambda a, n: str(a)[:max(int(n), 0)])),
    "SF_RIGHT": (2, _strings(lambda a, n: str(a)[-int(n):] if int(n) > 0 else "")),
    "LPAD": (-1, _pad(True)), "RPAD": (-1, _pad(False)),
    "INITCAP": (1, _strings(lambda a: str(a).title())),
    "REVERSE": (1, _strings(lambda a: str(a)[::-1])),
    "FORMAT_MOMENT": (2, format_moment), "PARSE_MOMENT": (3, parse_moment),
    "CONTAINS_SUBSTR": (2, _strings(lambda a, b: int(str(b).casefold() in str(a).casefold()))),
    "TRUNC": (-1, _strings(lambda x, d=0: math.trunc(float(x) * 10 ** int(d)) / 10 ** int(d))),
}
AGGREGATES: dict[str, type] = {
    "SF_MEDIAN": _aggregate(statistics.median, 1),
    "STDDEV": _aggregate(statistics.stdev, 2), "SF_STDDEV_POP": _aggregate(statistics.pstdev, 1),
    "VARIANCE": _aggregate(statistics.variance, 2), "SF_VAR_POP": _aggregate(statistics.pvariance, 1),
}


class _ListAgg:
    """LISTAGG(value, separator) WITHIN GROUP (ORDER BY key [DESC]); NULL values are skipped."""

    def __init__(self) -> None:
        self.items: list[tuple[Any, str]] = []
        self.separator, self.desc = "", False

    def step(self, value: Any, separator: Any, key: Any, desc: Any) -> None:
        self.separator, self.desc = str(separator or ""), bool(desc)
        if value is not None:
            self.items.append((key, str(value)))

    def finalize(self) -> str | None:
        if not self.items:
            return None
        present = sorted((i for i in self.items if i[0] is not None), key=lambda i: (str(type(i[0])), i[0]),
                         reverse=self.desc)
        absent = [i for i in self.items if i[0] is None]
        ordered = absent + present if self.desc else present + absent  # NULLs last ascending, first descending
        return self.separator.join(v for _, v in ordered)


def register(conn: sqlite3.Connection) -> None:
    """Make the functions above, and those the checks of `sqlfront.guards` call, callable in SQL
    on `conn`."""
    for name, (arity, fn) in (SCALARS | guards.FUNCTIONS).items():
        conn.create_function(name, arity, fn, deterministic=True)
    for name, aggregate in AGGREGATES.items():
        conn.create_aggregate(name, 1, aggregate)
    conn.create_aggregate("SF_LISTAGG", 4, _ListAgg)  # type: ignore[arg-type]  # a 4-argument step
