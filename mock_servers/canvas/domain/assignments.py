"""Canvas assignments, submissions and grading: inserts with explicit values, a student's
attempts, a teacher's grades (with their history), and the projections tools return."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.canvas.domain.base import choice, insert, insert_many, points, table, text, update_row
from mock_servers.canvas.domain.messages import add_notification
from mock_servers.canvas.models import CanvasAssignment, CanvasGrade, CanvasSubmission
from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid
from mock_servers.core.times import optional_instant as instant

SUBMISSION_TYPES = ("online_text_entry", "online_url", "online_upload", "on_paper", "none")
SUBMISSION_STATES = ("unsubmitted", "submitted", "graded")
ASSIGNMENT_FIELDS = ("name", "description", "points_possible", "due_at", "published")  # updatable
PASS_FAIL = {"complete": 1.0, "incomplete": 0.0}


class Assignment(NamedTuple):
    id: int
    course_id: int
    name: str
    description: str | None
    due_at: str | None
    unlock_at: str | None
    lock_at: str | None
    points_possible: float | None
    submission_types: str
    published: int


class Submission(NamedTuple):
    """`id` is None for the placeholder of work never submitted."""

    id: int | None
    assignment_id: int
    user_id: int
    workflow_state: str
    submission_type: str | None = None
    body: str | None = None
    url: str | None = None
    submitted_at: str | None = None
    attempt: int | None = None
    grade: str | None = None
    score: float | None = None
    graded_at: str | None = None


ASSIGNMENTS = table(Assignment, "canvas_assignment")
SUBMISSIONS = table(Submission, "canvas_submission")


# ---------------------------------------------------------------- inserts

def assignment_row(*, course_id: int, name: str, description: str | None = None,
                   due_at: Any = None, unlock_at: Any = None, lock_at: Any = None,
                   points_possible: float | None = None,
                   submission_types: Sequence[str] = ("online_text_entry",),
                   published: bool = True, id: int | None = None) -> dict[str, Any]:
    """The checked values of one assignment (descriptions are stored verbatim)."""
    if not submission_types:
        raise invalid("submission_types must not be empty")
    types = [choice("submission type", t, SUBMISSION_TYPES) for t in dict.fromkeys(submission_types)]
    return {"id": id, "course_id": course_id, "name": text("name", name), "description": description,
            "due_at": instant(due_at), "unlock_at": instant(unlock_at), "lock_at": instant(lock_at),
            "points_possible": None if points_possible is None
            else points("points_possible", points_possible), "submission_types": ",".join(types),
            "published": published}


def add_assignment(session: Session, **values: Any) -> CanvasAssignment:
    """One assignment (see `assignment_row`)."""
    return insert(session, CanvasAssignment(**assignment_row(**values)))


def add_assignments(session: Session, rows: Iterable[Mapping[str, Any]]) -> int:
    """Many assignments in one statement, each given as `add_assignment`'s keyword arguments."""
    return insert_many(session, CanvasAssignment, assignment_row, rows)


def submission_row(*, assignment_id: int, user_id: int, submission_type: str | None = None,
                   body: str | None = None, url: str | None = None, submitted_at: Any = None,
                   attempt: int | None = None, grade: str | None = None,
                   score: float | None = None, graded_at: Any = None,
                   workflow_state: str | None = None, id: int | None = None) -> dict[str, Any]:
    """A student's submission. `workflow_state` defaults to graded (a grade or score is given),
    submitted (`submitted_at` is given) or unsubmitted; `attempt` to 1 once submitted."""
    if submission_type is not None:
        choice("submission_type", submission_type, SUBMISSION_TYPES)
    if workflow_state is None:
        graded = grade is not None or score is not None
        workflow_state = "graded" if graded else "submitted" if submitted_at else "unsubmitted"
    return {"id": id, "assignment_id": assignment_id, "user_id": user_id,
            "workflow_state": choice("workflow_state", workflow_state, SUBMISSION_STATES),
            "submission_type": submission_type, "body": body, "url": url,
            "submitted_at": instant(submitted_at),
            "attempt": attempt if attempt is not None else (1 if submitted_at else None),
            "grade": grade, "score": score, "graded_at": instant(graded_at)}


