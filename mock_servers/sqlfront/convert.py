"""Values converted from one type to another by the warehouses' documented rules: what CAST,
TRY_CAST / SAFE_CAST, typed literals and stored values do. A value that does not convert is
an `Unconvertible` error in the service's words (TRY_ and SAFE_ casts give NULL instead);
nothing is truncated or guessed (SQLite's CAST('abc' AS INTEGER) is 0, here it is an error).

Values are as SQLite holds them: numbers, texts (dates, timestamps in `sqlfront.moments`'
stored form) and NULL."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timezone
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from typing import Any

from mock_servers.core.errors import Code, ToolFailure, invalid
from mock_servers.core.limits import MAX_INT, MIN_INT
from mock_servers.sqlfront import moments
from mock_servers.sqlfront.dialect import WIDE_NUMBER, Dialect
from mock_servers.sqlfront.types import LogicalType

_NUMBER = re.compile(r"\s*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*")
_SPECIAL = {"inf": math.inf, "+inf": math.inf, "-inf": -math.inf, "infinity": math.inf, "+infinity": math.inf,
            "-infinity": -math.inf, "nan": math.nan, "+nan": math.nan, "-nan": math.nan}
_WIDE = Context(prec=80)  # room for a NUMBER(38,s) at its scale
_INT64 = re.compile(r"\s*[+-]?(?:[0-9]+|0[xX][0-9a-fA-F]+)\s*")
_SF_BOOLS = {"true": 1, "t": 1, "yes": 1, "y": 1, "on": 1, "1": 1,
             "false": 0, "f": 0, "no": 0, "n": 0, "off": 0, "0": 0}
_BQ_WORDS = {"int": "Bad int64 value: {}", "float": "Bad double value: {}", "decimal": "Invalid NUMERIC value: {}",
             "bool": "Bad bool value: {}", "date": "Invalid date: '{}'", "tz": "Invalid timestamp: '{}'",
             "ntz": "Invalid datetime: '{}'"}
_SF_WORDS = {"int": "Numeric value '{}' is not recognized", "float": "Numeric value '{}' is not recognized",
             "decimal": "Numeric value '{}' is not recognized", "bool": "Boolean value '{}' is not recognized",
             "date": "Date '{}' is not recognized", "tz": "Timestamp '{}' is not recognized",
             "ltz": "Timestamp '{}' is not recognized", "ntz": "Timestamp '{}' is not recognized"}


class Unconvertible(Exception):
    """A value that the target type cannot hold; `failure` says so in the service's words."""

    def __init__(self, failure: ToolFailure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def _bad(dialect: Dialect, what: str, value: Any) -> Unconvertible:
    words = _BQ_WORDS if dialect.bigquery else _SF_WORDS
    return Unconvertible(invalid(words[what].format(str(value)[:100])))


def _out_of_range(dialect: Dialect, value: Any, target: LogicalType) -> Unconvertible:
    if dialect.bigquery:
        kind = "int64" if target.kind == "int" else "numeric"
        return Unconvertible(invalid(f"{kind} out of range: {value}"))
    return Unconvertible(invalid(f"Numeric value '{value}' is out of range for {target.portable}"))


def number_text(value: float) -> str:
    """A double as both warehouses write it: its shortest text, a whole one without `.0`."""
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    text = repr(value)
    return {"inf": "inf", "-inf": "-inf", "nan": "nan"}.get(text, text)


def _decimal_of(value: Any, dialect: Dialect, what: str) -> Decimal:
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _bad(dialect, what, number_text(value))
        return Decimal(repr(value))
    text = str(value)
    if not _NUMBER.fullmatch(text):
        raise _bad(dialect, what, text)
    try:
        return Decimal(text.strip())
    except InvalidOperation:
        raise _bad(dialect, what, text) from None


def to_int(value: Any, target: LogicalType, dialect: Dialect) -> int:
    if isinstance(value, int):
        whole = value
    elif isinstance(value, str) and dialect.bigquery:  # GoogleSQL reads integers (and hex) only
        if not _INT64.fullmatch(value):
            raise _bad(dialect, "int", value)
        whole = int(value.strip(), 0) if "x" in value.lower() else int(value.strip())
    else:
        number = _decimal_of(value, dialect, "int")
        if number.adjusted() > 38:
            raise _out_of_range(dialect, value, target)
        whole = int(number.quantize(Decimal(1), rounding=ROUND_HALF_UP, context=_WIDE))
    if not MIN_INT <= whole <= MAX_INT:
        if dialect.bigquery:
            raise _out_of_range(dialect, value, target)
        raise Unconvertible(ToolFailure(Code.UNIMPLEMENTED, WIDE_NUMBER))
    if not dialect.bigquery and len(str(abs(whole))) > target.precision:
        raise _out_of_range(dialect, value, target)
    return whole


def to_decimal(value: Any, target: LogicalType, dialect: Dialect) -> float:
    number = _decimal_of(value, dialect, "decimal")
    if number and number.adjusted() + 1 > target.precision - target.scale:
        raise _out_of_range(dialect, value, target)
    return float(number.quantize(Decimal(1).scaleb(-target.scale), rounding=ROUND_HALF_UP, context=_WIDE))


def to_float(value: Any, dialect: Dialect) -> float:
    if isinstance(value, int | float):
        return float(value)
    text = str(value)
    special = _SPECIAL.get(text.strip().lower())
    if special is not None:
        return special
    if not _NUMBER.fullmatch(text):
        raise _bad(dialect, "float", text)
    return float(text)


def to_bool(value: Any, dialect: Dialect) -> int:
    if isinstance(value, int | float):
        return int(value != 0)
    text = str(value).strip().lower()
    found = ({"true": 1, "false": 0} if dialect.bigquery else _SF_BOOLS).get(text)
    if found is None:
        raise _bad(dialect, "bool", value)
    return found


def _unmodelled(value: str, dialect: Dialect) -> None:
    """Snowflake reads a text of digits as seconds since the epoch, and its zone names are not
    the ones we read: both UNIMPLEMENTED rather than guessed."""
    if dialect.bigquery:
        return
    if value.strip().isdigit():
        raise Unconvertible(ToolFailure(Code.UNIMPLEMENTED, "timestamps given as seconds since the epoch are "
                                        "not supported"))
    if moments.names_zone(value):
        raise Unconvertible(ToolFailure(Code.UNIMPLEMENTED, "time zone names in timestamp texts are not supported; "
                                        "give an offset (+HH:MM) or UTC"))


def moment_of(value: str, source: LogicalType | None, dialect: Dialect) -> datetime | None:
    """The moment a stored or written value is: aware when it is an instant (a BigQuery
    TIMESTAMP, a TIMESTAMP_LTZ stored in UTC, a text naming its zone), naive for a wall time."""
    if source is None or source.kind == "text":
        _unmodelled(value, dialect)
    moment = moments.parse(value)
    if moment is None or moment.tzinfo is not None or source is None:
        return moment
    if source.flavor == "ltz" or (source.flavor == "tz" and dialect.bigquery):
        return moment.replace(tzinfo=UTC)
    if source.flavor == "tz":  # a Snowflake TIMESTAMP_TZ stored without an offset: the session's
        return moment.replace(tzinfo=dialect.tz)
    return moment


def to_timestamp(value: Any, source: LogicalType | None, target: LogicalType, dialect: Dialect) -> str:
    flavor = target.flavor
    moment = moment_of(value, source, dialect) if isinstance(value, str) else None
    if moment is None or (dialect.bigquery and source is not None and source.kind == "time"):
        raise _bad(dialect, flavor, value)
    if flavor == "ntz":
        if moment.tzinfo is None:
            return moments.text(moment)
        if dialect.bigquery and (source is None or source.kind != "timestamp"):
            raise _bad(dialect, flavor, value)  # a DATETIME text names no zone
        zone = UTC if dialect.bigquery else (dialect.tz if source and source.flavor == "ltz" else None)
        return moments.text(moment.astimezone(zone).replace(tzinfo=None) if zone else moment.replace(tzinfo=None))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC if dialect.bigquery else dialect.tz)
    if flavor == "tz" and not dialect.bigquery:  # TIMESTAMP_TZ keeps the offset it was given
        offset = moment.utcoffset()
        return moments.text(moment.astimezone(timezone(offset)) if offset is not None else moment)
    return moments.text(moments.in_utc(moment))


