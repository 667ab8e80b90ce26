"""GoogleSQL functions whose SQLite translation needs a step of ours, rewritten in the tree into
the front end's functions and casts (typed where the result is a date or timestamp):
TIMESTAMP_SUB, TIMESTAMP_DIFF (whole units elapsed) and the DATETIME_ADD / _SUB / _DIFF /
_TRUNC family, FORMAT_DATE / _DATETIME / _TIMESTAMP, PARSE_DATE / _DATETIME / _TIMESTAMP,
TIMESTAMP(x[, zone]), DATE(x[, zone]), DATETIME(x[, zone]), `AT TIME ZONE`, the time zone
argument of TIMESTAMP_TRUNC and FORMAT_TIMESTAMP, the case-insensitive CONTAINS_SUBSTR, and
EXTRACT's WEEK and DAYOFWEEK, whose weeks start on Sunday.
A text literal given where a date or timestamp is expected is read as one (literal coercion)."""

from __future__ import annotations

from sqlglot import exp

from mock_servers.core.errors import Code, ToolFailure
from mock_servers.sqlfront import types
from mock_servers.sqlfront.infer import typed

_DATE_FUNCTIONS = (exp.DateAdd, exp.DateSub, exp.DateDiff, exp.DateTrunc)
_TIMESTAMP_FUNCTIONS = (exp.TimestampAdd, exp.TimestampSub, exp.TimestampDiff, exp.TimestampTrunc)
_DATETIME_FUNCTIONS = (exp.DatetimeAdd, exp.DatetimeSub, exp.DatetimeDiff, exp.DatetimeTrunc)
_PARTS = {"WEEK": "WEEK_SUNDAY", "DAYOFWEEK": "DAYOFWEEK_FROM_1"}  # GoogleSQL's weeks start on Sunday
_COERCING = _DATE_FUNCTIONS + _TIMESTAMP_FUNCTIONS + _DATETIME_FUNCTIONS
# the nodes rewritten here, by exact type (a set lookup is the quick test of every node)
_REWRITTEN = frozenset({*_COERCING, exp.Timestamp, exp.Date, exp.Datetime, exp.AtTimeZone, exp.TimeToStr,
                        exp.StrToDate, exp.StrToTime, exp.ParseDatetime, exp.TsOrDsToTimestamp, exp.TsOrDsToDatetime,
                        exp.Contains, exp.Extract})


def _kind(name: str) -> types.LogicalType:
    return types.from_datatype(exp.DataType.build(name, dialect="bigquery"))


def _call(name: str, *args: exp.Expression) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=[lower(a) for a in args])


def _cast(node: exp.Expression, kind: str) -> exp.Cast:
    return exp.Cast(this=lower(node), to=exp.DataType.build(kind, dialect="bigquery"))


def _parse(node: exp.Expression, kind: str) -> exp.Expression:
    as_date = exp.Literal.number(1 if kind == "DATE" else 0)
    return typed(_call("PARSE_MOMENT", node.args["format"], node.this, as_date), _kind(kind))


def _local(node: exp.Expression, zone: exp.Expression) -> exp.Expression:
    """The wall-clock DATETIME of the instant `node` in `zone`."""
    return typed(_call("SF_IN_ZONE", _cast(node, "TIMESTAMP"), zone, exp.Literal.number(1)), _kind("DATETIME"))


def _instant(node: exp.Expression, zone: exp.Expression) -> exp.Expression:
    """The TIMESTAMP of the wall-clock time `node` (a DATETIME or a text) in `zone`."""
    return typed(_call("SF_IN_ZONE", node, zone, exp.Literal.number(0)), _kind("TIMESTAMP"))


def _coerced(node: exp.Expression) -> None:
    """Read the text literals given to a date or timestamp function as dates or timestamps."""
    kind = "DATE" if isinstance(node, _DATE_FUNCTIONS) else \
        "TIMESTAMP" if isinstance(node, _TIMESTAMP_FUNCTIONS) else "DATETIME"
    differences = (exp.DateDiff, exp.TimestampDiff, exp.DatetimeDiff)
    for key in ("this", "expression") if isinstance(node, differences) else ("this",):  # not an interval's amount
        value = node.args.get(key)
        if isinstance(value, exp.Literal) and value.is_string:
            node.set(key, exp.Cast(this=value, to=exp.DataType.build(kind, dialect="bigquery")))


