"""Canvas tools: assignments and students' submissions."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from mock_servers.canvas.domain.assignments import (
    ASSIGNMENTS,
    Assignment,
    add_assignment,
    assignment_view,
    attach_files,
    owned_files,
    submission_of,
    submission_view,
    submit,
    update_assignment,
)
from mock_servers.canvas.domain.base import BY_DUE, fetch_one, paged
from mock_servers.canvas.domain.courses import course_items, in_course, require_active
from mock_servers.canvas.tools.common import (
    INSTANT,
    PAGE_SIZE,
    AssignmentId,
    CourseId,
    Id,
    Page,
    PerPage,
    Points,
    StudentId,
    access,
    given,
    now_z,
    paged_list,
    staff_write,
    student_of,
    toolbox,
)
from mock_servers.core.errors import Code, ToolFailure, denied, invalid, not_found
from mock_servers.core.toolkit import Call

SubmissionType = Literal["online_text_entry", "online_url", "online_upload", "on_paper", "none"]
NEEDS = {"online_text_entry": "body", "online_url": "url", "online_upload": "file_ids"}
NAME, DESCRIPTION = "Assignment name", "Description (HTML), stored verbatim"
PUBLISHED = "Visible to students"


@toolbox.tool(rw="read", core=True)
@paged_list
def canvas_list_assignments(call: Call, course_id: CourseId, page: Page = 1,
                            per_page: PerPage = PAGE_SIZE) -> dict[str, Any]:
    """Assignments of a course ordered by due_at (undated last), then id. Students see
    published ones only."""
    assignments = course_items(ASSIGNMENTS, access(call, course_id), BY_DUE)
    return paged(call.session, assignments, page, per_page,
                 lambda rows: [assignment_view(a) for a in rows])


@toolbox.tool(rw="read", core=True)
def canvas_get_assignment(call: Call, course_id: CourseId,
                          assignment_id: AssignmentId) -> dict[str, Any]:
    """One assignment of a course (NOT_FOUND if it is not in that course)."""
    return assignment_view(in_course(call.session, ASSIGNMENTS, assignment_id,
                                     access(call, course_id), "assignment"))


@toolbox.tool(rw="write")
def canvas_create_assignment(
    call: Call,
    course_id: CourseId,
    name: Annotated[str, Field(description=NAME)],
    description: Annotated[str | None, Field(description=DESCRIPTION)] = None,
    points_possible: Points | None = None,
    due_at: Annotated[str | None, Field(description=f"Due date: {INSTANT}")] = None,
    submission_types: Annotated[list[SubmissionType] | None, Field(
        min_length=1, description="How students submit (default [online_text_entry])")] = None,
    published: Annotated[bool, Field(description=PUBLISHED)] = False,
) -> dict[str, Any]:
    """Create an assignment in a course you teach (teachers, TAs, admins). It starts
    unpublished unless published is true."""
    staff_write(call, course_id, "create assignments")
    row = add_assignment(call.session, course_id=course_id, name=name, description=description,
                         points_possible=points_possible, due_at=due_at, published=published,
                         **({"submission_types": submission_types} if submission_types else {}))
    return assignment_view(fetch_one(call.session, ASSIGNMENTS, "x.id = ?", (row.id,)))


@toolbox.tool(rw="write", idempotent=True, destructive=True)
def canvas_update_assignment(
    call: Call,
    course_id: CourseId,
    assignment_id: AssignmentId,
    name: Annotated[str | None, Field(description=NAME)] = None,
    description: Annotated[str | None, Field(description=DESCRIPTION)] = None,
    points_possible: Points | None = None,
    due_at: Annotated[str | None, Field(description=f"Due date: {INSTANT}")] = None,
    published: Annotated[bool | None, Field(description=PUBLISHED)] = None,
) -> dict[str, Any]:
    """Change an assignment of a course you teach; only the fields given change (at least
    one). An assignment with submitted work cannot be unpublished."""
    found = staff_write(call, course_id, "update assignments")
    assignment = in_course(call.session, ASSIGNMENTS, assignment_id, found, "assignment")
    changes = given(name=name, description=description, points_possible=points_possible,
                    due_at=due_at, published=published)
    return assignment_view(update_assignment(call.session, assignment, changes))


@toolbox.tool(rw="read", core=True)
def canvas_get_submission(
    call: Call,
    course_id: CourseId,
    assignment_id: AssignmentId,
    user_id: StudentId = None,
) -> dict[str, Any]:
    """A student's submission for an assignment. Never submitted: workflow_state
    "unsubmitted" with id null. Only teachers, TAs and admins may read other students'."""
    found = access(call, course_id)
    assignment = in_course(call.session, ASSIGNMENTS, assignment_id, found, "assignment")
    target = student_of(call, found, user_id, "submissions")
    sub = submission_of(call.session, assignment_id, target)
    return submission_view(call.session, assignment, target, sub)


