"""Lookup functions: VLOOKUP HLOOKUP INDEX MATCH XLOOKUP."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mock_servers.core.formulas.criteria import wildcard
from mock_servers.core.formulas.registry import check, register
from mock_servers.core.formulas.values import (
    NA,
    REF,
    VALUE,
    Block,
    FormulaError,
    Scalar,
    Value,
    boolean,
    compare,
    number,
    scalar,
)

if TYPE_CHECKING:
    from mock_servers.core.formulas.evaluate import Evaluator


def _block(value: Value) -> Block:
    if isinstance(value, FormulaError):
        raise value
    if not isinstance(value, Block):
        raise VALUE
    return value


def _same_kind(a: Scalar, b: Scalar) -> bool:
    return (isinstance(a, str) == isinstance(b, str)) and (isinstance(a, bool) == isinstance(b, bool))


def _exact(key: Scalar, cells: list[Scalar], reverse: bool = False) -> int | None:
    order = range(len(cells) - 1, -1, -1) if reverse else range(len(cells))
    if isinstance(key, str) and any(ch in key for ch in "*?~"):
        pattern = wildcard(key)
        return next((i for i in order if isinstance(cells[i], str) and pattern.fullmatch(cells[i])), None)  # type: ignore[arg-type]
    return next((i for i in order if cells[i] is not None and _same_kind(cells[i], key)
                 and compare(cells[i], key) == 0), None)


def _sorted(key: Scalar, cells: list[Scalar], descending: bool = False) -> int | None:
    """The last position whose value is <= key (>= key when descending) before the order
    breaks, as a binary search over sorted data finds it."""
    best = None
    for i, cell in enumerate(cells):
        if cell is None or not _same_kind(cell, key):
            continue
        order = compare(cell, key)
        if (order <= 0) if not descending else (order >= 0):
            best = i
        else:
            break
    return best


def _key(value: Value) -> Scalar:
    key = scalar(check(value))
    return "" if key is None else key


def _table_lookup(args: list[Value], columns: bool) -> Value:
    key, table = _key(args[0]), _block(args[1])
    index = int(number(check(args[2])))
    rows = table.rows if columns else [list(c) for c in zip(*table.rows)]
    width = len(rows[0]) if rows else 0
    if index < 1:
        raise VALUE
    if index > width:
        raise REF
    approximate = boolean(check(args[3])) if len(args) > 3 and args[3] is not None else True
    firsts = [row[0] for row in rows]
    found = _sorted(key, firsts) if approximate else _exact(key, firsts)
    if found is None:
        raise NA
    return rows[found][index - 1]


@register("VLOOKUP", 3, 4)
def _vlookup(ev: Evaluator, args: list[Value]) -> Value:
    return _table_lookup(args, columns=True)


@register("HLOOKUP", 3, 4)
def _hlookup(ev: Evaluator, args: list[Value]) -> Value:
    return _table_lookup(args, columns=False)


@register("INDEX", 1, 3)
def _index(ev: Evaluator, args: list[Value]) -> Value:
    table = _block(args[0])
    row = int(number(check(args[1]))) if len(args) > 1 and args[1] is not None else 0
    col = int(number(check(args[2]))) if len(args) > 2 and args[2] is not None else 0
    if len(args) == 2 and table.height == 1:
        row, col = 1, row
    if row < 0 or col < 0 or row > table.height or col > table.width:
        raise REF
    if row and col:
        return table.rows[row - 1][col - 1]
    if row:
        return Block([table.rows[row - 1]])
    if col:
        return Block([[r[col - 1]] for r in table.rows])
    return table


def _line(value: Value) -> list[Scalar]:
    table = _block(value)
    if table.height != 1 and table.width != 1:
        raise NA
    return table.flat()


@register("MATCH", 2, 3)
def _match(ev: Evaluator, args: list[Value]) -> Value:
    key, cells = _key(args[0]), _line(args[1])
    kind = int(number(check(args[2]))) if len(args) > 2 and args[2] is not None else 1
    found = _exact(key, cells) if kind == 0 else _sorted(key, cells, descending=kind < 0)
    if found is None:
        raise NA
    return float(found + 1)


def _nearest(key: Scalar, cells: list[Scalar], larger: bool) -> int | None:
    best: int | None = None
    for i, cell in enumerate(cells):
        if cell is None or not _same_kind(cell, key):
            continue
        order = compare(cell, key)
        if order == 0:
            return i
        if (order > 0) == larger and (best is None or (compare(cell, cells[best]) < 0) == larger):
            best = i
    return best


@register("XLOOKUP", 3, 6)
def _xlookup(ev: Evaluator, args: list[Value]) -> Value:
    key, cells, result = _key(args[0]), _line(args[1]), _block(args[2])
    mode = int(number(check(args[4]))) if len(args) > 4 and args[4] is not None else 0
    search = int(number(check(args[5]))) if len(args) > 5 and args[5] is not None else 1
    if mode not in (-1, 0, 1, 2) or search not in (-1, 1, 2, -2):
        raise VALUE
    vertical = _block(args[1]).width == 1
    if (result.height if vertical else result.width) != len(cells):
        raise VALUE
    if mode in (0, 2):
        plain = key if mode == 2 or not isinstance(key, str) else key.replace("~", "~~").replace(
            "*", "~*").replace("?", "~?")
        found = _exact(plain, cells, reverse=search < 0)
    else:
        found = _nearest(key, cells, larger=mode == 1)
    if found is None:
        if len(args) > 3 and args[3] is not None:
            return args[3]
        raise NA
    if vertical:
        return Block([result.rows[found]])
    return Block([[row[found]] for row in result.rows])
