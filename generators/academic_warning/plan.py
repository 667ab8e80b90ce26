"""The plan of an academic_warning world: students (in the latest file, in the exam history or
both), their exam scores and latest quiz scores. Pure: named random streams in, plan out.

Guarantees: every listed student's drop ratio is at least 0.002 away from 0.25 and 0.45; the
listed students' drop ratios differ once rounded to 4 decimals (so the order has one reading);
each threshold has a near miss on each side (0.002 to 0.01 away); there are critical and
non-critical listed students, students who missed exams (the student listed just above 0.25
among them), a latest student without history, history students absent from the latest file and
two students sharing a full name."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property

from envs.academic_warning import CRITICAL, WARN, rounded
from generators.common import PersonNames
from loca.core.rng import WorldRng

FIRST_MONTH = (2023, 1)  # exams are monthly from here, some months skipped
LAST_MONTH = (2024, 12)  # the last exam month before the world's now (2025-01-01)
MARGIN = Decimal("0.002")  # no drop ratio this close to a threshold
NEAR = (0.003, 0.009)  # a near miss lies this far from its threshold
DROP_SHARE, CRITICAL_SHARE, MISS_SHARE = 0.2, 0.3, 0.1
MAX_REDRAWS = 200
ID_DIGITS = 5  # student ids are fixed-width, S00001 up to S99999
MAX_STUDENTS = 10**ID_DIGITS - 1


@dataclass(frozen=True)
class Student:
    student_id: str
    name: str
    class_id: str
    scores: tuple[Decimal | None, ...]  # per exam; None: missed
    latest: Decimal | None  # None: not in the latest file

    @cached_property
    def history(self) -> list[Decimal]:
        return [s for s in self.scores if s is not None]

    @cached_property
    def hist_avg(self) -> Decimal:
        return sum(self.history, Decimal(0)) / len(self.history)

    @cached_property
    def drop(self) -> Decimal | None:
        """drop_ratio, or None for a student not in the latest file or without history."""
        if self.latest is None or not self.history:
            return None
        return (self.hist_avg - self.latest) / self.hist_avg


@dataclass(frozen=True)
class Plan:
    students: tuple[Student, ...]  # by student_id
    months: tuple[str, ...]  # YYMM per exam
    classes: tuple[str, ...]

    def listed(self) -> list[Student]:
        """The students of the report, by drop ratio descending, then student_id."""
        bad = [s for s in self.students if (d := s.drop) is not None and d > WARN]
        return sorted(bad, key=lambda s: (-(s.drop or 0), s.student_id))

    def critical(self) -> list[Student]:
        return [s for s in self.listed() if (s.drop or 0) > CRITICAL]


def num_exams(num_students: int) -> int:
    return min(15, max(2, math.floor(num_students / 40 + 0.5)))


def _months(rng: random.Random, count: int) -> tuple[str, ...]:
    """YYMM of each exam: monthly from `FIRST_MONTH`, some months skipped, the whole run moved
    earlier where it would pass `LAST_MONTH`."""
    steps = [rng.choice((1, 1, 2)) for _ in range(count)]
    first = FIRST_MONTH[0] * 12 + FIRST_MONTH[1] - 1
    at = min(first, LAST_MONTH[0] * 12 + LAST_MONTH[1] - 1 - sum(steps[:-1]))
    out = []
    for step in steps:
        out.append(f"{at // 12 % 100:02d}{at % 12 + 1:02d}")
        at += step
    return tuple(out)


def _score(value: float) -> Decimal:
    return Decimal(str(round(min(100.0, max(0.0, value)), 1)))


def _names(names: PersonNames, count: int) -> list[str]:
    """Full names, unique but for one pair sharing a name."""
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < count - 1:
        name = names.full()
        if name not in seen:
            seen.add(name)
            out.append(name)
    return [*out, out[len(out) // 2]]


def _kinds(rng: random.Random, with_history: int) -> list[str]:
    """The drop kind of each latest student with history, shuffled: critical and listed drops
    (one near miss on each side of 0.45 among them), one near miss on each side of 0.25, and
    the others."""
    drops = max(4, round(DROP_SHARE * with_history))
    critical = max(1, round(CRITICAL_SHARE * drops))
    kinds = (["near_45_above"] + ["critical"] * (critical - 1) + ["near_45_below", "near_25_above"]
             + ["drop"] * (drops - critical - 2) + ["near_25_below"] + ["other"] * (with_history - drops - 1))
    rng.shuffle(kinds)
    return kinds


RANGES = {"critical": (0.46, 0.55), "drop": (0.26, 0.44), "other": (-0.15, 0.20),
          "near_45_above": (0.45 + NEAR[0], 0.45 + NEAR[1]), "near_45_below": (0.45 - NEAR[1], 0.45 - NEAR[0]),
          "near_25_above": (0.25 + NEAR[0], 0.25 + NEAR[1]), "near_25_below": (0.25 - NEAR[1], 0.25 - NEAR[0])}


def _fits(kind: str, drop: Decimal) -> bool:
    """The drawn latest score keeps its kind's side of the thresholds, away from them."""
    if any(abs(drop - t) < MARGIN for t in (WARN, CRITICAL)):
        return False
    if kind.startswith("near_"):
        threshold = WARN if "25" in kind else CRITICAL
        above = kind.endswith("above")
        return MARGIN <= abs(drop - threshold) <= Decimal("0.01") and (drop > threshold) == above
    lo, hi = RANGES[kind]
    return Decimal(str(lo)) - Decimal("0.005") <= drop <= Decimal(str(hi)) + Decimal("0.005")


