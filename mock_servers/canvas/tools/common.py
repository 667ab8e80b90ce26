"""What the Canvas tool modules share: the one toolbox they register on, parameter types and
the caller's standing in a course."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from loca.core.clock import iso_z
from mock_servers.canvas.domain.base import MAX_POINTS
from mock_servers.canvas.domain.courses import (
    KEPT,
    CourseAccess,
    course_access,
    is_student,
    keep_heads,
    require_active,
    require_staff,
)
from mock_servers.canvas.domain.users import User, current_user
from mock_servers.core.errors import invalid, not_found
from mock_servers.core.limits import MAX_INT
from mock_servers.core.toolkit import Call, Toolbox
from mock_servers.core.types import Int, Num, page_param, size_param

PAGE_SIZE, MAX_PAGE_SIZE = 50, 100
MAX_PAGE = 1_000_000_000
PAGING = f"Paged: per_page default {PAGE_SIZE}, max {MAX_PAGE_SIZE}."

toolbox = Toolbox(
    "canvas",
    instructions=("Canvas LMS: courses, assignments, quizzes, discussions, modules, files, "
                  "conversations and accounts. Every tool but health check and login acts as the "
                  f"logged-in user under Canvas's role rules. {PAGING}"),
    list_keys=("items", "messages", "entries", "students", "courses", "cards", "assignments",
               "criteria", "reports"),
    snapshot_ignore={"canvas_user": frozenset({"last_login_at"}), KEPT: None},
    prepare=lambda session, _world: keep_heads(session),
)


PointsValue = Annotated[Num, Field(ge=0, le=MAX_POINTS)]
Points = Annotated[PointsValue, Field(description=f"Points possible (0..{MAX_POINTS})")]
INSTANT = "ISO 8601 date-time with Z or an offset, e.g. 2025-01-20T23:59:00Z"
Id = Annotated[Int, Field(ge=1, le=MAX_INT)]
CourseId = Annotated[Id, Field(description="Course id")]
AccountId = Annotated[Id, Field(description="Account id")]
AssignmentId = Annotated[Id, Field(description="Assignment id (of that course)")]
QuizId = Annotated[Id, Field(description="Quiz id (of that course)")]
QuestionId = Annotated[Id, Field(description="Question id (of that quiz)")]
TopicId = Annotated[Id, Field(description="Discussion topic or announcement id (of that course)")]
ModuleId = Annotated[Id, Field(description="Module id (of that course)")]
ItemId = Annotated[Id, Field(description="Module item id (of that module)")]
StudentId = Annotated[Id | None, Field(description="Student id; default yourself (others: teachers only)")]
Page = Annotated[Int, page_param(), Field(le=MAX_PAGE)]
PerPage = Annotated[Int, size_param(PAGE_SIZE, MAX_PAGE_SIZE)]


def paged_list(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a tool that returns a page: its description then says how paging works. Put it
    under `@toolbox.tool`."""
    fn.__doc__ = f"{inspect.cleandoc(fn.__doc__ or '')}\n{PAGING}"
    return fn


def now_z(call: Call) -> str:
    """The virtual now as stored: UTC `YYYY-MM-DDTHH:MM:SSZ`."""
    return iso_z(call.now)


def me(call: Call) -> User:
    """The logged-in user, else UNAUTHENTICATED."""
    return current_user(call.session)


def access(call: Call, course_id: int) -> CourseAccess:
    """The logged-in user inside a course they may enter."""
    return course_access(call.session, me(call), course_id)


def student_of(call: Call, found: CourseAccess, user_id: int | None, what: str) -> int:
    """The student whose `what` is read: the caller (None), or another student of the course
    for teachers, TAs and admins; NOT_FOUND when that user is no student of the course."""
    target = found.user.id if user_id is None else user_id
    if target == found.user.id:
        student = found.student
    else:
        require_staff(found, f"read other students' {what}")
        student = is_student(call.session, found.course.id, target)
    if not student:
        raise not_found(f"user {target} is not a student of course {found.course.id}")
    return target


def staff_write(call: Call, course_id: int, action: str) -> CourseAccess:
    """A teacher, TA or admin changing an open course."""
    found = access(call, course_id)
    require_staff(found, action)
    require_active(found, now_z(call))
    return found


def given(**fields: Any) -> dict[str, Any]:
    """The fields that were given (not None); at least one, else INVALID_ARGUMENT."""
    out = {k: v for k, v in fields.items() if v is not None}
    if not out:
        raise invalid(f"nothing to update; give at least one of {', '.join(fields)}")
    return out
