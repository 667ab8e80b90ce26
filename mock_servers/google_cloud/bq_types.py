"""BigQuery's column types: their names, the logical types of the SQL front end they map to,
and the canonical text of values (TIMESTAMP `YYYY-MM-DD HH:MM:SS[.ffffff] UTC`, DATETIME
`YYYY-MM-DDTHH:MM:SS[.ffffff]`, DATE `YYYY-MM-DD`)."""

from __future__ import annotations

import base64
import math
import re
from collections import deque
from collections.abc import Sequence
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from functools import partial
from itertools import repeat
from operator import add
from typing import Any

from sqlglot import exp

from mock_servers.core.errors import invalid
from mock_servers.sqlfront import moments
from mock_servers.sqlfront import types as sqltypes
from mock_servers.sqlfront.types import LogicalType

NUMERIC_SCALE = 9
SIGNIFICANT = sqltypes.SIGNIFICANT
NOISE = 0.25e-15  # a NUMERIC double this near (relatively) to a decimal of 15 digits shows as it
_WHOLE_SECONDS = re.compile(r"[1-9][0-9]{3}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}")
BY_NAME: dict[str, LogicalType] = {
    "INT64": LogicalType("int", 0, "INT64"), "NUMERIC": LogicalType("decimal", NUMERIC_SCALE, "NUMERIC"),
    "BIGNUMERIC": LogicalType("decimal", NUMERIC_SCALE, "BIGNUMERIC"),
    "FLOAT64": LogicalType("float", 0, "FLOAT64"), "STRING": LogicalType("text", 0, "STRING"),
    "BOOL": LogicalType("bool", 0, "BOOL"), "DATE": LogicalType("date", 0, "DATE"),
    "DATETIME": LogicalType("timestamp", 0, "DATETIME"), "TIMESTAMP": LogicalType("timestamp", 0, "TIMESTAMP"),
    "TIME": LogicalType("time", 0, "TIME"), "BYTES": LogicalType("binary", 0, "BYTES"),
    "JSON": LogicalType("other", 0, "JSON"),
}
ALIASES = {"INTEGER": "INT64", "INT": "INT64", "BIGINT": "INT64", "SMALLINT": "INT64", "FLOAT": "FLOAT64",
           "BOOLEAN": "BOOL", "DECIMAL": "NUMERIC", "BIGDECIMAL": "BIGNUMERIC"}
_BY_KIND = {"int": "INT64", "decimal": "NUMERIC", "float": "FLOAT64", "text": "STRING", "bool": "BOOL",
            "date": "DATE", "time": "TIME", "binary": "BYTES"}


def named(text: str) -> LogicalType:
    """The logical type of a BigQuery type name (`INT64`, `integer`, `NUMERIC` ...)."""
    name = text.strip().upper()
    found = BY_NAME.get(ALIASES.get(name, name))
    if found is None:
        raise invalid(f"unknown type '{text}'; allowed: {', '.join(BY_NAME)}")
    return found


def name_of(kind: LogicalType | None) -> str:
    """The BigQuery name of a logical type (a computed one included)."""
    if kind is None:
        return "STRING"
    if kind.text in BY_NAME:
        return kind.text
    if kind.kind == "timestamp":
        return "TIMESTAMP" if kind.text.startswith("TIMESTAMP_TZ") else "DATETIME"
    if kind.kind == "other":
        return "JSON" if kind.text.upper() == "JSON" else kind.text.upper()
    return _BY_KIND.get(kind.kind, "STRING")


def canonical(kind: LogicalType) -> LogicalType:
    return BY_NAME[name_of(kind)]


def exact_numerics(tree: exp.Expression) -> exp.Expression:
    """NUMERIC and BIGNUMERIC without precision mean BigQuery's 9 decimal places."""
    for dtype in tree.find_all(exp.DataType):
        if dtype.this in (exp.DataType.Type.DECIMAL, exp.DataType.Type.BIGDECIMAL) and not dtype.expressions:
            dtype.set("this", exp.DataType.Type.DECIMAL)
            dtype.set("expressions", [exp.DataTypeParam(this=exp.Literal.number(38)),
                                      exp.DataTypeParam(this=exp.Literal.number(NUMERIC_SCALE))])
    return tree


def _clock(moment: datetime, sep: str) -> str:
    return moment.strftime(f"%Y-%m-%d{sep}%H:%M:%S") + (f".{moment.microsecond:06d}" if moment.microsecond else "")


def timestamp_text(moment: datetime) -> str:
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return _clock(moment, " ") + " UTC"


