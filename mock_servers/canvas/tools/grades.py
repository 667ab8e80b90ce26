"""Canvas tools: grading, grades and upcoming work."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from mock_servers.canvas.domain.assignments import (
    ASSIGNMENTS,
    grade_submission,
    submission_view,
)
from mock_servers.canvas.domain.base import fetch_all
from mock_servers.canvas.domain.courses import course_students, in_course, is_student, my_courses, own_enrollments
from mock_servers.canvas.domain.grades import Mark, course_scores, marks_of, published_assignments, upcoming
from mock_servers.canvas.tools.common import (
    AssignmentId,
    CourseId,
    Id,
    access,
    me,
    now_z,
    staff_write,
    toolbox,
)
from mock_servers.core.errors import denied, not_found
from mock_servers.core.toolkit import Call
from mock_servers.core.types import Int, no_bool


@toolbox.tool(rw="write", idempotent=True, destructive=True)
def canvas_submit_grade(
    call: Call,
    course_id: CourseId,
    assignment_id: AssignmentId,
    user_id: Annotated[Id, Field(description="The student's id")],
    grade: Annotated[str | float, BeforeValidator(no_bool), Field(
        description="Points (17 or \"17\"), a percentage of points_possible (\"85%\"), "
                    "complete or incomplete")],
    comment: Annotated[str | None, Field(description="Comment kept with the grade")] = None,
) -> dict[str, Any]:
    """Grade a student's work on an assignment (teachers, TAs, admins), submitted or not. The
    score follows from the grade; the student is notified and the grading is kept in the
    gradebook history with its comment. Returns the submission."""
    found = staff_write(call, course_id, "grade")
    assignment = in_course(call.session, ASSIGNMENTS, assignment_id, found, "assignment")
    if not is_student(call.session, course_id, user_id):
        raise not_found(f"user {user_id} is not a student of course {course_id}")
    sub = grade_submission(call.session, assignment, user_id=user_id, grader_id=found.user.id,
                           grade=grade, comment=comment, now_z=now_z(call))
    return submission_view(call.session, assignment, user_id, sub)


@toolbox.tool(rw="read")
def canvas_get_upcoming_assignments(
    call: Call,
    limit: Annotated[Int, Field(ge=1, le=50, description="How many (default 10, max 50)")] = 10,
) -> dict[str, Any]:
    """Published assignments of your active courses due after now, soonest first (then id),
    each with its course (id, name, course_code); count = items returned."""
    items = upcoming(call.session, my_courses(me(call).id, now_z(call)), now_z(call), limit)
    return {"items": items, "count": len(items)}


@toolbox.tool(rw="read")
def canvas_get_course_grades(call: Call, course_id: CourseId) -> dict[str, Any]:
    """Grades in a course. Students get their current/final score and letter grade plus each
    published assignment's score and grade; teachers, TAs and admins get every student's
    current and final score. Current counts graded work only; final counts the rest as 0."""
    found = access(call, course_id)
    if found.staff:
        students = course_students(call.session, course_id)
        scores = course_scores(call.session, [course_id], [uid for uid, _ in students])
        return {"course_id": course_id, "students": [
            {"user_id": uid, "name": name, "current_score": scores[course_id, uid]["current_score"],
             "final_score": scores[course_id, uid]["final_score"]} for uid, name in students]}
    if not found.student:
        raise denied(f"only students and staff have grades in course {course_id}")
    user_id = found.user.id
    assignments = published_assignments(call.session, course_id)
    marks = marks_of(call.session, assignments, user_id)
    return {"course_id": course_id, **course_scores(call.session, [course_id], [user_id])[course_id, user_id],
            "assignments": [_mark_view(aid, marks.get(aid)) for aid in assignments]}


@toolbox.tool(rw="read")
def canvas_get_user_grades(call: Call) -> dict[str, Any]:
    """Your scores in every active course where you are a student, by course id: current and
    final score and letter grade."""
    user = me(call)
    courses = fetch_all(call.session, my_courses(user.id, now_z(call)))
    mine = own_enrollments(call.session, user.id, [c.id for c in courses])
    courses = [c for c in courses if c.id in mine and mine[c.id].type == "StudentEnrollment"]
    scores = course_scores(call.session, [c.id for c in courses], [user.id])
    return {"courses": [{"course_id": c.id, "name": c.name, **scores[c.id, user.id]} for c in courses]}


def _mark_view(assignment_id: int, mark: Mark | None) -> dict[str, Any]:
    return {"assignment_id": assignment_id, "score": mark.score if mark else None,
            "grade": mark.grade if mark else None}
