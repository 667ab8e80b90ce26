"""Canvas courses and enrollments: inserts, who may enter a course and in which role, the
caller's courses, and the `Course` projection."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

import orjson
from sqlmodel import Session

from mock_servers.canvas.domain.base import (
    ENROLLMENT_STATES,
    ENROLLMENT_TYPES,
    OPEN,
    OPEN_STATES,
    STAFF,
    STAFF_TYPES,
    Listing,
    Table,
    choice,
    insert,
    insert_many,
    paged_ids,
    table,
    text,
    update_row,
)
from mock_servers.canvas.domain.users import User
from mock_servers.canvas.models import CanvasCourse, CanvasEnrollment
from mock_servers.core import kept, sql
from mock_servers.core.errors import Code, ToolFailure, denied, invalid, not_found
from mock_servers.core.output import dump_json
from mock_servers.core.times import check_zone
from mock_servers.core.times import optional_instant as instant

COURSE_STATES = ("unpublished", "available", "completed")
COURSE_FIELDS = ("name", "course_code", "start_at", "end_at", "syllabus_body")  # updatable
_ROLE_ORDER = ("TeacherEnrollment", "TaEnrollment", "DesignerEnrollment",
               "StudentEnrollment", "ObserverEnrollment")


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


class CourseSummary(NamedTuple):
    """The columns of a course that its `Course` projection shows."""

    id: int
    name: str
    course_code: str
    workflow_state: str
    account_id: int
    start_at: str | None
    end_at: str | None
    time_zone: str
    is_public: int


class Enrollment(NamedTuple):
    id: int
    course_id: int
    user_id: int
    type: str
    enrollment_state: str


COURSES = table(Course, "canvas_course")
SUMMARIES = table(CourseSummary, "canvas_course")
KEPT = "canvas_kept"


# ---------------------------------------------------------------- inserts

def _check_dates(start_at: str | None, end_at: str | None) -> None:
    if start_at and end_at and end_at < start_at:
        raise invalid(f"end_at {end_at} is before start_at {start_at}")


def course_row(*, account_id: int, name: str, course_code: str | None = None,
               start_at: Any = None, end_at: Any = None, time_zone: str = "UTC",
               workflow_state: str = "available", syllabus_body: str | None = None,
               term: str | None = None, enrollment_term_id: int | None = None,
               sis_course_id: str | None = None, is_public: bool = False,
               id: int | None = None) -> dict[str, Any]:
    """The checked values of one course; `course_code` defaults to the name."""
    start, end = instant(start_at), instant(end_at)
    _check_dates(start, end)
    return {"id": id, "account_id": account_id, "name": text("name", name),
            "course_code": course_code or name, "workflow_state": choice(
                "workflow_state", workflow_state, COURSE_STATES),
            "start_at": start, "end_at": end, "time_zone": check_zone(time_zone),
            "is_public": is_public, "syllabus_body": syllabus_body, "term": term,
            "enrollment_term_id": enrollment_term_id, "sis_course_id": sis_course_id}


def add_course(session: Session, **values: Any) -> CanvasCourse:
    """One course (see `course_row`)."""
    return insert(session, CanvasCourse(**course_row(**values)))


def add_courses(session: Session, rows: Iterable[Mapping[str, Any]]) -> int:
    """Many courses in one statement, each given as `add_course`'s keyword arguments."""
    return insert_many(session, CanvasCourse, course_row, rows)


def enrollment_row(*, course_id: int, user_id: int, type: str = "StudentEnrollment",
                   state: str = "active", id: int | None = None) -> dict[str, Any]:
    return {"id": id, "course_id": course_id, "user_id": user_id,
            "type": choice("role", type, ENROLLMENT_TYPES),
            "enrollment_state": choice("enrollment_state", state, ENROLLMENT_STATES)}


def enroll(session: Session, *, course_id: int, user_id: int, type: str = "StudentEnrollment",
           state: str = "active") -> CanvasEnrollment:
    """Enroll a user; one enrollment per (user, course, type), else ALREADY_EXISTS."""
    values = enrollment_row(course_id=course_id, user_id=user_id, type=type, state=state)
    if sql.scalar(session, "SELECT 1 FROM canvas_enrollment WHERE course_id = ? AND user_id = ? "
                           "AND type = ?", (course_id, user_id, type)):
        raise ToolFailure(Code.ALREADY_EXISTS,
                          f"user {user_id} already has a {type} in course {course_id}")
    return insert(session, CanvasEnrollment(**values))


def add_enrollments(session: Session, rows: Iterable[Mapping[str, Any]]) -> int:
    """Many enrollments in one statement, each given as `enroll`'s keyword arguments."""
    return insert_many(session, CanvasEnrollment, enrollment_row, rows)


