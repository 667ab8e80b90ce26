"""The mailbox domain shared by the e-mail tools, world generators and checkers: accounts and
folders, delivery of one message to every mailbox it reaches, and the `Email` projection.

Nothing here commits; the caller owns the transaction. Queries are plain SQL on the session's
DB-API connection (inside the same transaction, pending ORM changes flushed first): a tool call
runs a handful of them, and SQLAlchemy's per-statement cost would dominate. Address and folder
lookups made while delivering are kept for the life of the session (in `session.info`), so a
generator delivering thousands of messages in one transaction looks each address up once;
every function here that adds or removes accounts or folders drops that cache, and code that
changes those tables by other means must call `forget_lookups`.
"""

from __future__ import annotations

import html
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.core import sessions, sql
from mock_servers.core.auth import hash_password, verify_password
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.times import instant
from mock_servers.email.models import DEFAULT_FOLDERS, EmailAccount, EmailDraft

SERVER = "email"
INBOX, SENT, TRASH = "INBOX", "Sent", "Trash"
ALL_FOLDERS = "ALL"
MAX_MESSAGE_BYTES = 25 * 1024 * 1024

_ADDRESS = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*")
_ANGLE = re.compile(r"^(.*?)<([^<>]*)>$")
_SEPARATORS = re.compile(r"[,;]")
_TAG = re.compile(r"<[^>]*>")
_CACHE_KEY = "email.lookups"
_CONTENT_TYPES = {
    ".csv": "text/csv", ".doc": "application/msword", ".docx":
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".gif": "image/gif", ".gz": "application/gzip", ".htm": "text/html", ".html": "text/html",
    ".ics": "text/calendar", ".jpeg": "image/jpeg", ".jpg": "image/jpeg",
    ".json": "application/json", ".md": "text/markdown", ".pdf": "application/pdf",
    ".png": "image/png", ".pptx":
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".tar": "application/x-tar", ".txt": "text/plain", ".xls": "application/vnd.ms-excel",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".xml": "application/xml", ".zip": "application/zip",
}


class Account(NamedTuple):
    """An account as tools see it (never its password hash)."""

    id: int
    address: str
    name: str


class Folder(NamedTuple):
    id: int
    name: str
    system: bool


# --- values -----------------------------------------------------------------------------------

def split_address(raw: str) -> tuple[str | None, str]:
    """`"Ann Lee" <Ann@x.org>` -> ("Ann Lee", "ann@x.org"); a bare address has no name.
    Anything that is not an address is INVALID_ARGUMENT."""
    text = raw.strip()
    name: str | None = None
    angle = _ANGLE.match(text)
    if angle:
        name = angle.group(1).strip().strip('"').strip() or None
        text = angle.group(2).strip()
    if not _ADDRESS.fullmatch(text):
        raise invalid(f"'{raw.strip()}' is not a valid e-mail address")
    return name, text.lower()


def normalize_address(raw: str) -> str:
    """The lower-case address inside `raw` (`Name <a@b.org>` or `a@b.org`)."""
    return split_address(raw)[1]


def parse_addresses(value: str | Iterable[str] | None) -> list[str]:
    """Comma- or semicolon-separated addresses (or an iterable of them), normalised, each once."""
    if value is None:
        return []
    parts = _SEPARATORS.split(value) if isinstance(value, str) else value
    return list(dict.fromkeys(normalize_address(p) for p in parts if p.strip()))


def content_type_for(filename: str) -> str:
    """A MIME type from the file extension (a fixed table: the same on every machine)."""
    return _CONTENT_TYPES.get(PurePosixPath(filename.lower()).suffix, "application/octet-stream")


def visible_html(html_body: str | None, body: str) -> str | None:
    """`html_body`, or None when it is empty or only repeats the plain body."""
    if not html_body:
        return None
    text = html.unescape(_TAG.sub(" ", html_body))
    return None if text.split() == body.split() else html_body


