"""The Canvas domain layer shared by tools, world generators and checkers: inserts with explicit
values, the current user and role rules, paging, and the projections tools return.

Insert helpers flush (so ids are assigned by SQLite) but never commit: the caller's transaction
decides. Instants are accepted as aware datetimes or ISO 8601 strings with `Z` or an offset and
stored as UTC `YYYY-MM-DDTHH:MM:SSZ`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple, TypeVar
from zoneinfo import available_timezones

from sqlalchemy import bindparam
from sqlmodel import Session, SQLModel, and_, col, func, or_, select
from sqlmodel.sql.expression import Select, SelectOfScalar

from loca.clock import iso_z, parse_instant
from mock_servers.canvas.models import (
    CanvasAccount,
    CanvasAssignment,
    CanvasCourse,
    CanvasDiscussionEntry,
    CanvasDiscussionTopic,
    CanvasEnrollment,
    CanvasFile,
    CanvasQuiz,
    CanvasQuizSubmission,
    CanvasSession,
    CanvasSubmission,
    CanvasSubmissionFile,
    CanvasUser,
)
from mock_servers.core.auth import hash_password
from mock_servers.core.errors import Code, ToolFailure, denied, invalid, not_found

T = TypeVar("T", bound=SQLModel)
Q = TypeVar("Q", Select[Any], SelectOfScalar[Any])
C = TypeVar("C", CanvasAssignment, CanvasQuiz, CanvasDiscussionTopic)

ENROLLMENT_TYPES = ("StudentEnrollment", "TeacherEnrollment", "TaEnrollment",
                    "ObserverEnrollment", "DesignerEnrollment")
ENROLLMENT_STATES = ("active", "invited", "inactive", "completed")
STAFF_TYPES = ("TeacherEnrollment", "TaEnrollment")
COURSE_STATES = ("unpublished", "available", "completed")
SUBMISSION_TYPES = ("online_text_entry", "online_url", "online_upload", "on_paper", "none")
QUIZ_TYPES = ("practice_quiz", "assignment", "graded_survey", "survey")
SCORING_POLICIES = ("keep_highest", "keep_latest", "keep_average")
OPEN_STATES = ("active", "completed")  # enrollment states that let a user into a course
_ROLE_ORDER = ("TeacherEnrollment", "TaEnrollment", "DesignerEnrollment",
               "StudentEnrollment", "ObserverEnrollment")
# Canvas's default grading scheme: lowest percentage for each letter.
LETTER_GRADES = ((94.0, "A"), (90.0, "A-"), (87.0, "B+"), (84.0, "B"), (80.0, "B-"),
                 (77.0, "C+"), (74.0, "C"), (70.0, "C-"), (67.0, "D+"), (64.0, "D"),
                 (61.0, "D-"), (0.0, "F"))


# ---------------------------------------------------------------- values

def instant(value: str | datetime | None) -> str | None:
    """Normalise an instant to the stored form; `None` stays `None`."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return iso_z(value)
    try:
        return iso_z(parse_instant(value))
    except ValueError:
        raise invalid(f"'{value}' is not an ISO 8601 instant with a time zone") from None


@lru_cache(maxsize=1)
def _zone_names() -> frozenset[str]:
    """IANA names; `localtime` and `posixrules` would follow the host's zone."""
    return frozenset(available_timezones()) - {"localtime", "posixrules"}


def check_zone(name: str) -> str:
    """An IANA time zone name, else INVALID_ARGUMENT."""
    if name not in _zone_names():
        raise invalid(f"time_zone '{name}' is not an IANA time zone name", hint="e.g. America/New_York")
    return name


