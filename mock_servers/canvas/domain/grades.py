"""Course scores and letter grades, and the assignments coming up in a user's courses."""

from __future__ import annotations

from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.canvas.domain.assignments import Assignment, assignment_view
from mock_servers.canvas.domain.base import BY_DUE, Listing
from mock_servers.canvas.domain.courses import COURSES, Course, course_brief
from mock_servers.core import sql

# Canvas's default grading scheme: lowest percentage for each letter.
LETTER_GRADES = ((94.0, "A"), (90.0, "A-"), (87.0, "B+"), (84.0, "B"), (80.0, "B-"),
                 (77.0, "C+"), (74.0, "C"), (70.0, "C-"), (67.0, "D+"), (64.0, "D"),
                 (61.0, "D-"), (0.0, "F"))


def letter_grade(score: float | None) -> str | None:
    if score is None:
        return None
    return next(letter for floor, letter in LETTER_GRADES if score >= floor)


def _percent(earned: float, possible: float) -> float | None:
    return round(100.0 * earned / possible, 2) if possible > 0 else None


class GradeItem(NamedTuple):
    """A published assignment as grading sees it."""

    id: int
    course_id: int
    points_possible: float | None


class Mark(NamedTuple):
    """A scored submission."""

    score: float
    grade: str | None


def course_score(assignments: list[GradeItem], scores: dict[int, float]) -> dict[str, Any]:
    """Current score counts graded assignments only; final score counts ungraded ones as zero.
    Only assignments worth points count."""
    counted = [a for a in assignments if (a.points_possible or 0) > 0]
    graded = [a for a in counted if a.id in scores]
    current = _percent(sum(scores[a.id] for a in graded),
                       sum(a.points_possible or 0 for a in graded))
    final = _percent(sum(scores.get(a.id, 0.0) for a in counted),
                     sum(a.points_possible or 0 for a in counted))
    return {"current_score": current, "final_score": final,
            "current_grade": letter_grade(current), "final_grade": letter_grade(final)}


def published_assignments(session: Session, course_ids: list[int]) -> dict[int, list[GradeItem]]:
    """Published assignments per course, by due_at (undated last) and id."""
    out: dict[int, list[GradeItem]] = {cid: [] for cid in course_ids}
    for item in sql.rows(session, GradeItem, "SELECT x.id, x.course_id, x.points_possible FROM "
                                             "canvas_assignment x WHERE x.published = 1 AND "
                                             f"x.course_id IN ({sql.marks(len(course_ids))}) "
                                             f"ORDER BY {BY_DUE}", course_ids):
        out[item.course_id].append(item)
    return out


def marks_of(session: Session, assignment_ids: list[int],
             user_ids: list[int]) -> dict[tuple[int, int], Mark]:
    """Scored submissions keyed by (assignment id, user id)."""
    rows = sql.run(session, "SELECT assignment_id, user_id, score, grade FROM canvas_submission "
                            f"WHERE assignment_id IN ({sql.marks(len(assignment_ids))}) AND user_id "
                            f"IN ({sql.marks(len(user_ids))}) AND score IS NOT NULL",
                   (*assignment_ids, *user_ids))
    return {(aid, uid): Mark(score, grade) for aid, uid, score, grade in rows}


def scores_by_student(session: Session, assignments: list[GradeItem],
                      user_ids: list[int]) -> dict[int, dict[str, Any]]:
    """`course_score` of each user over the assignments of one course."""
    scores: dict[int, dict[int, float]] = {uid: {} for uid in user_ids}
    for (aid, uid), mark in marks_of(session, [a.id for a in assignments], user_ids).items():
        scores[uid][aid] = mark.score
    return {uid: course_score(assignments, mine) for uid, mine in scores.items()}


def upcoming(session: Session, courses: Listing, now_z: str, limit: int) -> list[dict[str, Any]]:
    """Published assignments due after `now_z` in the courses of a `COURSES` listing, soonest
    first (then id), each with its course."""
    rows = sql.run(session, f"SELECT {sql.columns(Assignment, 'a')}, {COURSES.columns} FROM "
                            "canvas_assignment a JOIN canvas_course x ON x.id = a.course_id "
                            f"WHERE ({courses.where}) AND a.published = 1 AND a.due_at > ? "
                            "ORDER BY a.due_at, a.id LIMIT ?", (*courses.params, now_z, limit))
    split = len(Assignment._fields)
    return [{"assignment": assignment_view(Assignment._make(r[:split])),
             "course": course_brief(Course._make(r[split:]))} for r in rows]