def _decimal(value: float, scale: int) -> int | float:
    """A NUMERIC held as a double: its shortest text cut to the 15 significant digits a double
    holds, then rounded to the scale where it has more places (so 34329356.47 stays itself,
    whatever SQLite's rounding did to it, and 0.1 + 0.2 is 0.3)."""
    if round(value, scale) == value and 1e-4 <= abs(value) < 10.0 ** (SIGNIFICANT - scale):
        # The common case, decided without text: the value is the double of a decimal of at most
        # `scale` places and 15 digits, so its shortest text is that decimal, which stays as it is.
        return int(value) if value.is_integer() else value
    text = repr(value)
    whole, _, places = text.partition(".")
    digits = len((whole + places).lstrip("-0"))
    if "e" not in text and digits > SIGNIFICANT and not (digits == SIGNIFICANT + 1 and places.endswith("5")):
        # No tie at the cut: rounding the double itself to 15 digits gives the same digits.
        text = f"{value:.{SIGNIFICANT}g}"
        whole, _, places = text.partition(".")
        digits = SIGNIFICANT
    if "e" not in text and len(places) <= scale and digits <= SIGNIFICANT:
        return int(whole) if places.strip("0") == "" else float(text)  # the text is exact as it is
    number = Decimal(repr(value))
    if len(number.as_tuple().digits) > SIGNIFICANT:
        number = number.quantize(Decimal(1).scaleb(number.adjusted() - SIGNIFICANT + 1), rounding=ROUND_HALF_UP)
    if -number.as_tuple().exponent > scale:  # type: ignore[operator]
        number = number.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
    return int(number) if number == number.to_integral_value() else float(number)


def _numeric(base: sqltypes.Convert, scale: int, value: Any) -> Any:
    return _decimal(value, scale) if type(value) is float and math.isfinite(value) else base(value)


def _timestamp(base: sqltypes.Convert, zoned: bool, value: Any) -> Any:
    if not isinstance(value, str):
        return base(value)
    moment = moments.parse(value)
    if moment is None:
        return value
    return timestamp_text(moment) if zoned else _clock(moment.replace(tzinfo=None), "T")


def _whole_seconds(values: Sequence[Any]) -> bool:
    """Whether every value is a valid `YYYY-MM-DD HH:MM:SS` text of a year from 1000 (as the
    seeds and writes store them), checked in C."""
    if not values or set(map(type, values)) != {str} or not all(map(_WHOLE_SECONDS.fullmatch, values)):
        return False
    try:
        deque(map(datetime.fromisoformat, values), maxlen=0)
    except ValueError:
        return False
    return True


def _bytes(base: sqltypes.Convert, value: Any) -> Any:
    return base64.b64encode(value).decode() if isinstance(value, bytes) else base(value)


class BigQueryDisplay(sqltypes.Display):
    """Values as BigQuery shows them: NUMERIC exact, TIMESTAMP and DATETIME in its spellings,
    BYTES in base64; anything else as the front end shows it."""

    def converter(self, kind: LogicalType | None) -> sqltypes.Convert:
        base = super().converter(kind)
        if kind is None:
            return base
        if kind.kind == "decimal":
            return partial(_numeric, base, kind.scale)
        if kind.kind == "timestamp":
            return partial(_timestamp, base, name_of(kind) == "TIMESTAMP")
        if name_of(kind) == "BYTES":
            return partial(_bytes, base)
        return base

    def column(self, values: Sequence[Any], kind: LogicalType | None) -> Sequence[Any]:
        if kind is not None and kind.kind == "timestamp" and _whole_seconds(values):
            if name_of(kind) == "TIMESTAMP":  # the stored text with its zone, as `_timestamp` shows it
                return list(map(add, values, repeat(" UTC")))
            return list(map(str.replace, values, repeat(" "), repeat("T"), repeat(1)))
        return super().column(values, kind)

    def numbers(self, values: Sequence[Any], kind: LogicalType, convert: sqltypes.Convert) -> Sequence[Any] | None:
        if kind.kind == "decimal":  # as `_decimal` shows them
            return sqltypes.at_scale(values, kind.scale, convert, relative=NOISE)
        return super().numbers(values, kind, convert)


show = BigQueryDisplay()


def stored(value: Any, kind: LogicalType) -> Any:
    """A Python value as a physical table keeps it."""
    if value is None:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, datetime):
        moment = value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
        return moment.isoformat(sep=" ")
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if kind.kind == "decimal":
        return float(value)
    return value
