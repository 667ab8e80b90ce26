"""Messages of one mailbox: the `Email` projection, listing and search (paged in SQL), and
moving, flagging and deleting copies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.core import paging, sql
from mock_servers.email.domain.addresses import display_from, visible_html
from mock_servers.email.domain.delivery import Attachment
from mock_servers.email.domain.folders import trash_of


class _EmailRow(NamedTuple):
    pk: int
    message_id: str
    folder: str
    from_addr: str
    from_name: str | None
    subject: str
    date: str
    read: int
    important: int
    body: str
    html_body: str | None
    in_reply_to: str | None


_SELECT_EMAIL = ("SELECT m.id, m.message_id, f.name, m.from_addr, m.from_name, m.subject, "
                 "m.date, m.read, m.important, m.body, m.html_body, m.in_reply_to "
                 "FROM email_message m JOIN email_folder f ON f.id = m.folder_id")
_NEWEST_FIRST = "ORDER BY m.date DESC, m.id DESC"


def _match(contains: str) -> str:
    """Whether subject, sender, body, to or cc contain the text: `contains` is the test of one
    column `{}` against one parameter."""
    return (f"({contains.format('m.subject')} OR {contains.format('m.from_addr')} OR "
            f"{contains.format('m.from_name')} OR {contains.format('m.body')} OR EXISTS "
            "(SELECT 1 FROM email_recipient r WHERE r.message_pk = m.id "
            f"AND r.kind IN ('to', 'cc') AND {contains.format('r.address')}))")


# LIKE ignores the case of ASCII letters only and is fast; other text is compared casefolded.
_MATCH_ASCII = _match("{} LIKE ? ESCAPE '\\'")
_MATCH_UNICODE = _match("instr(casefold({}), ?) > 0")


def _search(query: str) -> tuple[str, list[str]]:
    """The SQL test for messages containing `query` (any case) and its parameters."""
    if query.isascii():
        escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return _MATCH_ASCII, [f"%{escaped}%"] * 5
    return _MATCH_UNICODE, [query.casefold()] * 5


def _project(session: Session, rows: Sequence[_EmailRow]) -> list[dict[str, Any]]:
    """The `Email` objects of `rows`, with recipients and attachments loaded in one query each
    (in the order of their message index: no sort)."""
    pks = [r.pk for r in rows]
    people: dict[int, dict[str, list[str]]] = {pk: {"to": [], "cc": [], "bcc": []} for pk in pks}
    files: dict[int, list[dict[str, Any]]] = {pk: [] for pk in pks}
    if pks:
        marks = sql.marks(len(pks))
        for pk, kind, address in sql.run(session, "SELECT message_pk, kind, address FROM "
                                                  f"email_recipient WHERE message_pk IN ({marks}) "
                                                  "ORDER BY message_pk, id", pks):
            people[pk][kind].append(address)
        for pk, filename, size, content_type in sql.run(
                session, "SELECT message_pk, filename, size, content_type FROM email_attachment "
                         f"WHERE message_pk IN ({marks}) ORDER BY message_pk, id", pks):
            files[pk].append({"filename": filename, "size": size, "content_type": content_type})
    return [_email(r, people[pk], files[pk]) for pk, r in zip(pks, rows)]


def _email(row: _EmailRow, people: dict[str, list[str]],
           files: list[dict[str, Any]]) -> dict[str, Any]:
    (pk, message_id, folder, from_addr, from_name, subject, date, read, important, body,
     html_body, in_reply_to) = row  # unpacked: a listing builds many, and this is fastest
    return {"id": str(pk), "message_id": message_id, "folder": folder,
            "from": display_from(from_addr, from_name), "to": people["to"], "cc": people["cc"],
            "bcc": people["bcc"], "subject": subject, "date": date, "read": bool(read),
            "important": bool(important), "has_attachments": bool(files), "attachments": files,
            "body": body, "html_body": visible_html(html_body, body), "in_reply_to": in_reply_to}


def emails_by_pk(session: Session, account_id: int, pks: Sequence[int]) -> list[dict[str, Any]]:
    """The account's messages among `pks` as `Email` objects, in the order of `pks`."""
    if not pks:
        return []
    rows = sql.rows(session, _EmailRow, f"{_SELECT_EMAIL} WHERE m.account_id = ? AND m.id IN "
                                        f"({sql.marks(len(pks))})", [account_id, *pks])
    order = {pk: i for i, pk in enumerate(pks)}
    return _project(session, sorted(rows, key=lambda r: order[r.pk]))


