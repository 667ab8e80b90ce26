"""What the warehouses check while they compute and SQLite does not, made part of the statement
(its tree rewritten, after its names and types are known):

- casts convert by `sqlfront.convert`'s rules: a literal at once, a value of a known type in
  SQL where SQLite's CAST already agrees, anything else through `SQ_CAST`, so a value that
  does not convert is an error (NULL for TRY_CAST / SAFE_CAST), never 0 or NULL;
- a text literal compared with a date or timestamp is read as one (BigQuery's literal coercion,
  Snowflake's implicit cast), so `ts = '2024-01-06 10:00:00 UTC'` compares instants;
- division and MOD by zero are errors (SQLite gives NULL); MOD of decimals is exact;
- an integer result past 64 bits is BigQuery's overflow error (SQLite would turn it into a
  double), and for Snowflake, whose NUMBER holds it, UNIMPLEMENTED; so is such a literal;
- Snowflake's TIMESTAMP_TZ values, which keep their offsets, compare and sort as instants;
- SQRT, LN, LOG, EXP and POW fail where the warehouse does (`sqlfront.maths`);
- LIKE matches case-sensitively (`sqlfront.patterns`), as both warehouses do."""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from sqlglot import exp

from mock_servers.core.errors import Code, ToolFailure, invalid
from mock_servers.core.limits import MAX_INT, MIN_INT
from mock_servers.sqlfront import convert, maths, moments, patterns, raised, types
from mock_servers.sqlfront import dialect as words
from mock_servers.sqlfront.dialect import Dialect
from mock_servers.sqlfront.infer import Scope, literal_type, type_of, typed
from mock_servers.sqlfront.types import LogicalType

_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.NullSafeEQ, exp.NullSafeNEQ)
_INTEGER_OPS = (exp.Add, exp.Sub, exp.Mul, exp.Neg, exp.Div)  # a Div of integers: DIV's, `typed`
_SYMBOLS: dict[type[exp.Expression], str] = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/"}
_TEMPORAL = ("date", "timestamp")
_NUMBERS = ("int", "decimal", "float")


def _literal_value(node: exp.Expression, dialect: Dialect) -> tuple[bool, Any, LogicalType | None]:
    """(whether `node` is a constant, its value, its type) for a literal, TRUE/FALSE or NULL."""
    if isinstance(node, exp.Null):
        return True, None, None
    if isinstance(node, exp.Boolean):
        return True, int(node.this), types.BOOL
    if isinstance(node, exp.Literal):
        if node.is_string:
            return True, node.this, types.TEXT
        return True, int(node.this) if node.this.isdigit() else float(node.this), \
            literal_type(node, dialect.bigquery)
    return False, None, None


def _constant(value: Any) -> exp.Expression:
    if value is None:
        return exp.Null()
    if isinstance(value, str):
        return exp.Literal.string(value)
    return exp.Literal.number(repr(value) if isinstance(value, float) else value)


def _cannot(source: LogicalType, target: LogicalType, dialect: Dialect) -> ToolFailure:
    names = f"from {source.portable} to {target.portable}"
    if not dialect.bigquery and source.kind in _NUMBERS and target.kind in _TEMPORAL:
        return ToolFailure(Code.UNIMPLEMENTED, f"casting numbers to dates or timestamps ({names}) is not supported")
    return invalid(f"Invalid cast {names}")


def _in_sql(value: exp.Expression, source: LogicalType, target: LogicalType,
            dialect: Dialect) -> exp.Expression | None:
    """The cast of a value of a known type, where plain SQL does it as the warehouse does; None
    when `SQ_CAST` must."""
    same = source.kind == target.kind and source.flavor == target.flavor
    if same and not (source.kind == "decimal" and source.scale > target.scale):
        return value
    pair = (source.kind, target.kind)
    if pair in (("int", "decimal"), ("bool", "int")):
        return value
    if pair in (("decimal", "decimal"), ("float", "decimal")):
        return exp.Round(this=value, decimals=exp.Literal.number(target.scale))
    if pair in (("int", "float"), ("decimal", "float"), ("int", "text"), ("date", "text"), ("text", "text")):
        return exp.Cast(this=value, to=exp.DataType.build("DOUBLE" if target.kind == "float" else "TEXT"))
    if pair == ("int", "bool"):
        return exp.NEQ(this=value, expression=exp.Literal.number(0))
    if pair == ("date", "timestamp") and (dialect.bigquery or target.flavor == "ntz"):
        return exp.DPipe(this=value, expression=exp.Literal.string(" 00:00:00"), safe=True)
    if pair == ("timestamp", "date") and source.flavor != "ltz":
        return exp.Substring(this=value, start=exp.Literal.number(1), length=exp.Literal.number(10))
    if (source.kind in _TEMPORAL and target.kind in ("int", "decimal", "float", "bool")) \
            or (source.kind in ("int", "decimal", "float", "bool") and target.kind in _TEMPORAL):
        raise _cannot(source, target, dialect)
    return None