def display_from(address: str, name: str | None) -> str:
    return f"{name} <{address}>" if name else address


# --- accounts and session -------------------------------------------------------------------

def find_account(session: Session, address: str) -> Account | None:
    row = sql.run(session, "SELECT id, address, name FROM email_account WHERE address = ?",
               (normalize_address(address),)).fetchone()
    return Account(*row) if row else None


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


NO_LOGIN = "!"  # the password hash of an account nobody can log in to (no password matches it)
_CHUNK = 500  # addresses per membership query (well under SQLite's bound-parameter limit)


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


def check_login(session: Session, address: str, password: str) -> Account | None:
    """The account when `password` is right for `address`, else None."""
    row = sql.run(session, "SELECT id, address, name, password_hash FROM email_account "
                        "WHERE address = ?", (address.strip().lower(),)).fetchone()
    if row is None or not verify_password(password, row[3]):
        return None
    return Account(*row[:3])


def log_in(session: Session, account_id: int) -> None:
    """Make `account_id` the logged-in account (also how worlds set up auto-login)."""
    sessions.log_in(session, SERVER, account_id)


def log_out(session: Session) -> bool:
    """Clear the login; False when nobody was logged in."""
    return sessions.log_out(session, SERVER)


def current_account(session: Session) -> Account | None:
    row = sql.run(session, "SELECT id, address, name FROM email_account "
                           f"WHERE id = {sessions.PRINCIPAL}", (SERVER,)).fetchone()
    return Account(*row) if row else None


def list_accounts(session: Session) -> list[Account]:
    return [Account(*r) for r in sql.run(
        session, "SELECT id, address, name FROM email_account ORDER BY address, id")]


# --- folders ----------------------------------------------------------------------------------

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
    cursor = sql.run(session, "INSERT INTO email_folder (account_id, name, system) VALUES (?, ?, 0)",
                  (account_id, clean))
    forget_lookups(session)
    return Folder(cursor.lastrowid, clean, False)


def remove_folder(session: Session, account_id: int, folder: Folder) -> int:
    """Delete a user folder, moving its messages to Trash; returns how many moved. System
    folders are FAILED_PRECONDITION."""
    if folder.system:
        raise ToolFailure(Code.FAILED_PRECONDITION,
                          f"'{folder.name}' is a default folder and cannot be deleted")
    moved = sql.run(session, "UPDATE email_message SET folder_id = ? WHERE folder_id = ?",
                 (_trash(session, account_id), folder.id)).rowcount
    sql.run(session, "DELETE FROM email_folder WHERE id = ?", (folder.id,))
    forget_lookups(session)
    return moved


def _trash(session: Session, account_id: int) -> int:
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


# --- delivery ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Attachment:
    """File content attached to a message (stored as bytes in every copy)."""

    filename: str
    content_type: str
    data: bytes


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


@dataclass
class _Mailbox:
    address: str
    account_id: int
    folders: dict[str, int]  # lower-case folder name -> folder id

    def folder(self, name: str) -> int:
        folder_id = self.folders.get(name.lower())
        if folder_id is None:
            raise not_found(f"{self.address} has no folder '{name}'")
        return folder_id