def add_submission(session: Session, *, file_ids: Sequence[int] = (),
                   **values: Any) -> CanvasSubmission:
    """One submission (see `submission_row`), with `file_ids` attached for online_upload."""
    if file_ids and values.get("submission_type") != "online_upload":
        raise invalid("file_ids need submission_type online_upload")
    sub = insert(session, CanvasSubmission(**submission_row(**values)))
    attach_files(session, sub, file_ids)
    return sub


def add_submissions(session: Session, rows: Iterable[Mapping[str, Any]]) -> int:
    """Many submissions (without files) in one statement, each given as `submission_row`'s
    keyword arguments: the work of many students at once."""
    return insert_many(session, CanvasSubmission, submission_row, rows)


def attach_files(session: Session, sub: CanvasSubmission | Submission,
                 file_ids: Iterable[int]) -> None:
    """Make `file_ids` the attachments of the submission's current attempt."""
    sql.run(session, "DELETE FROM canvas_submission_file WHERE submission_id = ?", (sub.id,))
    sql.cursor(session).executemany(
        "INSERT INTO canvas_submission_file (submission_id, file_id) VALUES (?, ?)",
        [(sub.id, file_id) for file_id in dict.fromkeys(file_ids)])


def update_assignment(session: Session, a: Assignment, changes: dict[str, Any]) -> Assignment:
    """Set some of `ASSIGNMENT_FIELDS`. An assignment with submitted work stays published."""
    values = dict(changes)
    if "name" in values:
        text("name", values["name"])
    if "due_at" in values:
        values["due_at"] = instant(values["due_at"])
    if "points_possible" in values:
        points("points_possible", values["points_possible"])
    if values.get("published") is False and a.published and sql.scalar(
            session, "SELECT 1 FROM canvas_submission WHERE assignment_id = ? AND "
                     "submitted_at IS NOT NULL LIMIT 1", (a.id,)):
        raise ToolFailure(Code.FAILED_PRECONDITION,
                          f"assignment {a.id} has student submissions and cannot be unpublished")
    update_row(session, "canvas_assignment", a.id, values, ASSIGNMENT_FIELDS)
    return a._replace(**values)


# ---------------------------------------------------------------- submitting

_SUBMIT = (
    "INSERT INTO canvas_submission (assignment_id, user_id, workflow_state, submission_type, "
    "body, url, submitted_at, attempt) VALUES (?, ?, 'submitted', ?, ?, ?, ?, 1) "
    "ON CONFLICT (assignment_id, user_id) DO UPDATE SET workflow_state = 'submitted', "
    "submission_type = excluded.submission_type, body = excluded.body, url = excluded.url, "
    "submitted_at = excluded.submitted_at, attempt = coalesce(attempt, 0) + 1")


def submission_of(session: Session, assignment_id: int, user_id: int) -> Submission | None:
    return sql.first(session, Submission, SUBMISSIONS.select("x.assignment_id = ? AND x.user_id = ?"),
                     (assignment_id, user_id))


def submit(session: Session, *, assignment_id: int, user_id: int, submission_type: str,
           body: str | None, url: str | None, submitted_at: str) -> Submission:
    """Store a new attempt: the first one, or the next over the current one (its grade kept)."""
    sql.run(session, _SUBMIT, (assignment_id, user_id, submission_type, body, url, submitted_at))
    return submission_of(session, assignment_id, user_id)  # type: ignore[return-value]


def owned_files(session: Session, user_id: int, file_ids: Sequence[int]) -> set[int]:
    """Which of `file_ids` are the user's own files."""
    return {r[0] for r in sql.run(session, "SELECT id FROM canvas_file WHERE user_id = ? AND id IN "
                                           f"({sql.marks(len(file_ids))})", (user_id, *file_ids))}


# ---------------------------------------------------------------- grading

def _number_text(value: float) -> str:
    return str(int(value)) if value.is_integer() else str(value)


