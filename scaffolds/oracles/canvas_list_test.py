"""Scripted agents of canvas_list_test: the oracle (solves through the tools only) and its
failure-mode mutants, each one knob away from the oracle."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from envs.canvas_list_test import (
    ASSIGNMENTS,
    DEADLINE,
    MAX_PAGE,
    QUIZZES,
    TRAP_PAGE,
    Reads,
    read_everything,
)
from loca.core.outputs import TableFile, csv_text
from loca.core.script import Mutant, Script, ScriptedAgents, Tools, call

SCORE = re.compile(r"exam score for (\S+): (\d+)")
THRESHOLD = re.compile(r"at least (\d+)|(\d+) or (?:higher|above)")
TURNED_IN = {"quiz": ("complete", "pending_review"), "assignment": ("submitted", "graded")}


@dataclass(frozen=True)
class Knobs:
    """How an agent deviates from the oracle (all off: the oracle)."""

    first_page_only: bool = False  # reads one short page of courses
    ignore_exemptions: bool = False  # M1
    keep_examples: bool = False  # M2: leaves the example rows in place
    keep_submitted: bool = False  # M3: lists work already turned in
    keep_past: bool = False  # M3: lists work whose deadline has passed
    title_before_code: bool = False  # M4: breaks deadline ties by title first
    local_deadlines: bool = False  # M5: deadlines in the course's local time, without Z
    drop_quotes: bool = False  # turns double quotes of descriptions into single ones
    rename_title_column: bool = False  # writes "title" over quiz_title / assignment_title
    submit_work: bool = False  # also submits an assignment (a side effect)


def _now(instruction: str) -> datetime:
    match = re.search(r"Now is (\S+Z)\.", instruction)
    if not match:
        raise ValueError("the instruction does not state the current time")
    return _instant(match.group(1))


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _scores(graph: dict[str, Any]) -> dict[str, int]:
    """My exam score per course code, from the memory observations."""
    found = [SCORE.fullmatch(o) for e in graph["entities"] for o in e["observations"]]
    return {m.group(1): int(m.group(2)) for m in found if m}


def _threshold(announcements: list[dict[str, Any]]) -> int | None:
    """The exam score an exemption policy announced in the course asks for, if any."""
    for topic in announcements:
        if "exempt" in topic["message"].lower():
            match = THRESHOLD.search(topic["message"])
            if match:
                return int(next(g for g in match.groups() if g))
    return None


def _exempt(course: dict[str, Any], reads: Reads, scores: dict[str, int]) -> bool:
    threshold = _threshold(reads.announcements[course["id"]])
    score = scores.get(course["course_code"])
    return threshold is not None and score is not None and score >= threshold


def _to_do(item: dict[str, Any], submission: dict[str, Any], kind: str, now: datetime, knobs: Knobs) -> bool:
    """Still to submit: deadline after now and not turned in."""
    if item["due_at"] is None or (_instant(item["due_at"]) <= now and not knobs.keep_past):
        return False
    return knobs.keep_submitted or submission["workflow_state"] not in TURNED_IN[kind]


def _deadline(course: dict[str, Any], due_at: str, knobs: Knobs) -> str:
    if not knobs.local_deadlines:
        return due_at
    return f"{_instant(due_at).astimezone(ZoneInfo(course['time_zone'])):%Y-%m-%dT%H:%M:%S}"


def _description(assignment: dict[str, Any], knobs: Knobs) -> str:
    text: str = assignment["description"]
    return text.replace('"', "'") if knobs.drop_quotes else text


def _rows(reads: Reads, now: datetime, knobs: Knobs) -> dict[str, list[list[Any]]]:
    """The rows of both files, as lists in header order, unsorted."""
    scores = _scores(reads.graph)
    quizzes: list[list[Any]] = []
    assignments: list[list[Any]] = []
    for c in reads.courses:
        if _exempt(c, reads, scores) and not knobs.ignore_exemptions:
            continue
        code, name = c["course_code"], c["name"]
        quizzes += [[code, name, int(q["credits"]), q["title"], int(q["question_count"]), int(q["time_limit"]),
                     int(q["allowed_attempts"]), q["scoring_policy"], int(q["points_possible"]),
                     _deadline(c, q["due_at"], knobs)]
                    for q in reads.quizzes[c["id"]]
                    if _to_do(q, reads.quiz_submissions[q["id"]], "quiz", now, knobs)]
        assignments += [[code, name, a["name"], _description(a, knobs), _deadline(c, a["due_at"], knobs),
                         int(a["points_possible"])]
                        for a in reads.assignments[c["id"]]
                        if _to_do(a, reads.submissions[a["id"]], "assignment", now, knobs)]
    return {QUIZZES.file: quizzes, ASSIGNMENTS.file: assignments}


def _sorted(out: TableFile, rows: list[list[Any]], knobs: Knobs) -> list[dict[str, Any]]:
    records = [dict(zip(out.headers, r, strict=True)) for r in rows]
    title = out.key[1]
    keys = (title, "course_code") if knobs.title_before_code else ("course_code", title)
    # every deadline has the same format and zone, so text order is time order
    return sorted(records, key=lambda r: (r[DEADLINE], r[keys[0]], r[keys[1]]))


def derive(instruction: str, tools: Tools, knobs: Knobs) -> Script:
    """Read everything and compute both files' rows (the answer), in file order."""
    now = _now(instruction)
    page = TRAP_PAGE if knobs.first_page_only else MAX_PAGE
    reads = yield from read_everything(tools, per_page=page, first_page_only=knobs.first_page_only)
    rows = _rows(reads, now, knobs)
    return {out.file: _sorted(out, rows[out.file], knobs) for out in (QUIZZES, ASSIGNMENTS)}


