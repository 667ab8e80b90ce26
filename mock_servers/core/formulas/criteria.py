"""COUNTIF/SUMIF criteria: `">5"`, `"<>done"`, `"=x"`, `"ab*"` (wildcards `*` `?`, `~` escapes),
a number, or `""` for empty cells."""

from __future__ import annotations

import re
from collections.abc import Callable

from mock_servers.core.formulas.values import FormulaError, Scalar, compare, text_number

_OPS = ("<=", ">=", "<>", "<", ">", "=")


def wildcard(pattern: str) -> re.Pattern[str]:
    """A case-insensitive regex of a spreadsheet wildcard pattern."""
    out, escape = [], False
    for char in pattern:
        if escape:
            out.append(re.escape(char))
            escape = False
        elif char == "~":
            escape = True
        elif char == "*":
            out.append(".*")
        elif char == "?":
            out.append(".")
        else:
            out.append(re.escape(char))
    return re.compile("".join(out), re.I | re.S)


def matcher(criterion: Scalar) -> Callable[[Scalar], bool]:
    """A test of a cell's value against `criterion`."""
    if isinstance(criterion, FormulaError):
        raise criterion
    if criterion is None:
        criterion = ""
    if isinstance(criterion, bool):
        flag = criterion
        return lambda v: isinstance(v, bool) and v == flag
    if isinstance(criterion, float):
        wanted = criterion
        return lambda v: _numeric_equal(v, wanted)
    op = next((o for o in _OPS if criterion.startswith(o)), "")
    rest = criterion[len(op):]
    num = text_number(rest) if rest.strip() else None
    if num is not None:
        return _numeric(op or "=", num)
    if op in ("", "=", "<>"):
        if rest == "":
            empty = op != "<>"
            return lambda v: (v is None or v == "") == empty
        pattern = wildcard(rest)
        hit = op != "<>"
        return lambda v: (isinstance(v, str) and pattern.fullmatch(v) is not None) == hit
    return lambda v: isinstance(v, str) and _holds(op, compare(v, rest))


def _numeric_equal(value: Scalar, target: float) -> bool:
    if isinstance(value, str):
        value = text_number(value)
    return isinstance(value, float) and not isinstance(value, bool) and value == target


def _numeric(op: str, target: float) -> Callable[[Scalar], bool]:
    if op == "<>":
        return lambda v: not _numeric_equal(v, target)
    if op == "=":
        return lambda v: _numeric_equal(v, target)
    return lambda v: isinstance(v, float) and not isinstance(v, bool) and _holds(op, compare(v, target))


def _holds(op: str, order: int) -> bool:
    return {"<": order < 0, ">": order > 0, "<=": order <= 0, ">=": order >= 0}[op]
