"""Canvas tools. Every tool but health check, login and logout acts as the logged-in user
(UNAUTHENTICATED otherwise) under Canvas's role rules; lists are paged (`page`, `per_page`:
default 50, max 100)."""

from typing import Annotated, Any, Literal

from pydantic import Field

from loca.core.clock import iso_z
from mock_servers.canvas import domain
from mock_servers.core.errors import Code, ToolFailure, denied, invalid, not_found
from mock_servers.core.toolkit import Call, Toolbox
from mock_servers.core.types import Int, page_param, size_param

toolbox = Toolbox("canvas")
build = toolbox.build

CourseId = Annotated[Int, Field(description="Course id")]
AssignmentId = Annotated[Int, Field(description="Assignment id (of that course)")]
QuizId = Annotated[Int, Field(description="Quiz id (of that course)")]
TopicId = Annotated[Int, Field(description="Discussion topic or announcement id (of that course)")]
Page = Annotated[Int, page_param()]
PerPage = Annotated[Int, size_param(50, 100)]
TOPIC_ENTRIES = 50  # replies embedded in canvas_get_discussion_topic


# ---------------------------------------------------------------- session and users

@toolbox.tool(rw="read")
def canvas_health_check(call: Call) -> dict[str, Any]:
    """Check that Canvas is up. Returns status "ok", the current time and the logged-in user
    (null when nobody is logged in). Needs no login."""
    user = domain.session_user(call.session)
    return {"status": "ok", "now": iso_z(call.now),
            "user": domain.user_view(user) if user else None}


@toolbox.tool(rw="write", idempotent=True)
def canvas_login(
    call: Call,
    login_id: Annotated[str, Field(description="The user's login id")],
    password: Annotated[str, Field(description="The user's password")],
) -> dict[str, Any]:
    """Log in as a Canvas user; later calls act as that user. Wrong login id or password is
    UNAUTHENTICATED. Replaces any previous login."""
    user = domain.check_login(call.session, login_id, password)
    if user is None:
        raise ToolFailure(Code.UNAUTHENTICATED, "invalid login_id or password")
    domain.log_in(call.session, user.id)
    return domain.login_view(user)


@toolbox.tool(rw="write", idempotent=True)
def canvas_logout(call: Call) -> dict[str, Any]:
    """Log out. Every tool but health check and login then fails with UNAUTHENTICATED."""
    domain.log_in(call.session, None)
    return {"logged_in": False}


@toolbox.tool(rw="read", core=True)
def canvas_get_current_user(call: Call) -> dict[str, Any]:
    """The logged-in user: id, name, email, login_id."""
    return domain.login_view(domain.current_user(call.session))


@toolbox.tool(rw="read")
def canvas_list_users(call: Call, page: Page = 1, per_page: PerPage = 50) -> dict[str, Any]:
    """Users who share a course with you (yourself included; account admins see every user),
    by id: id, name, login_id, email. Paged: per_page default 50, max 100."""
    users = domain.users_around(domain.current_user(call.session))
    return domain.paged(call.session, users, page, per_page,
                        lambda rows: [{"id": u.id, "name": u.name, "login_id": u.login_id,
                                       "email": u.email} for u in rows])


@toolbox.tool(rw="read")
def canvas_get_user_profile(call: Call) -> dict[str, Any]:
    """Your profile: id, name, short_name, sortable_name, login_id, email, time_zone, bio, title."""
    return domain.profile_view(domain.current_user(call.session))


@toolbox.tool(rw="write", idempotent=True, destructive=True)
def canvas_update_user_profile(
    call: Call,
    name: Annotated[str | None, Field(description="Full name (non-empty)")] = None,
    short_name: Annotated[str | None, Field(description="Display name (non-empty)")] = None,
    bio: Annotated[str | None, Field(description="Biography")] = None,
    title: Annotated[str | None, Field(description="Title, e.g. 'Teaching Assistant'")] = None,
    time_zone: Annotated[str | None, Field(description="IANA time zone, e.g. America/Chicago")] = None,
) -> dict[str, Any]:
    """Update your own profile; only the fields given change (at least one). Returns the
    profile as canvas_get_user_profile does."""
    user = domain.current_user(call.session)
    changes = {k: v for k, v in {"name": name, "short_name": short_name, "bio": bio,
                                 "title": title, "time_zone": time_zone}.items() if v is not None}
    if not changes:
        raise invalid("nothing to update; give at least one of name, short_name, bio, title, time_zone")
    for field in ("name", "short_name"):
        if field in changes and not changes[field].strip():
            raise invalid(f"{field} must not be empty")
    if time_zone is not None:
        domain.check_zone(time_zone)
    return domain.profile_view(domain.update_profile(call.session, user, changes))


