"""Evaluate a parsed formula over a `Book` (the cells it may read). Error values propagate as
spreadsheets propagate them; the work one evaluation may do is bounded by a `WorkBudget`."""

from __future__ import annotations

import math
from typing import Protocol

from mock_servers.core.formulas import functions
from mock_servers.core.formulas.a1 import Ref
from mock_servers.core.formulas.parser import Func, Name, Node, Op
from mock_servers.core.formulas.values import (
    DIV0,
    ERROR,
    NAME,
    NUM,
    REF,
    Block,
    FormulaError,
    Scalar,
    Serial,
    Value,
    compare,
    number,
    scalar,
    text,
)


class Book(Protocol):
    """The cells a formula reads. `sheet` None is the formula's own sheet."""

    def size(self, sheet: str | None) -> tuple[int, int] | None:
        """(rows, columns) of the sheet's grid; None when there is no such sheet."""

    def block(self, sheet: str | None, r1: int, c1: int, r2: int, c2: int) -> list[list[Scalar]]:
        """The values of a rectangle inside the grid (0-based, inclusive), None when empty."""


class BudgetExceeded(Exception):
    """The evaluation would read more cells than its budget allows."""


class WorkBudget:
    """Cells all the evaluations of one recalculation may read together."""

    def __init__(self, cells: int) -> None:
        self.left = cells
        self.limit = cells

    def spend(self, cells: int) -> None:
        self.left -= cells
        if self.left < 0:
            raise BudgetExceeded(f"recalculation would read more than {self.limit} cells")


class Evaluator:
    def __init__(self, book: Book, today: float, budget: WorkBudget) -> None:
        self.book = book
        self.today = today
        self.budget = budget

    def evaluate(self, node: Node) -> Scalar:
        """The formula's value (a one-cell range is its cell; a larger one #VALUE!)."""
        try:
            result = scalar(self.value(node))
        except FormulaError as exc:
            return exc
        except RecursionError:  # parse bounds the depth; this is the last guard
            return ERROR
        if isinstance(result, float) and not math.isfinite(result):
            return NUM
        return result

    def value(self, node: Node) -> Value:
        if isinstance(node, Ref):
            return self.block(node)
        if isinstance(node, Func):
            return self.call(node)
        if isinstance(node, Op):
            return self.operate(node)
        if isinstance(node, Name):
            return NAME
        return node

    def arg(self, node: Node) -> Value:
        """An argument's value; an error value is returned, not raised."""
        try:
            return self.value(node)
        except FormulaError as exc:
            return exc

    def block(self, ref: Ref) -> Block:
        size = self.book.size(ref.sheet)
        if size is None:
            raise REF
        r1, c1, r2, c2 = ref.bounds
        last_row = size[0] - 1 if r2 is None else min(r2, size[0] - 1)
        last_col = size[1] - 1 if c2 is None else min(c2, size[1] - 1)
        if last_row < r1 or last_col < c1:
            return Block([])
        self.budget.spend((last_row - r1 + 1) * (last_col - c1 + 1))
        return Block(self.book.block(ref.sheet, r1, c1, last_row, last_col))

    def call(self, node: Func) -> Value:
        impl = functions.TABLE.get(node.name)
        if impl is None:
            raise NAME
        low, high, fn = impl
        if not low <= len(node.args) <= high:
            raise functions.NA_ARGS
        return fn(self, [self.arg(a) for a in node.args])

    def operate(self, node: Op) -> Value:
        if node.op == "neg":
            return -number(self.value(node.args[0]))
        if node.op == "pct":
            return number(self.value(node.args[0])) / 100
        left, right = (scalar(self.value(a)) for a in node.args)
        for side in (left, right):
            if isinstance(side, FormulaError):
                raise side
        if node.op == "&":
            return text(left) + text(right)
        if node.op in ("=", "<>", "<", ">", "<=", ">="):
            order = compare(left, right)
            return {"=": order == 0, "<>": order != 0, "<": order < 0, ">": order > 0,
                    "<=": order <= 0, ">=": order >= 0}[node.op]
        return _arithmetic(node.op, left, right)


def _arithmetic(op: str, left: Scalar, right: Scalar) -> float:
    a, b = number(left), number(right)
    if op == "+":
        result = a + b
    elif op == "-":
        result = a - b
    elif op == "*":
        return a * b
    elif op == "/":
        if b == 0:
            raise DIV0
        return a / b
    else:
        try:
            return float(a ** b) if not (a < 0 and b != int(b)) else _raise(NUM)
        except (OverflowError, ZeroDivisionError):
            raise (DIV0 if a == 0 else NUM) from None
    dated = isinstance(left, Serial) != isinstance(right, Serial) if op == "+" else (
        isinstance(left, Serial) and not isinstance(right, Serial))
    return Serial(result) if dated else result


def _raise(error: FormulaError) -> float:
    raise error

