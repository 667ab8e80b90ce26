"""Account and login tools (the only ones, with check_connection, that need no login)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from loca.core.rng import derive_seed
from mock_servers.core.errors import Code, ToolFailure, invalid
from mock_servers.core.toolkit import Call
from mock_servers.email import domain
from mock_servers.email.server import base
from mock_servers.email.server.base import toolbox


@toolbox.tool(rw="write", core=True, idempotent=True, auth_only=True)
def login(call: Call,
          email: Annotated[str, Field(description="Account e-mail address")],
          password: Annotated[str, Field(description="Account password")]) -> dict[str, Any]:
    """Log in to an e-mail account; later calls act as this account (replaces any previous
    login). Wrong address or password is UNAUTHENTICATED."""
    account = domain.check_login(call.session, email, password)
    if account is None:
        raise ToolFailure(Code.UNAUTHENTICATED, "wrong e-mail address or password")
    domain.log_in(call.session, account.id)
    return {"email": account.address, "name": account.name, "logged_in": True}


@toolbox.tool(rw="write", auth_only=True)
def logout(call: Call) -> dict[str, Any]:
    """Log out of the current account. Not logged in is UNAUTHENTICATED."""
    if not domain.log_out(call.session):
        raise ToolFailure(Code.UNAUTHENTICATED, "no account is logged in")
    return {"logged_in": False}


@toolbox.tool(rw="read")
def get_current_user(call: Call) -> dict[str, Any]:
    """The logged-in account: {email,name,logged_in}."""
    me = base.me(call)
    return {"email": me.address, "name": me.name, "logged_in": True}


@toolbox.tool(rw="read")
def list_users(call: Call) -> dict[str, Any]:
    """Every account of this mail service, by address: {users:[{email,name}],count}. No login
    needed."""
    accounts = domain.list_accounts(call.session)
    return {"users": [{"email": a.address, "name": a.name} for a in accounts],
            "count": len(accounts)}


@toolbox.tool(rw="write")
def create_user(call: Call,
                email: Annotated[str, Field(description="New account's e-mail address")],
                name: Annotated[str, Field(description="Display name")],
                password: Annotated[str, Field(description="Password (stored only as a hash)")],
                ) -> dict[str, Any]:
    """Create an account with the default folders (INBOX, Sent, Drafts, Trash, Spam, Archive).
    Does not log in. An existing address is ALREADY_EXISTS."""
    if not name.strip() or not password:
        raise invalid("name and password must not be empty")
    address = base.addresses(email, "email")
    if len(address) != 1:
        raise invalid("email: give exactly one address")
    salt = format(derive_seed(call.world.meta.seed, "email-salt", address[0]), "016x")
    account = domain.add_account(call.session, address=address[0], name=name.strip(),
                                 password=password, salt=salt, created_at=call.now)
    return {"email": account.address, "name": account.name, "created_at": account.created_at}


@toolbox.tool(rw="read")
def check_connection(call: Call) -> dict[str, Any]:
    """Check the IMAP and SMTP connections: {imap,smtp,user} (user is null when logged out)."""
    account = domain.current_account(call.session)
    return {"imap": "ok", "smtp": "ok", "user": account.address if account else None}