def to_date(value: Any, source: LogicalType | None, dialect: Dialect) -> str:
    if not isinstance(value, str):
        raise _bad(dialect, "date", value)
    if source is not None and source.kind == "timestamp":
        moment = moment_of(value, source, dialect)
        if moment is None:
            raise _bad(dialect, "date", value)
        if source.flavor == "ltz":
            moment = moment.astimezone(dialect.tz)
        return moments.day_text(moment.astimezone(UTC) if dialect.bigquery and moment.tzinfo else moment)
    if dialect.bigquery:
        day = moments.parse_date(value)
        if day is None:
            raise _bad(dialect, "date", value)
        return day.isoformat()
    _unmodelled(value, dialect)
    moment = moments.parse(value)  # Snowflake reads a timestamp text as its date
    if moment is None:
        raise _bad(dialect, "date", value)
    return moments.day_text(moment)


def to_text(value: Any, source: LogicalType | None, dialect: Dialect) -> str:
    kind = source.kind if source is not None else ""
    if kind == "bool" and isinstance(value, int | float):
        return "true" if value else "false"
    if isinstance(value, float):
        if kind == "decimal" and not dialect.bigquery:  # NUMBER(p,s) writes its scale
            return f"{Decimal(repr(value)).quantize(Decimal(1).scaleb(-source.scale), ROUND_HALF_UP)}" \
                if source is not None and math.isfinite(value) else number_text(value)
        return number_text(value)
    if kind == "timestamp" and isinstance(value, str) and source is not None:
        return _timestamp_text(value, source, dialect)
    if isinstance(value, bytes):
        raise Unconvertible(ToolFailure(Code.UNIMPLEMENTED, "casting binary values to text is not supported"))
    return str(value)


def _timestamp_text(value: str, source: LogicalType, dialect: Dialect) -> str:
    moment = moment_of(value, source, dialect)
    if moment is None:
        return value
    if dialect.bigquery:  # CAST(TIMESTAMP AS STRING) writes the UTC offset, DATETIME none
        return moments.text(moments.in_utc(moment)) + ("+00" if moment.tzinfo is not None else "")
    if source.flavor == "ltz":
        moment = moment.astimezone(dialect.tz)
    text = moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}"
    return f"{text} {moment.strftime('%z')}" if moment.tzinfo is not None else text


def convert(value: Any, source: LogicalType | None, target: LogicalType, dialect: Dialect) -> Any:
    """`value` (of type `source`, None when unknown) as a value of `target`."""
    if value is None:
        return None
    kind = target.kind
    if kind == "text":
        return to_text(value, source, dialect)
    if kind == "int":
        return to_int(value, target, dialect)
    if kind == "decimal":
        return to_decimal(value, target, dialect)
    if kind == "float":
        return to_float(value, dialect)
    if kind == "bool":
        return to_bool(value, dialect)
    if kind == "date":
        return to_date(value, source, dialect)
    if kind == "timestamp":
        return to_timestamp(value, source, target, dialect)
    raise Unconvertible(ToolFailure(Code.UNIMPLEMENTED, f"conversion to {target.text} is not supported"))
