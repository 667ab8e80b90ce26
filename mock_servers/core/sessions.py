"""The logged-in principal of each server with users, stored in `core_session`."""

from __future__ import annotations

from sqlmodel import Session

from mock_servers.core import sql

# SQL for "the current principal of server S", to embed in a server's queries.
PRINCIPAL = "(SELECT principal_id FROM core_session WHERE server = ?)"


def log_in(session: Session, server: str, principal_id: int | None) -> None:
    """Make `principal_id` the logged-in principal of `server` (`None` logs out)."""
    sql.run(session, "INSERT INTO core_session (server, principal_id) VALUES (?, ?) "
                     "ON CONFLICT (server) DO UPDATE SET principal_id = excluded.principal_id",
            (server, principal_id))


def log_out(session: Session, server: str) -> bool:
    """Clear the login; False when nobody was logged in."""
    return sql.run(session, "UPDATE core_session SET principal_id = NULL "
                            "WHERE server = ? AND principal_id IS NOT NULL", (server,)).rowcount > 0


def principal(session: Session, server: str) -> int | None:
    """The logged-in principal's id, if any."""
    return sql.scalar(session, "SELECT principal_id FROM core_session WHERE server = ?", (server,))
