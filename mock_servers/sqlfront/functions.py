"""Which SQL functions a query may call, and the rewrite of those SQLite lacks into calls of
`sqlfront.udf`. The check reads the parsed tree: a function that is neither SQLite's (after
sqlglot's translation) nor one of ours is UNIMPLEMENTED, naming it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlglot import exp

from mock_servers.core.errors import Code, ToolFailure
from mock_servers.sqlfront import dates
from mock_servers.sqlfront.dates import unit_name
from mock_servers.sqlfront.udf import AGGREGATES, SCALARS

# functions whose SQLite translation runs as it is (natively or through `udf`)
NATIVE: frozenset[type[exp.Expression]] = frozenset({
    exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max, exp.Coalesce, exp.Nullif, exp.Abs, exp.Round,
    exp.Upper, exp.Lower, exp.Length, exp.Substring, exp.Trim, exp.Concat, exp.If, exp.Case, exp.Cast,
    exp.TryCast, exp.RowNumber, exp.Rank, exp.DenseRank, exp.Lag, exp.Lead, exp.FirstValue,
    exp.LastValue, exp.NthValue, exp.Ntile, exp.PercentRank, exp.CumeDist, exp.Greatest, exp.Least,
    exp.GroupConcat, exp.StrPosition, exp.Ln, exp.Log, exp.Exp, exp.Pow, exp.Sqrt, exp.Floor,
    exp.Ceil, exp.Sign, exp.Mod, exp.Replace, exp.Contains, exp.StartsWith, exp.EndsWith, exp.Left,
    exp.Right, exp.Pad, exp.Initcap, exp.Reverse, exp.SplitPart, exp.RegexpLike, exp.Trunc,
    exp.AnyValue, exp.LogicalAnd, exp.LogicalOr, exp.CountIf, exp.SafeDivide, exp.Stddev,
    exp.Variance, exp.And, exp.Or, exp.Exists,
})
OURS = frozenset(SCALARS) | frozenset(dates.FUNCTIONS) | frozenset(AGGREGATES)
_ANONYMOUS = {"DATE_PART": "SF_DATE_PART"}
# Snowflake's conversion functions of one argument: casts (their TRY_ forms: TRY_CAST)
_CONVERSIONS = {"TO_TIMESTAMP": "TIMESTAMP_NTZ", "TO_TIMESTAMP_NTZ": "TIMESTAMP_NTZ", "TO_TIMESTAMP_TZ": "TIMESTAMP_TZ",
                "TO_TIMESTAMP_LTZ": "TIMESTAMP_LTZ"}
_TYPED: dict[type[exp.Expression], tuple[str, str]] = {
    exp.TsOrDsToDate: ("TO_DATE", "DATE"), exp.StrToDate: ("TO_DATE", "DATE"), exp.ToChar: ("TO_CHAR", "VARCHAR"),
    exp.ToBoolean: ("TO_BOOLEAN", "BOOLEAN"), exp.ToDouble: ("TO_DOUBLE", "FLOAT"), exp.ToNumber: ("TO_NUMBER", "")}
_PARTS: dict[type[exp.Expression], str] = {exp.Year: "year", exp.Month: "month", exp.Day: "day", exp.DayOfMonth: "day",
          exp.Hour: "hour", exp.Minute: "minute", exp.Second: "second", exp.Quarter: "quarter",
          exp.Week: "week", exp.WeekOfYear: "week", exp.DayOfWeek: "dayofweek",
          exp.DayOfYear: "dayofyear"}
# sqlglot's INITCAP delimiters when none are given (BigQuery's, Snowflake's): the warehouses' defaults
_INITCAP_DEFAULTS = frozenset({' \t\n\r\x0c\x0b\\[\\](){}/|<>!?@"^#$&~_,.:;*%+\\-',
                               ' \t\n\r\x0c\x0b!?@"^#$&~_,.:;+\\-*%/|\\[\\](){}<>'})
_RENAMED: dict[type[exp.Expression], str] = {exp.Left: "SF_LEFT", exp.Right: "SF_RIGHT"}  # keywords in SQLite
_AGGREGATES: dict[type[exp.Expression], str] = {
    exp.Median: "SF_MEDIAN", exp.StddevPop: "SF_STDDEV_POP", exp.VariancePop: "SF_VAR_POP", exp.StddevSamp: "STDDEV"}


def _call(name: str, *args: exp.Expression | None) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=[a for a in args if a is not None])


def _unit(node: exp.Expression, default: str = "day") -> exp.Literal:
    unit = node.args.get("unit")
    if isinstance(unit, exp.WeekStart):  # BigQuery's WEEK(<day>), and WEEK: WEEK(SUNDAY)
        return exp.Literal.string(f"WEEK_{unit.name.upper()}")
    text = unit.name if isinstance(unit, exp.Expression) else str(unit or default)
    if unit_name(text) is None:
        raise ToolFailure(Code.INVALID_ARGUMENT, f"unknown date part '{text}'")
    return exp.Literal.string(text)


def _lower_dates(node: exp.Expression) -> exp.Expression | None:
    if isinstance(node, exp.DateAdd | exp.TsOrDsAdd | exp.TimestampAdd):
        return _call("SF_DATEADD", _unit(node), node.expression, node.this)
    if isinstance(node, exp.DateSub):
        return _call("SF_DATEADD", _unit(node), exp.Neg(this=node.expression), node.this)
    if isinstance(node, exp.DateDiff | exp.TimestampDiff):
        return _call("SF_DATEDIFF", _unit(node), node.expression, node.this)
    if isinstance(node, exp.DateTrunc | exp.TimestampTrunc):
        return _call("SF_DATE_TRUNC", _unit(node), node.this)
    if isinstance(node, exp.Extract):
        part = f"WEEK_{node.this.name.upper()}" if isinstance(node.this, exp.WeekStart) else node.this.name
        if part.upper() == "DATE":
            return exp.Cast(this=node.expression, to=exp.DataType.build("DATE"))
        if unit_name(part) is None:
            raise _unsupported(f"EXTRACT of {part}")
        return _call("SF_DATE_PART", exp.Literal.string(part), node.expression)
    if type(node) in _PARTS:
        return _call("SF_DATE_PART", exp.Literal.string(_PARTS[type(node)]), node.this)
    if isinstance(node, exp.LastDay):
        return _call("SF_LAST_DAY", node.this, _unit(node, "month"))
    return None


def _conversion(node: exp.Expression) -> exp.Expression | None:
    """A Snowflake conversion function (TO_DATE, TO_TIMESTAMP_TZ, TO_NUMBER(x, p, s), TO_VARCHAR,
    TRY_TO_...) as the cast it is; None for any other node."""
    if isinstance(node, exp.Anonymous):
        name = node.name.upper()
        safe = name.startswith("TRY_")
        target = _CONVERSIONS.get(name.removeprefix("TRY_"))
        if target is None:
            return None
        if len(node.expressions) != 1:
            raise _unsupported(f"{name} with a format or scale")
        value = node.expressions[0]
    elif type(node) in _TYPED:
        name, target = _TYPED[type(node)]
        if node.args.get("format") is not None:
            raise _unsupported(f"{name} with a format")
        safe, value = bool(node.args.get("safe")), node.this
        if isinstance(node, exp.ToNumber):
            target = f"NUMBER({node.args['precision'].name},{node.args['scale'].name})"
    else:
        return None
    cast = exp.TryCast if safe else exp.Cast
    return cast(this=value, to=exp.DataType.build(target, dialect="snowflake"))


def _listagg(node: exp.GroupConcat) -> exp.Expression | None:
    """LISTAGG(x, sep) WITHIN GROUP (ORDER BY k [DESC]): SQLite's GROUP_CONCAT has no order."""
    order = node.this
    if not isinstance(order, exp.Order):
        return None
    keys = order.expressions
    if len(keys) != 1 or isinstance(order.this, exp.Distinct):
        raise _unsupported("LISTAGG with DISTINCT or several ordering keys")
    separator = node.args.get("separator") or exp.Literal.string("")
    return _call("SF_LISTAGG", order.this, separator, keys[0].this,
                 exp.Literal.number(1 if keys[0].args.get("desc") else 0))


