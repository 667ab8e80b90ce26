"""Accounts and the logged-in account (the login is a row of `core_session`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
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
NO_LOGIN = "!"  # the password hash of an account nobody can log in to (no password matches it)
_CHUNK = 500  # addresses per membership query (well under SQLite's bound-parameter limit)
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


def add_accounts(session: Session, people: Iterable[tuple[str, str]], *,
                 created_at: str | datetime) -> dict[str, int]:
    """Many `(address, name)` accounts at once, each with its default folders, that nobody can
    log in to: their owners' passwords are not part of the world (the people a world's user
    writes to, in bulk). An address already in the world, or given twice, is ALREADY_EXISTS.
    Returns address -> account id, in the order given."""
    rows = [(normalize_address(address), name) for address, name in people]
    addresses = [address for address, _ in rows]
    taken = {a for a, count in Counter(addresses).items() if count > 1}
    for start in range(0, len(addresses), _CHUNK):
        chunk = addresses[start:start + _CHUNK]
        taken.update(r[0] for r in sql.run(
            session, f"SELECT address FROM email_account WHERE address IN ({sql.marks(len(chunk))})", chunk))
    if taken:
        raise ToolFailure(Code.ALREADY_EXISTS, f"accounts already exist for {', '.join(sorted(taken))}")
    when, cursor = instant(created_at), sql.cursor(session)
    ids: list[int] = [cursor.execute("INSERT INTO email_account (address, name, password_hash, created_at) "
                                     "VALUES (?, ?, ?, ?) RETURNING id", (address, name, NO_LOGIN, when)
                                     ).fetchone()[0] for address, name in rows]
    cursor.executemany("INSERT INTO email_folder (account_id, name, system) VALUES (?, ?, 1)",
                       [(account_id, folder) for account_id in ids for folder in DEFAULT_FOLDERS])
    forget_lookups(session)
    return dict(zip(addresses, ids, strict=True))
