"""Scripted agents of academic_warning: the oracle (reads the latest file, lists the dataset's
tables, dumps every `scores_<YYMM>` table, writes the report and one CRITICAL entry per critical
student) and its failure-mode mutants, each one knob away from the oracle."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from envs.academic_warning import (
    CRITICAL,
    CRITICAL_KEY,
    DATASET,
    EXAM_TABLE,
    LIST_PAGE,
    LOG,
    REPORT,
    TRAP_PAGE,
    WARN,
    read_everything,
    rounded,
)
from loca.core.outputs import csv_text
from loca.core.script import Mutant, Script, ScriptedAgents, ToolRequest, Tools, call, call_all

EVERY_SCORES_TABLE = re.compile(r"scores_.*|class_averages")


@dataclass(frozen=True)
class Knobs:
    """How an agent deviates from the oracle (all off: the oracle)."""

    first_page_only: bool = False  # M1: reads one short page of the table listing
    every_table: bool = False  # M2: class_averages and the retake table count as exams
    log_every_drop: bool = False  # M3: logs every listed student as CRITICAL
    perturb: bool = False  # M4: one hist_avg off by 0.1
    name_in_log: bool = True  # M5 leaves the name out of the log message
    header: tuple[str, ...] = tuple(REPORT.headers)
    ascending: bool = False  # lowest drop first
    severity: str = "CRITICAL"
    drop_template: bool = False  # deletes the empty template table
    missed_as_zero: bool = False  # an exam without a row for the student counts as a score of 0


def _history(dumps: dict[str, list[dict[str, Any]]]) -> dict[str, list[Decimal]]:
    """Every student's historical scores (rows without a student or a score are skipped)."""
    scores: dict[str, list[Decimal]] = {}
    for rows in dumps.values():
        for row in rows:
            if row.get("student_id") and row.get("score") is not None:
                scores.setdefault(str(row["student_id"]), []).append(Decimal(str(row["score"])))
    return scores


def derive(instruction: str, tools: Tools, knobs: Knobs) -> Script:
    """Read everything; the report's rows (in order) and the critical students."""
    page = TRAP_PAGE if knobs.first_page_only else LIST_PAGE
    keep = EVERY_SCORES_TABLE if knobs.every_table else EXAM_TABLE
    latest_text, dumps = yield from read_everything(tools, page, knobs.first_page_only, keep)
    history = _history(dumps)
    listed = []
    for row in csv.DictReader(io.StringIO(latest_text)):
        past = history.get(row["student_id"])
        if not past:
            continue
        hist = sum(past, Decimal(0)) / (len(dumps) if knobs.missed_as_zero else len(past))
        drop = (hist - Decimal(row["score"])) / hist
        if drop > WARN:
            listed.append((drop, row, hist))
    listed.sort(key=lambda x: (-x[0], x[1]["student_id"]), reverse=knobs.ascending)
    rows = [{"student_id": r["student_id"], "name": r["name"], "score": r["score"],
             "hist_avg": rounded(hist + (Decimal("0.1") if knobs.perturb and i == 0 else 0), 2),
             "drop_ratio": rounded(drop, 4)} for i, (drop, r, hist) in enumerate(listed)]
    threshold = WARN if knobs.log_every_drop else CRITICAL
    critical = [{"student_id": r["student_id"], "name": r["name"]} for drop, r, _ in listed if drop > threshold]
    return {REPORT.file: rows, CRITICAL_KEY: sorted(critical, key=lambda c: c["student_id"])}


def _message(entry: dict[str, str], row: dict[str, str] | None, knobs: Knobs) -> str:
    payload = {"student_id": entry["student_id"], "drop_ratio": row["drop_ratio"] if row else None}
    return json.dumps({**payload, "name": entry["name"]} if knobs.name_in_log else payload)


def write(instruction: str, tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    """The report, then one log entry per critical student, all in one turn."""
    rows = answer[REPORT.file]
    yield from call(tools("filesystem", "write_file"), {"path": REPORT.file, "content": csv_text(
        knobs.header, [[r[h] for h in REPORT.headers] for r in rows])})
    by_id = {r["student_id"]: r for r in rows}
    tool = tools("google_cloud", "logging_write_log")
    yield from call_all([ToolRequest(tool, {"log_name": LOG, "severity": knobs.severity,
                                            "message": _message(e, by_id.get(e["student_id"]), knobs)})
                         for e in answer[CRITICAL_KEY]])
    if knobs.drop_template:
        yield from call(tools("google_cloud", "bigquery_run_query"),
                        {"query": f"DROP TABLE `{DATASET}.scores_template`"})


AGENTS = ScriptedAgents(
    derive=derive,
    write=write,
    oracle=Knobs(),
    mutants={
        "first_page": Mutant(Knobs(first_page_only=True), "values"),
        "every_scores_table": Mutant(Knobs(every_table=True), "values"),
        "logs_every_drop": Mutant(Knobs(log_every_drop=True), "no_extra_logs"),
        "perturbed_hist_avg": Mutant(Knobs(perturb=True), "values"),
        "no_name_in_log": Mutant(Knobs(name_in_log=False), "critical_logs"),
        "renamed_column": Mutant(Knobs(header=("student_id", "name", "score", "hist_avg", "drop")), "header"),
        "ascending": Mutant(Knobs(ascending=True), "order"),
        "error_severity": Mutant(Knobs(severity="ERROR"), "critical_logs"),
        "drops_template": Mutant(Knobs(drop_template=True), "no_side_effects"),
        "missed_as_zero": Mutant(Knobs(missed_as_zero=True), "id_set"),
    },
    noop_must_fail="id_set",
)