# ---------------------------------------------------------------- courses

@toolbox.tool(rw="read", core=True)
def canvas_list_courses(
    call: Call,
    include_ended: Annotated[bool, Field(description="Also list concluded courses and enrollments")] = False,
    page: Page = 1,
    per_page: PerPage = 50,
) -> dict[str, Any]:
    """Courses you are actively enrolled in, by course id, each with its teachers and your
    enrollment. Concluded courses (completed, past end date, or a completed enrollment) only
    with include_ended. Paged: per_page default 50, max 100."""
    user = domain.current_user(call.session)
    courses = domain.my_courses(user.id, iso_z(call.now), include_ended)
    return domain.paged(call.session, courses, page, per_page, lambda rows: domain.course_views(
        call.session, rows, domain.own_enrollments(call.session, user.id, [c.id for c in rows])))


@toolbox.tool(rw="read", core=True)
def canvas_get_course(call: Call, course_id: CourseId) -> dict[str, Any]:
    """One course with its teachers, your enrollment and total_students (active students).
    You must be enrolled (or an account admin)."""
    access = _access(call, course_id)
    mine = {course_id: access.enrollment} if access.enrollment else {}
    view = domain.course_views(call.session, [access.course], mine)[0]
    return view | {"total_students": domain.student_count(call.session, course_id)}


@toolbox.tool(rw="read")
def canvas_get_syllabus(call: Call, course_id: CourseId) -> dict[str, Any]:
    """The syllabus of a course: course_id and syllabus_body (HTML, null when none)."""
    access = _access(call, course_id)
    return {"course_id": access.course.id, "syllabus_body": access.course.syllabus_body}


@toolbox.tool(rw="write")
def canvas_enroll_user(
    call: Call,
    course_id: CourseId,
    user_id: Annotated[Int, Field(description="Id of the user to enroll")],
    role: Annotated[Literal["StudentEnrollment", "TeacherEnrollment", "TaEnrollment",
                            "ObserverEnrollment", "DesignerEnrollment"],
                    Field(description="Enrollment type")] = "StudentEnrollment",
    enrollment_state: Annotated[Literal["active", "invited", "inactive"],
                                Field(description="Initial state")] = "active",
) -> dict[str, Any]:
    """Enroll a user in a course (teachers, TAs and admins only). The same user, course and
    role twice is ALREADY_EXISTS; existing enrollments are never changed."""
    access = _access(call, course_id)
    domain.require_staff(access, "enroll users")
    if not domain.user_exists(call.session, user_id):
        raise not_found(f"user {user_id} not found")
    enrollment = domain.enroll(call.session, course_id=course_id, user_id=user_id, type=role,
                               state=enrollment_state)
    return domain.enrollment_view(enrollment)


@toolbox.tool(rw="read")
def canvas_get_dashboard(call: Call) -> dict[str, Any]:
    """Your dashboard: your profile, your active courses (id, name, course_code) and the next 5
    assignments due, as canvas_get_upcoming_assignments lists them."""
    user = domain.current_user(call.session)
    now_z = iso_z(call.now)
    courses = domain.my_courses(user.id, now_z)
    return {"user": domain.user_view(user),
            "courses": [domain.course_brief(c) for c in domain.fetch_all(call.session, courses)],
            "upcoming_assignments": domain.upcoming(call.session, courses, now_z, 5)}


@toolbox.tool(rw="read")
def canvas_get_dashboard_cards(call: Call) -> dict[str, Any]:
    """Dashboard cards of your active courses, by course id: id, shortName, originalName,
    courseCode, term, href and enrollmentType (your enrollment in it)."""
    user = domain.current_user(call.session)
    courses = domain.fetch_all(call.session, domain.my_courses(user.id, iso_z(call.now)))
    mine = domain.own_enrollments(call.session, user.id, [c.id for c in courses])
    return {"cards": [{"id": c.id, "shortName": c.name, "originalName": c.name,
                       "courseCode": c.course_code, "term": c.term, "href": f"/courses/{c.id}",
                       "enrollmentType": mine[c.id].type if c.id in mine else None}
                      for c in courses]}


