"""The Canvas domain layer shared by tools, world generators and checkers: inserts with explicit
values, the current user and role rules, paging, and the projections tools return.

Insert helpers flush (so ids are assigned by SQLite) but never commit: the caller's transaction
decides. Instants are accepted as aware datetimes or ISO 8601 strings with `Z` or an offset and
stored as UTC `YYYY-MM-DDTHH:MM:SSZ`.

Insert helpers return ORM rows; everything else is plain SQL on the session's DB-API connection
(inside the same transaction, pending ORM changes flushed first): a tool call runs a handful of
statements, and SQLAlchemy's per-statement cost would dominate. Rows come back as named tuples
with fields named after their columns; flags in them are SQLite's 0/1."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple, TypeVar

from sqlmodel import Session, SQLModel

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
    CanvasSubmission,
    CanvasUser,
)
from mock_servers.core import paging, sessions, sql
from mock_servers.core.auth import hash_password, verify_password
from mock_servers.core.errors import Code, ToolFailure, denied, invalid, not_found
from mock_servers.core.times import check_zone
from mock_servers.core.times import optional_instant as instant

T = TypeVar("T", bound=SQLModel)
R = TypeVar("R")

SERVER = "canvas"
ENROLLMENT_TYPES = ("StudentEnrollment", "TeacherEnrollment", "TaEnrollment",
                    "ObserverEnrollment", "DesignerEnrollment")
ENROLLMENT_STATES = ("active", "invited", "inactive", "completed")
STAFF_TYPES = ("TeacherEnrollment", "TaEnrollment")
COURSE_STATES = ("unpublished", "available", "completed")
SUBMISSION_TYPES = ("online_text_entry", "online_url", "online_upload", "on_paper", "none")
QUIZ_TYPES = ("practice_quiz", "assignment", "graded_survey", "survey")
SCORING_POLICIES = ("keep_highest", "keep_latest", "keep_average")
OPEN_STATES = ("active", "completed")  # enrollment states that let a user into a course
PROFILE_FIELDS = ("name", "short_name", "bio", "title", "time_zone")  # a user may change these
_ROLE_ORDER = ("TeacherEnrollment", "TaEnrollment", "DesignerEnrollment",
               "StudentEnrollment", "ObserverEnrollment")
# Canvas's default grading scheme: lowest percentage for each letter.
LETTER_GRADES = ((94.0, "A"), (90.0, "A-"), (87.0, "B+"), (84.0, "B"), (80.0, "B-"),
                 (77.0, "C+"), (74.0, "C"), (70.0, "C-"), (67.0, "D+"), (64.0, "D"),
                 (61.0, "D-"), (0.0, "F"))


_OPEN = sql.quoted(OPEN_STATES)
_STAFF = sql.quoted(STAFF_TYPES)


# ---------------------------------------------------------------- values

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
    if sql.run(session, "SELECT 1 FROM canvas_enrollment WHERE course_id = ? AND user_id = ? "
                     "AND type = ?", (course_id, user_id, type)).fetchone():
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


def attach_files(session: Session, sub: CanvasSubmission | Submission,
                 file_ids: Iterable[int]) -> None:
    """Make `file_ids` the attachments of the submission's current attempt."""
    sql.run(session, "DELETE FROM canvas_submission_file WHERE submission_id = ?", (sub.id,))
    sql.cursor(session).executemany(
        "INSERT INTO canvas_submission_file (submission_id, file_id) VALUES (?, ?)",
        [(sub.id, file_id) for file_id in dict.fromkeys(file_ids)])


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
    sessions.log_in(session, SERVER, user_id)


# ---------------------------------------------------------------- rows

class User(NamedTuple):
    """A user as tools see them (never the password hash)."""

    id: int
    name: str
    short_name: str
    sortable_name: str
    login_id: str
    email: str
    time_zone: str
    bio: str | None
    title: str | None
    is_admin: int


