"""The transfer log: what the send tools handed to the mail system. Sending delivers a message
(a Sent copy and one copy per recipient with an account here) and records it, with the copies it
stored; the record is the outside world's: moving or deleting a copy afterwards changes the
mailboxes, never what was sent. Checkers read sent mail from it and hold the copies to it."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.email.domain.accounts import Account
from mock_servers.email.domain.addresses import parse_addresses
from mock_servers.email.domain.delivery import Attachment, Delivery, deliver

_COPY_COLUMNS = ("account_id", "folder_id", "message_id", "from_addr", "date", "subject", "body", "html_body",
                 "important")


def send(session: Session, account: Account, *, to: Sequence[str], cc: Sequence[str], bcc: Sequence[str],
         subject: str, body: str, html_body: str | None, date: str | datetime,
         attachments: Sequence[Attachment] = (), in_reply_to: str | None = None) -> Delivery:
    """Send a message from `account`: delivered as `deliver` delivers it, then recorded in the
    transfer log with its attachments and the copies it stored."""
    delivery = deliver(session, sender=account.address, sender_name=account.name, to=to, cc=cc, bcc=bcc,
                       subject=subject, body=body, html_body=html_body, date=date, in_reply_to=in_reply_to,
                       attachments=attachments)
    pks = [pk for pk in (delivery.sent_pk, *delivery.inbox_pks.values()) if pk is not None]
    copies = [list(r) for r in sql.run(session, "SELECT id, account_id, folder_id FROM email_message WHERE id IN "
                                                f"({sql.marks(len(pks))}) ORDER BY id", pks)]
    sent = sql.run(session, "SELECT from_addr, date FROM email_message WHERE id = ?", (pks[0],)).fetchone()
    cursor = sql.run(session, "INSERT INTO email_transfer (message_id, account_id, from_addr, date, subject, body, "
                              "html_body, to_json, cc_json, bcc_json, copies_json) "
                              "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (delivery.message_id, account.id, sent[0], sent[1], subject, body, html_body,
                      json.dumps(parse_addresses(to)), json.dumps(parse_addresses(cc)),
                      json.dumps(parse_addresses(bcc)), json.dumps(copies)))
    sql.cursor(session).executemany(
        "INSERT INTO email_transfer_attachment (transfer_id, filename, content_type, data) VALUES (?, ?, ?, ?)",
        [(cursor.lastrowid, a.filename, a.content_type, a.data) for a in attachments])
    return delivery


@dataclass(frozen=True)
class Transfer:
    """One message as it was sent."""

    id: int
    message_id: str
    sender: str
    date: str
    subject: str
    body: str
    html_body: str | None
    to: tuple[str, ...]
    cc: tuple[str, ...]
    bcc: tuple[str, ...]
    attachments: tuple[str, ...]  # file names
    copies: tuple[tuple[int, int, int], ...]  # (row id, account id, folder id), the Sent copy first


def transfers(conn: sqlite3.Connection, after: int = 0) -> list[Transfer]:
    """The messages sent after transfer `after`, oldest first."""
    names: dict[int, list[str]] = {}
    for transfer_id, filename in conn.execute("SELECT transfer_id, filename FROM email_transfer_attachment "
                                              "WHERE transfer_id > ? ORDER BY id", (after,)):
        names.setdefault(transfer_id, []).append(filename)
    found = conn.execute("SELECT id, message_id, from_addr, date, subject, body, html_body, to_json, cc_json, "
                         "bcc_json, copies_json FROM email_transfer WHERE id > ? ORDER BY id", (after,))
    return [Transfer(pk, message_id, sender, date, subject, body, html_body, tuple(json.loads(to)),
                     tuple(json.loads(cc)), tuple(json.loads(bcc)), tuple(names.get(pk, ())),
                     tuple((c[0], c[1], c[2]) for c in json.loads(copies)))
            for pk, message_id, sender, date, subject, body, html_body, to, cc, bcc, copies in found]


def transfer_attachments(conn: sqlite3.Connection, transfer_id: int) -> list[Attachment]:
    """The attachments of one sent message, with their bytes, as sent."""
    return [Attachment(*r) for r in conn.execute(
        "SELECT filename, content_type, data FROM email_transfer_attachment WHERE transfer_id = ? ORDER BY id",
        (transfer_id,))]


def copy_problems(conn: sqlite3.Connection, after_message: int, after_transfer: int) -> list[str]:
    """What keeps the message copies stored after row `after_message` from being exactly the
    copies of the messages sent after transfer `after_transfer`, where they were delivered and
    as they were sent (read flags aside): copies moved, changed or deleted, and copies no send
    made (imported or written in place). Empty when they are."""
    folders = dict(conn.execute("SELECT f.id, a.address || ' ' || f.name FROM email_folder f "
                                "JOIN email_account a ON a.id = f.account_id"))
    expected = {}
    for t in transfers(conn, after_transfer):
        for pk, account, folder in t.copies:
            expected[pk] = (account, folder, t)
    problems = []
    rows = conn.execute(f"SELECT id, {', '.join(_COPY_COLUMNS)} FROM email_message WHERE id > ? ORDER BY id",
                        (after_message,))
    for pk, account, folder, message_id, sender, date, subject, body, html_body, important in rows:
        sent = expected.pop(pk, None)
        if sent is None:
            problems.append(f"message {subject!r} in {folders.get(folder, folder)} was not sent by the tools "
                            "(imported or stored directly)")
        elif folder != sent[1] or account != sent[0]:
            problems.append(f"the copy of sent message {subject!r} in {folders.get(sent[1], sent[1])} was moved to "
                            f"{folders.get(folder, folder)}")
        elif (message_id, sender, date, subject, body, html_body, bool(important)) != (
                sent[2].message_id, sent[2].sender, sent[2].date, sent[2].subject, sent[2].body,
                sent[2].html_body, False):
            problems.append(f"the copy of sent message {subject!r} in {folders.get(folder, folder)} was changed")
    problems += [f"the copy of sent message {t.subject!r} in {folders.get(folder, folder)} was deleted"
                 for _, (_, folder, t) in sorted(expected.items())]
    return problems