def list_emails(session: Session, account_id: int, *, folder_id: int | None = None,
                query: str | None = None, page: int, size: int,
                ) -> tuple[list[dict[str, Any]], int]:
    """One page of the account's messages (one folder, or all when `folder_id` is None),
    optionally filtered by `query` (case-insensitive substring of subject, sender, to, cc or
    body), newest first (date desc, id desc); plus the total."""
    scope, params = ("m.folder_id = ?", [folder_id]) if folder_id is not None else \
        ("m.account_id = ?", [account_id])
    if query:
        match, match_params = _search(query)
        pks, total = paging.key_page(
            session, f"SELECT m.id FROM email_message m WHERE {scope} AND {match} {_NEWEST_FIRST}",
            [*params, *match_params], page, size)
        return emails_by_pk(session, account_id, pks), total
    rows, total = paging.fetch_page(session, _EmailRow, f"{_SELECT_EMAIL} WHERE {scope} "
                                    f"{_NEWEST_FIRST}", "SELECT count(*) FROM email_message m "
                                    f"WHERE {scope}", params, page, size)
    return _project(session, rows), total


def owned(session: Session, account_id: int, pks: Sequence[int]) -> dict[int, int]:
    """Which of `pks` belong to the account: row id -> folder id."""
    if not pks:
        return {}
    return dict(sql.run(session, "SELECT id, folder_id FROM email_message WHERE account_id = ? "
                                 f"AND id IN ({sql.marks(len(pks))})", [account_id, *pks]))


def sender_of(session: Session, pk: int) -> str:
    """The sender address of one message copy."""
    return sql.scalar(session, "SELECT from_addr FROM email_message WHERE id = ?", (pk,))


def attachments_of(session: Session, pk: int) -> list[Attachment]:
    """The attachments of one message copy, with their bytes."""
    return [Attachment(*r) for r in sql.run(
        session, "SELECT filename, content_type, data FROM email_attachment "
                 "WHERE message_pk = ? ORDER BY id", (pk,))]


def move_messages(session: Session, pks: Sequence[int], folder_id: int) -> None:
    if pks:
        sql.run(session, "UPDATE email_message SET folder_id = ? "
                         f"WHERE id IN ({sql.marks(len(pks))})", [folder_id, *pks])


def set_flag(session: Session, pks: Sequence[int], flag: str, value: bool) -> None:
    """Set `read` or `important` on message copies."""
    if flag not in ("read", "important"):
        raise ValueError(f"unknown flag {flag!r}")
    if pks:
        sql.run(session, f"UPDATE email_message SET {flag} = ? "
                         f"WHERE id IN ({sql.marks(len(pks))})", [value, *pks])


def purge_messages(session: Session, pks: Sequence[int]) -> None:
    """Delete message copies for good, with their recipients and attachments."""
    if pks:
        marks = sql.marks(len(pks))
        sql.run(session, f"DELETE FROM email_recipient WHERE message_pk IN ({marks})", pks)
        sql.run(session, f"DELETE FROM email_attachment WHERE message_pk IN ({marks})", pks)
        sql.run(session, f"DELETE FROM email_message WHERE id IN ({marks})", pks)


def discard(session: Session, account_id: int, pks: Sequence[int]) -> tuple[list[int], list[int]]:
    """Delete the account's messages `pks` the way a mail client does: move to Trash, or
    delete for good when already there. Returns (moved to trash, deleted); ids not in the
    mailbox are ignored."""
    trash = trash_of(session, account_id)
    folders = owned(session, account_id, pks)
    trashed = [pk for pk in pks if pk in folders and folders[pk] != trash]
    deleted = [pk for pk in pks if folders.get(pk) == trash]
    move_messages(session, trashed, trash)
    purge_messages(session, deleted)
    return trashed, deleted