class Course(NamedTuple):
    id: int
    account_id: int
    name: str
    course_code: str
    workflow_state: str
    start_at: str | None
    end_at: str | None
    time_zone: str
    is_public: int
    syllabus_body: str | None
    term: str | None


class Enrollment(NamedTuple):
    id: int
    course_id: int
    user_id: int
    type: str
    enrollment_state: str


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


class Quiz(NamedTuple):
    id: int
    course_id: int
    title: str
    description: str | None
    quiz_type: str
    time_limit: int | None
    allowed_attempts: int
    scoring_policy: str
    shuffle_answers: int
    points_possible: float | None
    question_count: int
    due_at: str | None
    published: int
    access_code: str | None
    credits: int | None


class Topic(NamedTuple):
    """A topic with its author's name and its number of replies."""

    id: int
    course_id: int
    title: str
    message: str
    posted_at: str
    author_id: int
    is_announcement: int
    published: int
    author: str
    replies: int


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


class Table(NamedTuple):
    """Rows of `row` read as `columns` from `tables`, whose main table is aliased `x`."""

    row: type[Any]
    columns: str
    tables: str

    def select(self, where: str) -> str:
        return f"SELECT {self.columns} FROM {self.tables} WHERE {where}"


def _table(row: type[tuple[Any, ...]], name: str) -> Table:
    return Table(row, sql.columns(row, "x"), f"{name} x")


USERS = _table(User, "canvas_user")
COURSES = _table(Course, "canvas_course")
ASSIGNMENTS = _table(Assignment, "canvas_assignment")
QUIZZES = _table(Quiz, "canvas_quiz")
SUBMISSIONS = _table(Submission, "canvas_submission")
TOPICS = Table(Topic, "x.id, x.course_id, x.title, x.message, x.posted_at, x.author_id, "
                      "x.is_announcement, x.published, u.name, (SELECT count(*) FROM "
                      "canvas_discussion_entry d WHERE d.topic_id = x.id)",
               "canvas_discussion_topic x JOIN canvas_user u ON u.id = x.author_id")
BY_DUE = "x.due_at IS NULL, x.due_at, x.id"  # undated last
NEWEST_FIRST = "x.posted_at DESC, x.id DESC"


# ---------------------------------------------------------------- paging

class Listing(NamedTuple):
    """The rows of `table` that match `where` (its `?` take `params`), in `order`, which ends
    in a unique key."""

    table: Table
    where: str
    order: str
    params: tuple[Any, ...] = ()


def fetch_all(session: Session, listing: Listing) -> list[Any]:
    """Every row of a listing."""
    return sql.rows(session, listing.table.row,
                 f"{listing.table.select(listing.where)} ORDER BY {listing.order}", listing.params)


def paged(session: Session, listing: Listing, page: int, per_page: int,
          render: Callable[[list[Any]], list[dict[str, Any]]]) -> dict[str, Any]:
    """`{items,page,per_page,total,has_more}`, the page read in SQL."""
    table, where, order, params = listing
    rows, total = paging.fetch_page(
        session, table.row, f"{table.select(where)} ORDER BY {order}",
        f"SELECT count(*) FROM {table.tables} WHERE {where}", params, page, per_page)
    return {"items": render(rows), "page": page, "per_page": per_page, "total": total,
            "has_more": page * per_page < total}


# ---------------------------------------------------------------- who is asking

_SESSION_USER = USERS.select(f"x.id = {sessions.PRINCIPAL}")
_COURSE_AND_OWN_ENROLLMENTS = (
    f"SELECT {COURSES.columns}, {sql.columns(Enrollment, 'e')} FROM {COURSES.tables} "
    f"LEFT JOIN canvas_enrollment e ON e.course_id = x.id AND e.user_id = ? "
    f"AND e.enrollment_state IN ({_OPEN}) WHERE x.id = ?")