class _Lookups:
    """Address -> mailbox (account id and folder ids), None for addresses not in the world."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.boxes: dict[str, _Mailbox | None] = {}

    def mailboxes(self, addresses: Sequence[str]) -> dict[str, _Mailbox | None]:
        missing = [a for a in dict.fromkeys(addresses) if a not in self.boxes]
        if missing:
            self.boxes.update(dict.fromkeys(missing))
            rows = sql.run(self.session, "SELECT a.address, a.id, f.name, f.id FROM email_account a "
                                      "JOIN email_folder f ON f.account_id = a.id "
                                      f"WHERE a.address IN ({sql.marks(len(missing))})", missing)
            for address, account_id, folder_name, folder_id in rows:
                box = self.boxes[address] or _Mailbox(address, account_id, {})
                box.folders[folder_name.lower()] = folder_id
                self.boxes[address] = box
        return {a: self.boxes[a] for a in addresses}


def _lookups(session: Session) -> _Lookups:
    cached = session.info.get(_CACHE_KEY)
    if cached is None:
        cached = session.info[_CACHE_KEY] = _Lookups(session)
    return cached


def forget_lookups(session: Session) -> None:
    """Drop the address/folder cache of `session` (after accounts or folders changed)."""
    session.info.pop(_CACHE_KEY, None)


def next_message_id(session: Session, sender: str, date: str) -> str:
    """A new RFC 5322 Message-ID from the world's counter, the date and the sender's domain."""
    issued = sql.run(session, "INSERT INTO email_counter (id, issued) VALUES (1, 1) "
                           "ON CONFLICT (id) DO UPDATE SET issued = issued + 1 "
                           "RETURNING issued").fetchone()[0]
    stamp = date.replace("-", "").replace(":", "").rstrip("Z")
    return f"<{stamp}.{issued:06d}@{sender.rsplit('@', 1)[1]}>"


def check_size(total: int) -> None:
    """Attachments of one message may total at most 25 MB (RESOURCE_EXHAUSTED)."""
    if total > MAX_MESSAGE_BYTES:
        raise ToolFailure(Code.RESOURCE_EXHAUSTED,
                          f"attachments total {total} bytes; the limit is {MAX_MESSAGE_BYTES} "
                          "bytes (25 MB) per message")


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
        pks.append(cursor.lastrowid)
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
    check_size(sum(len(a.data) for a in attachments))
    when = instant(date)
    boxes = _lookups(session).mailboxes([sender_addr, *recipients])
    common = {"message_id": message_id or next_message_id(session, sender_addr, when),
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
    return Delivery(delivered, [a for a in recipients if boxes[a] is None], common["message_id"],
                    sent_pk, dict(zip(delivered, pks)))


def store_copy(session: Session, *, account_id: int, folder_id: int, sender: str,
               sender_name: str | None, to: str | Iterable[str], cc: str | Iterable[str],
               bcc: str | Iterable[str], subject: str, body: str, date: str | datetime,
               html_body: str | None = None, message_id: str | None = None,
               in_reply_to: str | None = None, read: bool = False, important: bool = False,
               attachments: Sequence[Attachment] = ()) -> int:
    """One message copy in one mailbox folder, delivered nowhere else (imports, fixtures).
    Returns its row id."""
    check_size(sum(len(a.data) for a in attachments))
    sender_addr, when = normalize_address(sender), instant(date)
    row = {"account_id": account_id, "folder_id": folder_id,
           "message_id": message_id or next_message_id(session, sender_addr, when),
           "in_reply_to": in_reply_to, "from_addr": sender_addr, "from_name": sender_name,
           "date": when, "subject": subject, "body": body, "html_body": html_body,
           "read": read, "important": important}
    pairs = [(kind, a) for kind, values in (("to", to), ("cc", cc), ("bcc", bcc))
             for a in parse_addresses(values)]
    return _store(session, [row], [pairs], attachments)[0]


# --- reading ----------------------------------------------------------------------------------

_SELECT_EMAIL = ("SELECT m.id, m.message_id, f.name, m.from_addr, m.from_name, m.subject, "
                 "m.date, m.read, m.important, m.body, m.html_body, m.in_reply_to "
                 "FROM email_message m JOIN email_folder f ON f.id = m.folder_id")
_NEWEST_FIRST = "ORDER BY m.date DESC, m.id DESC"
_LIKE = "LIKE ? ESCAPE '\\'"  # SQLite's LIKE ignores the case of ASCII letters
_MATCH = (f"(m.subject {_LIKE} OR m.from_addr {_LIKE} OR m.from_name {_LIKE} "
          f"OR m.body {_LIKE} OR EXISTS (SELECT 1 FROM email_recipient r "
          f"WHERE r.message_pk = m.id AND r.kind IN ('to', 'cc') AND r.address {_LIKE}))")


def _like_pattern(text: str) -> str:
    """`%text%` with LIKE's wildcards in `text` taken literally."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _project(session: Session, rows: Sequence[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """The `Email` objects of `rows`, with recipients and attachments loaded in one query each."""
    pks = [r[0] for r in rows]
    people: dict[int, dict[str, list[str]]] = defaultdict(lambda: {"to": [], "cc": [], "bcc": []})
    files: dict[int, list[dict[str, Any]]] = defaultdict(list)
    if pks:
        marks = sql.marks(len(pks))
        for pk, kind, address in sql.run(session, "SELECT message_pk, kind, address FROM "
                                               f"email_recipient WHERE message_pk IN ({marks}) "
                                               "ORDER BY id", pks):
            people[pk][kind].append(address)
        for pk, filename, size, content_type in sql.run(
                session, "SELECT message_pk, filename, size, content_type FROM email_attachment "
                         f"WHERE message_pk IN ({marks}) ORDER BY id", pks):
            files[pk].append({"filename": filename, "size": size, "content_type": content_type})
    return [_email(r, people[r[0]], files[r[0]]) for r in rows]