def _replacement(node: exp.Expression, now: Callable[[], datetime]) -> exp.Expression | None:
    """What replaces `node`, None when it stays; UNIMPLEMENTED when it cannot run."""
    if isinstance(node, exp.CurrentDate):
        return exp.Literal.string(now().date().isoformat())
    if isinstance(node, exp.CurrentTimestamp | exp.CurrentDatetime):
        return exp.Literal.string(now().replace(tzinfo=None).isoformat(sep=" ", timespec="milliseconds"))
    if type(node) in _AGGREGATES:
        return _call(_AGGREGATES[type(node)], node.this)
    if type(node) in _RENAMED:
        return _call(_RENAMED[type(node)], node.this, node.expression)
    if isinstance(node, exp.Trunc) and node.args.get("decimals") is not None:  # SQLite's trunc() takes one argument
        return _call("TRUNC", node.this, node.args["decimals"])
    places = node.args.get("decimals") if isinstance(node, exp.Round) else None
    if places is not None and not (isinstance(places, exp.Literal) and places.is_int):  # SQLite reads -1 as 0
        return _call("SF_ROUND", node.this, places)
    if isinstance(node, exp.Ceil | exp.Floor) and node.args.get("decimals") is not None:
        raise _unsupported(f"{node.sql_name()} with a scale")
    if isinstance(node, exp.Initcap):
        delimiters = node.expression
        custom = isinstance(delimiters, exp.Literal) and delimiters.this not in _INITCAP_DEFAULTS
        return _call("INITCAP", node.this, delimiters if custom else None)
    if isinstance(node, exp.GroupConcat):
        return _listagg(node)
    lowered = _lower_dates(node) or _conversion(node)
    if lowered is not None:
        return lowered
    if isinstance(node, exp.Anonymous):
        name = node.name.upper()
        if name in _ANONYMOUS:
            return _call(_ANONYMOUS[name], *node.expressions)
        if name not in OURS:
            raise _unsupported(node.name)
    elif isinstance(node, exp.Func) and type(node) not in NATIVE:
        raise _unsupported(node.sql_name())
    return None


def _visit(node: exp.Expression, now: Callable[[], datetime]) -> exp.Expression:
    if not isinstance(node, exp.Func):  # only functions are rewritten or refused
        return node
    new = _replacement(node, now)
    if new is None:
        return node
    if isinstance(new, exp.Anonymous):  # its arguments came from the old node: visit them too
        new.set("expressions", [a.transform(_visit, now, copy=False) for a in new.expressions])
    elif isinstance(new, exp.Cast):
        new.set("this", new.this.transform(_visit, now, copy=False))
    return new


def lower(tree: exp.Expression, now: Callable[[], datetime]) -> exp.Expression:
    """`tree` with the functions SQLite lacks turned into calls of ours and CURRENT_DATE /
    CURRENT_TIMESTAMP read from the clock; a function we do not support is UNIMPLEMENTED."""
    return tree.transform(_visit, now, copy=False)


def _unsupported(name: str) -> ToolFailure:
    """UNIMPLEMENTED naming a function (`SHA1`) or a form of one (`TO_CHAR with a format`)."""
    what = name if " " in name else f"function {name.upper()}"
    return ToolFailure(Code.UNIMPLEMENTED, f"{what} is not supported",
                       hint="rewrite the query with supported functions (see the tool description)")