def session_user(session: Session) -> User | None:
    """The logged-in user, if any."""
    return sql.first(session, User, _SESSION_USER, (SERVER,))


def current_user(session: Session) -> User:
    """The logged-in user, else UNAUTHENTICATED."""
    user = session_user(session)
    if user is None:
        raise ToolFailure(Code.UNAUTHENTICATED, "not logged in", hint="log in with canvas_login")
    return user


def check_login(session: Session, login_id: str, password: str) -> User | None:
    """The user when `password` is right for `login_id`, else None."""
    row = sql.run(session, f"SELECT {USERS.columns}, x.password_hash FROM {USERS.tables} "
                        "WHERE x.login_id = ?", (login_id,)).fetchone()
    if row is None or not verify_password(password, row[-1]):
        return None
    return User._make(row[:-1])


def user_exists(session: Session, user_id: int) -> bool:
    found = sql.run(session, "SELECT 1 FROM canvas_user WHERE id = ?", (user_id,)).fetchone()
    return found is not None


def update_profile(session: Session, user: User, changes: dict[str, str]) -> User:
    """Set some of `PROFILE_FIELDS` of the user; returns the changed row."""
    if not set(changes) <= set(PROFILE_FIELDS):
        raise ValueError(f"not profile fields: {sorted(set(changes) - set(PROFILE_FIELDS))}")
    columns = ", ".join(f"{field} = ?" for field in changes)
    sql.run(session, f"UPDATE canvas_user SET {columns} WHERE id = ?", (*changes.values(), user.id))
    return user._replace(**changes)


def users_around(user: User) -> Listing:
    """Users who share a course with `user` (with an open enrollment each), `user` included;
    every user for an admin. By id."""
    if user.is_admin:
        return Listing(USERS, "TRUE", "x.id")
    classmate = ("EXISTS (SELECT 1 FROM canvas_enrollment e JOIN canvas_enrollment m "
                 f"ON m.course_id = e.course_id WHERE e.user_id = x.id AND e.enrollment_state IN "
                 f"({_OPEN}) AND m.user_id = ? AND m.enrollment_state IN ({_OPEN}))")
    return Listing(USERS, f"x.id = ? OR {classmate}", "x.id", (user.id, user.id))


def _role_rank(e: Enrollment) -> tuple[bool, int, int]:
    return e.enrollment_state != "active", _ROLE_ORDER.index(e.type), e.id


def _strongest(enrollments: Iterable[Enrollment]) -> dict[int, Enrollment]:
    """Per course, the enrollment that decides the role: active before completed, then
    teacher, TA, designer, student, observer."""
    best: dict[int, Enrollment] = {}
    for e in enrollments:
        if e.course_id not in best or _role_rank(e) < _role_rank(best[e.course_id]):
            best[e.course_id] = e
    return best


def own_enrollments(session: Session, user_id: int,
                    course_ids: Sequence[int]) -> dict[int, Enrollment]:
    """The user's strongest open enrollment per course."""
    return _strongest(sql.rows(
        session, Enrollment, f"SELECT {sql.columns(Enrollment, 'e')} FROM canvas_enrollment e "
                             f"WHERE e.user_id = ? AND e.enrollment_state IN ({_OPEN}) "
                             f"AND e.course_id IN ({sql.marks(len(course_ids))})",
        (user_id, *course_ids)))


def is_student(session: Session, course_id: int, user_id: int) -> bool:
    """Whether the user has a student enrollment (in any state) in the course."""
    found = sql.run(session, "SELECT 1 FROM canvas_enrollment WHERE course_id = ? AND user_id = ? "
                          "AND type = 'StudentEnrollment'", (course_id, user_id)).fetchone()
    return found is not None


