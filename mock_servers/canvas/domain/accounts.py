"""Canvas accounts (a tree of sub-accounts) and what their administrators list and create:
the courses and users of an account and its sub-accounts, new users."""

from __future__ import annotations

from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.canvas.domain.base import Listing, fetch_one, like, table, text
from mock_servers.canvas.domain.courses import COURSES
from mock_servers.canvas.domain.users import USERS, User, add_user, get_user, login_taken, sis_taken
from mock_servers.canvas.models import CanvasAccount
from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, denied, not_found

COURSE_SORTS = {
    "course_name": "x.name COLLATE NOCASE",
    "sis_course_id": "x.sis_course_id",
    "teacher": "(SELECT min(u.sortable_name COLLATE NOCASE) FROM canvas_enrollment e JOIN "
               "canvas_user u ON u.id = e.user_id WHERE e.course_id = x.id AND "
               "e.type = 'TeacherEnrollment' AND e.enrollment_state = 'active')",
    "account_name": "(SELECT a.name COLLATE NOCASE FROM canvas_account a WHERE a.id = x.account_id)",
}
USER_SORTS = {"username": "x.sortable_name COLLATE NOCASE", "email": "x.email COLLATE NOCASE",
              "sis_id": "x.sis_user_id", "last_login": "x.last_login_at"}
_COMPLETED = "(x.workflow_state = 'completed' OR (x.end_at IS NOT NULL AND x.end_at < ?))"


class Account(NamedTuple):
    id: int
    name: str
    parent_account_id: int | None
    root_account_id: int | None
    workflow_state: str


ACCOUNTS = table(Account, "canvas_account")


def add_account(session: Session, name: str, parent_account_id: int | None = None,
                id: int | None = None) -> CanvasAccount:
    """A root account (or a sub-account of `parent_account_id`)."""
    root = None
    if parent_account_id is not None:
        parent = session.get(CanvasAccount, parent_account_id)
        if parent is None:
            raise not_found(f"account {parent_account_id} not found")
        root = parent.root_account_id or parent.id
    session.add(row := CanvasAccount(id=id, name=text("name", name),
                                     parent_account_id=parent_account_id, root_account_id=root))
    session.flush()
    return row


def admin_account(session: Session, user: User, account_id: int) -> Account:
    """The account, for an administrator: PERMISSION_DENIED for anyone else, NOT_FOUND when
    it does not exist."""
    if not user.is_admin:
        raise denied("only account administrators may do this")
    account = fetch_one(session, ACCOUNTS, "x.id = ?", (account_id,))
    if account is None:
        raise not_found(f"account {account_id} not found")
    return account


def account_tree(session: Session, account_id: int) -> list[int]:
    """The account and all its sub-accounts, at any depth."""
    return [r[0] for r in sql.run(
        session, "WITH RECURSIVE tree(id) AS (SELECT ? UNION SELECT a.id FROM canvas_account a "
                 "JOIN tree t ON a.parent_account_id = t.id) SELECT id FROM tree ORDER BY id",
        (account_id,))]


def account_view(a: Account) -> dict[str, Any]:
    return {"id": a.id, "name": a.name, "parent_account_id": a.parent_account_id,
            "root_account_id": a.root_account_id, "workflow_state": a.workflow_state}


def sub_accounts(account_id: int) -> Listing:
    """Direct sub-accounts, by id."""
    return Listing(ACCOUNTS, "x.parent_account_id = ?", "x.id", (account_id,))


def _ordered(expression: str, order: str) -> str:
    """`expression` in `order`, nulls last, ties by id."""
    direction = "DESC" if order == "desc" else "ASC"
    return f"({expression}) IS NULL, {expression} {direction}, x.id {direction}"


def account_courses(tree: list[int], *, now_z: str, with_enrollments: bool | None,
                    published: bool | None, completed: bool | None, sort: str, order: str,
                    search_term: str | None) -> Listing:
    """Courses of the accounts in `tree` that pass every given filter, sorted in SQL."""
    where = [f"x.account_id IN ({sql.marks(len(tree))})"]
    params: list[Any] = [*tree]
    if with_enrollments is not None:
        has = "EXISTS (SELECT 1 FROM canvas_enrollment e WHERE e.course_id = x.id)"
        where.append(has if with_enrollments else f"NOT {has}")
    if published is not None:
        where.append("x.workflow_state " + ("!=" if published else "=") + " 'unpublished'")
    if completed is not None:
        where.append(_COMPLETED if completed else f"NOT {_COMPLETED}")
        params.append(now_z)
    if search_term is not None:
        where.append("(x.name LIKE ? ESCAPE '\\' OR x.course_code LIKE ? ESCAPE '\\' "
                     "OR x.sis_course_id LIKE ? ESCAPE '\\' OR CAST(x.id AS TEXT) = ?)")
        params += [like(search_term)] * 3 + [search_term.strip()]
    return Listing(COURSES, " AND ".join(where), _ordered(COURSE_SORTS[sort], order), tuple(params))


def account_users(tree: list[int], *, sort: str, order: str, search_term: str | None) -> Listing:
    """Users with a login in the accounts of `tree` or an enrollment in one of their courses,
    sorted in SQL."""
    marks = sql.marks(len(tree))
    where = [f"(x.account_id IN ({marks}) OR EXISTS (SELECT 1 FROM canvas_enrollment e JOIN "
             f"canvas_course c ON c.id = e.course_id WHERE e.user_id = x.id AND c.account_id IN ({marks})))"]
    params: list[Any] = [*tree, *tree]
    if search_term is not None:
        where.append("(x.name LIKE ? ESCAPE '\\' OR x.login_id LIKE ? ESCAPE '\\' "
                     "OR x.email LIKE ? ESCAPE '\\' OR x.sis_user_id LIKE ? ESCAPE '\\' OR CAST(x.id AS TEXT) = ?)")
        params += [like(search_term)] * 4 + [search_term.strip()]
    return Listing(USERS, " AND ".join(where), _ordered(USER_SORTS[sort], order), tuple(params))


def create_user(session: Session, *, account_id: int, name: str, unique_id: str,
                password: str | None, salt: str, short_name: str | None = None,
                sortable_name: str | None = None, time_zone: str | None = None,
                sis_user_id: str | None = None) -> User:
    """A user with a login in the account; login ids and SIS ids are unique (ALREADY_EXISTS)."""
    if login_taken(session, unique_id):
        raise ToolFailure(Code.ALREADY_EXISTS, f"login id '{unique_id}' is already taken")
    if sis_user_id is not None and sis_taken(session, sis_user_id):
        raise ToolFailure(Code.ALREADY_EXISTS, f"sis_user_id '{sis_user_id}' is already taken")
    row = add_user(session, name=name, login_id=unique_id, password=password, salt=salt,
                   email=unique_id if "@" in unique_id else None, time_zone=time_zone or "UTC",
                   short_name=short_name, sortable_name=sortable_name, account_id=account_id,
                   sis_user_id=sis_user_id)
    return get_user(session, row.id)  # type: ignore[arg-type, return-value]
