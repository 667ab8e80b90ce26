"""LIKE as the warehouses match it: case-sensitively (SQLite's LIKE ignores the case of ASCII
letters). A literal pattern becomes SQLite's GLOB, which is case-sensitive, in C; any other
pattern runs through `SQ_LIKE`. `%` is any run of characters, `_` one character; an escape
character (BigQuery: backslash; Snowflake: none unless ESCAPE names one) makes the next one
literal. LIKE ANY / ALL are UNIMPLEMENTED."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from sqlglot import exp

from mock_servers.core.errors import Code, ToolFailure
from mock_servers.sqlfront import raised
from mock_servers.sqlfront.dialect import Dialect

_GLOB_SPECIAL = {"*": "[*]", "?": "[?]", "[": "[[]"}


def _pieces(pattern: str, escape: str) -> list[tuple[str, bool]]:
    """The pattern's characters, each with whether it is a wildcard (`%`, `_`)."""
    out, escaped = [], False
    for char in pattern:
        if escaped:
            out.append((char, False))
            escaped = False
        elif escape and char == escape:
            escaped = True
        else:
            out.append((char, char in "%_"))
    if escaped:
        raise ValueError(f"LIKE pattern ends with the escape character: '{pattern[:100]}'")
    return out


def glob(pattern: str, escape: str) -> str:
    """The GLOB pattern that matches what LIKE `pattern` matches."""
    return "".join(("*" if char == "%" else "?") if wild else _GLOB_SPECIAL.get(char, char)
                   for char, wild in _pieces(pattern, escape))


@lru_cache(maxsize=256)
def _regex(pattern: str, escape: str) -> re.Pattern[str]:
    return re.compile("".join((".*" if char == "%" else ".") if wild else re.escape(char)
                              for char, wild in _pieces(pattern, escape)), re.DOTALL)


def like(value: Any, pattern: Any, escape: str) -> int | None:
    """SQ_LIKE: whether `value` matches the LIKE `pattern` (NULL for a NULL argument)."""
    if value is None or pattern is None:
        return None
    try:
        return int(_regex(str(pattern), escape).fullmatch(str(value)) is not None)
    except ValueError as exc:
        raise raised.fail(str(exc)) from None


def lower(node: exp.Like, escape_node: exp.Expression | None, dialect: Dialect) -> exp.Expression:
    """`node` (with the ESCAPE clause `escape_node`) as a case-sensitive match."""
    default = "\\" if dialect.bigquery else ""
    if escape_node is not None and not (isinstance(escape_node, exp.Literal) and escape_node.is_string):
        raise ToolFailure(Code.UNIMPLEMENTED, "an ESCAPE that is not a text literal is not supported")
    escape = escape_node.this if escape_node is not None else default
    pattern = node.expression
    if isinstance(pattern, exp.Any | exp.All):
        raise ToolFailure(Code.UNIMPLEMENTED, "LIKE ANY and LIKE ALL are not supported")
    if isinstance(pattern, exp.Literal) and pattern.is_string:
        try:
            text = glob(pattern.this, escape)
        except ValueError as exc:
            raise ToolFailure(Code.INVALID_ARGUMENT, str(exc)) from None
        matched: exp.Expression = exp.Glob(this=node.this, expression=exp.Literal.string(text))
    else:
        matched = exp.Anonymous(this="SQ_LIKE", expressions=[node.this, pattern, exp.Literal.string(escape)])
    return exp.Not(this=exp.Paren(this=matched)) if node.args.get("negate") else matched