@dataclass(frozen=True)
class CourseAccess:
    """The caller inside one course: `enrollment` is theirs (None for an admin without one)."""

    user: User
    course: Course
    enrollment: Enrollment | None

    @property
    def staff(self) -> bool:
        """Teacher, TA or account admin: sees unpublished content and others' work."""
        return bool(self.user.is_admin) or (self.enrollment is not None
                                            and self.enrollment.type in STAFF_TYPES)

    @property
    def student(self) -> bool:
        return self.enrollment is not None and self.enrollment.type == "StudentEnrollment"


def course_access(session: Session, user: User, course_id: int) -> CourseAccess:
    """NOT_FOUND for a missing course, PERMISSION_DENIED unless the caller is an admin or has an
    open enrollment (only teachers and TAs enter unpublished courses). One query: the course
    row once per open enrollment of the caller in it."""
    rows = sql.run(session, _COURSE_AND_OWN_ENROLLMENTS, (user.id, course_id)).fetchall()
    if not rows:
        raise not_found(f"course {course_id} not found", hint="see canvas_list_courses")
    split = len(Course._fields)
    course = Course._make(rows[0][:split])
    mine = [Enrollment._make(r[split:]) for r in rows if r[split] is not None]
    enrollment = _strongest(mine).get(course_id)
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


def in_course(session: Session, table: Table, obj_id: int, access: CourseAccess, what: str) -> Any:
    """An assignment, quiz or topic (`table`) of the course; unpublished ones exist only for
    staff."""
    row = sql.first(session, table.row, table.select("x.id = ?"), (obj_id,))
    if row is None or row.course_id != access.course.id or not (row.published or access.staff):
        raise not_found(f"{what} {obj_id} not found in course {access.course.id}")
    return row


def course_items(table: Table, access: CourseAccess, order: str, where: str = "TRUE",
                 params: tuple[Any, ...] = ()) -> Listing:
    """The assignments, quizzes or topics (`table`) of the course matching `where` that the
    caller may see: students see published ones only."""
    shown = "x.course_id = ?" if access.staff else "x.course_id = ? AND x.published = 1"
    return Listing(table, f"{shown} AND {where}", order, (access.course.id, *params))


def my_courses(user_id: int, now_z: str, include_ended: bool = False) -> Listing:
    """Courses the user is actively enrolled in (students: published ones), by id. With
    `include_ended`, also completed enrollments and courses that are completed or past end_at."""
    states = OPEN_STATES if include_ended else ("active",)
    where = ("EXISTS (SELECT 1 FROM canvas_enrollment e WHERE e.course_id = x.id AND e.user_id = ? "
             f"AND e.enrollment_state IN ({sql.quoted(states)}) "
             f"AND (e.type IN ({_STAFF}) OR x.workflow_state != 'unpublished'))")
    if include_ended:
        return Listing(COURSES, where, "x.id", (user_id,))
    return Listing(COURSES, f"{where} AND x.workflow_state != 'completed' "
                            "AND (x.end_at IS NULL OR x.end_at >= ?)", "x.id", (user_id, now_z))


def student_count(session: Session, course_id: int) -> int:
    """Active students of the course."""
    return sql.run(session, "SELECT count(*) FROM canvas_enrollment WHERE course_id = ? AND "
                         "type = 'StudentEnrollment' AND enrollment_state = 'active'",
                (course_id,)).fetchone()[0]


def course_students(session: Session, course_id: int) -> list[tuple[int, str]]:
    """(id, name) of the course's students with an open enrollment, by sortable name and id."""
    return sql.run(session, "SELECT u.id, u.name FROM canvas_enrollment e JOIN canvas_user u "
                         "ON u.id = e.user_id WHERE e.course_id = ? "
                         f"AND e.type = 'StudentEnrollment' AND e.enrollment_state IN ({_OPEN}) "
                         "ORDER BY u.sortable_name, u.id", (course_id,)).fetchall()


# ---------------------------------------------------------------- submissions

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


# ---------------------------------------------------------------- projections

def user_view(u: User) -> dict[str, Any]:
    return {"id": u.id, "name": u.name, "short_name": u.short_name,
            "sortable_name": u.sortable_name, "login_id": u.login_id, "email": u.email,
            "time_zone": u.time_zone}


