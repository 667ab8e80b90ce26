"""GoogleSQL functions whose SQLite translation needs a step of ours, rewritten in the tree into
the front end's functions (typed by a cast where the result is a date or timestamp):
TIMESTAMP_SUB and the DATETIME_ADD / _SUB / _DIFF / _TRUNC family, FORMAT_DATE / _DATETIME /
_TIMESTAMP, PARSE_DATE / _DATETIME / _TIMESTAMP, TIMESTAMP(text), DATE(text), the
case-insensitive CONTAINS_SUBSTR, and SAFE_CAST to a number (NULL for a non-number)."""

from __future__ import annotations

from sqlglot import exp

_NUMBERS = {exp.DataType.Type.BIGINT, exp.DataType.Type.DECIMAL, exp.DataType.Type.BIGDECIMAL,
            exp.DataType.Type.DOUBLE, exp.DataType.Type.INT, exp.DataType.Type.FLOAT}


def _call(name: str, *args: exp.Expression) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=[lower(a) for a in args])


def _typed(node: exp.Expression, kind: str) -> exp.Cast:
    return exp.cast(lower(node), exp.DataType.build(kind, dialect="bigquery"))


def _parse(node: exp.Expression, kind: str) -> exp.Expression:
    as_date = exp.Literal.number(1 if kind == "DATE" else 0)
    return _typed(_call("PARSE_MOMENT", node.args["format"], node.this, as_date), kind)


def _visit(node: exp.Expression) -> exp.Expression:
    if not isinstance(node, exp.Func):  # every rewrite below is of a function
        return node
    if isinstance(node, exp.TimeToStr) and node.args.get("format") is not None:
        return _call("FORMAT_MOMENT", node.args["format"], node.this)
    if isinstance(node, exp.StrToDate) and node.args.get("format") is not None:
        return _parse(node, "DATE")
    if isinstance(node, exp.StrToTime) and node.args.get("format") is not None:
        return _parse(node, "TIMESTAMP")
    if isinstance(node, exp.ParseDatetime) and node.args.get("format") is not None:
        return _parse(node, "DATETIME")
    if isinstance(node, exp.Timestamp) and node.expression is None:
        return _typed(node.this, "TIMESTAMP")
    if isinstance(node, exp.Date) and len(node.expressions) == 0 and node.this is not None \
            and not node.args.get("zone"):
        return _typed(node.this, "DATE")
    if isinstance(node, exp.TimestampSub | exp.DatetimeSub):
        return exp.TimestampAdd(this=lower(node.this), expression=exp.Neg(this=lower(node.expression)),
                                unit=node.args.get("unit"))
    if isinstance(node, exp.DatetimeAdd):
        return exp.TimestampAdd(this=lower(node.this), expression=lower(node.expression), unit=node.args.get("unit"))
    if isinstance(node, exp.DatetimeDiff):
        return exp.TimestampDiff(this=lower(node.this), expression=lower(node.expression), unit=node.args.get("unit"))
    if isinstance(node, exp.DatetimeTrunc):
        return exp.TimestampTrunc(this=lower(node.this), unit=node.args.get("unit"))
    if isinstance(node, exp.TsOrDsToTimestamp):
        return _typed(node.this, "TIMESTAMP")
    if isinstance(node, exp.TryCast) and node.to.this in _NUMBERS:
        return exp.Cast(this=_call("SAFE_NUMBER", node.this), to=node.to)  # the arguments: lowered by _call
    if isinstance(node, exp.Contains):
        return _typed(_call("CONTAINS_SUBSTR", node.this, node.expression), "BOOL")
    return node


def lower(tree: exp.Expression) -> exp.Expression:
    return tree.transform(_visit, copy=False)