def _email(row: tuple[Any, ...], people: dict[str, list[str]],
           files: list[dict[str, Any]]) -> dict[str, Any]:
    (pk, message_id, folder, from_addr, from_name, subject, date, read, important, body,
     html_body, in_reply_to) = row
    return {"id": str(pk), "message_id": message_id, "folder": folder,
            "from": display_from(from_addr, from_name), "to": people["to"], "cc": people["cc"],
            "bcc": people["bcc"], "subject": subject, "date": date, "read": bool(read),
            "important": bool(important), "has_attachments": bool(files), "attachments": files,
            "body": body, "html_body": visible_html(html_body, body), "in_reply_to": in_reply_to}


def emails_by_pk(session: Session, account_id: int, pks: Sequence[int]) -> list[dict[str, Any]]:
    """The account's messages among `pks` as `Email` objects, in the order of `pks`."""
    if not pks:
        return []
    rows = sql.run(session, f"{_SELECT_EMAIL} WHERE m.account_id = ? AND m.id IN "
                         f"({sql.marks(len(pks))})", [account_id, *pks]).fetchall()
    order = {pk: i for i, pk in enumerate(pks)}
    return _project(session, sorted(rows, key=lambda r: order[r[0]]))


def list_emails(session: Session, account_id: int, *, folder_id: int | None = None,
                query: str | None = None, limit: int, offset: int = 0,
                ) -> tuple[list[dict[str, Any]], int]:
    """One page of the account's messages (one folder, or all when `folder_id` is None),
    optionally filtered by `query` (case-insensitive substring of subject, sender, to, cc or
    body), newest first (date desc, id desc); plus the total."""
    scope, params = ("m.folder_id = ?", [folder_id]) if folder_id is not None else \
        ("m.account_id = ?", [account_id])
    if query:  # one scan of the matching rows gives both the total and the page
        pks = [r[0] for r in sql.run(session, f"SELECT m.id FROM email_message m WHERE {scope} "
                                           f"AND {_MATCH} {_NEWEST_FIRST}",
                                  [*params, *[_like_pattern(query)] * 5])]
        return emails_by_pk(session, account_id, pks[offset:offset + limit]), len(pks)
    total = sql.run(session, f"SELECT count(*) FROM email_message m WHERE {scope}",
                 params).fetchone()[0]
    if offset >= total:
        return [], total
    rows = sql.run(session, f"{_SELECT_EMAIL} WHERE {scope} {_NEWEST_FIRST} LIMIT ? OFFSET ?",
                [*params, limit, offset]).fetchall()
    return _project(session, rows), total


