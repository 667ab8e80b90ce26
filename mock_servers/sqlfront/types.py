"""Logical column types: what a declared SQL type means, how it is stored in SQLite, and how a
stored value is shown.

Exact decimals (NUMBER(p,s) with s > 0, DECIMAL, NUMERIC) are stored as REAL, rounded to their
scale by every write (`sqlfront.store`). A double holds every decimal of up to 15 significant
digits as its nearest binary value, and the shortest text of that value is the decimal again;
so a value is shown rounded to its column's scale, and the results of arithmetic and aggregates
are rounded to the scale the expression has (see `sqlfront.infer`), which makes 0.1 + 0.2 come
back as 0.3 and SUM over a NUMBER(10,2) column exact to the cent. Comparisons whose sides are
computed decimals compare at that scale too. Precision beyond 15 significant digits is not kept."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, tzinfo
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache, partial
from itertools import repeat
from operator import le, mul, sub, truediv
from typing import Any, Literal

from sqlglot import exp

from mock_servers.core.errors import invalid
from mock_servers.sqlfront import moments

Kind = Literal["int", "decimal", "float", "text", "bool", "date", "timestamp", "time", "binary", "other"]
Flavor = Literal["tz", "ltz", "ntz", ""]
DType = exp.DataType.Type

_INTS = {DType.INT, DType.BIGINT, DType.SMALLINT, DType.TINYINT, DType.MEDIUMINT, DType.UBIGINT,
         DType.UINT, DType.USMALLINT, DType.UTINYINT, DType.INT128, DType.INT256}
_DECIMALS = {DType.DECIMAL, DType.BIGDECIMAL, DType.DECIMAL32, DType.DECIMAL64, DType.DECIMAL128,
             DType.DECIMAL256, DType.UDECIMAL, DType.MONEY, DType.SMALLMONEY}
_FLOATS = {DType.DOUBLE, DType.FLOAT}
_TEXTS = {DType.VARCHAR, DType.TEXT, DType.CHAR, DType.NCHAR, DType.NVARCHAR, DType.NAME}
_TIMESTAMPS = {DType.TIMESTAMP, DType.TIMESTAMPNTZ, DType.TIMESTAMPTZ, DType.TIMESTAMPLTZ,
               DType.DATETIME, DType.DATETIME64, DType.TIMESTAMP_S, DType.TIMESTAMP_MS}
_BINARY = {DType.BINARY, DType.VARBINARY, DType.BLOB}
AFFINITY: dict[str, str] = {"int": "INTEGER", "bool": "INTEGER", "decimal": "REAL", "float": "REAL",
                            "binary": "BLOB"}
MAX_SCALE = 12  # the most decimal places a computed exact decimal keeps (NUMBER's division rule)
SIGNIFICANT = 15  # the decimal digits a double keeps exactly
_PRECISION = re.compile(r"NUMBER\(([0-9]+),")


@dataclass(frozen=True)
class LogicalType:
    """A column's meaning: its kind, its decimal scale (exact decimals) and its declared text."""

    kind: Kind
    scale: int = 0
    text: str = ""

    @property
    def affinity(self) -> str:
        """The SQLite column type that stores it."""
        return AFFINITY.get(self.kind, "TEXT")

    @property
    def flavor(self) -> Flavor:
        """Of a timestamp: `tz` (an instant; Snowflake's keeps its offset), `ltz` (an instant
        shown in the session's zone) or `ntz` (a wall-clock time); "" for other kinds."""
        if self.kind != "timestamp":
            return ""
        if self.text == "TIMESTAMP" or self.text.startswith("TIMESTAMP_TZ"):
            return "tz"
        return "ltz" if self.text.startswith("TIMESTAMP_LTZ") else "ntz"

    @property
    def precision(self) -> int:
        """The decimal digits a number holds (`NUMBER(p,s)`'s p; 38 when not declared)."""
        found = _PRECISION.match(self.text)
        return int(found[1]) if found else 38

    @property
    def portable(self) -> str:
        """The declared text of the type in the spelling `from_text` reads (a BigQuery type's too)."""
        if self.kind == "timestamp":
            return f"TIMESTAMP_{self.flavor.upper()}(9)"
        if self.kind in ("int", "decimal"):
            return f"NUMBER({self.precision},{self.scale})"
        return {"float": "FLOAT", "text": "VARCHAR", "bool": "BOOLEAN", "date": "DATE"}.get(self.kind, self.text)