def login_view(u: User) -> dict[str, Any]:
    return {"id": u.id, "name": u.name, "email": u.email, "login_id": u.login_id, "logged_in": True}


def profile_view(u: User) -> dict[str, Any]:
    return user_view(u) | {"bio": u.bio, "title": u.title}


def enrollment_view(e: CanvasEnrollment) -> dict[str, Any]:
    return {"id": e.id, "course_id": e.course_id, "user_id": e.user_id, "type": e.type,
            "enrollment_state": e.enrollment_state}


def teachers_of(session: Session, course_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """Active teachers per course, by user id, in one query (sorted here: cheaper than
    SQLite's sorter)."""
    out: dict[int, list[dict[str, Any]]] = {cid: [] for cid in course_ids}
    rows = sql.run(session, "SELECT e.course_id, u.id, u.name, u.email FROM canvas_enrollment e "
                         "JOIN canvas_user u ON u.id = e.user_id "
                         "WHERE e.type = 'TeacherEnrollment' AND e.enrollment_state = 'active' "
                         f"AND e.course_id IN ({sql.marks(len(course_ids))})", course_ids).fetchall()
    for course_id, uid, name, email in sorted(rows):
        out[course_id].append({"id": uid, "name": name, "email": email})
    return out


def course_views(session: Session, courses: list[Course],
                 mine: dict[int, Enrollment]) -> list[dict[str, Any]]:
    """`Course` projections with teachers (one query per batch) and the caller's enrollment
    from `mine` (course id -> enrollment)."""
    teachers = teachers_of(session, [c.id for c in courses])
    return [{
        "id": c.id, "name": c.name, "course_code": c.course_code,
        "workflow_state": c.workflow_state, "account_id": c.account_id, "start_at": c.start_at,
        "end_at": c.end_at, "time_zone": c.time_zone, "is_public": bool(c.is_public),
        "teachers": teachers[c.id],
        "enrollment": ({"type": mine[c.id].type, "enrollment_state": mine[c.id].enrollment_state}
                       if c.id in mine else None),
    } for c in courses]


def course_brief(c: Course) -> dict[str, Any]:
    return {"id": c.id, "name": c.name, "course_code": c.course_code}


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


def quiz_view(q: Quiz) -> dict[str, Any]:
    return {"id": q.id, "course_id": q.course_id, "title": q.title, "description": q.description,
            "quiz_type": q.quiz_type, "time_limit": q.time_limit,
            "allowed_attempts": q.allowed_attempts, "scoring_policy": q.scoring_policy,
            "shuffle_answers": bool(q.shuffle_answers), "points_possible": q.points_possible,
            "question_count": q.question_count, "due_at": q.due_at, "published": bool(q.published),
            "has_access_code": bool(q.access_code), "credits": q.credits}


def topic_view(t: Topic) -> dict[str, Any]:
    return {"id": t.id, "course_id": t.course_id, "title": t.title, "message": t.message,
            "posted_at": t.posted_at, "author": {"id": t.author_id, "name": t.author},
            "is_announcement": bool(t.is_announcement), "discussion_subentry_count": t.replies,
            "published": bool(t.published)}


def entry_views(session: Session, topic_id: int, limit: int) -> list[dict[str, Any]]:
    """The first `limit` replies of a topic, oldest first, with their authors."""
    rows = sql.run(session, "SELECT e.id, e.user_id, u.name, e.message, e.created_at "
                         "FROM canvas_discussion_entry e JOIN canvas_user u ON u.id = e.user_id "
                         "WHERE e.topic_id = ? ORDER BY e.created_at, e.id LIMIT ?",
                (topic_id, limit))
    return [{"id": eid, "user": {"id": uid, "name": name}, "message": message,
             "created_at": created_at} for eid, uid, name, message, created_at in rows]


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
