"""Canvas tools: health, login and the logged-in user's own profile."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mock_servers.canvas.domain.base import paged
from mock_servers.canvas.domain.users import (
    brief_view,
    check_login,
    log_in,
    login_view,
    profile_view,
    record_login,
    session_user,
    update_profile,
    user_view,
    users_around,
)
from mock_servers.canvas.tools.common import (
    Page,
    PerPage,
    given,
    me,
    now_z,
    paged_list,
    toolbox,
)
from mock_servers.core.errors import Code, ToolFailure
from mock_servers.core.toolkit import Call


@toolbox.tool(rw="read")
def canvas_health_check(call: Call) -> dict[str, Any]:
    """Check that Canvas is up. Returns status "ok", the current time and the logged-in user
    (null when nobody is logged in). Needs no login."""
    user = session_user(call.session)
    return {"status": "ok", "now": now_z(call), "user": user_view(user) if user else None}


@toolbox.tool(rw="write", idempotent=True)
def canvas_login(
    call: Call,
    login_id: Annotated[str, Field(description="The user's login id")],
    password: Annotated[str, Field(description="The user's password")],
) -> dict[str, Any]:
    """Log in as a Canvas user; later calls act as that user. Wrong login id or password is
    UNAUTHENTICATED. Replaces any previous login."""
    user = check_login(call.session, login_id, password)
    if user is None:
        raise ToolFailure(Code.UNAUTHENTICATED, "invalid login_id or password")
    log_in(call.session, user.id)
    record_login(call.session, user.id, now_z(call))
    return login_view(user)


@toolbox.tool(rw="write", idempotent=True)
def canvas_logout(call: Call) -> dict[str, Any]:
    """Log out. Every tool but health check and login then fails with UNAUTHENTICATED."""
    log_in(call.session, None)
    return {"logged_in": False}


@toolbox.tool(rw="read", core=True)
def canvas_get_current_user(call: Call) -> dict[str, Any]:
    """The logged-in user: id, name, email, login_id."""
    return login_view(me(call))


@toolbox.tool(rw="read")
@paged_list
def canvas_list_users(call: Call, page: Page = 1, per_page: PerPage = 50) -> dict[str, Any]:
    """Users who share a course with you (yourself included; account admins see every user),
    by id: id, name, login_id, email."""
    return paged(call.session, users_around(me(call)), page, per_page,
                 lambda rows: [brief_view(u) for u in rows])


@toolbox.tool(rw="read")
def canvas_get_user_profile(call: Call) -> dict[str, Any]:
    """Your profile: id, name, short_name, sortable_name, login_id, email, time_zone, bio, title."""
    return profile_view(me(call))


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
    changes = given(name=name, short_name=short_name, bio=bio, title=title, time_zone=time_zone)
    return profile_view(update_profile(call.session, me(call), changes))
