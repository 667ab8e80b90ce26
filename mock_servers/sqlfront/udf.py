"""The SQL functions SQLite lacks, as Python functions registered on a call's connection: string
helpers, REGEXP with a time bound and the statistical aggregates (with the date functions of
`sqlfront.dates` and the checks of `sqlfront.guards`). Each returns None for a NULL argument,
like SQL."""

from __future__ import annotations

import sqlite3
import statistics
from collections.abc import Callable
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from typing import Any

import regex

from mock_servers.sqlfront import dates, guards, raised

MAX_TEXT = 16_777_216  # the longest string a function may build (Snowflake's VARCHAR limit)
REGEX_SECONDS = 0.5  # one regular-expression match may take this long, then the query fails
def split_part(value: Any, delimiter: Any, index: Any) -> str | None:
    if value is None or delimiter is None or index is None:
        return None
    parts = str(value).split(str(delimiter)) if delimiter != "" else [str(value)]
    n = int(index)
    if n == 0:
        n = 1
    position = n - 1 if n > 0 else len(parts) + n
    return parts[position] if 0 <= position < len(parts) else ""


_DELIMITERS = frozenset(" \t\n\r\f\v[](){}/|\\<>!?@\"^#$&~_,.:;*%+-")  # both warehouses' INITCAP


def initcap(value: Any, delimiters: Any = None) -> str:
    """Each word's first letter upper case, the others lower case; words end at a delimiter
    (`delimiters`: the characters that end them, when not the warehouses' defaults)."""
    ends = _DELIMITERS if delimiters is None else frozenset(str(delimiters))
    out, starts = [], True
    for char in str(value):
        out.append(char.upper() if starts else char.lower())
        starts = char in ends
    return "".join(out)


def _to_places(value: Any, places: Any, rounding: str) -> int | float:
    number = Decimal(repr(value)) if isinstance(value, float) else Decimal(str(value))
    done = number.quantize(Decimal(1).scaleb(-int(places)), rounding=rounding)
    return float(done) if isinstance(value, float) else int(done) if done == done.to_integral_value() else float(done)


def truncated(value: Any, places: Any = 0) -> int | float:
    """TRUNC(x, d): `x` cut (toward zero) to `d` decimal places (tens, hundreds for d < 0)."""
    return _to_places(value, places, ROUND_DOWN)


def rounded(value: Any, places: Any) -> int | float:
    """ROUND(x, d) half away from zero, for the places SQLite's ROUND does not take (d < 0)."""
    return _to_places(value, places, ROUND_HALF_UP)


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


SCALARS: dict[str, tuple[int, Callable[..., Any]]] = {
    "SPLIT_PART": (3, split_part), "REGEXP": (2, regexp),
    "CONTAINS": (2, _strings(lambda a, b: int(str(b) in str(a)))),
    "STARTS_WITH": (2, _strings(lambda a, b: int(str(a).startswith(str(b))))),
    "ENDS_WITH": (2, _strings(lambda a, b: int(str(a).endswith(str(b))))),
    "SF_LEFT": (2, _strings(lambda a, n: str(a)[:max(int(n), 0)])),
    "SF_RIGHT": (2, _strings(lambda a, n: str(a)[-int(n):] if int(n) > 0 else "")),
    "LPAD": (-1, _pad(True)), "RPAD": (-1, _pad(False)),
    "INITCAP": (-1, _strings(initcap)),
    "REVERSE": (1, _strings(lambda a: str(a)[::-1])),
    "CONTAINS_SUBSTR": (2, _strings(lambda a, b: int(str(b).casefold() in str(a).casefold()))),
    "TRUNC": (-1, _strings(truncated)), "SF_ROUND": (2, _strings(rounded)),
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
    for name, (arity, fn) in (SCALARS | dates.FUNCTIONS | guards.FUNCTIONS).items():
        conn.create_function(name, arity, fn, deterministic=True)
    for name, aggregate in AGGREGATES.items():
        conn.create_aggregate(name, 1, aggregate)
    conn.create_aggregate("SF_LISTAGG", 4, _ListAgg)  # type: ignore[arg-type]  # a 4-argument step