def update_course(session: Session, course: Course, changes: dict[str, Any]) -> Course:
    """Set some of `COURSE_FIELDS`; instants are checked and stored in UTC."""
    values = dict(changes)
    for field in ("start_at", "end_at"):
        if field in values:
            values[field] = instant(values[field])
    for field in ("name", "course_code"):
        if field in values:
            text(field, values[field])
    updated = course._replace(**values)
    _check_dates(updated.start_at, updated.end_at)
    update_row(session, "canvas_course", course.id, values, COURSE_FIELDS)
    return updated


# ---------------------------------------------------------------- who may enter

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


_OWN_IN_RANGE = (f"SELECT {sql.columns(Enrollment, 'e')} FROM canvas_enrollment e "
                 f"WHERE e.user_id = ? AND e.course_id BETWEEN ? AND ? AND e.enrollment_state IN ({OPEN})")


def own_enrollments(session: Session, user_id: int,
                    course_ids: Sequence[int]) -> dict[int, Enrollment]:
    """The user's strongest open enrollment per course of `course_ids`, read as one range of
    the user's enrollments by course id (not one index probe per course)."""
    if not course_ids:
        return {}
    wanted = set(course_ids)
    found = sql.rows(session, Enrollment, _OWN_IN_RANGE, (user_id, min(wanted), max(wanted)))
    return _strongest(e for e in found if e.course_id in wanted)


def is_student(session: Session, course_id: int, user_id: int) -> bool:
    """Whether the user has a student enrollment (in any state) in the course."""
    return sql.scalar(session, "SELECT 1 FROM canvas_enrollment WHERE course_id = ? AND user_id = ? "
                               "AND type = 'StudentEnrollment'", (course_id, user_id)) is not None


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

    @property
    def observer(self) -> bool:
        return self.enrollment is not None and self.enrollment.type == "ObserverEnrollment"


_COURSE_AND_OWN_ENROLLMENTS = (
    f"SELECT {COURSES.columns}, {sql.columns(Enrollment, 'e')} FROM {COURSES.tables} "
    f"LEFT JOIN canvas_enrollment e ON e.course_id = x.id AND e.user_id = ? "
    f"AND e.enrollment_state IN ({OPEN}) WHERE x.id = ?")


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


def in_course(session: Session, tbl: Table, obj_id: int, access: CourseAccess, what: str) -> Any:
    """A row of `tbl` (with `course_id`) that belongs to the course; unpublished ones exist
    only for staff."""
    row = sql.first(session, tbl.row, tbl.select("x.id = ?"), (obj_id,))
    if row is None or row.course_id != access.course.id or not (
            getattr(row, "published", True) or access.staff):
        raise not_found(f"{what} {obj_id} not found in course {access.course.id}")
    return row


def course_items(tbl: Table, access: CourseAccess, order: str, where: str = "TRUE",
                 params: tuple[Any, ...] = ()) -> Listing:
    """The rows of `tbl` in the course matching `where` that the caller may see: students see
    published ones only."""
    shown = "x.course_id = ?" if access.staff else "x.course_id = ? AND x.published = 1"
    return Listing(tbl, f"{shown} AND {where}", order, (access.course.id, *params))


def my_courses(user_id: int, now_z: str, include_ended: bool = False) -> Listing:
    """Courses the user is actively enrolled in (students: published ones), by id. With
    `include_ended`, also completed enrollments and courses that are completed or past end_at.
    The user's course ids are listed once from their enrollments (then read by id, in order);
    only unpublished courses are probed for a staff enrollment."""
    states = sql.quoted(OPEN_STATES if include_ended else ("active",))
    where = ("x.id IN (SELECT e.course_id FROM canvas_enrollment e WHERE e.user_id = ? "
             f"AND e.enrollment_state IN ({states})) AND (x.workflow_state != 'unpublished' OR "
             "EXISTS (SELECT 1 FROM canvas_enrollment e WHERE e.course_id = x.id "
             f"AND e.type IN ({STAFF}) AND e.enrollment_state IN ({states}) AND e.user_id = ?))")
    if include_ended:
        return Listing(COURSES, where, "x.id", (user_id, user_id))
    return Listing(COURSES, f"{where} AND x.workflow_state != 'completed' "
                            "AND (x.end_at IS NULL OR x.end_at >= ?)", "x.id",
                   (user_id, user_id, now_z))


def student_count(session: Session, course_id: int) -> int:
    """Active students of the course."""
    return sql.scalar(session, "SELECT count(*) FROM canvas_enrollment WHERE course_id = ? AND "
                               "type = 'StudentEnrollment' AND enrollment_state = 'active'",
                      (course_id,))


def course_students(session: Session, course_id: int) -> list[tuple[int, str]]:
    """(id, name) of the course's students with an open enrollment, by sortable name and id."""
    return sql.run(session, "SELECT u.id, u.name FROM canvas_enrollment e JOIN canvas_user u "
                            "ON u.id = e.user_id WHERE e.course_id = ? "
                            f"AND e.type = 'StudentEnrollment' AND e.enrollment_state IN ({OPEN}) "
                            "ORDER BY u.sortable_name, u.id", (course_id,)).fetchall()