INT = LogicalType("int", 0, "NUMBER(38,0)")
FLOAT = LogicalType("float", 0, "FLOAT")
TEXT = LogicalType("text", 0, "VARCHAR(16777216)")
BOOL = LogicalType("bool", 0, "BOOLEAN")
DATE = LogicalType("date", 0, "DATE")
TIMESTAMP = LogicalType("timestamp", 0, "TIMESTAMP_NTZ(9)")
TIMESTAMP_TZ = LogicalType("timestamp", 0, "TIMESTAMP_TZ(9)")
TIMESTAMP_LTZ = LogicalType("timestamp", 0, "TIMESTAMP_LTZ(9)")
_ZONED = {DType.TIMESTAMPTZ: TIMESTAMP_TZ, DType.TIMESTAMPLTZ: TIMESTAMP_LTZ}


def decimal(scale: int) -> LogicalType:
    """A computed exact decimal of `scale` places (0: an integer)."""
    scale = max(0, min(scale, MAX_SCALE))
    return INT if scale == 0 else LogicalType("decimal", scale, f"NUMBER(38,{scale})")


def _params(dtype: exp.DataType) -> list[int]:
    out = []
    for param in dtype.expressions:
        try:
            out.append(int(param.name))
        except ValueError:
            out.append(-1)
    return out


def from_datatype(dtype: exp.DataType) -> LogicalType:
    """The logical type of a declared type, with its text in the Snowflake spelling."""
    this, params = dtype.this, _params(dtype)
    if this in _INTS:
        return INT
    if this in _DECIMALS:
        precision, scale = [*params, 38, 0][:2] if params else (38, 0)
        if len(params) == 1:
            scale = 0
        if not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise invalid(f"type {dtype.sql('snowflake')} has a bad precision or scale")
        kind: Kind = "decimal" if scale else "int"
        return LogicalType(kind, scale, f"NUMBER({precision},{scale})")
    if this in _FLOATS:
        return FLOAT
    if this in _TEXTS:
        return LogicalType("text", 0, f"VARCHAR({params[0]})") if params and params[0] > 0 else TEXT
    if this == DType.BOOLEAN:
        return BOOL
    if this == DType.DATE:
        return DATE
    if this in _TIMESTAMPS:
        return _ZONED.get(this, TIMESTAMP)
    if this == DType.TIME:
        return LogicalType("time", 0, "TIME(9)")
    if this in _BINARY:
        return LogicalType("binary", 0, "BINARY(8388608)")
    return LogicalType("other", 0, dtype.sql("snowflake"))


@lru_cache(maxsize=1024)
def from_text(text: str) -> LogicalType:
    """The logical type of a type as stored in a catalog (`NUMBER(10,2)`, `VARCHAR(16777216)`)."""
    return from_datatype(exp.DataType.build(text, dialect="snowflake"))


# --- showing stored values --------------------------------------------------------------------

def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return Decimal(int(value))
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value)) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            found = Decimal(value.strip())
        except InvalidOperation:
            return None
        return found if found.is_finite() else None
    return None


def _exact(value: Any, scale: int) -> Any:
    if type(value) is int:
        return value
    if type(value) is float and math.isfinite(value):
        near = round(value, scale)
        if abs(near - value) <= 10.0 ** -(scale + 3):  # already at its scale but for binary noise
            return int(near) if near.is_integer() else near
    number = _number(value)
    if number is None:
        return _plain(value)
    rounded = number.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
    if scale == 0 or rounded == rounded.to_integral_value():
        return int(rounded)
    return float(rounded)  # shortest text of the nearest double: the decimal itself (<= 15 digits)


def _date(value: Any) -> Any:
    if isinstance(value, str) and len(value) >= 10:
        try:
            return date.fromisoformat(value[:10]).isoformat()
        except ValueError:
            return value
    return _plain(value)


_ISO_DATES = re.compile(r"(?:[0-9]{4}-[0-9]{2}-[0-9]{2}\n)*[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _dates_as_they_are(values: Sequence[Any]) -> bool:
    """Whether `_date` shows every one of `values` as it is: each NULL or a `YYYY-MM-DD` text (a
    valid date is written back the same, an invalid one kept). Checked in one match."""
    texts = [v for v in values if v is not None]
    return (set(map(type, texts)) <= {str} and set(map(len, texts)) <= {10}
            and (not texts or _ISO_DATES.fullmatch("\n".join(texts)) is not None))


def _timestamp(flavor: Flavor, zone: tzinfo, value: Any) -> Any:
    """A stored timestamp as Snowflake shows it: `YYYY-MM-DD HH:MM:SS.fff`, followed by the
    offset `+HHMM` for TIMESTAMP_TZ (its own) and TIMESTAMP_LTZ (the session zone's)."""
    if not isinstance(value, str):
        return _plain(value)
    moment = moments.parse(value)
    if moment is None:
        return value
    if flavor == "ltz":
        moment = moment.replace(tzinfo=moment.tzinfo or UTC).astimezone(zone)
    elif flavor == "tz" and moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    elif flavor == "ntz":
        moment = moment.replace(tzinfo=None)
    text = moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}"
    return f"{text} {moment.strftime('%z')}" if moment.tzinfo is not None else text


