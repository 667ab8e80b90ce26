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


class Mark(NamedTuple):
    """A scored submission."""

    score: float
    grade: str | None


# Per (course, user): points of the published assignments worth points, the points of those
# graded, and the score earned on them. Current score = earned / graded points; final score
# counts ungraded work as zero: earned / all points.
_TOTALS = (
    "SELECT a.course_id, u.id, total(a.points_possible), "
    "total(CASE WHEN s.score IS NOT NULL THEN a.points_possible END), total(s.score) "
    "FROM canvas_assignment a JOIN canvas_user u ON u.id IN ({users}) "
    "LEFT JOIN canvas_submission s ON s.assignment_id = a.id AND s.user_id = u.id "
    "AND s.score IS NOT NULL "
    "WHERE a.published = 1 AND a.points_possible > 0 AND a.course_id IN ({courses}) "
    "GROUP BY a.course_id, u.id")


def course_scores(session: Session, course_ids: list[int],
                  user_ids: list[int]) -> dict[tuple[int, int], dict[str, Any]]:
    """Current and final score and letter grade of each user in each course, keyed by
    (course id, user id); null scores where nothing is worth points (or nothing is graded)."""
    totals = {(cid, uid): (possible, graded, earned) for cid, uid, possible, graded, earned in sql.run(
        session, _TOTALS.format(users=sql.marks(len(user_ids)), courses=sql.marks(len(course_ids))),
        (*user_ids, *course_ids))}
    out = {}
    for cid in course_ids:
        for uid in user_ids:
            possible, graded, earned = totals.get((cid, uid), (0.0, 0.0, 0.0))
            current, final = _percent(earned, graded), _percent(earned, possible)
            out[cid, uid] = {"current_score": current, "final_score": final,
                             "current_grade": letter_grade(current), "final_grade": letter_grade(final)}
    return out


def published_assignments(session: Session, course_id: int) -> list[int]:
    """Ids of the published assignments of a course, by due_at (undated last) and id."""
    return [r[0] for r in sql.run(session, "SELECT x.id FROM canvas_assignment x WHERE "
                                           f"x.published = 1 AND x.course_id = ? ORDER BY {BY_DUE}",
                                  (course_id,))]


def marks_of(session: Session, assignment_ids: list[int], user_id: int) -> dict[int, Mark]:
    """The user's scored submissions, by assignment id."""
    rows = sql.run(session, "SELECT assignment_id, score, grade FROM canvas_submission WHERE "
                            f"assignment_id IN ({sql.marks(len(assignment_ids))}) AND user_id = ? "
                            "AND score IS NOT NULL", (*assignment_ids, user_id))
    return {aid: Mark(score, grade) for aid, score, grade in rows}


def upcoming(session: Session, courses: Listing, now_z: str, limit: int) -> list[dict[str, Any]]:
    """Published assignments due after `now_z` in the courses of a `COURSES` listing, soonest
    first (then id), each with its course. The listing is tested per assignment (EXISTS), so
    the walk in due order stops after `limit` of them instead of reading every course's."""
    rows = sql.run(session, f"SELECT {sql.columns(Assignment, 'a')}, {COURSES.columns} FROM "
                            "canvas_assignment a JOIN canvas_course x ON x.id = a.course_id "
                            "WHERE a.published = 1 AND a.due_at > ? AND EXISTS (SELECT 1 FROM "
                            f"{COURSES.tables} WHERE x.id = a.course_id AND ({courses.where})) "
                            "ORDER BY a.due_at, a.id LIMIT ?", (now_z, *courses.params, limit))
    split = len(Assignment._fields)
    return [{"assignment": assignment_view(Assignment._make(r[:split])),
             "course": course_brief(Course._make(r[split:]))} for r in rows]
