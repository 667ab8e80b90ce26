"""The function table: name -> (fewest args, most args, implementation). Implementations take
the evaluator and the evaluated arguments (error values included) and return a value or raise
a FormulaError."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from mock_servers.core.formulas.values import NA, Block, FormulaError, Value, number

if TYPE_CHECKING:
    from mock_servers.core.formulas.evaluate import Evaluator

Impl = Callable[["Evaluator", list[Value]], Value]
NA_ARGS = NA  # a call with the wrong number of arguments
TABLE: dict[str, tuple[int, int, Impl]] = {}
MANY = 255


def register(name: str, low: int, high: int) -> Callable[[Impl], Impl]:
    def add(fn: Impl) -> Impl:
        TABLE[name] = (low, high, fn)
        return fn
    return add


def check(value: Value) -> Value:
    if isinstance(value, FormulaError):
        raise value
    return value


def numbers(args: list[Value]) -> Iterator[float]:
    """The numbers aggregate functions see: a range's numbers (text, booleans and empty cells
    skipped, errors raised); a direct argument coerced."""
    for arg in args:
        if isinstance(arg, Block):
            for cell in arg.flat():
                if isinstance(cell, FormulaError):
                    raise cell
                if isinstance(cell, float):
                    yield cell
        elif arg is not None:
            yield number(check(arg))
