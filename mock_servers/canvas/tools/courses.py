"""Canvas tools: courses, enrollments and the dashboard."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from mock_servers.canvas.domain.accounts import admin_account
from mock_servers.canvas.domain.base import fetch_all, fetch_one
from mock_servers.canvas.domain.courses import (
    COURSES,
    add_course,
    course_brief,
    course_page,
    course_views,
    enroll,
    enrollment_view,
    my_courses,
    own_enrollments,
    require_active,
    require_staff,
    student_count,
    update_course,
)
from mock_servers.canvas.domain.grades import upcoming
from mock_servers.canvas.domain.users import get_user, user_view
from mock_servers.canvas.tools.common import (
    INSTANT,
    PAGE_SIZE,
    AccountId,
    CourseId,
    Id,
    Page,
    PerPage,
    access,
    given,
    me,
    now_z,
    paged_list,
    toolbox,
)
from mock_servers.core.errors import not_found
from mock_servers.core.toolkit import Call

DASHBOARD_UPCOMING = 5
NAME, CODE, SYLLABUS = "Course name", "Course code, e.g. BIO101-1", "Syllabus (HTML)"


@toolbox.tool(rw="read", core=True)
@paged_list
def canvas_list_courses(
    call: Call,
    include_ended: Annotated[bool, Field(description="Also list concluded courses and enrollments")] = False,
    page: Page = 1,
    per_page: PerPage = PAGE_SIZE,
) -> dict[str, Any]:
    """Courses you are actively enrolled in, by course id, each with its teachers and your
    enrollment. Concluded courses (completed, past end date, or a completed enrollment) only
    with include_ended."""
    user = me(call)
    return course_page(call.session, my_courses(user.id, now_z(call), include_ended), user.id,
                       page, per_page)


@toolbox.tool(rw="read", core=True)
def canvas_get_course(call: Call, course_id: CourseId) -> dict[str, Any]:
    """One course with its teachers, your enrollment and total_students (active students).
    You must be enrolled (or an account admin)."""
    found = access(call, course_id)
    mine = {course_id: found.enrollment} if found.enrollment else {}
    view = course_views(call.session, [found.course], mine)[0]
    return view | {"total_students": student_count(call.session, course_id)}


@toolbox.tool(rw="write")
def canvas_create_course(
    call: Call,
    account_id: AccountId,
    name: Annotated[str, Field(description=NAME)],
    course_code: Annotated[str | None, Field(description=f"{CODE} (default: the name)")] = None,
    start_at: Annotated[str | None, Field(description=f"Start: {INSTANT}")] = None,
    end_at: Annotated[str | None, Field(description=f"End: {INSTANT}")] = None,
    syllabus_body: Annotated[str | None, Field(description=SYLLABUS)] = None,
    is_public: Annotated[bool, Field(description="Visible to anyone")] = False,
    time_zone: Annotated[str | None, Field(description="IANA time zone (default: campus time)")] = None,
) -> dict[str, Any]:
    """Create a course in an account (account admins only). It starts unpublished, with no
    enrollments."""
    admin_account(call.session, me(call), account_id)
    row = add_course(call.session, account_id=account_id, name=name, course_code=course_code,
                     start_at=start_at, end_at=end_at, syllabus_body=syllabus_body,
                     is_public=is_public, time_zone=time_zone or call.world.clock.tz,
                     workflow_state="unpublished")
    course = fetch_one(call.session, COURSES, "x.id = ?", (row.id,))
    return course_views(call.session, [course], {})[0]


@toolbox.tool(rw="write", idempotent=True, destructive=True)
def canvas_update_course(
    call: Call,
    course_id: CourseId,
    name: Annotated[str | None, Field(description=NAME)] = None,
    course_code: Annotated[str | None, Field(description=CODE)] = None,
    start_at: Annotated[str | None, Field(description=f"Start: {INSTANT}")] = None,
    end_at: Annotated[str | None, Field(description=f"End: {INSTANT}")] = None,
    syllabus_body: Annotated[str | None, Field(description=SYLLABUS)] = None,
) -> dict[str, Any]:
    """Change a course's name, code, dates or syllabus (at least one). Teachers and TAs of an
    open course, or account admins (also after the course ended)."""
    found = access(call, course_id)
    require_staff(found, "update the course")
    if not found.user.is_admin:
        require_active(found, now_z(call))
    changes = given(name=name, course_code=course_code, start_at=start_at, end_at=end_at,
                    syllabus_body=syllabus_body)
    course = update_course(call.session, found.course, changes)
    mine = {course_id: found.enrollment} if found.enrollment else {}
    return course_views(call.session, [course], mine)[0]


@toolbox.tool(rw="read")
def canvas_get_syllabus(call: Call, course_id: CourseId) -> dict[str, Any]:
    """The syllabus of a course: course_id and syllabus_body (HTML, null when none)."""
    found = access(call, course_id)
    return {"course_id": found.course.id, "syllabus_body": found.course.syllabus_body}


@toolbox.tool(rw="write")
def canvas_enroll_user(
    call: Call,
    course_id: CourseId,
    user_id: Annotated[Id, Field(description="Id of the user to enroll")],
    role: Annotated[Literal["StudentEnrollment", "TeacherEnrollment", "TaEnrollment",
                            "ObserverEnrollment", "DesignerEnrollment"],
                    Field(description="Enrollment type")] = "StudentEnrollment",
    enrollment_state: Annotated[Literal["active", "invited", "inactive"],
                                Field(description="Initial state")] = "active",
) -> dict[str, Any]:
    """Enroll a user in a course (teachers, TAs and admins only). The same user, course and
    role twice is ALREADY_EXISTS; existing enrollments are never changed."""
    require_staff(access(call, course_id), "enroll users")
    if get_user(call.session, user_id) is None:
        raise not_found(f"user {user_id} not found")
    return enrollment_view(enroll(call.session, course_id=course_id, user_id=user_id, type=role,
                                  state=enrollment_state))


@toolbox.tool(rw="read")
def canvas_get_dashboard(call: Call) -> dict[str, Any]:
    """Your dashboard: your profile, your active courses (id, name, course_code) and the next 5
    assignments due, as canvas_get_upcoming_assignments lists them."""
    user = me(call)
    courses = my_courses(user.id, now_z(call))
    return {"user": user_view(user),
            "courses": [course_brief(c) for c in fetch_all(call.session, courses)],
            "upcoming_assignments": upcoming(call.session, courses, now_z(call), DASHBOARD_UPCOMING)}


@toolbox.tool(rw="read")
def canvas_get_dashboard_cards(call: Call) -> dict[str, Any]:
    """Dashboard cards of your active courses, by course id: id, shortName, originalName,
    courseCode, term, href and enrollmentType (your enrollment in it)."""
    user = me(call)
    courses = fetch_all(call.session, my_courses(user.id, now_z(call)))
    mine = own_enrollments(call.session, user.id, [c.id for c in courses])
    return {"cards": [{"id": c.id, "shortName": c.name, "originalName": c.name,
                       "courseCode": c.course_code, "term": c.term, "href": f"/courses/{c.id}",
                       "enrollmentType": mine[c.id].type if c.id in mine else None}
                      for c in courses]}
