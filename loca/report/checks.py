"""The rubric-level view, beside the strict task score (as CL-bench and MMCL-Bench report it):
each named check's pass rate by length, per task and overall, so that one sees which
requirement breaks first as the context grows.

A check's pass rate counts the episodes whose verdict (graded, or diagnostic for an ungraded
agent ending) holds that check; episodes without one (not finished, infrastructure failures)
are left out and counted apart. Per task, `all checks` is the mean share of a verdict's checks
passed and `task score` the strict accuracy (successes over planned episodes). Overall
(`all tasks`), the same two over every task, and each check several tasks share (the common
kit's requirements: side effects, order, values...) pooled over them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from loca.report.load import Dataset, Entry, Row
from loca.report.table import Table, Value
from loca.report.tables import heading

ALL_TASKS = "all tasks"
ALL_CHECKS = "all checks"
TASK_SCORE = "task score"


@dataclass(frozen=True)
class CheckRates:
    """One line of the view: a check (or `all checks`, `task score`) of a task (or `all
    tasks`) in a row, its pass rate (0..1) per length and over all lengths (None)."""

    row: Row
    task: str
    check: str
    rates: dict[int | None, float | None]
    episodes: int
    """Episodes with a verdict that counted (for `task score`: planned episodes)."""


def verdict_checks(episode: Entry) -> dict[str, bool] | None:
    """The named checks of an episode's verdict, None when it has none."""
    named = {c.name: c.passed for c in episode.record.checks} if episode.record else {}
    return named or None


def _rate(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _line(row: Row, task: str, check: str, lengths: list[int],
          by_length: dict[int, list[float]]) -> CheckRates:
    rates: dict[int | None, float | None] = {n: _rate(by_length.get(n, [])) for n in lengths}
    rates[None] = _rate([v for n in lengths for v in by_length.get(n, [])])
    return CheckRates(row, task, check, rates, sum(len(v) for v in by_length.values()))


def _lines(data: Dataset, row: Row, task: str, episodes: list[Entry]) -> list[CheckRates]:
    """`task score`, `all checks` and each check of `episodes` (checks in verdict order)."""
    strict: dict[int, list[float]] = defaultdict(list)
    share: dict[int, list[float]] = defaultdict(list)
    each: dict[str, dict[int, list[float]]] = {}
    for episode in episodes:
        strict[episode.length].append(float(episode.success))
        checks = verdict_checks(episode)
        if checks is None:
            continue
        share[episode.length].append(sum(checks.values()) / len(checks))
        for name, passed in checks.items():
            each.setdefault(name, defaultdict(list))[episode.length].append(float(passed))
    lengths = data.lengths
    return [_line(row, task, TASK_SCORE, lengths, strict), _line(row, task, ALL_CHECKS, lengths, share),
            *(_line(row, task, name, lengths, by_length) for name, by_length in each.items())]


def check_rates(data: Dataset) -> list[CheckRates]:
    """Per row: each task's lines (tasks in name order), then the overall ones, where checks
    that several tasks share are pooled over them."""
    out: list[CheckRates] = []
    for row in data.rows:
        mine = data.of(row)
        tasks = sorted({e.task for e in mine})
        for task in tasks:
            out += _lines(data, row, task, [e for e in mine if e.task == task])
        overall = _lines(data, row, ALL_TASKS, mine)
        owners: dict[str, set[str]] = defaultdict(set)
        for e in mine:
            for name in verdict_checks(e) or {}:
                owners[name].add(e.task)
        out += [line for line in overall if line.check in (TASK_SCORE, ALL_CHECKS)
                or len(owners[line.check]) > 1]
    return out


def checks_table(data: Dataset, rates: list[CheckRates]) -> Table:
    lengths: list[int | None] = [*data.lengths, None]
    table = Table("checks", "Check pass rates (%) by length, beside the strict task score",
                  [*data.label_columns, "task", "check"], [*(heading(n) for n in lengths), "episodes"])
    for line in rates:
        rates_shown = [Value(None if (r := line.rates[n]) is None else 100 * r) for n in lengths]
        table.add([*data.labels(line.row), line.task, line.check],
                  [*rates_shown, Value(line.episodes, digits=0)])
    table.notes.append(f"A check's pass rate is over the episodes whose verdict (graded or diagnostic) "
                       f"holds it; `{ALL_CHECKS}`: the mean share of a verdict's checks passed; "
                       f"`{TASK_SCORE}`: successes over planned episodes (the accuracy). Under "
                       f"`{ALL_TASKS}`, checks several tasks share are pooled over them.")
    return table