def _choice(what: str, value: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise invalid(f"{what} '{value}' not allowed; use {', '.join(allowed)}")
    return value


def _sortable(name: str) -> str:
    parts = name.rsplit(" ", 1)
    return f"{parts[1]}, {parts[0]}" if len(parts) == 2 else name


def _insert(session: Session, row: T) -> T:
    session.add(row)
    session.flush()
    return row


# ---------------------------------------------------------------- inserts

def add_account(session: Session, name: str, parent_account_id: int | None = None) -> CanvasAccount:
    """A root account (or a sub-account of `parent_account_id`)."""
    root = None
    if parent_account_id is not None:
        parent = session.get(CanvasAccount, parent_account_id)
        if parent is None:
            raise not_found(f"account {parent_account_id} not found")
        root = parent.root_account_id or parent.id
    return _insert(session, CanvasAccount(name=name, parent_account_id=parent_account_id,
                                          root_account_id=root))


def add_user(session: Session, *, name: str, login_id: str, email: str, password: str, salt: str,
             time_zone: str = "UTC", short_name: str | None = None,
             sortable_name: str | None = None, is_admin: bool = False) -> CanvasUser:
    """A user; only the salted hash of `password` is stored."""
    return _insert(session, CanvasUser(
        name=name, short_name=short_name or name, sortable_name=sortable_name or _sortable(name),
        login_id=login_id, email=email, time_zone=check_zone(time_zone),
        password_hash=hash_password(password, salt), is_admin=is_admin))


def add_course(session: Session, *, account_id: int, name: str, course_code: str,
               start_at: str | datetime | None = None, end_at: str | datetime | None = None,
               time_zone: str = "UTC", workflow_state: str = "available",
               syllabus_body: str | None = None, term: str | None = None,
               is_public: bool = False) -> CanvasCourse:
    return _insert(session, CanvasCourse(
        account_id=account_id, name=name, course_code=course_code, start_at=instant(start_at),
        end_at=instant(end_at), time_zone=check_zone(time_zone),
        workflow_state=_choice("workflow_state", workflow_state, COURSE_STATES),
        syllabus_body=syllabus_body, term=term, is_public=is_public))


def enroll(session: Session, *, course_id: int, user_id: int, type: str = "StudentEnrollment",
           state: str = "active") -> CanvasEnrollment:
    """Enroll a user; one enrollment per (user, course, type), else ALREADY_EXISTS."""
    _choice("role", type, ENROLLMENT_TYPES)
    _choice("enrollment_state", state, ENROLLMENT_STATES)
    existing = session.exec(select(CanvasEnrollment.id).where(
        CanvasEnrollment.course_id == course_id, CanvasEnrollment.user_id == user_id,
        CanvasEnrollment.type == type)).first()
    if existing is not None:
        raise ToolFailure(Code.ALREADY_EXISTS,
                          f"user {user_id} already has a {type} in course {course_id}")
    return _insert(session, CanvasEnrollment(course_id=course_id, user_id=user_id, type=type,
                                             enrollment_state=state))


def add_topic(session: Session, *, course_id: int, title: str, message: str,
              posted_at: str | datetime, author_id: int, is_announcement: bool = False,
              published: bool = True) -> CanvasDiscussionTopic:
    """A discussion topic, or an announcement with `is_announcement`."""
    return _insert(session, CanvasDiscussionTopic(
        course_id=course_id, title=title, message=message, posted_at=instant(posted_at),
        author_id=author_id, is_announcement=is_announcement, published=published))


def add_entry(session: Session, *, topic_id: int, user_id: int, message: str,
              created_at: str | datetime) -> CanvasDiscussionEntry:
    """A reply to a discussion topic."""
    return _insert(session, CanvasDiscussionEntry(topic_id=topic_id, user_id=user_id,
                                                  message=message, created_at=instant(created_at)))


def add_assignment(session: Session, *, course_id: int, name: str, description: str | None = None,
                   due_at: str | datetime | None = None, unlock_at: str | datetime | None = None,
                   lock_at: str | datetime | None = None, points_possible: float | None = None,
                   submission_types: Sequence[str] = ("online_text_entry",),
                   published: bool = True) -> CanvasAssignment:
    if not submission_types:
        raise invalid("submission_types must not be empty")
    types = [_choice("submission type", t, SUBMISSION_TYPES) for t in submission_types]
    return _insert(session, CanvasAssignment(
        course_id=course_id, name=name, description=description, due_at=instant(due_at),
        unlock_at=instant(unlock_at), lock_at=instant(lock_at), points_possible=points_possible,
        submission_types=",".join(types), published=published))


def add_file(session: Session, *, display_name: str, data: bytes, created_at: str | datetime,
             content_type: str = "application/octet-stream", course_id: int | None = None,
             user_id: int | None = None, folder_id: int | None = None,
             filename: str | None = None) -> CanvasFile:
    """A stored file, in a course (`course_id`) or owned by a user (`user_id`)."""
    return _insert(session, CanvasFile(
        course_id=course_id, user_id=user_id, folder_id=folder_id, display_name=display_name,
        filename=filename or display_name, content_type=content_type, size=len(data),
        created_at=instant(created_at), data=data))


def add_submission(session: Session, *, assignment_id: int, user_id: int,
                   submission_type: str | None = None, body: str | None = None,
                   url: str | None = None, submitted_at: str | datetime | None = None,
                   attempt: int | None = None, grade: str | None = None,
                   score: float | None = None, graded_at: str | datetime | None = None,
                   workflow_state: str | None = None,
                   file_ids: Sequence[int] = ()) -> CanvasSubmission:
    """A student's submission. `workflow_state` defaults to graded (a grade or score is given),
    submitted (`submitted_at` is given) or unsubmitted; `attempt` to 1 once submitted."""
    if submission_type is not None:
        _choice("submission_type", submission_type, SUBMISSION_TYPES)
    if file_ids and submission_type != "online_upload":
        raise invalid("file_ids need submission_type online_upload")
    if workflow_state is None:
        graded = grade is not None or score is not None
        workflow_state = "graded" if graded else "submitted" if submitted_at else "unsubmitted"
    sub = _insert(session, CanvasSubmission(
        assignment_id=assignment_id, user_id=user_id, workflow_state=workflow_state,
        submission_type=submission_type, body=body, url=url, submitted_at=instant(submitted_at),
        attempt=attempt if attempt is not None else (1 if submitted_at else None),
        grade=grade, score=score, graded_at=instant(graded_at)))
    attach_files(session, sub, file_ids)
    return sub


def attach_files(session: Session, sub: CanvasSubmission, file_ids: Iterable[int]) -> None:
    """Make `file_ids` the attachments of the submission's current attempt."""
    for link in session.exec(select(CanvasSubmissionFile).where(
            CanvasSubmissionFile.submission_id == sub.id)):
        session.delete(link)
    for file_id in dict.fromkeys(file_ids):
        session.add(CanvasSubmissionFile(submission_id=sub.id, file_id=file_id))
    session.flush()


def add_quiz(session: Session, *, course_id: int, title: str, description: str | None = None,
             quiz_type: str = "assignment", time_limit: int | None = None,
             allowed_attempts: int = 1, scoring_policy: str = "keep_highest",
             shuffle_answers: bool = False, points_possible: float | None = None,
             question_count: int = 0, due_at: str | datetime | None = None,
             published: bool = True, access_code: str | None = None,
             credits: int | None = None) -> CanvasQuiz:
    return _insert(session, CanvasQuiz(
        course_id=course_id, title=title, description=description,
        quiz_type=_choice("quiz_type", quiz_type, QUIZ_TYPES), time_limit=time_limit,
        allowed_attempts=allowed_attempts,
        scoring_policy=_choice("scoring_policy", scoring_policy, SCORING_POLICIES),
        shuffle_answers=shuffle_answers, points_possible=points_possible,
        question_count=question_count, due_at=instant(due_at), published=published,
        access_code=access_code, credits=credits))


def add_quiz_submission(session: Session, *, quiz_id: int, user_id: int,
                        started_at: str | datetime, attempt: int = 1,
                        finished_at: str | datetime | None = None, score: float | None = None,
                        workflow_state: str = "complete") -> CanvasQuizSubmission:
    """One attempt of a user at a quiz."""
    return _insert(session, CanvasQuizSubmission(
        quiz_id=quiz_id, user_id=user_id, attempt=attempt, workflow_state=workflow_state,
        started_at=instant(started_at), finished_at=instant(finished_at), score=score))


def log_in(session: Session, user_id: int | None) -> None:
    """Set the logged-in user (`None` logs out)."""
    row = session.get(CanvasSession, 1)
    if row is None:
        row = CanvasSession(id=1)
    row.user_id = user_id
    _insert(session, row)


# ---------------------------------------------------------------- who is asking

# Statements every call runs are built once; `bindparam`s take the values.
_SESSION_USER = select(CanvasUser).join(CanvasSession, col(CanvasSession.user_id) == CanvasUser.id)
_OWN_ENROLLMENTS = select(CanvasEnrollment).where(
    CanvasEnrollment.user_id == bindparam("user_id"),
    col(CanvasEnrollment.course_id).in_(bindparam("course_ids", expanding=True)),
    col(CanvasEnrollment.enrollment_state).in_(OPEN_STATES))
_COURSE_AND_OWN_ENROLLMENTS = select(CanvasCourse, CanvasEnrollment).outerjoin(CanvasEnrollment, and_(
    CanvasEnrollment.course_id == CanvasCourse.id, CanvasEnrollment.user_id == bindparam("user_id"),
    col(CanvasEnrollment.enrollment_state).in_(OPEN_STATES))).where(CanvasCourse.id == bindparam("course_id"))
_TEACHERS = (select(CanvasEnrollment.course_id, CanvasUser.id, CanvasUser.name, CanvasUser.email)
             .join(CanvasUser, col(CanvasUser.id) == CanvasEnrollment.user_id)
             .where(col(CanvasEnrollment.course_id).in_(bindparam("course_ids", expanding=True)),
                    CanvasEnrollment.type == "TeacherEnrollment",
                    CanvasEnrollment.enrollment_state == "active")
             .order_by(col(CanvasEnrollment.course_id), col(CanvasUser.id)))


def session_user(session: Session) -> CanvasUser | None:
    """The logged-in user, if any."""
    return session.exec(_SESSION_USER).first()


def current_user(session: Session) -> CanvasUser:
    """The logged-in user, else UNAUTHENTICATED."""
    user = session_user(session)
    if user is None:
        raise ToolFailure(Code.UNAUTHENTICATED, "not logged in", hint="log in with canvas_login")
    return user


def _role_rank(e: CanvasEnrollment) -> tuple[bool, int, int]:
    return e.enrollment_state != "active", _ROLE_ORDER.index(e.type), e.id or 0


def _strongest(enrollments: Iterable[CanvasEnrollment]) -> dict[int, CanvasEnrollment]:
    """Per course, the enrollment that decides the role: active before completed, then
    teacher, TA, designer, student, observer."""
    best: dict[int, CanvasEnrollment] = {}
    for e in enrollments:
        if e.course_id not in best or _role_rank(e) < _role_rank(best[e.course_id]):
            best[e.course_id] = e
    return best


def own_enrollments(session: Session, user_id: int,
                    course_ids: Iterable[int]) -> dict[int, CanvasEnrollment]:
    """The user's strongest open enrollment per course."""
    return _strongest(session.exec(_OWN_ENROLLMENTS, params={
        "user_id": user_id, "course_ids": list(course_ids)}))


@dataclass(frozen=True)
class CourseAccess:
    """The caller inside one course: `enrollment` is theirs (None for an admin without one)."""

    user: CanvasUser
    course: CanvasCourse
    enrollment: CanvasEnrollment | None

    @property
    def staff(self) -> bool:
        """Teacher, TA or account admin: sees unpublished content and others' work."""
        return self.user.is_admin or (self.enrollment is not None
                                      and self.enrollment.type in STAFF_TYPES)

    @property
    def student(self) -> bool:
        return self.enrollment is not None and self.enrollment.type == "StudentEnrollment"


def course_access(session: Session, user: CanvasUser, course_id: int) -> CourseAccess:
    """NOT_FOUND for a missing course, PERMISSION_DENIED unless the caller is an admin or has an
    open enrollment (only teachers and TAs enter unpublished courses)."""
    rows = session.exec(_COURSE_AND_OWN_ENROLLMENTS,
                        params={"user_id": user.id, "course_id": course_id}).all()
    if not rows:
        raise not_found(f"course {course_id} not found", hint="see canvas_list_courses")
    course = rows[0][0]
    enrollment = _strongest(e for _, e in rows if e is not None).get(course_id)
    access = CourseAccess(user, course, enrollment)
    if not user.is_admin:
        if enrollment is None:
            raise denied(f"you are not enrolled in course {course_id}")
        if course.workflow_state == "unpublished" and not access.staff:
            raise denied(f"course {course_id} is not published")
    return access


def require_staff(access: CourseAccess, action: str) -> None:
    if not access.staff:
        raise denied(f"only teachers, TAs and admins may {action} in course {access.course.id}")


def require_active(access: CourseAccess, now_z: str) -> None:
    """Writes need an open course and, for members, an active enrollment (admins pass)."""
    course = access.course
    if course.workflow_state == "completed" or (course.end_at is not None and course.end_at < now_z):
        raise ToolFailure(Code.FAILED_PRECONDITION, f"course {course.id} has concluded")
    if access.enrollment is not None and access.enrollment.enrollment_state != "active":
        raise ToolFailure(Code.FAILED_PRECONDITION,
                          f"your enrollment in course {course.id} is {access.enrollment.enrollment_state}")


def in_course(session: Session, model: type[C], obj_id: int, access: CourseAccess, what: str) -> C:
    """An assignment, quiz or topic of the course; unpublished ones exist only for staff."""
    row = session.get(model, obj_id)
    if row is None or row.course_id != access.course.id or not (row.published or access.staff):
        raise not_found(f"{what} {obj_id} not found in course {access.course.id}")
    return row


def visible(stmt: SelectOfScalar[C], model: type[C], access: CourseAccess) -> SelectOfScalar[C]:
    """Limit a course listing to what the caller may see."""
    return stmt if access.staff else stmt.where(col(model.published) == True)  # noqa: E712


def my_courses(user_id: int, now_z: str,
               include_ended: bool = False) -> SelectOfScalar[CanvasCourse]:
    """Courses the user is actively enrolled in (students: published ones), by id. With
    `include_ended`, also completed enrollments and courses that are completed or past end_at."""
    states = OPEN_STATES if include_ended else ("active",)
    mine = select(CanvasEnrollment.id).where(
        CanvasEnrollment.course_id == CanvasCourse.id, CanvasEnrollment.user_id == user_id,
        col(CanvasEnrollment.enrollment_state).in_(states),
        or_(col(CanvasEnrollment.type).in_(STAFF_TYPES), CanvasCourse.workflow_state != "unpublished"))
    stmt = select(CanvasCourse).where(mine.exists())
    if not include_ended:
        stmt = stmt.where(CanvasCourse.workflow_state != "completed",
                          or_(col(CanvasCourse.end_at).is_(None), col(CanvasCourse.end_at) >= now_z))
    return stmt.order_by(col(CanvasCourse.id))


# ---------------------------------------------------------------- paging

def paged(session: Session, stmt: Select[Any] | SelectOfScalar[Any], page: int, per_page: int,
          render: Callable[[list[Any]], list[dict[str, Any]]]) -> dict[str, Any]:
    """`{items,page,per_page,total,has_more}` with LIMIT/OFFSET in SQL; `stmt` is ordered by a
    unique key last. COUNT runs only when the page does not tell the total by itself."""
    offset = (page - 1) * per_page
    rows = list(session.exec(stmt.limit(per_page).offset(offset)))
    if 0 < len(rows) < per_page or (page == 1 and not rows):
        total = offset + len(rows)
    else:
        total = session.exec(select(func.count()).select_from(stmt.order_by(None).subquery())).one()
    return {"items": render(rows), "page": page, "per_page": per_page, "total": total,
            "has_more": page * per_page < total}


# ---------------------------------------------------------------- projections

def user_view(u: CanvasUser) -> dict[str, Any]:
    return {"id": u.id, "name": u.name, "short_name": u.short_name,
            "sortable_name": u.sortable_name, "login_id": u.login_id, "email": u.email,
            "time_zone": u.time_zone}


def login_view(u: CanvasUser) -> dict[str, Any]:
    return {"id": u.id, "name": u.name, "email": u.email, "login_id": u.login_id, "logged_in": True}


def profile_view(u: CanvasUser) -> dict[str, Any]:
    return user_view(u) | {"bio": u.bio, "title": u.title}


def enrollment_view(e: CanvasEnrollment) -> dict[str, Any]:
    return {"id": e.id, "course_id": e.course_id, "user_id": e.user_id, "type": e.type,
            "enrollment_state": e.enrollment_state}


def teachers_of(session: Session, course_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """Active teachers per course, by user id, in one query."""
    out: dict[int, list[dict[str, Any]]] = {cid: [] for cid in course_ids}
    for course_id, uid, name, email in session.exec(_TEACHERS, params={"course_ids": course_ids}):
        out[course_id].append({"id": uid, "name": name, "email": email})
    return out


def course_views(session: Session, courses: list[CanvasCourse],
                 mine: dict[int, CanvasEnrollment]) -> list[dict[str, Any]]:
    """`Course` projections with teachers (one query per batch) and the caller's enrollment
    from `mine` (course id -> enrollment)."""
    teachers = teachers_of(session, [c.id for c in courses])
    return [{
        "id": c.id, "name": c.name, "course_code": c.course_code,
        "workflow_state": c.workflow_state, "account_id": c.account_id, "start_at": c.start_at,
        "end_at": c.end_at, "time_zone": c.time_zone, "is_public": c.is_public,
        "teachers": teachers[c.id],
        "enrollment": ({"type": mine[c.id].type, "enrollment_state": mine[c.id].enrollment_state}
                       if c.id in mine else None),
    } for c in courses]


def course_brief(c: CanvasCourse) -> dict[str, Any]:
    return {"id": c.id, "name": c.name, "course_code": c.course_code}


def assignment_view(a: CanvasAssignment) -> dict[str, Any]:
    return {"id": a.id, "course_id": a.course_id, "name": a.name, "description": a.description,
            "due_at": a.due_at, "unlock_at": a.unlock_at, "lock_at": a.lock_at,
            "points_possible": a.points_possible, "submission_types": a.submission_types.split(","),
            "published": a.published, "html_url": f"/courses/{a.course_id}/assignments/{a.id}"}


def submission_view(session: Session, a: CanvasAssignment, user_id: int,
                    sub: CanvasSubmission | None) -> dict[str, Any]:
    """`Submission`; a never-submitted one is an `unsubmitted` placeholder with id null."""
    if sub is None:
        sub = CanvasSubmission(assignment_id=a.id, user_id=user_id, workflow_state="unsubmitted")
    files = [] if sub.submission_type != "online_upload" else session.exec(
        select(CanvasFile.id, CanvasFile.display_name)
        .join(CanvasSubmissionFile, col(CanvasSubmissionFile.file_id) == CanvasFile.id)
        .where(CanvasSubmissionFile.submission_id == sub.id).order_by(col(CanvasFile.id))).all()
    late = bool(sub.submitted_at and a.due_at and sub.submitted_at > a.due_at)
    return {"id": sub.id, "assignment_id": a.id, "user_id": user_id,
            "workflow_state": sub.workflow_state, "submission_type": sub.submission_type,
            "body": sub.body, "url": sub.url,
            "attachments": [{"id": fid, "display_name": name} for fid, name in files],
            "submitted_at": sub.submitted_at, "attempt": sub.attempt, "late": late,
            "grade": sub.grade, "score": sub.score, "graded_at": sub.graded_at}


def quiz_view(q: CanvasQuiz) -> dict[str, Any]:
    return {"id": q.id, "course_id": q.course_id, "title": q.title, "description": q.description,
            "quiz_type": q.quiz_type, "time_limit": q.time_limit,
            "allowed_attempts": q.allowed_attempts, "scoring_policy": q.scoring_policy,
            "shuffle_answers": q.shuffle_answers, "points_possible": q.points_possible,
            "question_count": q.question_count, "due_at": q.due_at, "published": q.published,
            "has_access_code": bool(q.access_code), "credits": q.credits}


def topics_query(access: CourseAccess) -> Select[Any]:
    """Rows of (topic, author name, reply count) of the course that the caller may see."""
    replies = (select(func.count()).where(CanvasDiscussionEntry.topic_id == CanvasDiscussionTopic.id)
               .correlate(CanvasDiscussionTopic).scalar_subquery())
    stmt = (select(CanvasDiscussionTopic, CanvasUser.name, replies)
            .join(CanvasUser, col(CanvasUser.id) == CanvasDiscussionTopic.author_id)
            .where(CanvasDiscussionTopic.course_id == access.course.id))
    return stmt if access.staff else stmt.where(CanvasDiscussionTopic.published == True)  # noqa: E712


def topic_view(t: CanvasDiscussionTopic, author: str, replies: int) -> dict[str, Any]:
    return {"id": t.id, "course_id": t.course_id, "title": t.title, "message": t.message,
            "posted_at": t.posted_at, "author": {"id": t.author_id, "name": author},
            "is_announcement": t.is_announcement, "discussion_subentry_count": replies,
            "published": t.published}


def entry_view(e: CanvasDiscussionEntry) -> dict[str, Any]:
    return {"id": e.id, "topic_id": e.topic_id, "user_id": e.user_id, "message": e.message,
            "created_at": e.created_at}


# ---------------------------------------------------------------- grades

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
    stmt = select(CanvasAssignment.id, CanvasAssignment.course_id,
                  CanvasAssignment.points_possible).where(
        col(CanvasAssignment.course_id).in_(course_ids), CanvasAssignment.published == True)  # noqa: E712
    for row in session.exec(by_due(stmt, CanvasAssignment)):
        out[row.course_id].append(GradeItem(*row))
    return out


def marks_of(session: Session, assignment_ids: list[int],
             user_ids: list[int]) -> dict[tuple[int, int], Mark]:
    """Scored submissions keyed by (assignment id, user id)."""
    rows = session.exec(select(CanvasSubmission.assignment_id, CanvasSubmission.user_id,
                               CanvasSubmission.score, CanvasSubmission.grade).where(
        col(CanvasSubmission.assignment_id).in_(assignment_ids),
        col(CanvasSubmission.user_id).in_(user_ids), col(CanvasSubmission.score).is_not(None)))
    return {(aid, uid): Mark(score, grade) for aid, uid, score, grade in rows}


def by_due(stmt: Q, model: type[CanvasAssignment] | type[CanvasQuiz]) -> Q:
    """Order by due_at with undated rows last, then id."""
    return stmt.order_by(col(model.due_at).is_(None), col(model.due_at), col(model.id))


def upcoming(session: Session, courses: list[CanvasCourse], now_z: str,
             limit: int) -> list[dict[str, Any]]:
    """Published assignments of `courses` due after `now_z`, soonest first."""
    by_id = {c.id: c for c in courses}
    rows = session.exec(select(CanvasAssignment).where(
        col(CanvasAssignment.course_id).in_(list(by_id)), CanvasAssignment.published == True,  # noqa: E712
        col(CanvasAssignment.due_at) > now_z)
        .order_by(col(CanvasAssignment.due_at), col(CanvasAssignment.id)).limit(limit))
    return [{"assignment": assignment_view(a), "course": course_brief(by_id[a.course_id])}
            for a in rows]