def write(instruction: str, tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    """Replace each file's content: its header, then the rows (no example row)."""
    for out in (QUIZZES, ASSIGNMENTS):
        header = ["title" if h == out.key[1] and knobs.rename_title_column else h for h in out.headers]
        text = csv_text(header, [[r[h] for h in out.headers] for r in answer[out.file]])
        if knobs.keep_examples:
            current = yield from call(tools("filesystem", "read_text_file"), {"path": out.file})
            text = str(current).rstrip("\n") + "\n" + text.split("\n", 1)[1]
        yield from call(tools("filesystem", "write_file"), {"path": out.file, "content": text})
    if knobs.submit_work:
        yield from _submit_something(tools)


def _submit_something(tools: Tools) -> Script:
    """Turn in the first assignment of the first course that has one."""
    courses = yield from call(tools("canvas", "canvas_list_courses"), {"per_page": MAX_PAGE})
    for course in courses["items"]:
        listed = yield from call(tools("canvas", "canvas_list_assignments"), {"course_id": course["id"]})
        if listed["items"]:
            yield from call(tools("canvas", "canvas_submit_assignment"), {
                "course_id": course["id"], "assignment_id": listed["items"][0]["id"],
                "submission_type": "online_text_entry", "body": "Done."})
            return


AGENTS = ScriptedAgents(
    derive=derive,
    write=write,
    oracle=Knobs(),
    mutants={
        "first_page": Mutant(Knobs(first_page_only=True), "assignment_keys"),
        "ignore_exemptions": Mutant(Knobs(ignore_exemptions=True), "assignment_keys"),
        "keep_examples": Mutant(Knobs(keep_examples=True), "quiz_keys"),
        "keep_submitted": Mutant(Knobs(keep_submitted=True), "assignment_keys"),
        "keep_past": Mutant(Knobs(keep_past=True), "assignment_keys"),
        "title_before_code": Mutant(Knobs(title_before_code=True), "order"),
        "local_deadlines": Mutant(Knobs(local_deadlines=True), "quiz_values"),
        "drop_quotes": Mutant(Knobs(drop_quotes=True), "assignment_values"),
        "renamed_column": Mutant(Knobs(rename_title_column=True), "headers"),
        "submits_work": Mutant(Knobs(submit_work=True), "no_side_effects"),
    },
    noop_must_fail="quiz_keys",
)