def owned(session: Session, account_id: int, pks: Sequence[int]) -> dict[int, int]:
    """Which of `pks` belong to the account: row id -> folder id."""
    if not pks:
        return {}
    return dict(sql.run(session, "SELECT id, folder_id FROM email_message WHERE account_id = ? "
                              f"AND id IN ({sql.marks(len(pks))})", [account_id, *pks]))


def sender_of(session: Session, pk: int) -> str:
    """The sender address of one message copy."""
    return sql.run(session, "SELECT from_addr FROM email_message WHERE id = ?", (pk,)).fetchone()[0]


def attachments_of(session: Session, pk: int) -> list[Attachment]:
    """The attachments of one message copy, with their bytes."""
    return [Attachment(*r) for r in sql.run(
        session, "SELECT filename, content_type, data FROM email_attachment "
                 "WHERE message_pk = ? ORDER BY id", (pk,))]


# --- changing messages ------------------------------------------------------------------------

def move_messages(session: Session, pks: Sequence[int], folder_id: int) -> None:
    if pks:
        sql.run(session, f"UPDATE email_message SET folder_id = ? WHERE id IN ({sql.marks(len(pks))})",
             [folder_id, *pks])


def set_flag(session: Session, pks: Sequence[int], flag: str, value: bool) -> None:
    """Set `read` or `important` on message copies."""
    if flag not in ("read", "important"):
        raise ValueError(f"unknown flag {flag!r}")
    if pks:
        sql.run(session, f"UPDATE email_message SET {flag} = ? WHERE id IN ({sql.marks(len(pks))})",
             [value, *pks])


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
    trash = _trash(session, account_id)
    folders = owned(session, account_id, pks)
    trashed = [pk for pk in pks if pk in folders and folders[pk] != trash]
    deleted = [pk for pk in pks if folders.get(pk) == trash]
    move_messages(session, trashed, trash)
    purge_messages(session, deleted)
    return trashed, deleted


# --- drafts -----------------------------------------------------------------------------------

class _DraftRow(NamedTuple):
    id: int
    subject: str
    body: str
    html_body: str | None
    to: str | None
    cc: str | None
    bcc: str | None
    updated_at: str


def join_addresses(addresses: Iterable[str]) -> str | None:
    """How draft address lists are stored: `a@x.org, b@y.org`, or None when empty."""
    return ", ".join(addresses) or None


def add_draft(session: Session, *, account_id: int, subject: str, body: str,
              updated_at: str | datetime, html_body: str | None = None,
              to: str | Iterable[str] = (), cc: str | Iterable[str] = (),
              bcc: str | Iterable[str] = ()) -> EmailDraft:
    draft = EmailDraft(account_id=account_id, subject=subject, body=body, html_body=html_body,
                       to=join_addresses(parse_addresses(to)),
                       cc=join_addresses(parse_addresses(cc)),
                       bcc=join_addresses(parse_addresses(bcc)), updated_at=instant(updated_at))
    session.add(draft)
    session.flush()
    return draft


def draft_view(draft: EmailDraft | _DraftRow) -> dict[str, Any]:
    """`{id,subject,body,html_body,to,cc,bcc,updated_at}` with address arrays."""
    return {"id": str(draft.id), "subject": draft.subject, "body": draft.body,
            "html_body": visible_html(draft.html_body, draft.body),
            "to": parse_addresses(draft.to), "cc": parse_addresses(draft.cc),
            "bcc": parse_addresses(draft.bcc), "updated_at": draft.updated_at}


def list_drafts(session: Session, account_id: int, *, limit: int,
                offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """One page of the account's drafts, most recently updated first; plus the total."""
    total = sql.run(session, "SELECT count(*) FROM email_draft WHERE account_id = ?",
                 (account_id,)).fetchone()[0]
    rows = sql.run(session, 'SELECT id, subject, body, html_body, "to", cc, bcc, updated_at '
                         "FROM email_draft WHERE account_id = ? "
                         "ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?",
                (account_id, limit, offset))
    return [draft_view(_DraftRow(*r)) for r in rows], total