def course_members(session: Session, course_id: int) -> list[int]:
    """Ids of every user with an active enrollment in the course."""
    return [r[0] for r in sql.run(session, "SELECT DISTINCT user_id FROM canvas_enrollment "
                                           "WHERE course_id = ? AND enrollment_state = 'active' "
                                           "ORDER BY user_id", (course_id,))]


# ---------------------------------------------------------------- projections

def enrollment_view(e: CanvasEnrollment) -> dict[str, Any]:
    return {"id": e.id, "course_id": e.course_id, "user_id": e.user_id, "type": e.type,
            "enrollment_state": e.enrollment_state}


def teachers_of(session: Session, course_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """Active teachers per course, by user id, in one query (sorted here: cheaper than
    SQLite's sorter)."""
    out: dict[int, list[dict[str, Any]]] = {cid: [] for cid in course_ids}
    rows = sql.run(session, "SELECT e.course_id, u.id, u.name, u.email FROM canvas_enrollment e "
                            "JOIN canvas_user u ON u.id = e.user_id "
                            f"WHERE e.course_id IN ({sql.marks(len(course_ids))}) "
                            "AND e.type = 'TeacherEnrollment' AND e.enrollment_state = 'active'",
                   course_ids).fetchall()
    for course_id, uid, name, email in sorted(rows):
        out[course_id].append({"id": uid, "name": name, "email": email})
    return out


def _shared_view(c: Course | CourseSummary, teachers: list[dict[str, Any]]) -> dict[str, Any]:
    """A `Course` projection but for the caller's enrollment (its last key)."""
    return {"id": c.id, "name": c.name, "course_code": c.course_code, "workflow_state": c.workflow_state,
            "account_id": c.account_id, "start_at": c.start_at, "end_at": c.end_at, "time_zone": c.time_zone,
            "is_public": bool(c.is_public), "teachers": teachers}


def _enrollment(kind: str, state: str) -> dict[str, Any]:
    """The caller's enrollment as a `Course` projection shows it."""
    return {"type": kind, "enrollment_state": state}


@lru_cache(maxsize=64)
def _enrollment_text(kind: str, state: str) -> str:
    """The JSON of `_enrollment`, with the `}` that closes its course."""
    return dump_json(_enrollment(kind, state)) + "}"


def course_views(session: Session, courses: Sequence[Course | CourseSummary],
                 mine: dict[int, Enrollment]) -> list[dict[str, Any]]:
    """`Course` projections with teachers (one query per batch) and the caller's enrollment
    from `mine` (course id -> enrollment)."""
    teachers = teachers_of(session, [c.id for c in courses])
    return [{**_shared_view(c, teachers[c.id]),
             "enrollment": _enrollment(e.type, e.enrollment_state) if (e := mine.get(c.id)) else None}
            for c in courses]


def course_heads(session: Session, ids: Sequence[int]) -> dict[int, str]:
    """The JSON text of each course's `Course` projection up to its value of the caller's
    enrollment: `{..., "teachers": [...], "enrollment":` (what `canvas_kept` keeps)."""
    courses = sql.rows(session, CourseSummary, SUMMARIES.select(f"x.id IN ({sql.marks(len(ids))})"), ids)
    teachers = teachers_of(session, list(ids))
    return {c.id: dump_json(_shared_view(c, teachers[c.id]))[:-1] + ',"enrollment":' for c in courses}


def keep_heads(session: Session) -> int:
    """Keep every course's head (a new world's prepare step, 500 courses at a time); how many
    were kept."""
    ids = [i for (i,) in sql.run(session, "SELECT id FROM canvas_course").fetchall()]
    return sum(kept.put(session, KEPT, "course", course_heads(session, ids[start:start + 500]).items())
               for start in range(0, len(ids), 500))


def course_page(session: Session, listing: Listing, user_id: int, page: int,
                per_page: int) -> dict[str, Any]:
    """One page of a course listing as `Course` projections with the user's enrollments: the
    page's ids in SQL, then each course's kept head (`course_heads`) with the enrollment."""
    def render(ids: list[int]) -> list[Any]:
        heads = kept.texts(session, KEPT, "course", ids)
        missing = [i for i in ids if i not in heads]
        if missing:
            heads |= course_heads(session, missing)
        mine = own_enrollments(session, user_id, ids)
        return [orjson.Fragment(heads[i] + _enrollment_text(mine[i].type, mine[i].enrollment_state)
                                if i in mine else heads[i] + "null}") for i in ids]
    return paged_ids(session, listing, page, per_page, render)


def course_brief(c: Course) -> dict[str, Any]:
    return {"id": c.id, "name": c.name, "course_code": c.course_code}