_GRADE_NUMBER = re.compile(r"\d+\.?\d*|\.\d+", re.ASCII)  # 17, 17.5, .5: no exponent, sign or other digits


def parse_grade(grade: str | float, points_possible: float | None) -> tuple[str, float]:
    """(grade as stored, score) from points (`"17"` or 17), a percentage of points_possible
    (`"85%"`) or complete/incomplete (all or no points)."""
    if isinstance(grade, int | float):
        raw = _number_text(float(grade))
    else:
        raw = grade.strip()
    if raw.lower() in PASS_FAIL:
        return raw.lower(), PASS_FAIL[raw.lower()] * (points_possible or 0.0)
    percent = raw.endswith("%")
    digits = raw[:-1] if percent else raw
    value = float(digits) if _GRADE_NUMBER.fullmatch(digits) else math.nan
    if not math.isfinite(value) or value < 0:
        raise invalid(f"grade '{grade}' not understood; give points (e.g. 17), a percentage "
                      "(e.g. 85%), complete or incomplete")
    if not percent:
        return _number_text(value), points("grade", value)
    if not points_possible:
        raise invalid("a percentage needs an assignment with points_possible; give points")
    return f"{_number_text(value)}%", points("grade", round(points_possible * value / 100.0, 2))


_GRADE = (
    "INSERT INTO canvas_submission (assignment_id, user_id, workflow_state, grade, score, "
    "graded_at) VALUES (?, ?, 'graded', ?, ?, ?) ON CONFLICT (assignment_id, user_id) DO UPDATE "
    "SET workflow_state = 'graded', grade = excluded.grade, score = excluded.score, "
    "graded_at = excluded.graded_at RETURNING id")


def grade_submission(session: Session, a: Assignment, *, user_id: int, grader_id: int,
                     grade: str | float, comment: str | None, now_z: str) -> Submission:
    """Grade a student's work (submitted or not), keep the grading in the history with its
    comment, and notify the student."""
    stored, score = parse_grade(grade, a.points_possible)
    sub_id = sql.scalar(session, _GRADE, (a.id, user_id, stored, score, now_z))
    insert(session, CanvasGrade(submission_id=sub_id, grader_id=grader_id, grade=stored,
                                score=score, comment=comment, graded_at=now_z))
    add_notification(session, user_id=user_id, subject=f"Grade posted: {a.name}",
                     message=f"Your work on {a.name} was graded: {stored}.",
                     notification_type="grading", created_at=now_z)
    return submission_of(session, a.id, user_id)  # type: ignore[return-value]


# ---------------------------------------------------------------- projections

def assignment_view(a: Assignment) -> dict[str, Any]:
    return {"id": a.id, "course_id": a.course_id, "name": a.name, "description": a.description,
            "due_at": a.due_at, "unlock_at": a.unlock_at, "lock_at": a.lock_at,
            "points_possible": a.points_possible, "submission_types": a.submission_types.split(","),
            "published": bool(a.published),
            "html_url": f"/courses/{a.course_id}/assignments/{a.id}"}


def submission_view(session: Session, a: Assignment, user_id: int,
                    sub: Submission | None) -> dict[str, Any]:
    """`Submission`; a never-submitted one is an `unsubmitted` placeholder with id null."""
    if sub is None:
        sub = Submission(None, a.id, user_id, "unsubmitted")
    files = [] if sub.submission_type != "online_upload" else sql.run(
        session, "SELECT f.id, f.display_name FROM canvas_submission_file l JOIN canvas_file f "
                 "ON f.id = l.file_id WHERE l.submission_id = ? ORDER BY f.id", (sub.id,))
    late = bool(sub.submitted_at and a.due_at and sub.submitted_at > a.due_at)
    return {"id": sub.id, "assignment_id": a.id, "user_id": user_id,
            "workflow_state": sub.workflow_state, "submission_type": sub.submission_type,
            "body": sub.body, "url": sub.url,
            "attachments": [{"id": fid, "display_name": name} for fid, name in files],
            "submitted_at": sub.submitted_at, "attempt": sub.attempt, "late": late,
            "grade": sub.grade, "score": sub.score, "graded_at": sub.graded_at}