def _cast(node: exp.Cast, scope: Scope, dialect: Dialect) -> exp.Expression:
    target = types.from_datatype(node.to)
    if target.kind not in ("text", "int", "decimal", "float", "bool", "date", "timestamp"):
        raise ToolFailure(Code.UNIMPLEMENTED, f"CAST to {node.to.sql(dialect.name)} is not supported")
    safe = isinstance(node, exp.TryCast) or bool(node.args.get("safe"))
    is_constant, value, source = _literal_value(node.this, dialect)
    if not is_constant:
        source = type_of(node.this, scope)
    if source is not None and source.kind in ("time", "binary"):
        raise ToolFailure(Code.UNIMPLEMENTED, f"CAST of {source.text} values is not supported")
    # (a cast between kinds that do not convert is refused here, of a literal too)
    done = _in_sql(node.this, source, target, dialect) if source is not None and source.kind != "other" else None
    if is_constant:
        try:
            return typed(_constant(convert.convert(value, source, target, dialect)), target)
        except convert.Unconvertible as exc:
            if safe and exc.failure.code == Code.INVALID_ARGUMENT:
                return typed(exp.Null(), target)
            raise exc.failure from None
    if done is None:
        done = exp.Anonymous(this="SQ_CAST", expressions=[
            node.this, exp.Literal.string(source.portable if source else ""), exp.Literal.string(target.portable),
            exp.Literal.string(dialect.name), exp.Literal.string(dialect.zone), exp.Literal.number(int(safe))])
    return typed(done, target)


def _coerce(node: exp.Expression, scope: Scope, dialect: Dialect) -> None:
    """Read the text literals compared with a date or timestamp as values of its type."""
    if isinstance(node, exp.In):
        sides = [node.this, *node.expressions]
    elif isinstance(node, exp.Between):
        sides = [node.this, node.args.get("low"), node.args.get("high")]
    else:
        sides = [node.this, node.expression]
    kinds = [type_of(s, scope) if s is not None and not isinstance(s, exp.Literal) else None for s in sides]
    target = next((k for k in kinds if k is not None and k.kind in _TEMPORAL), None)
    if target is None:
        return
    for side in sides:
        if isinstance(side, exp.Literal) and side.is_string:
            try:
                side.replace(_constant(convert.convert(side.this, types.TEXT, target, dialect)))
            except convert.Unconvertible as exc:
                raise exc.failure from None


def _instants(node: exp.Expression, scope: Scope, dialect: Dialect) -> None:
    """Compare and order Snowflake TIMESTAMP_TZ values (which keep their offsets) by their
    instants."""
    sides = (node.this,) if isinstance(node, exp.Ordered) else (node.this, node.expression)
    if any((kind := type_of(side, scope)) is not None and kind.flavor == "tz" for side in sides):
        for side in sides:
            side.replace(exp.Anonymous(this="SQ_INSTANT", expressions=[side.copy(), exp.Literal.string(dialect.zone)]))