def _bool(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value != 0
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return _plain(value)


def _plain(value: Any) -> Any:
    """A value of no known type: JSON-safe as it is."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, bytes):
        return value.hex().upper()
    return value


def _float(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _plain(float(value))
    return _plain(value)


Convert = Callable[[Any], Any]
_KEPT: dict[str, set[type]] = {"int": {type(None), int}, "text": {type(None), str}}  # shown as they are


def at_scale(values: Sequence[Any], scale: int, convert: Convert, relative: float = 0.0) -> Sequence[Any] | None:
    """A number column shown in C rather than value by value, when every value is NULL or a
    finite float under 10**(15 - scale) and, but for zero, not under 1e-4: a float nearer to a
    decimal of `scale` places than 10**-(scale + 3) (with `relative`, than that fraction of
    itself) shows as that decimal, a whole one as an integer, as `_exact` (or BigQuery's
    NUMERIC) shows it; any other float by `convert`. None when the column is not such."""
    if not set(map(type, values)) <= {type(None), float}:
        return None
    present = [v for v in values if v is not None]
    magnitudes = list(map(abs, present))
    if magnitudes and not (math.isfinite(sum(magnitudes)) and max(magnitudes) < 10.0 ** (SIGNIFICANT - scale)
                           and min(filter(None, magnitudes), default=1.0) >= 1e-4):
        return None
    factor = 10.0 ** scale
    near = list(map(truediv, map(round, map(mul, present, repeat(factor))), repeat(factor)))
    bounds = map(mul, magnitudes, repeat(relative)) if relative else repeat(10.0 ** -(scale + 3))
    fits = list(map(le, map(abs, map(sub, near, present)), bounds))
    if all(fits) and len(near) == len(values) and not any(map(float.is_integer, near)):
        return near
    shown = iter([(int(n) if n.is_integer() else n) if fit else convert(v) for n, fit, v in zip(near, fits, present)])
    return [None if v is None else next(shown) for v in values]


class Display:
    """How a service shows stored (or computed) values by their types: `show(value, kind)` for
    one value, `show.column(values, kind)` for a result column, its conversion chosen once.
    `zone`: the session's time zone, which shows TIMESTAMP_LTZ values."""

    def __init__(self, zone: tzinfo = UTC) -> None:
        self.zone = zone

    def converter(self, kind: LogicalType | None) -> Convert:
        """The function that shows a non-NULL value of `kind`."""
        if kind is None:
            return _plain
        if kind.kind in ("int", "decimal"):
            return partial(_exact, scale=kind.scale if kind.kind == "decimal" else 0)
        if kind.kind == "timestamp":
            return partial(_timestamp, kind.flavor, self.zone)
        return {"bool": _bool, "date": _date, "float": _float}.get(kind.kind, _plain)

    def __call__(self, value: Any, kind: LogicalType | None) -> Any:
        """A value as the JSON value its type shows."""
        return None if value is None else self.converter(kind)(value)

    def column(self, values: Sequence[Any], kind: LogicalType | None) -> Sequence[Any]:
        """The values of a column as shown: themselves when every one is NULL or of a type its
        kind shows as it is (an integer of an integer column, a text of a text column), and a
        number column by `numbers` where it can."""
        if kind is not None and set(map(type, values)) <= _KEPT.get(kind.kind, set()):
            return values
        convert = self.converter(kind)
        if convert is _date and _dates_as_they_are(values):
            return values
        if kind is not None and kind.kind in ("int", "decimal"):
            exact = self.numbers(values, kind, convert)
            if exact is not None:
                return exact
        return [None if v is None else convert(v) for v in values]

    def numbers(self, values: Sequence[Any], kind: LogicalType, convert: Convert) -> Sequence[Any] | None:
        """A number column shown mostly in C (`at_scale`), None when it cannot be."""
        return at_scale(values, kind.scale if kind.kind == "decimal" else 0, convert)


show = Display()