# ---------------------------------------------------------------- assignments and submissions

@toolbox.tool(rw="read", core=True)
def canvas_list_assignments(call: Call, course_id: CourseId, page: Page = 1,
                            per_page: PerPage = 50) -> dict[str, Any]:
    """Assignments of a course ordered by due_at (undated last), then id. Students see
    published ones only. Paged: per_page default 50, max 100."""
    assignments = domain.course_items(domain.ASSIGNMENTS, _access(call, course_id), domain.BY_DUE)
    return domain.paged(call.session, assignments, page, per_page,
                        lambda rows: [domain.assignment_view(a) for a in rows])


@toolbox.tool(rw="read", core=True)
def canvas_get_assignment(call: Call, course_id: CourseId,
                          assignment_id: AssignmentId) -> dict[str, Any]:
    """One assignment of a course (NOT_FOUND if it is not in that course)."""
    access = _access(call, course_id)
    return domain.assignment_view(
        domain.in_course(call.session, domain.ASSIGNMENTS, assignment_id, access, "assignment"))


@toolbox.tool(rw="read", core=True)
def canvas_get_submission(
    call: Call,
    course_id: CourseId,
    assignment_id: AssignmentId,
    user_id: Annotated[Int | None, Field(
        description="Student id; default yourself (others: teachers only)")] = None,
) -> dict[str, Any]:
    """A student's submission for an assignment. Never submitted: workflow_state
    "unsubmitted" with id null. Only teachers, TAs and admins may read other students'."""
    access = _access(call, course_id)
    assignment = domain.in_course(call.session, domain.ASSIGNMENTS, assignment_id, access,
                                  "assignment")
    target = access.user.id if user_id is None else user_id
    if target == access.user.id:
        is_student = access.student
    else:
        domain.require_staff(access, "read other students' submissions")
        is_student = domain.is_student(call.session, course_id, target)
    if not is_student:
        raise not_found(f"user {target} is not a student of course {course_id}")
    sub = domain.submission_of(call.session, assignment_id, target)
    return domain.submission_view(call.session, assignment, target, sub)


@toolbox.tool(rw="write", destructive=True)
def canvas_submit_assignment(
    call: Call,
    course_id: CourseId,
    assignment_id: AssignmentId,
    submission_type: Annotated[Literal["online_text_entry", "online_url", "online_upload"],
                               Field(description="Must be allowed by the assignment")],
    body: Annotated[str | None, Field(description="Text (HTML) for online_text_entry")] = None,
    url: Annotated[str | None, Field(description="http(s) URL for online_url")] = None,
    file_ids: Annotated[list[Int] | None, Field(
        description="Ids of your uploaded files for online_upload")] = None,
) -> dict[str, Any]:
    """Submit (or resubmit) your work as a student of the course. Give exactly the field the
    type needs: body, url or file_ids. Each submission increments attempt; an earlier grade is
    kept. Locked assignments and concluded courses are FAILED_PRECONDITION."""
    access = _access(call, course_id)
    if not access.student:
        raise denied(f"only students of course {course_id} can submit")
    now_z = iso_z(call.now)
    domain.require_active(access, now_z)
    assignment = domain.in_course(call.session, domain.ASSIGNMENTS, assignment_id, access,
                                  "assignment")
    _check_open(assignment, now_z)
    allowed = assignment.submission_types.split(",")
    if submission_type not in allowed:
        raise invalid(f"submission_type '{submission_type}' not accepted by assignment "
                      f"{assignment_id}; it accepts {', '.join(allowed)}")
    _check_payload(call, access.user.id, submission_type, body, url, file_ids)
    sub = domain.submit(call.session, assignment_id=assignment_id, user_id=access.user.id,
                        submission_type=submission_type, body=body, url=url, submitted_at=now_z)
    domain.attach_files(call.session, sub, file_ids or [])
    return domain.submission_view(call.session, assignment, access.user.id, sub)


@toolbox.tool(rw="read")
def canvas_get_upcoming_assignments(
    call: Call,
    limit: Annotated[Int, Field(ge=1, le=50, description="How many (default 10, max 50)")] = 10,
) -> dict[str, Any]:
    """Published assignments of your active courses due after now, soonest first (then id),
    each with its course (id, name, course_code); count = items returned."""
    user = domain.current_user(call.session)
    now_z = iso_z(call.now)
    items = domain.upcoming(call.session, domain.my_courses(user.id, now_z), now_z, limit)
    return {"items": items, "count": len(items)}


