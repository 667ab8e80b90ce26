"""SQRT, LN, LOG, LOG10, EXP and POW / POWER as the warehouses compute them: where SQLite gives
NULL or an infinity (SQRT(-1), LN(0), EXP(1000)), BigQuery raises its floating point errors;
Snowflake's answers there are not modelled and are UNIMPLEMENTED. The functions run as one SQL
function of ours, `SQ_MATH`, which `call` puts in place of each."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from mock_servers.core.errors import Code
from mock_servers.sqlfront import raised, types
from mock_servers.sqlfront.dialect import BIGQUERY
from mock_servers.sqlfront.infer import typed


def _log(value: float, base: float) -> float:
    return math.log(value) / math.log(base)


_FUNCTIONS: dict[str, Callable[..., float]] = {
    "SQRT": math.sqrt, "LN": math.log, "LOG10": math.log10, "EXP": math.exp, "POW": math.pow, "LOG": _log}


def _named(node: exp.Expression) -> tuple[str, list[exp.Expression]] | None:
    """The function of `node` and its arguments (LOG's value first, then its base)."""
    if isinstance(node, exp.Sqrt | exp.Ln | exp.Exp):
        return {exp.Sqrt: "SQRT", exp.Ln: "LN", exp.Exp: "EXP"}[type(node)], [node.this]
    if isinstance(node, exp.Pow):
        return "POW", [node.this, node.expression]
    if isinstance(node, exp.Log) and node.expression is not None:
        base = node.this
        if isinstance(base, exp.Literal) and base.this == "10":
            return "LOG10", [node.expression]
        return "LOG", [node.expression, base]
    if isinstance(node, exp.Log):
        return "LN", [node.this]
    return None


NODES = (exp.Sqrt, exp.Ln, exp.Exp, exp.Pow, exp.Log)


def call(node: exp.Expression, dialect: str) -> exp.Expression:
    """The call of `SQ_MATH` that computes `node`, one of `NODES` (its arguments move into it)."""
    found = _named(node)
    if found is None:
        return node
    name, arguments = found
    return typed(exp.Anonymous(this="SQ_MATH", expressions=[
        exp.Literal.string(name), exp.Literal.string(dialect), *arguments, *([exp.Null()] * (2 - len(arguments)))]),
        types.FLOAT)


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 1e16 else repr(value)


def compute(name: str, dialect: str, value: Any, other: Any) -> float | None:
    """SQ_MATH: function `name` of `value` (and `other`: POW's exponent, LOG's base)."""
    binary = name in ("POW", "LOG")
    if value is None or (binary and other is None):
        return None
    arguments = [float(value), *([float(other)] if binary else [])]
    try:
        result = _FUNCTIONS[name](*arguments)
    except (ValueError, OverflowError, ZeroDivisionError):
        result = math.nan
    if math.isfinite(result) or not all(map(math.isfinite, arguments)):
        return result
    if dialect != BIGQUERY:
        raise raised.fail(f"{name} of {', '.join(map(_number, arguments))} is not supported", Code.UNIMPLEMENTED)
    if name == "SQRT":
        raise raised.fail(f"Argument to SQRT cannot be negative: {_number(arguments[0])}")
    raise raised.fail(f"Floating point error in function: {name}({', '.join(map(_number, arguments))})")
