"""Generator of academic_warning: `latest_quiz_scores.csv` in the workspace and the BigQuery
dataset `academic_warning` with one table per exam (`scores_<YYMM>`) and distractor tables
(`scores_template`, empty; `class_averages`; `scores_<YYMM>_retake` for the last exam, whose
retakers include a critical student, each retake moving its student's mean), plus an unrelated
grading log.

Scale: `num_students` (primary, the latest file); `num_exams` = clamp(round(n/40), 2, 15);
`num_former_students` (fine, default ceil(n/20)): students known only from the history, besides
the one every world has.

Every draw comes from the world's named RNG streams; Faker is seeded from them."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from sqlmodel import Session

from envs.academic_warning import (
    CRITICAL_KEY,
    DATASET,
    EXACT,
    KNOWN,
    LATEST_FILE,
    LATEST_HEADERS,
    REPORT,
    TASK,
    rounded,
)
from generators.academic_warning.plan import MAX_STUDENTS, Plan, Student, plan_world
from generators.common import PersonNames, create_world, finish_world, seeded_faker
from loca.core.clock import iso_z
from loca.core.outputs import csv_text
from loca.core.rng import WorldRng
from loca.core.world import World, WorldMeta, write_text_atomic
from mock_servers.google_cloud.seed import DatasetDef, EntryDef, FieldDef, TableDef, bigquery, log_entries

VERSION = "1"
PROJECT = "registrar-analytics"
NOW = datetime(2025, 1, 1, tzinfo=UTC)
RETAKERS = 3
RETAKE_GAIN = Decimal(10)  # a retake scores this much above the student's mean (at most 100)...
RETAKE_SHIFT = Decimal("0.01")  # ...unless that moves the mean by no more than this: then as much below
SCORE_FIELDS = [FieldDef("student_id", "STRING", "REQUIRED"), FieldDef("name", "STRING"),
                FieldDef("class_id", "STRING"), FieldDef("score", "FLOAT64")]


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_students: int = Field(ge=TASK.scale.lo, le=TASK.scale.hi)
    num_former_students: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _ids_fit(self) -> Params:
        p = self.resolved()
        total = p["num_students"] + p["num_former_students"] + 1  # the +1: the former student every world has
        if total > MAX_STUDENTS:
            raise ValueError(f"{total} students do not fit the fixed-width ids (at most {MAX_STUDENTS})")
        return self

    def resolved(self) -> dict[str, int]:
        former = self.num_former_students
        return {"num_students": self.num_students,
                "num_former_students": math.ceil(self.num_students / 20) if former is None else former}


def resolve_params(params: dict[str, object]) -> dict[str, int]:
    return Params.model_validate(params).resolved()


def _exam(plan: Plan, k: int) -> TableDef:
    rows = [(s.student_id, s.name, s.class_id, float(score)) for s in plan.students
            if (score := s.scores[k]) is not None]
    return TableDef(f"scores_{plan.months[k]}", SCORE_FIELDS, rows, description=f"Exam scores, 20{plan.months[k]}")


def _class_averages(plan: Plan) -> TableDef:
    rows = []
    for k, month in enumerate(plan.months):
        by_class: dict[str, list[Decimal]] = {}
        for s in plan.students:
            if (score := s.scores[k]) is not None:
                by_class.setdefault(s.class_id, []).append(score)
        for c in plan.classes:
            if got := by_class.get(c):
                rows.append((c, month, float(rounded(sum(got, Decimal(0)) / len(got), 1))))
    fields = [FieldDef("class_id", "STRING"), FieldDef("exam", "STRING"), FieldDef("avg_score", "FLOAT64")]
    return TableDef("class_averages", fields, rows, description="Mean exam score per class")


def retake_score(student: Student) -> Decimal:
    """The student's retake score: `RETAKE_GAIN` above their mean (capped at 100), or below it
    when the cap leaves too little gain for the retake, counted as an exam, to move the mean by
    more than `RETAKE_SHIFT` (a perfect student's retake would change no answer)."""
    tenth = Decimal("0.1")
    up = min(Decimal(100), student.hist_avg + RETAKE_GAIN).quantize(tenth)
    if up - student.hist_avg > RETAKE_SHIFT * (len(student.history) + 1):
        return up
    return (student.hist_avg - RETAKE_GAIN).quantize(tenth)


def _retake(plan: Plan, retakers: list[Student]) -> TableDef:
    rows = [(s.student_id, s.name, s.class_id, float(retake_score(s))) for s in retakers]
    return TableDef(f"scores_{plan.months[-1]}_retake", SCORE_FIELDS, sorted(rows),
                    description="Retake sitting of the last exam (not an exam of its own)")


def _write_cloud(session: Session, plan: Plan, rngs: WorldRng) -> None:
    rng = rngs.stream("retakers")
    critical = plan.critical()
    critical_ids = {s.student_id for s in critical}
    others = [s for s in plan.students if s.history and s.student_id not in critical_ids]
    retakers = [critical[0], *rng.sample(others, RETAKERS - 1)]
    tables = [_exam(plan, k) for k in range(len(plan.months))]
    tables += [TableDef("scores_template", SCORE_FIELDS, description="Template for new exam tables"),
               _class_averages(plan), _retake(plan, retakers)]
    created = NOW - timedelta(days=30)
    bigquery(session, PROJECT, [DatasetDef(DATASET, tables, description="Historical exam scores")], created)
    log_entries(session, [EntryDef("grading_pipeline", created + timedelta(days=d), "INFO",
                                   text=f"exam scores loaded: {t.name}") for d, t in enumerate(tables[:3])])


def _answer(plan: Plan) -> dict[str, Any]:
    rows = [{"student_id": s.student_id, "name": s.name, "score": str(s.latest), "hist_avg": rounded(s.hist_avg, 2),
             "drop_ratio": rounded(s.drop or Decimal(0), 4)} for s in plan.listed()]
    return {REPORT.file: rows, CRITICAL_KEY: [{"student_id": s.student_id, "name": s.name}
                                               for s in sorted(plan.critical(), key=lambda s: s.student_id)]}


def generate(root: Path, params: dict[str, object], seed: int,
             target_tokens: int | None = None) -> World:
    """Build the world directory for (params, seed). Pure in its inputs: same inputs, same
    content hash."""
    p = Params.model_validate(params).resolved()
    rngs = WorldRng(TASK.name, seed)
    names = PersonNames(seeded_faker(rngs.stream("faker")), rngs.stream("names"))
    plan = plan_world(rngs, names, p["num_students"], p["num_former_students"])
    meta = WorldMeta(task=TASK.name, seed=seed, params=p, now=iso_z(NOW), tz="UTC",
                     target_tokens=target_tokens, generator_version=VERSION,
                     accounts={"google_cloud": {"project": PROJECT}})
    world, db = create_world(root, meta, TASK.servers.values())
    with db.write() as session:
        _write_cloud(session, plan, rngs)
    db.dispose()
    latest = [s for s in plan.students if s.latest is not None]
    order = rngs.stream("file_order")
    order.shuffle(latest)
    write_text_atomic(world.workspace / LATEST_FILE, csv_text(LATEST_HEADERS, [
        [s.student_id, s.name, s.class_id, str(s.latest)] for s in latest]))
    exact = {s.student_id: [str(s.hist_avg), str(s.drop)] for s in plan.listed()}
    truth: dict[str, Any] = {EXACT: exact, KNOWN: {s.student_id: s.name for s in plan.students}}
    return finish_world(world, TASK, _answer(plan), **truth)