@toolbox.tool(rw="read")
def canvas_get_course_grades(call: Call, course_id: CourseId) -> dict[str, Any]:
    """Grades in a course. Students get their current/final score and letter grade plus each
    published assignment's score and grade; teachers, TAs and admins get every student's
    current and final score. Current counts graded work only; final counts the rest as 0."""
    access = _access(call, course_id)
    assignments = domain.published_assignments(call.session, [course_id])[course_id]
    if access.staff:
        return {"course_id": course_id, "students": _student_scores(call, course_id, assignments)}
    if not access.student:
        raise denied(f"only students and staff have grades in course {course_id}")
    marks = domain.marks_of(call.session, [a.id for a in assignments], [access.user.id])
    mine = {aid: mark for (aid, _), mark in marks.items()}
    return {"course_id": course_id,
            **domain.course_score(assignments, {aid: m.score for aid, m in mine.items()}),
            "assignments": [_mark_view(a.id, mine.get(a.id)) for a in assignments]}


@toolbox.tool(rw="read")
def canvas_get_user_grades(call: Call) -> dict[str, Any]:
    """Your scores in every active course where you are a student, by course id: current and
    final score and letter grade."""
    user = domain.current_user(call.session)
    courses = domain.fetch_all(call.session, domain.my_courses(user.id, iso_z(call.now)))
    mine = domain.own_enrollments(call.session, user.id, [c.id for c in courses])
    courses = [c for c in courses if c.id in mine and mine[c.id].type == "StudentEnrollment"]
    by_course = domain.published_assignments(call.session, [c.id for c in courses])
    marks = domain.marks_of(call.session, [a.id for rows in by_course.values() for a in rows],
                            [user.id])
    scores = {aid: m.score for (aid, _), m in marks.items()}
    return {"courses": [{"course_id": c.id, "name": c.name,
                         **domain.course_score(by_course[c.id], scores)} for c in courses]}


# ---------------------------------------------------------------- quizzes

@toolbox.tool(rw="read", core=True)
def canvas_list_quizzes(call: Call, course_id: CourseId, page: Page = 1,
                        per_page: PerPage = 50) -> dict[str, Any]:
    """Quizzes of a course (questions not included) ordered by due_at (undated last), then id.
    Students see published ones only. Paged: per_page default 50, max 100."""
    quizzes = domain.course_items(domain.QUIZZES, _access(call, course_id), domain.BY_DUE)
    return domain.paged(call.session, quizzes, page, per_page,
                        lambda rows: [domain.quiz_view(q) for q in rows])


@toolbox.tool(rw="read", core=True)
def canvas_get_quiz(call: Call, course_id: CourseId, quiz_id: QuizId) -> dict[str, Any]:
    """One quiz of a course (NOT_FOUND if it is not in that course); time_limit in minutes,
    allowed_attempts -1 = unlimited."""
    access = _access(call, course_id)
    return domain.quiz_view(domain.in_course(call.session, domain.QUIZZES, quiz_id, access, "quiz"))


# ---------------------------------------------------------------- discussions and announcements

@toolbox.tool(rw="read", core=True)
def canvas_list_announcements(call: Call, course_id: CourseId, page: Page = 1,
                              per_page: PerPage = 50) -> dict[str, Any]:
    """Announcements of a course, newest first (posted_at desc, then id desc), with full
    message. Paged: per_page default 50, max 100."""
    return _topics(call, course_id, True, page, per_page)


@toolbox.tool(rw="read")
def canvas_list_discussion_topics(call: Call, course_id: CourseId, page: Page = 1,
                                  per_page: PerPage = 50) -> dict[str, Any]:
    """Discussion topics of a course (announcements excluded), newest first (posted_at desc,
    then id desc). Paged: per_page default 50, max 100."""
    return _topics(call, course_id, False, page, per_page)


@toolbox.tool(rw="read")
def canvas_get_discussion_topic(call: Call, course_id: CourseId, topic_id: TopicId) -> dict[str, Any]:
    """One discussion topic or announcement with its first 50 replies (oldest first) and
    entries_total, the number of replies."""
    access = _access(call, course_id)
    topic = domain.in_course(call.session, domain.TOPICS, topic_id, access, "topic")
    return domain.topic_view(topic) | {
        "entries": domain.entry_views(call.session, topic_id, TOPIC_ENTRIES),
        "entries_total": topic.replies}


