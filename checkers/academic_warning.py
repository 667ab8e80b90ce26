"""Checker of academic_warning: `bad_student.csv` against ground truth (exact values within the
stated tolerances), the CRITICAL entries of `exam_log` one to one with the critical students,
and nothing else changed."""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from decimal import Decimal
from typing import Any

from checkers.kit import SHOWN, Checks, Context, header, keys, order_as_truth, read_table
from checkers.normalize import N, S, Si
from checkers.side_effects import no_side_effects
from checkers.verdict import CheckFailed
from envs.academic_warning import CRITICAL_KEY, EXACT, KNOWN, LOG, REPORT, TASK
from mock_servers.core.snapshot import Snapshot

STUDENT_ID = re.compile(r"(?<![A-Za-z0-9])S\d{5}(?!\d)")
TOLERANCES = {"score": Decimal("0.001"), "hist_avg": Decimal("0.0051"), "drop_ratio": Decimal("0.000051")}


def _close(got: Any, want: str, tolerance: Decimal) -> bool:
    value = N(got)
    return value is not None and abs(value - Decimal(want)) <= tolerance


def values(ctx: Context) -> str:
    """Per listed student: the name (`S`), score within 0.001, hist_avg within 0.0051 and
    drop_ratio within 0.000051 of the exact values."""
    expected = {r["student_id"]: r for r in ctx.answer(REPORT.file)}
    exact = ctx.truth[EXACT]
    wrong = []
    for row in read_table(ctx, REPORT).records(REPORT):
        sid = S(row["student_id"])
        if sid not in expected:
            continue
        want = {"name": expected[sid]["name"], "score": expected[sid]["score"],
                "hist_avg": exact[sid][0], "drop_ratio": exact[sid][1]}
        bad = [c for c in TOLERANCES if not _close(row[c], want[c], TOLERANCES[c])]
        bad += ["name"] if S(row["name"]) != S(want["name"]) else []
        wrong += [f"{sid}/{c}: got {row[c]!r}" for c in bad]
    if wrong:
        more = " ..." if len(wrong) > SHOWN else ""
        raise CheckFailed(f"{len(wrong)} wrong cells: {'; '.join(wrong[:SHOWN])}{more}")
    return "every listed student's values are right"


def _entries(ctx: Context) -> list[tuple[str, str]]:
    """(severity, text) of every entry added to the exam log; the text is the text payload or
    the JSON payload as stored."""
    before = Snapshot.model_validate(ctx.world.read_truth("snapshot.json")).tables["log_entry"].max_rowid

    def read() -> list[tuple[str, str]]:
        conn = sqlite3.connect(f"file:{ctx.world.state_path}?mode=ro", uri=True)
        try:
            found = conn.execute("SELECT severity, COALESCE(text_payload, json_payload, '') FROM log_entry "
                                 "WHERE rowid > ? AND log_name = ? ORDER BY rowid", (before, LOG)).fetchall()
        finally:
            conn.close()
        return [(str(s), str(t)) for s, t in found]

    entries: list[tuple[str, str]] = ctx.memo("exam_log", read)
    return entries


def _ids(ctx: Context, text: str) -> set[str]:
    known = ctx.truth[KNOWN]
    return {i for i in STUDENT_ID.findall(text) if i in known}


def critical_logs(ctx: Context) -> str:
    """The CRITICAL entries map one to one to the critical students: each names exactly one
    known student_id, a critical one, and that student's name (`Si`)."""
    critical = {c["student_id"]: c["name"] for c in ctx.answer(CRITICAL_KEY)}
    found: list[str] = []
    wrong = []
    for severity, text in _entries(ctx):
        if severity != "CRITICAL":
            continue
        ids = _ids(ctx, text)
        sid = next(iter(ids)) if len(ids) == 1 else None
        if sid is None or sid not in critical or Si(critical[sid]) not in Si(text):
            wrong.append(text[:80])
        else:
            found.append(sid)
    missing = sorted(set(critical) - set(found))
    twice = sorted(i for i, n in Counter(found).items() if n > 1)
    problems = [f"{what}: {items[:SHOWN]} ({len(items)})" for what, items in (
        ("entries without exactly one critical student's id and name", wrong),
        ("critical students not logged", missing), ("logged more than once", twice)) if items]
    if problems:
        raise CheckFailed("; ".join(problems))
    return f"one CRITICAL entry per critical student ({len(found)})"


def no_extra_logs(ctx: Context) -> str:
    """The exam log gets no entry below CRITICAL and none naming a student who is not critical."""
    critical = {c["student_id"] for c in ctx.answer(CRITICAL_KEY)}
    entries = _entries(ctx)
    low = [t[:80] for s, t in entries if s != "CRITICAL"]
    others = sorted({i for _, t in entries for i in _ids(ctx, t) - critical})
    problems = [f"{what}: {items[:SHOWN]} ({len(items)})" for what, items in (
        ("entries below CRITICAL", low), ("non-critical students named", others)) if items]
    if problems:
        raise CheckFailed("; ".join(problems))
    return f"{len(entries)} entries in {LOG}, all CRITICAL, about critical students only"


CHECKS = Checks(
    TASK,
    header=header(REPORT),
    id_set=keys(REPORT),
    values=values,
    order=order_as_truth(REPORT),
    critical_logs=critical_logs,
    no_extra_logs=no_extra_logs,
    no_side_effects=no_side_effects(TASK),
)
