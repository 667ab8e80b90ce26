"""Aggregate, logical and date functions; `TABLE` holds every function, those of `lookup` and
`text` included."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import date
from decimal import ROUND_CEILING, ROUND_DOWN, ROUND_FLOOR, ROUND_HALF_UP, Decimal, InvalidOperation
from typing import TYPE_CHECKING

from mock_servers.core.formulas import lookup as lookup
from mock_servers.core.formulas import text as text
from mock_servers.core.formulas.criteria import matcher
from mock_servers.core.formulas.registry import MANY, NA_ARGS, check, numbers, register
from mock_servers.core.formulas.registry import TABLE as TABLE
from mock_servers.core.formulas.values import (
    DIV0,
    NA,
    NUM,
    VALUE,
    Block,
    FormulaError,
    Scalar,
    Serial,
    Value,
    boolean,
    date_serial,
    number,
    scalar,
    serial_date,
)

if TYPE_CHECKING:
    from mock_servers.core.formulas.evaluate import Evaluator

@register("SUM", 1, MANY)
def _sum(ev: Evaluator, args: list[Value]) -> Value:
    return math.fsum(numbers(args))


@register("AVERAGE", 1, MANY)
def _average(ev: Evaluator, args: list[Value]) -> Value:
    found = list(numbers(args))
    if not found:
        raise DIV0
    return math.fsum(found) / len(found)


@register("COUNT", 1, MANY)
def _count(ev: Evaluator, args: list[Value]) -> Value:
    cells = [c for a in args for c in (a.flat() if isinstance(a, Block) else [a])]
    return float(sum(isinstance(c, float) for c in cells))


@register("COUNTA", 1, MANY)
def _counta(ev: Evaluator, args: list[Value]) -> Value:
    cells = [c for a in args for c in (a.flat() if isinstance(a, Block) else [a])]
    return float(sum(c is not None and c != "" for c in cells))


@register("MIN", 1, MANY)
def _min(ev: Evaluator, args: list[Value]) -> Value:
    return min(numbers(args), default=0.0)


@register("MAX", 1, MANY)
def _max(ev: Evaluator, args: list[Value]) -> Value:
    return max(numbers(args), default=0.0)


def _pairs(args: list[Value], first: int) -> list[tuple[Block, Callable[[Scalar], bool]]]:
    """(range, test) of the criteria pairs from `args[first]` on, all ranges of one shape."""
    if (len(args) - first) % 2:
        raise NA_ARGS
    pairs = []
    for rng, crit in zip(args[first::2], args[first + 1::2]):
        if not isinstance(rng, Block):
            raise VALUE
        pairs.append((rng, matcher(scalar(crit))))
    shapes = {(r.height, r.width) for r, _ in pairs}
    if len(shapes) > 1:
        raise VALUE
    return pairs


def _hits(pairs: list[tuple[Block, Callable[[Scalar], bool]]]) -> list[int]:
    cells = [r.flat() for r, _ in pairs]
    tests = [t for _, t in pairs]
    return [i for i in range(len(cells[0])) if all(t(c[i]) for t, c in zip(tests, cells))]


@register("COUNTIF", 2, 2)
def _countif(ev: Evaluator, args: list[Value]) -> Value:
    return float(len(_hits(_pairs(args, 0))))


@register("COUNTIFS", 2, MANY)
def _countifs(ev: Evaluator, args: list[Value]) -> Value:
    return float(len(_hits(_pairs(args, 0))))


def _summed(target: Value, hits: list[int]) -> float:
    if not isinstance(target, Block):
        raise VALUE
    cells = target.flat()
    total = []
    for i in hits:
        cell = cells[i] if i < len(cells) else None
        if isinstance(cell, FormulaError):
            raise cell
        if isinstance(cell, float):
            total.append(cell)
    return math.fsum(total)


@register("SUMIF", 2, 3)
def _sumif(ev: Evaluator, args: list[Value]) -> Value:
    hits = _hits(_pairs(args[:2], 0))
    return _summed(args[2] if len(args) == 3 else args[0], hits)


@register("SUMIFS", 3, MANY)
def _sumifs(ev: Evaluator, args: list[Value]) -> Value:
    pairs = _pairs(args, 1)
    target = args[0]
    if not isinstance(target, Block) or (target.height, target.width) != (pairs[0][0].height, pairs[0][0].width):
        raise VALUE
    return _summed(target, _hits(pairs))


def _rounded(args: list[Value], mode: str) -> float:
    value = number(check(args[0]))
    places = int(number(check(args[1]))) if len(args) > 1 and args[1] is not None else 0
    try:
        quantum = Decimal(1).scaleb(-places)
        result = Decimal(repr(value)).quantize(quantum, rounding=mode)
    except InvalidOperation:
        raise NUM from None
    return float(result)


_AWAY = {True: ROUND_CEILING, False: ROUND_FLOOR}


@register("ROUND", 1, 2)
def _round(ev: Evaluator, args: list[Value]) -> Value:
    return _rounded(args, ROUND_HALF_UP)


@register("ROUNDUP", 1, 2)
def _roundup(ev: Evaluator, args: list[Value]) -> Value:
    return _rounded(args, _AWAY[number(check(args[0])) >= 0])


@register("ROUNDDOWN", 1, 2)
def _rounddown(ev: Evaluator, args: list[Value]) -> Value:
    return _rounded(args, ROUND_DOWN)


@register("ABS", 1, 1)
def _abs(ev: Evaluator, args: list[Value]) -> Value:
    return abs(number(check(args[0])))


@register("IF", 2, 3)
def _if(ev: Evaluator, args: list[Value]) -> Value:
    if boolean(check(args[0])):
        return args[1]
    return args[2] if len(args) == 3 else False


@register("IFS", 2, MANY)
def _ifs(ev: Evaluator, args: list[Value]) -> Value:
    if len(args) % 2:
        raise NA_ARGS
    for cond, result in zip(args[::2], args[1::2]):
        if boolean(check(cond)):
            return result
    raise NA


@register("IFERROR", 1, 2)
def _iferror(ev: Evaluator, args: list[Value]) -> Value:
    try:
        return scalar(check(args[0]))
    except FormulaError:
        return args[1] if len(args) == 2 else ""


def _truths(args: list[Value]) -> list[bool]:
    found: list[bool] = []
    for arg in args:
        for cell in arg.flat() if isinstance(arg, Block) else [arg]:
            if isinstance(cell, FormulaError):
                raise cell
            if isinstance(cell, (bool, float)) or not isinstance(arg, Block):
                found.append(boolean(cell))
    if not found:
        raise VALUE
    return found


@register("AND", 1, MANY)
def _and(ev: Evaluator, args: list[Value]) -> Value:
    return all(_truths(args))


@register("OR", 1, MANY)
def _or(ev: Evaluator, args: list[Value]) -> Value:
    return any(_truths(args))


@register("NOT", 1, 1)
def _not(ev: Evaluator, args: list[Value]) -> Value:
    return not boolean(check(args[0]))


@register("DATE", 3, 3)
def _date(ev: Evaluator, args: list[Value]) -> Value:
    year, month, day = (int(number(check(a))) for a in args)
    if 0 <= year < 1900:
        year += 1900
    month_index = year * 12 + month - 1
    try:
        first = date(month_index // 12, month_index % 12 + 1, 1)
    except ValueError:
        raise NUM from None
    return Serial(date_serial(first) + day - 1)


def _day(args: list[Value]) -> date:
    return serial_date(number(check(args[0])))


@register("YEAR", 1, 1)
def _year(ev: Evaluator, args: list[Value]) -> Value:
    return float(_day(args).year)


@register("MONTH", 1, 1)
def _month(ev: Evaluator, args: list[Value]) -> Value:
    return float(_day(args).month)


@register("DAY", 1, 1)
def _dayf(ev: Evaluator, args: list[Value]) -> Value:
    return float(_day(args).day)


@register("TODAY", 0, 0)
def _today(ev: Evaluator, args: list[Value]) -> Value:
    return ev.today
