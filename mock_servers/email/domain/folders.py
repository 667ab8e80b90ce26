"""Folders of one account: the default (system) folders every account has, user folders,
and message counts."""

from __future__ import annotations

from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.email.domain.mailboxes import forget_lookups

INBOX, SENT, TRASH = "INBOX", "Sent", "Trash"
ALL_FOLDERS = "ALL"


class Folder(NamedTuple):
    id: int
    name: str
    system: bool


def find_folder(session: Session, account_id: int, name: str) -> Folder | None:
    """The account's folder called `name` (case-insensitive)."""
    row = sql.run(session, "SELECT id, name, system FROM email_folder "
                           "WHERE account_id = ? AND lower(name) = lower(?)",
                  (account_id, name.strip())).fetchone()
    return Folder(row[0], row[1], bool(row[2])) if row else None


def add_folder(session: Session, account_id: int, name: str) -> Folder:
    """A user folder; names are unique per account ignoring case, and `ALL` is reserved."""
    clean = name.strip()
    if not clean or len(clean) > 100 or any(ord(c) < 32 for c in clean):
        raise invalid("a folder name must be 1 to 100 printable characters")
    if clean.upper() == ALL_FOLDERS:
        raise invalid(f"'{ALL_FOLDERS}' is reserved for searching every folder")
    existing = find_folder(session, account_id, clean)
    if existing is not None:
        raise ToolFailure(Code.ALREADY_EXISTS, f"folder '{existing.name}' already exists")
    folder_id = sql.scalar(session, "INSERT INTO email_folder (account_id, name, system) "
                                    "VALUES (?, ?, 0) RETURNING id", (account_id, clean))
    forget_lookups(session)
    return Folder(folder_id, clean, False)


def remove_folder(session: Session, account_id: int, folder: Folder) -> int:
    """Delete a user folder, moving its messages to Trash; returns how many moved. System
    folders are FAILED_PRECONDITION."""
    if folder.system:
        raise ToolFailure(Code.FAILED_PRECONDITION,
                          f"'{folder.name}' is a default folder and cannot be deleted")
    moved = sql.run(session, "UPDATE email_message SET folder_id = ? WHERE folder_id = ?",
                    (trash_of(session, account_id), folder.id)).rowcount
    sql.run(session, "DELETE FROM email_folder WHERE id = ?", (folder.id,))
    forget_lookups(session)
    return moved


def trash_of(session: Session, account_id: int) -> int:
    """The id of the account's Trash folder."""
    trash = find_folder(session, account_id, TRASH)
    if trash is None:
        raise not_found(f"account {account_id} has no {TRASH} folder")
    return trash.id


def folder_stats(session: Session, account_id: int,
                 folder_id: int | None = None) -> list[dict[str, Any]]:
    """`{name,total,unread}` per folder of the account (or just `folder_id`), in creation order."""
    scope, params = ("f.id = ?", (folder_id,)) if folder_id is not None else \
        ("f.account_id = ?", (account_id,))
    rows = sql.run(session, "SELECT f.name, count(m.id), count(CASE WHEN m.read = 0 THEN 1 END) "
                            "FROM email_folder f LEFT JOIN email_message m ON m.folder_id = f.id "
                            f"WHERE {scope} GROUP BY f.id ORDER BY f.id", params)
    return [{"name": n, "total": t, "unread": u} for n, t, u in rows]
