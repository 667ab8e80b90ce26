"""Canvas tools for account administrators: accounts, their courses and users, new users and
account reports. Anyone else gets PERMISSION_DENIED."""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mock_servers.canvas.domain.accounts import (
    account_courses,
    account_tree,
    account_users,
    account_view,
    admin_account,
    create_user,
    sub_accounts,
)
from mock_servers.canvas.domain.base import paged
from mock_servers.canvas.domain.courses import course_page
from mock_servers.canvas.domain.messages import add_notification
from mock_servers.canvas.domain.reports import catalogue, create_report
from mock_servers.canvas.domain.users import user_view
from mock_servers.canvas.tools.common import (
    PAGE_SIZE,
    AccountId,
    Id,
    Page,
    PerPage,
    me,
    now_z,
    paged_list,
    toolbox,
)
from mock_servers.core.toolkit import Call

MAX_SEARCH = 100
Order = Annotated[Literal["asc", "desc"], Field(description="Sort direction")]


class NewUser(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Annotated[str, Field(description="Full name")]
    short_name: Annotated[str | None, Field(description="Display name (default: the name)")] = None
    sortable_name: Annotated[str | None, Field(description="e.g. 'Lee, Ann' (default: from the name)")] = None
    time_zone: Annotated[str | None, Field(description="IANA time zone (default UTC)")] = None


class Pseudonym(BaseModel):
    model_config = ConfigDict(extra="forbid")
    unique_id: Annotated[str, Field(description="Login id (often the e-mail address); unique")]
    password: Annotated[str | None, Field(description="Initial password (stored hashed; without "
                                                      "one the user cannot log in)")] = None
    sis_user_id: Annotated[str | None, Field(description="SIS id; unique")] = None
    send_confirmation: Annotated[bool | None, Field(description="Notify the user of the new login")] = None


class ReportParameters(BaseModel):
    model_config = ConfigDict(extra="forbid")
    enrollment_term_id: Annotated[Id | None, Field(description="Only courses of this term")] = None
    include_deleted: Annotated[bool | None, Field(
        description="Also inactive, invited and concluded enrollments")] = None


@toolbox.tool(rw="read")
def canvas_get_account(call: Call, account_id: AccountId) -> dict[str, Any]:
    """One account: id, name, parent_account_id, root_account_id, workflow_state (admins)."""
    return account_view(admin_account(call.session, me(call), account_id))


@toolbox.tool(rw="read")
@paged_list
def canvas_list_sub_accounts(call: Call, account_id: AccountId, page: Page = 1,
                             per_page: PerPage = PAGE_SIZE) -> dict[str, Any]:
    """Direct sub-accounts of an account, by id: id, name, parent_account_id (admins)."""
    account = admin_account(call.session, me(call), account_id)
    return paged(call.session, sub_accounts(account.id), page, per_page, lambda rows: [
        {"id": a.id, "name": a.name, "parent_account_id": a.parent_account_id} for a in rows])


@toolbox.tool(rw="read")
@paged_list
def canvas_list_account_courses(
    call: Call,
    account_id: AccountId,
    with_enrollments: Annotated[bool | None, Field(
        description="true: only courses with enrollments; false: only courses without")] = None,
    published: Annotated[bool | None, Field(description="true: only published; false: only unpublished")] = None,
    completed: Annotated[bool | None, Field(
        description="true: only concluded courses; false: only courses not concluded")] = None,
    sort: Annotated[Literal["course_name", "sis_course_id", "teacher", "account_name"],
                    Field(description="Sort key (ties by id; missing values last)")] = "course_name",
    order: Order = "asc",
    search_term: Annotated[str | None, Field(
        min_length=2, max_length=MAX_SEARCH,
        description="Part of the name, course code or SIS id, or the full course id (2+ characters)")] = None,
    page: Page = 1,
    per_page: PerPage = PAGE_SIZE,
) -> dict[str, Any]:
    """Courses of an account and its sub-accounts (admins), filtered and sorted as asked."""
    user = me(call)
    tree = account_tree(call.session, admin_account(call.session, user, account_id).id)
    listing = account_courses(tree, now_z=now_z(call), with_enrollments=with_enrollments,
                              published=published, completed=completed, sort=sort, order=order,
                              search_term=search_term)
    return course_page(call.session, listing, user.id, page, per_page)


@toolbox.tool(rw="read")
@paged_list
def canvas_list_account_users(
    call: Call,
    account_id: AccountId,
    sort: Annotated[Literal["username", "email", "sis_id", "last_login"],
                    Field(description="Sort key (ties by id; missing values last)")] = "username",
    order: Order = "asc",
    search_term: Annotated[str | None, Field(
        min_length=1, max_length=MAX_SEARCH,
        description="Part of the name, login id, e-mail or SIS id, or the full user id")] = None,
    page: Page = 1,
    per_page: PerPage = PAGE_SIZE,
) -> dict[str, Any]:
    """Users of an account and its sub-accounts (admins): those with a login there or an
    enrollment in one of its courses."""
    tree = account_tree(call.session, admin_account(call.session, me(call), account_id).id)
    return paged(call.session, account_users(tree, sort=sort, order=order, search_term=search_term),
                 page, per_page, lambda rows: [user_view(u) for u in rows])


@toolbox.tool(rw="write")
def canvas_create_user(
    call: Call,
    account_id: AccountId,
    user: Annotated[NewUser, Field(description="The person")],
    pseudonym: Annotated[Pseudonym, Field(description="The login")],
) -> dict[str, Any]:
    """Create a user with a login in an account (admins). The password is stored only as a
    salted hash. A login id or SIS id already in use is ALREADY_EXISTS."""
    admin_account(call.session, me(call), account_id)
    salt = hashlib.sha256(f"{call.world.meta.seed}|{pseudonym.unique_id}".encode()).hexdigest()[:16]
    created = create_user(call.session, account_id=account_id, name=user.name,
                          unique_id=pseudonym.unique_id, password=pseudonym.password, salt=salt,
                          short_name=user.short_name, sortable_name=user.sortable_name,
                          time_zone=user.time_zone, sis_user_id=pseudonym.sis_user_id)
    if pseudonym.send_confirmation:
        add_notification(call.session, user_id=created.id, subject="Confirm your Canvas registration",
                         message=f"A Canvas login '{created.login_id}' was created for you.",
                         notification_type="registration", created_at=now_z(call))
    return user_view(created)


@toolbox.tool(rw="read")
def canvas_get_account_reports(call: Call, account_id: AccountId) -> dict[str, Any]:
    """The report types an account can run (admins): report, title and the parameters each
    takes."""
    admin_account(call.session, me(call), account_id)
    return {"reports": catalogue()}


@toolbox.tool(rw="write")
def canvas_create_account_report(
    call: Call,
    account_id: AccountId,
    report: Annotated[str, Field(description="Report type from canvas_get_account_reports")],
    parameters: Annotated[ReportParameters | None, Field(description="Report parameters")] = None,
) -> dict[str, Any]:
    """Run a report over an account and its sub-accounts now (admins). Its CSV is stored as one
    of your files (see file); status is complete."""
    user = me(call)
    tree = account_tree(call.session, admin_account(call.session, user, account_id).id)
    given = parameters.model_dump(exclude_none=True) if parameters else {}
    return create_report(call.session, account_id=account_id, tree=tree, user_id=user.id,
                         report=report, parameters=given, now_z=now_z(call))