def _division(node: exp.Div | exp.Mod | exp.IntDiv, scope: Scope, dialect: Dialect) -> exp.Expression:
    """`a / b`, `MOD(a, b)`, `DIV(a, b)` failing when b is zero (and a is not NULL)."""
    left, right = node.this, node.expression
    kinds = [type_of(left, scope), type_of(right, scope)]
    integers = all(k is not None and k.kind == "int" for k in kinds)
    if isinstance(node, exp.IntDiv):
        if not integers:
            raise ToolFailure(Code.UNIMPLEMENTED, "DIV of non-integer values is not supported")
        body: exp.Expression = exp.Div(this=left.copy(), expression=right.copy(), typed=True)
    elif isinstance(node, exp.Mod) and not integers:  # SQLite's % truncates its operands to integers
        body = exp.Anonymous(this="MOD", expressions=[left.copy(), right.copy()])
    else:
        body = node.copy()
    modulo = exp.Literal.number(int(isinstance(node, exp.Mod)))
    failing = exp.Anonymous(this="SQ_DIVISION_BY_ZERO", expressions=[
        left.copy(), right.copy(), exp.Literal.string(dialect.name), modulo])
    zero = exp.and_(exp.EQ(this=right.copy(), expression=exp.Literal.number(0)),
                    exp.Not(this=exp.Is(this=left.copy(), expression=exp.Null())))
    guarded = exp.Case(ifs=[exp.If(this=zero, true=failing)], default=body)
    found = types.INT if isinstance(node, exp.IntDiv) else type_of(node, scope)
    return typed(guarded, found) if found is not None else exp.Paren(this=guarded)


def _wide_literal(node: exp.Literal, dialect: Dialect) -> None:
    text = node.this
    if node.is_string or not text.isdigit() or int(text) <= MAX_INT:
        return
    if int(text) == MAX_INT + 1 and isinstance(node.parent, exp.Neg):
        return  # -9223372036854775808, the least INT64
    if dialect.bigquery:
        raise invalid(f"Invalid integer literal: {text}")
    raise ToolFailure(Code.UNIMPLEMENTED, words.WIDE_NUMBER)


def _overflow(node: exp.Expression, dialect: Dialect) -> exp.Expression:
    """An integer operation (`node`, a copy) failing where SQLite would turn its result into a
    double."""
    operands = [node.this.copy()] if isinstance(node, exp.Neg) else [node.this.copy(), node.expression.copy()]
    symbol = "-" if isinstance(node, exp.Neg) else _SYMBOLS[type(node)]
    failing = exp.Anonymous(this="SQ_OVERFLOW", expressions=[
        exp.Literal.string(symbol), *operands, *([exp.Null()] if len(operands) == 1 else []),
        exp.Literal.string(dialect.name)])
    real = exp.EQ(this=exp.Anonymous(this="typeof", expressions=[node.copy()]), expression=exp.Literal.string("real"))
    return typed(exp.Case(ifs=[exp.If(this=real, true=failing)], default=node), types.INT)


def _integer_ops(tree: exp.Expression, scope: Scope) -> list[exp.Expression]:
    """The operations of `tree` on integers whose results are integers, outermost last."""
    found: list[exp.Expression] = []
    candidates: list[exp.Expression] = list(tree.find_all(*_INTEGER_OPS))
    for node in candidates:
        kind = (types.INT if node.args.get("typed") else None) if isinstance(node, exp.Div) else type_of(node, scope)
        if kind is not None and kind.kind == "int":
            found.append(node)
    return found


def _outermost(node: exp.Expression, inner: set[int]) -> bool:
    """Whether `node`'s result is not an operand of another integer operation (an overflow in
    an operand, a double in SQLite, reaches the outermost one)."""
    parent = node.parent
    while isinstance(parent, exp.Paren) and not parent.meta:
        parent = parent.parent
    return id(parent) not in inner


_CASTS_AND_COMPARISONS = (exp.Cast, *_COMPARISONS, exp.In, exp.Between, exp.Ordered)
_DIVISIONS = (exp.Div, exp.Mod, exp.IntDiv)
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Neg, exp.IntDiv)  # what may make an integer operation
# what the checks concern, by exact type (a set lookup per node is three times quicker than
# isinstance against them all; TryCast is the one subclass among them)
_WATCHED = frozenset({exp.Literal, exp.TryCast, exp.Like, exp.Escape, *maths.NODES, *_CASTS_AND_COMPARISONS,
                      *_DIVISIONS, *_INTEGER_OPS})


def _casts_and_comparisons(nodes: list[exp.Expression], tree: exp.Expression, scope: Scope,
                           dialect: Dialect) -> exp.Expression:
    for node in reversed(nodes):  # inner ones first
        if isinstance(node, exp.Cast):
            replaced = _cast(node, scope, dialect)
            node.replace(replaced)
            tree = replaced if node is tree else tree
            continue
        if not isinstance(node, exp.Ordered):
            _coerce(node, scope, dialect)
        assignment = isinstance(node.parent, exp.Update) and node.arg_key == "expressions"  # UPDATE's SET
        if not dialect.bigquery and isinstance(node, (*_COMPARISONS, exp.Ordered)) and not assignment:
            _instants(node, scope, dialect)
    return tree


