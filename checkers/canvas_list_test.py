"""Checker of canvas_list_test: both CSV files against ground truth, plus no side effects."""

from __future__ import annotations

from collections.abc import Callable

from checkers.kit import CheckFn, Checks, Context, header, keys, order_as_truth, values
from checkers.normalize import S, T
from checkers.side_effects import no_side_effects
from envs.canvas_list_test import ASSIGNMENTS, DEADLINE, QUIZZES, TASK
from loca.core.outputs import TableFile


def utc_instant(got: object, want: object) -> bool:
    """`T` with the UTC designator required: ISO 8601 text ending in `Z`, the same instant."""
    text = S(got)
    instant = T(text) if text.endswith(("Z", "z")) else None
    return instant is not None and instant == T(want)


def both(make: Callable[[TableFile], CheckFn], *outs: TableFile) -> CheckFn:
    """One check made of the same check on each file, in order."""
    parts = [make(out) for out in outs]

    def check(ctx: Context) -> str:
        return "; ".join(part(ctx) for part in parts)

    return check


def _values(out: TableFile) -> CheckFn:
    return values(out, compare={DEADLINE: utc_instant})


CHECKS = Checks(
    TASK,
    headers=both(header, QUIZZES, ASSIGNMENTS),
    quiz_keys=keys(QUIZZES),
    assignment_keys=keys(ASSIGNMENTS),
    quiz_values=_values(QUIZZES),
    assignment_values=_values(ASSIGNMENTS),
    order=both(order_as_truth, QUIZZES, ASSIGNMENTS),
    no_side_effects=no_side_effects(TASK),
)
