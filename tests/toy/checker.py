"""Checker of toy: `totals.csv` against ground truth, plus no side effects."""

from __future__ import annotations

from checkers.kit import Checks, header, keys, order_as_truth, values
from checkers.side_effects import no_side_effects
from tests.toy import TASK, TOTALS

CHECKS = Checks(
    TASK,
    header=header(TOTALS),
    keys=keys(TOTALS),
    values=values(TOTALS),
    order=order_as_truth(TOTALS),
    no_side_effects=no_side_effects(TASK),
)