def _latest(rng: random.Random, kind: str, hist: Decimal, taken: set[str]) -> Decimal:
    """A latest score whose drop ratio fits its kind and, when listed, is unique at 4 decimals."""
    for _ in range(MAX_REDRAWS):
        score = _score(float(hist) * (1 - rng.uniform(*RANGES[kind])))
        drop = (hist - score) / hist
        key = rounded(drop, 4)
        if _fits(kind, drop) and not (drop > WARN and key in taken):
            if drop > WARN:
                taken.add(key)
            return score
    raise RuntimeError(f"no latest score fits a {kind} student with history {hist}")


def plan_world(rngs: WorldRng, names: PersonNames, num_students: int, num_former: int) -> Plan:
    """`num_students` in the latest file (one of them without history) and `num_former + 1`
    students known only from the history."""
    rng, scores = rngs.stream("roles"), rngs.stream("scores")
    exams = num_exams(num_students)
    months = _months(rngs.stream("months"), exams)
    classes = tuple(f"CLS-{101 + i}" for i in range(max(3, math.ceil(num_students / 35))))
    total = num_students + num_former + 1
    ids = [f"S{n:0{ID_DIGITS}d}" for n in range(1, total + 1)]
    rng.shuffle(ids)
    full_names = _names(names, total)
    no_history, former = ids[0], set(ids[1:num_former + 2])
    with_history = [i for i in ids if i != no_history and i not in former]
    kinds = dict(zip(with_history, _kinds(rng, len(with_history)), strict=True))
    missing = set(rng.sample(ids[1:], max(1, round(MISS_SHARE * total))))
    # The student listed just above 0.25 missed an exam: counted as a 0, it would take them off the list.
    missing.add(next(sid for sid in with_history if kinds[sid] == "near_25_above"))
    taken: set[str] = set()
    students = []
    for sid, name in zip(ids, full_names, strict=True):
        ability = min(100.0, max(40.0, scores.gauss(75, 15)))
        row = [None if sid == no_history else _score(ability + scores.gauss(0, 8)) for _ in range(exams)]
        if sid in missing:
            for k in rng.sample(range(exams), rng.randint(1, exams - 1)):
                row[k] = None
        history = [s for s in row if s is not None]
        latest = None
        if sid == no_history:
            latest = _score(ability)
        elif sid not in former:
            latest = _latest(scores, kinds[sid], sum(history, Decimal(0)) / len(history), taken)
        students.append(Student(sid, name, rng.choice(classes), tuple(row), latest))
    return Plan(tuple(sorted(students, key=lambda s: s.student_id)), months, classes)