@toolbox.tool(rw="write", destructive=True)
def canvas_submit_assignment(
    call: Call,
    course_id: CourseId,
    assignment_id: AssignmentId,
    submission_type: Annotated[Literal["online_text_entry", "online_url", "online_upload"],
                               Field(description="Must be allowed by the assignment")],
    body: Annotated[str | None, Field(description="Text (HTML) for online_text_entry")] = None,
    url: Annotated[str | None, Field(description="http(s) URL for online_url")] = None,
    file_ids: Annotated[list[Id] | None, Field(
        max_length=50, description="Ids of your uploaded files for online_upload")] = None,
) -> dict[str, Any]:
    """Submit (or resubmit) your work as a student of the course. Give exactly the field the
    type needs: body, url or file_ids. Each submission increments attempt; an earlier grade is
    kept. Locked assignments and concluded courses are FAILED_PRECONDITION."""
    found = access(call, course_id)
    if not found.student:
        raise denied(f"only students of course {course_id} can submit")
    require_active(found, now_z(call))
    assignment = in_course(call.session, ASSIGNMENTS, assignment_id, found, "assignment")
    _check_open(assignment, now_z(call))
    allowed = assignment.submission_types.split(",")
    if submission_type not in allowed:
        raise invalid(f"submission_type '{submission_type}' not accepted by assignment "
                      f"{assignment_id}; it accepts {', '.join(allowed)}")
    _check_payload(call, found.user.id, submission_type, body, url, file_ids)
    sub = submit(call.session, assignment_id=assignment_id, user_id=found.user.id,
                 submission_type=submission_type, body=body, url=url, submitted_at=now_z(call))
    attach_files(call.session, sub, file_ids or [])
    return submission_view(call.session, assignment, found.user.id, sub)


def _check_open(assignment: Assignment, now: str) -> None:
    if assignment.unlock_at is not None and now < assignment.unlock_at:
        raise ToolFailure(Code.FAILED_PRECONDITION,
                          f"assignment {assignment.id} is locked until {assignment.unlock_at}")
    if assignment.lock_at is not None and now > assignment.lock_at:
        raise ToolFailure(Code.FAILED_PRECONDITION,
                          f"assignment {assignment.id} was locked at {assignment.lock_at}")


def _check_payload(call: Call, user_id: int, submission_type: str, body: str | None,
                   url: str | None, file_ids: list[int] | None) -> None:
    """Exactly the field the submission type needs, and a usable value in it."""
    needed = NEEDS[submission_type]
    supplied = {"body": body, "url": url, "file_ids": file_ids}
    extra = [k for k, v in supplied.items() if v is not None and k != needed]
    if extra:
        raise invalid(f"{', '.join(extra)} not used with {submission_type}; give only {needed}")
    value = supplied[needed]
    if not value or (isinstance(value, str) and not value.strip()):
        raise invalid(f"{submission_type} needs a non-empty {needed}")
    if url is not None and not url.startswith(("http://", "https://")):
        raise invalid(f"url '{url}' must start with http:// or https://")
    if file_ids:
        owned = owned_files(call.session, user_id, file_ids)
        missing = [str(f) for f in file_ids if f not in owned]
        if missing:
            raise not_found(f"file(s) {', '.join(missing)} not found among your files")
