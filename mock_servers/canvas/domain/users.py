"""Canvas users: inserts, the logged-in user, profiles. Only the salted hash of a password is
stored, and no projection carries it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.canvas.domain.base import (
    OPEN,
    SERVER,
    Listing,
    fetch_one,
    insert,
    insert_many,
    table,
    text,
    update_row,
)
from mock_servers.canvas.models import CanvasUser
from mock_servers.core import sessions, sql
from mock_servers.core.auth import hash_password, verify_password
from mock_servers.core.errors import Code, ToolFailure
from mock_servers.core.times import check_zone
from mock_servers.core.times import optional_instant as instant

PROFILE_FIELDS = ("name", "short_name", "bio", "title", "time_zone")  # a user may change these
NO_PASSWORD = "!"  # the stored hash of a user created without a password: no login possible


class User(NamedTuple):
    """A user as tools see them (never the password hash)."""

    id: int
    name: str
    short_name: str
    sortable_name: str
    login_id: str
    email: str | None
    time_zone: str
    bio: str | None
    title: str | None
    is_admin: int


USERS = table(User, "canvas_user")


def sortable(name: str) -> str:
    """`Last, First` from `First Last`."""
    parts = name.rsplit(" ", 1)
    return f"{parts[1]}, {parts[0]}" if len(parts) == 2 else name


def user_row(*, name: str, login_id: str, password: str | None, salt: str,
             email: str | None = None, time_zone: str = "UTC", short_name: str | None = None,
             sortable_name: str | None = None, is_admin: bool = False,
             account_id: int | None = None, sis_user_id: str | None = None,
             last_login_at: Any = None, id: int | None = None) -> dict[str, Any]:
    """The checked values of one user; `password` None makes a user who cannot log in."""
    text("name", name)
    text("login_id", login_id)
    if password is not None:
        text("password", password)
    return {"id": id, "name": name, "short_name": short_name or name,
            "sortable_name": sortable_name or sortable(name), "login_id": login_id,
            "email": email, "time_zone": check_zone(time_zone),
            "password_hash": NO_PASSWORD if password is None else hash_password(password, salt),
            "is_admin": is_admin, "account_id": account_id, "sis_user_id": sis_user_id,
            "last_login_at": instant(last_login_at)}


def add_user(session: Session, **values: Any) -> CanvasUser:
    """One user (see `user_row`)."""
    return insert(session, CanvasUser(**user_row(**values)))


def add_users(session: Session, rows: Iterable[Mapping[str, Any]]) -> int:
    """Many users in one statement, each given as `add_user`'s keyword arguments."""
    return insert_many(session, CanvasUser, user_row, rows)


def log_in(session: Session, user_id: int | None) -> None:
    """Set the logged-in user (`None` logs out)."""
    sessions.log_in(session, SERVER, user_id)


_SESSION_USER = USERS.select(f"x.id = {sessions.PRINCIPAL}")


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


def record_login(session: Session, user_id: int, now_z: str) -> None:
    sql.run(session, "UPDATE canvas_user SET last_login_at = ? WHERE id = ?", (now_z, user_id))


def get_user(session: Session, user_id: int) -> User | None:
    return fetch_one(session, USERS, "x.id = ?", (user_id,))


def login_taken(session: Session, login_id: str) -> bool:
    return sql.scalar(session, "SELECT 1 FROM canvas_user WHERE login_id = ?", (login_id,)) is not None


def sis_taken(session: Session, sis_user_id: str) -> bool:
    return sql.scalar(session, "SELECT 1 FROM canvas_user WHERE sis_user_id = ?",
                      (sis_user_id,)) is not None


def update_profile(session: Session, user: User, changes: dict[str, str]) -> User:
    """Set some of `PROFILE_FIELDS` of the user; returns the changed row."""
    for field in ("name", "short_name"):
        if field in changes:
            text(field, changes[field])
    if "time_zone" in changes:
        check_zone(changes["time_zone"])
    update_row(session, "canvas_user", user.id, changes, PROFILE_FIELDS)
    return user._replace(**changes)  # type: ignore[arg-type]


def users_around(user: User) -> Listing:
    """Users who share a course with `user` (with an open enrollment each), `user` included;
    every user for an admin. By id."""
    if user.is_admin:
        return Listing(USERS, "TRUE", "x.id")
    classmate = ("EXISTS (SELECT 1 FROM canvas_enrollment e JOIN canvas_enrollment m "
                 f"ON m.course_id = e.course_id WHERE e.user_id = x.id AND e.enrollment_state IN "
                 f"({OPEN}) AND m.user_id = ? AND m.enrollment_state IN ({OPEN}))")
    return Listing(USERS, f"x.id = ? OR {classmate}", "x.id", (user.id, user.id))


def shares_course(session: Session, user_id: int, other_id: int) -> bool:
    """Whether both users have an open enrollment in one course."""
    return sql.scalar(session, "SELECT 1 FROM canvas_enrollment e JOIN canvas_enrollment m "
                               "ON m.course_id = e.course_id WHERE e.user_id = ? AND m.user_id = ? "
                               f"AND e.enrollment_state IN ({OPEN}) AND m.enrollment_state IN "
                               f"({OPEN}) LIMIT 1", (user_id, other_id)) is not None


def user_view(u: User) -> dict[str, Any]:
    return {"id": u.id, "name": u.name, "short_name": u.short_name,
            "sortable_name": u.sortable_name, "login_id": u.login_id, "email": u.email,
            "time_zone": u.time_zone}


def brief_view(u: User) -> dict[str, Any]:
    return {"id": u.id, "name": u.name, "login_id": u.login_id, "email": u.email}


def login_view(u: User) -> dict[str, Any]:
    return {"id": u.id, "name": u.name, "email": u.email, "login_id": u.login_id, "logged_in": True}


def profile_view(u: User) -> dict[str, Any]:
    return user_view(u) | {"bio": u.bio, "title": u.title}