@toolbox.tool(rw="write")
def canvas_post_to_discussion(
    call: Call,
    course_id: CourseId,
    topic_id: TopicId,
    message: Annotated[str, Field(description="Reply text (HTML allowed)")],
) -> dict[str, Any]:
    """Reply to a discussion topic or announcement of a course you take part in (observers
    cannot post). Stores the reply and returns it."""
    access = _access(call, course_id)
    if access.enrollment is not None and access.enrollment.type == "ObserverEnrollment":
        raise denied(f"observers cannot post in course {course_id}")
    if not message.strip():
        raise invalid("message must not be empty")
    now_z = iso_z(call.now)
    domain.require_active(access, now_z)
    domain.in_course(call.session, domain.TOPICS, topic_id, access, "topic")
    entry = domain.add_entry(call.session, topic_id=topic_id, user_id=access.user.id,
                             message=message, created_at=now_z)
    return domain.entry_view(entry)


# ---------------------------------------------------------------- helpers

def _access(call: Call, course_id: int) -> domain.CourseAccess:
    return domain.course_access(call.session, domain.current_user(call.session), course_id)


def _check_open(assignment: domain.Assignment, now_z: str) -> None:
    if assignment.unlock_at is not None and now_z < assignment.unlock_at:
        raise ToolFailure(Code.FAILED_PRECONDITION,
                          f"assignment {assignment.id} is locked until {assignment.unlock_at}")
    if assignment.lock_at is not None and now_z > assignment.lock_at:
        raise ToolFailure(Code.FAILED_PRECONDITION,
                          f"assignment {assignment.id} was locked at {assignment.lock_at}")


def _check_payload(call: Call, user_id: int, submission_type: str, body: str | None,
                   url: str | None, file_ids: list[int] | None) -> None:
    """Exactly the field the submission type needs, and a usable value in it."""
    needed = {"online_text_entry": "body", "online_url": "url",
              "online_upload": "file_ids"}[submission_type]
    given = {"body": body, "url": url, "file_ids": file_ids}
    extra = [k for k, v in given.items() if v is not None and k != needed]
    if extra:
        raise invalid(f"{', '.join(extra)} not used with {submission_type}; give only {needed}")
    value = given[needed]
    if not value or (isinstance(value, str) and not value.strip()):
        raise invalid(f"{submission_type} needs a non-empty {needed}")
    if url is not None and not url.startswith(("http://", "https://")):
        raise invalid(f"url '{url}' must start with http:// or https://")
    if file_ids:
        _check_own_files(call, user_id, file_ids)


def _check_own_files(call: Call, me: int, file_ids: list[int]) -> None:
    owned = domain.owned_files(call.session, me, file_ids)
    missing = [str(f) for f in file_ids if f not in owned]
    if missing:
        raise not_found(f"file(s) {', '.join(missing)} not found among your files")


def _mark_view(assignment_id: int, mark: domain.Mark | None) -> dict[str, Any]:
    return {"assignment_id": assignment_id, "score": mark.score if mark else None,
            "grade": mark.grade if mark else None}


def _student_scores(call: Call, course_id: int,
                    assignments: list[domain.GradeItem]) -> list[dict[str, Any]]:
    """Every student of the course (by sortable name, id) with current and final score."""
    students = domain.course_students(call.session, course_id)
    marks = domain.marks_of(call.session, [a.id for a in assignments], [uid for uid, _ in students])
    scores: dict[int, dict[int, float]] = {uid: {} for uid, _ in students}
    for (aid, uid), mark in marks.items():
        scores[uid][aid] = mark.score
    out = []
    for uid, name in students:
        grade = domain.course_score(assignments, scores[uid])
        out.append({"user_id": uid, "name": name, "current_score": grade["current_score"],
                    "final_score": grade["final_score"]})
    return out


def _topics(call: Call, course_id: int, announcements: bool, page: int,
            per_page: int) -> dict[str, Any]:
    topics = domain.course_items(domain.TOPICS, _access(call, course_id), domain.NEWEST_FIRST,
                                 "x.is_announcement = ?", (announcements,))
    return domain.paged(call.session, topics, page, per_page,
                        lambda rows: [domain.topic_view(t) for t in rows])
