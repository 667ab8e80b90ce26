"""Accounts and the logged-in account (the login is a row of `core_session`)."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from sqlmodel import Session

from mock_servers.core import sessions, sql
from mock_servers.core.auth import hash_password, verify_password
from mock_servers.core.errors import Code, ToolFailure
from mock_servers.core.times import instant
from mock_servers.email.domain.addresses import normalize_address
from mock_servers.email.domain.mailboxes import forget_lookups
from mock_servers.email.models import DEFAULT_FOLDERS, EmailAccount

SERVER = "email"
_COLUMNS = "SELECT id, address, name FROM email_account"
_LOGGED_IN = f"{_COLUMNS} WHERE id = {sessions.PRINCIPAL}"


class Account(NamedTuple):
    """An account as tools see it (never its password hash)."""

    id: int
    address: str
    name: str


def find_account(session: Session, address: str) -> Account | None:
    return sql.first(session, Account, f"{_COLUMNS} WHERE address = ?",
                     (normalize_address(address),))


def add_account(session: Session, *, address: str, name: str, password: str, salt: str,
                created_at: str | datetime) -> EmailAccount:
    """A new account with its default (system) folders; only the password hash is stored.
    An address already in the world is ALREADY_EXISTS."""
    addr = normalize_address(address)
    if find_account(session, addr) is not None:
        raise ToolFailure(Code.ALREADY_EXISTS, f"an account for {addr} already exists")
    account = EmailAccount(address=addr, name=name, password_hash=hash_password(password, salt),
                           created_at=instant(created_at))
    session.add(account)
    session.flush()
    sql.cursor(session).executemany(
        "INSERT INTO email_folder (account_id, name, system) VALUES (?, ?, 1)",
        [(account.id, folder) for folder in DEFAULT_FOLDERS])
    forget_lookups(session)
    return account


def check_login(session: Session, address: str, password: str) -> Account | None:
    """The account when `password` is right for `address`, else None."""
    row = sql.run(session, "SELECT id, address, name, password_hash FROM email_account "
                           "WHERE address = ?", (address.strip().lower(),)).fetchone()
    if row is None or not verify_password(password, row[3]):
        return None
    return Account._make(row[:3])


def log_in(session: Session, account_id: int) -> None:
    """Make `account_id` the logged-in account (also how worlds set up auto-login)."""
    sessions.log_in(session, SERVER, account_id)


def log_out(session: Session) -> bool:
    """Clear the login; False when nobody was logged in."""
    return sessions.log_out(session, SERVER)


def current_account(session: Session) -> Account | None:
    return sql.first(session, Account, _LOGGED_IN, (SERVER,))


def list_accounts(session: Session) -> list[Account]:
    return sql.rows(session, Account, f"{_COLUMNS} ORDER BY address, id")