def lower(tree: exp.Expression, scope: Scope, dialect: Dialect) -> exp.Expression:
    """`tree` with the checks above made part of it (changed in place; the tree is returned).
    One walk finds what they concern (most statements have no cast or arithmetic at all), outer
    nodes before inner ones."""
    found = [node for node in tree.walk() if type(node) in _WATCHED]
    for node in found:
        if isinstance(node, exp.Literal):
            _wide_literal(node, dialect)
        elif isinstance(node, maths.NODES):
            node.replace(maths.call(node, dialect.name))
        elif isinstance(node, exp.Escape) and isinstance(node.this, exp.Like):
            node.replace(patterns.lower(node.this, node.expression, dialect))
        elif isinstance(node, exp.Like) and not isinstance(node.parent, exp.Escape) and node.parent is not None:
            node.replace(patterns.lower(node, None, dialect))
    tree = _casts_and_comparisons([n for n in found if isinstance(n, _CASTS_AND_COMPARISONS)], tree, scope, dialect)
    for division in reversed([n for n in found if isinstance(n, _DIVISIONS)]):
        division.replace(_division(division, scope, dialect))
    if any(isinstance(n, _ARITHMETIC) for n in found):
        operations = _integer_ops(tree, scope)
        inner = {id(node) for node in operations}
        for node in [n for n in operations if _outermost(n, inner)]:
            node.replace(_overflow(node.copy(), dialect))
    return tree


# --- the functions the checks call while the statement runs ------------------------------------

@lru_cache(maxsize=16)
def _dialect(name: str, zone: str) -> Dialect:
    return Dialect(name, zone)


def cast(value: Any, source: str, target: str, dialect: str, zone: str, safe: int) -> Any:
    """SQ_CAST: `value` of type `source` ("" when unknown) converted to `target`."""
    try:
        return convert.convert(value, types.from_text(source) if source else None, types.from_text(target),
                               _dialect(dialect, zone))
    except convert.Unconvertible as exc:
        if safe and exc.failure.code == Code.INVALID_ARGUMENT:
            return None
        raise raised.fail(exc.failure.message, exc.failure.code) from None


def instant(value: Any, zone: str) -> Any:
    """SQ_INSTANT: a TIMESTAMP_TZ value as the UTC text of its instant (comparable as text)."""
    moment = moments.parse(value) if isinstance(value, str) else None
    if moment is None:
        return value
    return moments.text(moments.in_utc(moment if moment.tzinfo else moment.replace(tzinfo=_dialect("", zone).tz)))


def _number(value: Any) -> str:
    return convert.number_text(value) if isinstance(value, float) else str(value)


def division_by_zero(left: Any, right: Any, dialect: str, modulo: int) -> None:
    """SQ_DIVISION_BY_ZERO: the error of dividing `left` by zero."""
    raise raised.fail(words.division_by_zero(dialect, _number(left), _number(right), bool(modulo)))


def _integer_division(left: int, right: int) -> int:
    quotient = abs(left) // abs(right)
    return quotient if (left < 0) == (right < 0) else -quotient


_OPERATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": _integer_division}


def overflow(symbol: str, left: Any, right: Any, dialect: str) -> Any:
    """SQ_OVERFLOW: an integer operation whose result SQLite made a double: its exact result
    when it fits 64 bits after all, else the overflow error (`right` NULL: negation)."""
    result = -left if right is None else _OPERATIONS[symbol](left, right)
    fits = MIN_INT <= result <= MAX_INT if isinstance(result, int) else abs(result) < 2.0**63
    if fits:
        return result
    text = f"-({_number(left)})" if right is None else f"{_number(left)} {symbol} {_number(right)}"
    failure = words.overflow(dialect, text)
    raise raised.fail(failure.message, failure.code)


FUNCTIONS: dict[str, tuple[int, Callable[..., Any]]] = {
    "SQ_CAST": (6, cast), "SQ_INSTANT": (2, instant), "SQ_DIVISION_BY_ZERO": (4, division_by_zero),
    "SQ_OVERFLOW": (4, overflow), "SQ_MATH": (4, maths.compute), "SQ_LIKE": (3, patterns.like)}
