"""Delivery: one message stored as a copy in every mailbox it reaches (the sender's Sent folder
and each recipient's INBOX), with its recipients, its attachments as bytes and an RFC 5322
Message-ID derived from the world's counter."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlmodel import Session

from mock_servers.core import files, sql
from mock_servers.core.errors import Code, ToolFailure, invalid
from mock_servers.core.times import instant
from mock_servers.email.domain.addresses import normalize_address, parse_addresses
from mock_servers.email.domain.folders import INBOX, SENT
from mock_servers.email.domain.mailboxes import mailboxes

MAX_MESSAGE_BYTES = 25 * 1024 * 1024


@dataclass(frozen=True)
class Attachment:
    """File content attached to a message (stored as bytes in every copy)."""

    filename: str
    content_type: str
    data: bytes

    @classmethod
    def of(cls, filename: str, data: bytes, content_type: str | None = None) -> Attachment:
        """An attachment whose content type, unless given, follows the file extension."""
        return cls(filename, content_type or files.content_type(filename), data)


@dataclass(frozen=True)
class Delivery:
    """Where one message went. Unpacks as `(delivered_to, undeliverable)`; `sent_pk` is the row
    id of the sender's Sent copy and `inbox_pks` the row id of each recipient's copy."""

    delivered_to: list[str]
    undeliverable: list[str]
    message_id: str
    sent_pk: int | None
    inbox_pks: dict[str, int]

    def __iter__(self) -> Iterator[list[str]]:
        return iter((self.delivered_to, self.undeliverable))


def check_attachments(filenames: Iterable[str], total_bytes: int) -> None:
    """The attachments of one message total at most 25 MB (RESOURCE_EXHAUSTED) and have
    distinct file names, which is how they are found again (INVALID_ARGUMENT)."""
    repeated = sorted(name for name, n in Counter(filenames).items() if n > 1)
    if repeated:
        raise invalid(f"two attachments are named {repeated[0]}; attachment file names must "
                      "differ", hint="rename one of the files first")
    if total_bytes > MAX_MESSAGE_BYTES:
        raise ToolFailure(Code.RESOURCE_EXHAUSTED,
                          f"attachments total {total_bytes} bytes; the limit is "
                          f"{MAX_MESSAGE_BYTES} bytes (25 MB) per message")


def _check(attachments: Sequence[Attachment]) -> None:
    check_attachments((a.filename for a in attachments), sum(len(a.data) for a in attachments))


def next_message_id(session: Session, sender: str, date: str) -> str:
    """A new RFC 5322 Message-ID from the world's counter, the date and the sender's domain."""
    issued = sql.scalar(session, "INSERT INTO email_counter (id, issued) VALUES (1, 1) "
                                 "ON CONFLICT (id) DO UPDATE SET issued = issued + 1 "
                                 "RETURNING issued")
    stamp = date.replace("-", "").replace(":", "").rstrip("Z")
    return f"<{stamp}.{issued:06d}@{sender.rsplit('@', 1)[1]}>"


_MESSAGE_COLUMNS = ("account_id", "folder_id", "message_id", "in_reply_to", "from_addr",
                    "from_name", "date", "subject", "body", "html_body", "read", "important")
_INSERT_MESSAGE = (f"INSERT INTO email_message ({', '.join(_MESSAGE_COLUMNS)}) "
                   f"VALUES ({sql.marks(len(_MESSAGE_COLUMNS))})")


def _store(session: Session, rows: list[dict[str, Any]],
           recipients: list[list[tuple[str, str]]],
           attachments: Sequence[Attachment]) -> list[int]:
    """Insert message copies with their (kind, address) recipients and the attachments.
    Returns the new row ids in the order of `rows`."""
    cursor = sql.cursor(session)
    pks: list[int] = []
    for row in rows:
        cursor.execute(_INSERT_MESSAGE, [row[c] for c in _MESSAGE_COLUMNS])
        pks.append(cast(int, cursor.lastrowid))  # set by every INSERT
    cursor.executemany("INSERT INTO email_recipient (message_pk, kind, address) VALUES (?, ?, ?)",
                       [(pk, kind, address)
                        for pk, pairs in zip(pks, recipients) for kind, address in pairs])
    cursor.executemany("INSERT INTO email_attachment (message_pk, filename, content_type, size, "
                       "data) VALUES (?, ?, ?, ?, ?)",
                       [(pk, a.filename, a.content_type, len(a.data), a.data)
                        for pk in pks for a in attachments])
    return pks


def deliver(session: Session, *, sender: str, sender_name: str | None,
            to: str | Iterable[str], cc: str | Iterable[str] = (),
            bcc: str | Iterable[str] = (), subject: str, body: str, date: str | datetime,
            html_body: str | None = None, message_id: str | None = None,
            in_reply_to: str | None = None, attachments: Sequence[Attachment] = (),
            folder_for_recipients: str = INBOX, sent_copy: bool = True,
            read: bool = False, important: bool = False) -> Delivery:
    """Send one message: a read copy in the sender's Sent folder (when the sender has an
    account and `sent_copy`) and one copy in `folder_for_recipients` of every distinct
    recipient account (to, cc, bcc; the sender too when addressed), flagged `read` and
    `important` as given. Bcc is kept only in the Sent copy. Addresses without an account are
    undeliverable. The Message-ID is derived from the world counter unless given."""
    sender_addr = normalize_address(sender)
    to_list, cc_list, bcc_list = parse_addresses(to), parse_addresses(cc), parse_addresses(bcc)
    recipients = list(dict.fromkeys(to_list + cc_list + bcc_list))
    if not recipients:
        raise invalid("a message needs at least one recipient")
    _check(attachments)
    when = instant(date)
    boxes = mailboxes(session, [sender_addr, *recipients])
    message_id = message_id or next_message_id(session, sender_addr, when)
    common = {"message_id": message_id,
              "in_reply_to": in_reply_to, "from_addr": sender_addr, "from_name": sender_name,
              "date": when, "subject": subject, "body": body, "html_body": html_body}
    visible = [("to", a) for a in to_list] + [("cc", a) for a in cc_list]
    rows: list[dict[str, Any]] = []
    lists: list[list[tuple[str, str]]] = []
    sender_box = boxes[sender_addr]
    if sent_copy and sender_box is not None:
        rows.append({**common, "account_id": sender_box.account_id,
                     "folder_id": sender_box.folder(SENT), "read": True, "important": False})
        lists.append(visible + [("bcc", a) for a in bcc_list])
    reached = [box for a in recipients if (box := boxes[a]) is not None]
    for box in reached:
        rows.append({**common, "account_id": box.account_id,
                     "folder_id": box.folder(folder_for_recipients), "read": read,
                     "important": important})
        lists.append(visible)
    pks = _store(session, rows, lists, attachments) if rows else []
    sent_pk = pks.pop(0) if len(rows) > len(reached) else None
    delivered = [box.address for box in reached]
    return Delivery(delivered, [a for a in recipients if boxes[a] is None], message_id, sent_pk,
                    dict(zip(delivered, pks)))


def store_copy(session: Session, *, account_id: int, folder_id: int, sender: str,
               sender_name: str | None, to: str | Iterable[str], cc: str | Iterable[str],
               bcc: str | Iterable[str], subject: str, body: str, date: str | datetime,
               html_body: str | None = None, message_id: str | None = None,
               in_reply_to: str | None = None, read: bool = False, important: bool = False,
               attachments: Sequence[Attachment] = ()) -> int:
    """One message copy in one mailbox folder, delivered nowhere else (imports, fixtures).
    Returns its row id."""
    _check(attachments)
    sender_addr, when = normalize_address(sender), instant(date)
    row = {"account_id": account_id, "folder_id": folder_id,
           "message_id": message_id or next_message_id(session, sender_addr, when),
           "in_reply_to": in_reply_to, "from_addr": sender_addr, "from_name": sender_name,
           "date": when, "subject": subject, "body": body, "html_body": html_body,
           "read": read, "important": important}
    pairs = [(kind, a) for kind, values in (("to", to), ("cc", cc), ("bcc", bcc))
             for a in parse_addresses(values)]
    return _store(session, [row], [pairs], attachments)[0]