def _zoned(node: exp.Expression) -> exp.Expression | None:
    """The functions of a time zone: TIMESTAMP(x, zone), DATE(x, zone), DATETIME(x, zone),
    `x AT TIME ZONE zone`, TIMESTAMP_TRUNC(x, part, zone), FORMAT_TIMESTAMP(f, x, zone)."""
    if isinstance(node, exp.Timestamp) and node.args.get("zone") is not None:
        return _instant(node.this, node.args["zone"])
    if isinstance(node, exp.Date) and node.args.get("zone") is not None:
        return _cast(_local(node.this, node.args["zone"]), "DATE")
    if isinstance(node, exp.Datetime):
        zone = node.expression
        if not (isinstance(zone, exp.Literal) and zone.is_string):
            raise ToolFailure(Code.UNIMPLEMENTED, "DATETIME(date, time) is not supported")
        return _local(node.this, zone)
    if isinstance(node, exp.AtTimeZone):
        return _local(node.this, node.args["zone"])
    if isinstance(node, exp.TimestampTrunc) and node.args.get("zone") is not None:
        zone = node.args["zone"]
        wall = exp.TimestampTrunc(this=_local(node.this, zone), unit=node.args.get("unit"))
        return _instant(wall, zone)
    if isinstance(node, exp.TimeToStr) and node.args.get("zone") is not None:
        return _call("FORMAT_MOMENT", node.args["format"], _local(node.this, node.args["zone"]))
    return None


def _visit(node: exp.Expression) -> exp.Expression:
    if type(node) not in _REWRITTEN:
        return node
    if isinstance(node, _COERCING):
        _coerced(node)
    zoned = _zoned(node)
    if zoned is not None:
        return zoned
    if isinstance(node, exp.TimeToStr) and node.args.get("format") is not None:
        return _call("FORMAT_MOMENT", node.args["format"], node.this)
    if isinstance(node, exp.StrToDate) and node.args.get("format") is not None:
        return _parse(node, "DATE")
    if isinstance(node, exp.StrToTime) and node.args.get("format") is not None:
        return _parse(node, "TIMESTAMP")
    if isinstance(node, exp.ParseDatetime) and node.args.get("format") is not None:
        return _parse(node, "DATETIME")
    if isinstance(node, exp.Timestamp | exp.TsOrDsToTimestamp) and node.expression is None:
        return _cast(node.this, "TIMESTAMP")
    if isinstance(node, exp.TsOrDsToDatetime):
        return _cast(node.this, "DATETIME")
    if isinstance(node, exp.Date) and len(node.expressions) == 0 and node.this is not None:
        return _cast(node.this, "DATE")
    if isinstance(node, exp.TimestampDiff):
        unit = exp.Literal.string(node.text("unit") or "DAY")
        return typed(_call("SF_TIMESTAMP_DIFF", unit, node.expression, node.this), types.INT)
    if isinstance(node, exp.TimestampSub | exp.DatetimeSub):
        return exp.TimestampAdd(this=lower(node.this), expression=exp.Neg(this=lower(node.expression)),
                                unit=node.args.get("unit"))
    if isinstance(node, exp.DatetimeAdd):
        return exp.TimestampAdd(this=lower(node.this), expression=lower(node.expression), unit=node.args.get("unit"))
    if isinstance(node, exp.DatetimeDiff):
        return exp.DateDiff(this=lower(node.this), expression=lower(node.expression), unit=node.args.get("unit"))
    if isinstance(node, exp.DatetimeTrunc):
        return exp.TimestampTrunc(this=lower(node.this), unit=node.args.get("unit"))
    if isinstance(node, exp.Contains):
        return typed(_call("CONTAINS_SUBSTR", node.this, node.expression), types.BOOL)
    if isinstance(node, exp.Extract) and isinstance(node.this, exp.Var) and node.this.name.upper() in _PARTS:
        node.set("this", exp.var(_PARTS[node.this.name.upper()]))
    return node


def lower(tree: exp.Expression) -> exp.Expression:
    return tree.transform(_visit, copy=False)
