"""E-mail tools: one mailbox per account, IMAP/SMTP-like operations, unprefixed names."""

import base64
import binascii
import json
import re
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from loca.core.clock import iso_z
from loca.core.rng import derive_seed
from loca.core.world import write_bytes_atomic
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.files import display, resolve
from mock_servers.core.toolkit import Call, Toolbox
from mock_servers.core.types import Int, page_param, size_param
from mock_servers.email import domain
from mock_servers.email.domain import ALL_FOLDERS, INBOX, Account, Attachment, Folder
from mock_servers.email.models import EmailDraft

toolbox = Toolbox("email", list_keys=("emails", "drafts", "folders", "users"),
                  snapshot_ignore={"email_message": frozenset({"read"}), "email_counter": None},
                  instructions="An e-mail account: folders, messages, drafts and "
                  "attachments. Log in first unless the world logs you in.")
build = toolbox.build

PAGE_SIZE, MAX_PAGE_SIZE = 20, 50
EXPORT_CHUNK = 500
_LOGIN_HINT = "call login with your e-mail address and password"
_FIND_HINT = "use get_emails or search_emails to find e-mail ids"
_REPLY_PREFIX = re.compile(r"^\s*re:", re.IGNORECASE)
_FORWARD_PREFIX = re.compile(r"^\s*(fwd?|fw):", re.IGNORECASE)
_DIGITS = re.compile(r"[0-9]{1,18}")


def _int_as_text(value: Any) -> Any:
    """Ids are strings; a JSON integer id is accepted losslessly."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


Id = Annotated[str, BeforeValidator(_int_as_text)]
EmailId = Annotated[Id, Field(description="E-mail id (from get_emails or search_emails)")]
EmailIds = Annotated[list[Id], Field(min_length=1, max_length=500,
                                     description="E-mail ids (1 to 500)")]
DraftId = Annotated[Id, Field(description="Draft id (from get_drafts or save_draft)")]
Page = Annotated[Int, page_param()]
PageSize = Annotated[Int, size_param(PAGE_SIZE, MAX_PAGE_SIZE, "e-mails per page")]
DraftPageSize = Annotated[Int, size_param(PAGE_SIZE, MAX_PAGE_SIZE, "drafts per page")]
Subject = Annotated[str, Field(description="Subject line")]
Body = Annotated[str, Field(description="Plain-text body")]
HtmlBody = Annotated[str | None, Field(description="Optional HTML body")]
Cc = Annotated[str | None, Field(description="Cc addresses, comma- or semicolon-separated")]
Bcc = Annotated[str | None, Field(description="Bcc addresses, comma- or semicolon-separated")]
FolderParam = Annotated[str, Field(description="Folder name (see get_folders)")]
FolderName = Annotated[str | None, Field(description="Folder name; omit for every folder")]


# --- helpers ----------------------------------------------------------------------------------

def _me(call: Call) -> Account:
    account = domain.current_account(call.session)
    if account is None:
        raise ToolFailure(Code.UNAUTHENTICATED, "no account is logged in", hint=_LOGIN_HINT)
    return account


def _as_pk(value: str) -> int | None:
    text = value.strip()
    return int(text) if _DIGITS.fullmatch(text) else None


def _pk(value: str, param: str) -> int:
    pk = _as_pk(value)
    if pk is None:
        raise invalid(f"{param} must be a numeric id such as '42' (received '{value}')")
    return pk


def _email_pk(call: Call, me: Account, email_id: str) -> int:
    pk = _pk(email_id, "email_id")
    if not domain.owned(call.session, me.id, [pk]):
        raise not_found(f"e-mail '{email_id}' is not in the mailbox of {me.address}",
                        hint=_FIND_HINT)
    return pk


def _email(call: Call, me: Account, pk: int) -> dict[str, Any]:
    return domain.emails_by_pk(call.session, me.id, [pk])[0]


def _folder(call: Call, me: Account, name: str) -> Folder:
    folder = domain.find_folder(call.session, me.id, name)
    if folder is None:
        raise not_found(f"folder '{name}' does not exist", hint="get_folders lists the folders")
    return folder


def _addresses(value: str | None, param: str) -> list[str]:
    try:
        return domain.parse_addresses(value)
    except ToolFailure as exc:
        raise invalid(f"{param}: {exc.message}") from None


def _envelope(key: str, items: list[dict[str, Any]], total: int, page: int,
              page_size: int) -> dict[str, Any]:
    return {key: items, "total": total, "page": page, "page_size": page_size,
            "total_pages": -(-total // page_size)}


def _batch(call: Call, me: Account, email_ids: list[str]) -> tuple[list[int], list[str]]:
    """(row ids found in the mailbox, given ids that are not); NOT_FOUND when none is found."""
    given = {raw: _as_pk(raw) for raw in dict.fromkeys(i.strip() for i in email_ids)}
    found = domain.owned(call.session, me.id, [pk for pk in given.values() if pk is not None])
    hits = list(dict.fromkeys(pk for pk in given.values() if pk in found))
    misses = [raw for raw, pk in given.items() if pk not in found]
    if not hits:
        raise not_found(f"none of the e-mail ids is in the mailbox: {', '.join(misses)}",
                        hint=_FIND_HINT)
    return hits, misses


def _read_attachments(call: Call, paths: list[str] | None) -> list[Attachment]:
    """Read workspace files at send time; the message stores their bytes."""
    files: list[Path] = []
    for raw in paths or []:
        target = resolve(call.world, raw)
        if target.is_dir():
            raise invalid(f"attachment '{raw}' is a directory; attach a file (zip it first)")
        if not target.is_file():
            raise not_found(f"attachment '{raw}' does not exist in the workspace")
        files.append(target)
    domain.check_size(sum(p.stat().st_size for p in files))
    return [Attachment(p.name, domain.content_type_for(p.name), p.read_bytes()) for p in files]


def _send(call: Call, me: Account, *, to: list[str], cc: list[str], bcc: list[str],
          subject: str, body: str, html_body: str | None, attachments: list[Attachment],
          in_reply_to: str | None = None) -> dict[str, Any]:
    if not to:
        raise invalid("to: at least one recipient address is required")
    delivery = domain.deliver(
        call.session, sender=me.address, sender_name=me.name, to=to, cc=cc, bcc=bcc,
        subject=subject, body=body, html_body=html_body or None, in_reply_to=in_reply_to,
        attachments=attachments, date=call.now)
    assert delivery.sent_pk is not None, "the logged-in sender always has a Sent folder"
    return {**_email(call, me, delivery.sent_pk), "delivered_to": delivery.delivered_to,
            "undeliverable": delivery.undeliverable}


def _output_path(call: Call, path: str) -> Path:
    """A workspace file path to write, with its folders created."""
    target = resolve(call.world, path)
    if target.is_dir():
        raise invalid(f"'{path}' is a directory; give a file path")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise invalid(f"cannot create the folders of '{path}': a file is in the way") from None
    return target


# --- account and session --------------------------------------------------------------------

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
    me = _me(call)
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
    address = _addresses(email, "email")
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


# --- folders ----------------------------------------------------------------------------------

@toolbox.tool(rw="read")
def get_folders(call: Call) -> dict[str, Any]:
    """Every folder of the mailbox with its message and unread counts:
    {folders:[{name,total,unread}]}."""
    return {"folders": domain.folder_stats(call.session, _me(call).id)}


@toolbox.tool(rw="write")
def create_folder(call: Call,
                  folder_name: Annotated[str, Field(description="New folder name")],
                  ) -> dict[str, Any]:
    """Create a folder. Names are unique ignoring case (ALREADY_EXISTS); 'ALL' is reserved."""
    folder = domain.add_folder(call.session, _me(call).id, folder_name)
    return {"name": folder.name, "total": 0, "unread": 0}


@toolbox.tool(rw="write", destructive=True)
def delete_folder(call: Call,
                  folder_name: Annotated[str, Field(description="Folder to delete")],
                  ) -> dict[str, Any]:
    """Delete a user folder; its e-mails move to Trash. Default folders (INBOX, Sent, Drafts,
    Trash, Spam, Archive) are FAILED_PRECONDITION."""
    me = _me(call)
    folder = _folder(call, me, folder_name)
    moved = domain.remove_folder(call.session, me.id, folder)
    return {"deleted": folder.name, "moved_to_trash": moved}


# --- reading ----------------------------------------------------------------------------------

@toolbox.tool(rw="read", core=True)
def get_emails(call: Call, folder: FolderParam = INBOX, page: Page = 1,
               page_size: PageSize = PAGE_SIZE) -> dict[str, Any]:
    """List the e-mails of a folder (default INBOX), newest first (date desc, then id desc),
    with full bodies. Paged: page_size default 20, max 50; returns
    {emails,total,page,page_size,total_pages}. Does not change read flags."""
    me = _me(call)
    folder_id = _folder(call, me, folder).id
    emails, total = domain.list_emails(call.session, me.id, folder_id=folder_id,
                                       limit=page_size, offset=(page - 1) * page_size)
    return _envelope("emails", emails, total, page, page_size)


@toolbox.tool(rw="write", core=True, idempotent=True)
def read_email(call: Call, email_id: EmailId) -> dict[str, Any]:
    """Read one e-mail with its body, recipients and attachment list; marks it read."""
    me = _me(call)
    pk = _email_pk(call, me, email_id)
    domain.set_flag(call.session, [pk], "read", True)
    return _email(call, me, pk)


@toolbox.tool(rw="read", core=True)
def search_emails(call: Call,
                  query: Annotated[str, Field(description="Text to find (case-insensitive)")],
                  folder: Annotated[str, Field(description="Folder name, or ALL for every "
                                                           "folder")] = INBOX,
                  page: Page = 1, page_size: PageSize = PAGE_SIZE) -> dict[str, Any]:
    """Find e-mails whose subject, sender, to, cc or body contains the query (case-insensitive
    substring), in one folder (default INBOX) or in ALL folders; newest first. Paged:
    page_size default 20, max 50; returns {emails,total,page,page_size,total_pages}. Does not
    change read flags."""
    me = _me(call)
    if not query.strip():
        raise invalid("query must not be empty")
    folder_id = None if folder.strip().upper() == ALL_FOLDERS else _folder(call, me, folder).id
    emails, total = domain.list_emails(call.session, me.id, folder_id=folder_id,
                                       query=query.strip(), limit=page_size,
                                       offset=(page - 1) * page_size)
    return _envelope("emails", emails, total, page, page_size)


@toolbox.tool(rw="read")
def get_email_headers(call: Call, email_id: EmailId) -> dict[str, Any]:
    """The headers of one e-mail (no body): {message_id,in_reply_to,from,to,cc,subject,date,
    content_type}. Does not change the read flag."""
    me = _me(call)
    email = _email(call, me, _email_pk(call, me, email_id))
    content_type = ("multipart/mixed" if email["has_attachments"] else
                    "multipart/alternative" if email["html_body"] else "text/plain")
    return {"message_id": email["message_id"], "in_reply_to": email["in_reply_to"],
            "from": email["from"], "to": email["to"], "cc": email["cc"],
            "subject": email["subject"], "date": email["date"], "content_type": content_type}


# --- sending ----------------------------------------------------------------------------------

@toolbox.tool(rw="write", core=True)
def send_email(call: Call,
               to: Annotated[str, Field(description="Recipient addresses, comma- or "
                                                    "semicolon-separated")],
               subject: Subject, body: Body, html_body: HtmlBody = None, cc: Cc = None,
               bcc: Bcc = None,
               attachments: Annotated[list[str] | None, Field(
                   description="Workspace file paths to attach (read now; 25 MB per message)")
               ] = None) -> dict[str, Any]:
    """Send an e-mail. A copy goes to your Sent folder and one to the INBOX of every recipient
    (to, cc, bcc) that has an account here, yourself included; other addresses are reported
    as undeliverable. Attachments are workspace files, stored as bytes (25 MB per message).
    Returns the Sent copy plus {delivered_to,undeliverable}."""
    me = _me(call)
    return _send(call, me, to=_addresses(to, "to"), cc=_addresses(cc, "cc"),
                 bcc=_addresses(bcc, "bcc"), subject=subject, body=body, html_body=html_body,
                 attachments=_read_attachments(call, attachments))


@toolbox.tool(rw="write")
def reply_email(call: Call, email_id: EmailId, body: Body, html_body: HtmlBody = None,
                cc: Cc = None, bcc: Bcc = None,
                reply_all: Annotated[bool, Field(description="Also reply to every original To "
                                                             "and Cc recipient")] = False,
                ) -> dict[str, Any]:
    """Reply to an e-mail: goes to its sender (to its recipients if you sent it), subject
    prefixed 'Re: ' once, In-Reply-To set. reply_all adds every original To and Cc except
    you. Delivered like send_email; returns the Sent copy plus {delivered_to,undeliverable}."""
    me = _me(call)
    pk = _email_pk(call, me, email_id)
    original = _email(call, me, pk)
    sender, mine = domain.sender_of(call.session, pk), me.address
    to = list(original["to"] or [mine]) if sender == mine else [sender]
    extra_cc: list[str] = []
    if reply_all:
        to += [a for a in original["to"] if a != mine]
        extra_cc = [a for a in original["cc"] if a != mine]
    to = list(dict.fromkeys(to))
    cc_list = [a for a in dict.fromkeys(extra_cc + _addresses(cc, "cc")) if a not in to]
    subject = original["subject"]
    return _send(call, me, to=to, cc=cc_list, bcc=_addresses(bcc, "bcc"),
                 subject=subject if _REPLY_PREFIX.match(subject) else f"Re: {subject}",
                 body=body, html_body=html_body, attachments=[],
                 in_reply_to=original["message_id"])


def _forwarded(original: dict[str, Any]) -> str:
    lines = ["---------- Forwarded message ---------", f"From: {original['from']}",
             f"Date: {original['date']}", f"Subject: {original['subject']}",
             f"To: {', '.join(original['to'])}"]
    if original["cc"]:
        lines.append(f"Cc: {', '.join(original['cc'])}")
    return "\n".join([*lines, "", original["body"]])


@toolbox.tool(rw="write")
def forward_email(call: Call, email_id: EmailId,
                  to: Annotated[str, Field(description="Recipient addresses, comma- or "
                                                       "semicolon-separated")],
                  body: Annotated[str, Field(description="Text above the quoted original")] = "",
                  html_body: HtmlBody = None, cc: Cc = None, bcc: Bcc = None,
                  ) -> dict[str, Any]:
    """Forward an e-mail: subject prefixed 'Fwd: ' once, your text followed by the quoted
    original, and the original attachments (their bytes) re-attached. Delivered like
    send_email; returns the Sent copy plus {delivered_to,undeliverable}."""
    me = _me(call)
    pk = _email_pk(call, me, email_id)
    original = _email(call, me, pk)
    quoted = _forwarded(original)
    subject = original["subject"]
    return _send(call, me, to=_addresses(to, "to"), cc=_addresses(cc, "cc"),
                 bcc=_addresses(bcc, "bcc"),
                 subject=subject if _FORWARD_PREFIX.match(subject) else f"Fwd: {subject}",
                 body=f"{body}\n\n{quoted}" if body else quoted, html_body=html_body,
                 attachments=domain.attachments_of(call.session, pk))


# --- organising -------------------------------------------------------------------------------

@toolbox.tool(rw="write", destructive=True)
def delete_email(call: Call, email_id: EmailId) -> dict[str, Any]:
    """Delete an e-mail: it moves to Trash, or is deleted for good when already in Trash.
    Returns {id,action} with action moved_to_trash or deleted."""
    me = _me(call)
    pk = _email_pk(call, me, email_id)
    trashed, _ = domain.discard(call.session, me.id, [pk])
    return {"id": str(pk), "action": "moved_to_trash" if trashed else "deleted"}


@toolbox.tool(rw="write", idempotent=True)
def move_email(call: Call, email_id: EmailId,
               target_folder: Annotated[str, Field(description="Destination folder name")],
               ) -> dict[str, Any]:
    """Move one e-mail to another folder; returns the moved e-mail. Unknown folder is
    NOT_FOUND."""
    me = _me(call)
    pk = _email_pk(call, me, email_id)
    domain.move_messages(call.session, [pk], _folder(call, me, target_folder).id)
    return _email(call, me, pk)


_FLAGS: dict[str, tuple[str, bool]] = {
    "read": ("read", True), "unread": ("read", False),
    "important": ("important", True), "not_important": ("important", False),
}


@toolbox.tool(rw="write", idempotent=True)
def mark_emails(call: Call, email_ids: EmailIds,
                status: Annotated[Literal["read", "unread", "important", "not_important"],
                                  Field(description="Flag to set")]) -> dict[str, Any]:
    """Set a flag on several e-mails: read, unread, important or not_important. Reports
    {updated,not_found}; an error only when none of the ids exists."""
    me = _me(call)
    hits, misses = _batch(call, me, email_ids)
    domain.set_flag(call.session, hits, *_FLAGS[status])
    return {"updated": [str(pk) for pk in hits], "not_found": misses}


@toolbox.tool(rw="write", idempotent=True)
def move_emails(call: Call, email_ids: EmailIds,
                target_folder: Annotated[str, Field(description="Destination folder name")],
                ) -> dict[str, Any]:
    """Move several e-mails to a folder. Reports {moved,not_found}; an error only when none
    of the ids exists or the folder does not."""
    me = _me(call)
    folder = _folder(call, me, target_folder)
    hits, misses = _batch(call, me, email_ids)
    domain.move_messages(call.session, hits, folder.id)
    return {"moved": [str(pk) for pk in hits], "not_found": misses}


@toolbox.tool(rw="write", destructive=True)
def delete_emails(call: Call, email_ids: EmailIds) -> dict[str, Any]:
    """Delete several e-mails: moved to Trash, or deleted for good when already in Trash.
    Reports {moved_to_trash,deleted,not_found}; an error only when none of the ids exists."""
    me = _me(call)
    hits, misses = _batch(call, me, email_ids)
    trashed, deleted = domain.discard(call.session, me.id, hits)
    return {"moved_to_trash": [str(pk) for pk in trashed], "deleted": [str(pk) for pk in deleted],
            "not_found": misses}


# --- drafts -----------------------------------------------------------------------------------

def _draft(call: Call, me: Account, draft_id: str) -> EmailDraft:
    draft = call.session.get(EmailDraft, _pk(draft_id, "draft_id"))
    if draft is None or draft.account_id != me.id:
        raise not_found(f"draft '{draft_id}' does not exist", hint="get_drafts lists the drafts")
    return draft


@toolbox.tool(rw="write")
def save_draft(call: Call, subject: Subject, body: Body, html_body: HtmlBody = None,
               to: Annotated[str | None, Field(description="To addresses, comma- or "
                                                           "semicolon-separated")] = None,
               cc: Cc = None, bcc: Bcc = None) -> dict[str, Any]:
    """Save a new draft (not sent): {id,subject,body,html_body,to,cc,bcc,updated_at}."""
    me = _me(call)
    draft = domain.add_draft(call.session, account_id=me.id, subject=subject, body=body,
                             html_body=html_body or None, to=_addresses(to, "to"),
                             cc=_addresses(cc, "cc"), bcc=_addresses(bcc, "bcc"),
                             updated_at=call.now)
    return domain.draft_view(draft)


@toolbox.tool(rw="read")
def get_drafts(call: Call, page: Page = 1,
               page_size: DraftPageSize = PAGE_SIZE) -> dict[str, Any]:
    """List your drafts, most recently updated first. Paged: page_size default 20, max 50;
    returns {drafts,total,page,page_size,total_pages}."""
    drafts, total = domain.list_drafts(call.session, _me(call).id, limit=page_size,
                                       offset=(page - 1) * page_size)
    return _envelope("drafts", drafts, total, page, page_size)


@toolbox.tool(rw="write")
def update_draft(call: Call, draft_id: DraftId,
                 subject: Annotated[str | None, Field(description="New subject")] = None,
                 body: Annotated[str | None, Field(description="New plain-text body")] = None,
                 html_body: Annotated[str | None, Field(
                     description="New HTML body ('' removes it)")] = None,
                 to: Annotated[str | None, Field(
                     description="New To addresses ('' clears)")] = None,
                 cc: Annotated[str | None, Field(
                     description="New Cc addresses ('' clears)")] = None,
                 bcc: Annotated[str | None, Field(
                     description="New Bcc addresses ('' clears)")] = None,
                 ) -> dict[str, Any]:
    """Change fields of a draft; only subject, body, html_body, to, cc and bcc can change,
    and fields left out stay as they are. Returns the draft."""
    me = _me(call)
    draft = _draft(call, me, draft_id)
    if all(v is None for v in (subject, body, html_body, to, cc, bcc)):
        raise invalid("give at least one of: subject, body, html_body, to, cc, bcc")
    if subject is not None:
        draft.subject = subject
    if body is not None:
        draft.body = body
    if html_body is not None:
        draft.html_body = html_body or None
    for field, value in (("to", to), ("cc", cc), ("bcc", bcc)):
        if value is not None:
            setattr(draft, field, domain.join_addresses(_addresses(value, field)))
    draft.updated_at = iso_z(call.now)
    return domain.draft_view(draft)


@toolbox.tool(rw="write", destructive=True)
def delete_draft(call: Call, draft_id: DraftId) -> dict[str, Any]:
    """Delete a draft for good: {deleted:draft_id}."""
    draft = _draft(call, _me(call), draft_id)
    call.session.delete(draft)
    return {"deleted": str(draft.id)}


# --- statistics -------------------------------------------------------------------------------

@toolbox.tool(rw="read")
def get_mailbox_stats(call: Call, folder_name: FolderName = None) -> dict[str, Any]:
    """Message and unread counts: one folder's {name,total,unread}, or without folder_name
    {total_emails,total_unread,folders:[{name,total,unread}]}."""
    me = _me(call)
    if folder_name is not None:
        return domain.folder_stats(call.session, me.id, _folder(call, me, folder_name).id)[0]
    folders = domain.folder_stats(call.session, me.id)
    return {"total_emails": sum(f["total"] for f in folders),
            "total_unread": sum(f["unread"] for f in folders), "folders": folders}


@toolbox.tool(rw="read")
def get_unread_count(call: Call, folder_name: FolderName = None) -> dict[str, Any]:
    """Unread e-mails in one folder, or in every folder (folder 'ALL') when folder_name is
    omitted: {folder,unread}."""
    me = _me(call)
    if folder_name is None:
        folders = domain.folder_stats(call.session, me.id)
        return {"folder": ALL_FOLDERS, "unread": sum(f["unread"] for f in folders)}
    stats = domain.folder_stats(call.session, me.id, _folder(call, me, folder_name).id)[0]
    return {"folder": stats["name"], "unread": stats["unread"]}


# --- files ------------------------------------------------------------------------------------

def _export_records(call: Call, me: Account, folder_id: int | None,
                    limit: int | None) -> list[dict[str, Any]]:
    """E-mails newest first, each attachment with its bytes in base64 `data_base64`."""
    records: list[dict[str, Any]] = []
    while limit is None or len(records) < limit:
        size = EXPORT_CHUNK if limit is None else min(EXPORT_CHUNK, limit - len(records))
        emails, _ = domain.list_emails(call.session, me.id, folder_id=folder_id, limit=size,
                                       offset=len(records))
        for email in emails:
            files = domain.attachments_of(call.session, int(email["id"]))
            email["attachments"] = [{"filename": a.filename, "size": len(a.data),
                                     "content_type": a.content_type,
                                     "data_base64": base64.b64encode(a.data).decode("ascii")}
                                    for a in files]
        records += emails
        if len(emails) < size:
            break
    return records


@toolbox.tool(rw="write", destructive=True, idempotent=True)
def export_emails(call: Call,
                  folder: Annotated[str | None, Field(
                      description="Folder to export (default INBOX)")] = None,
                  export_path: Annotated[str, Field(
                      description="Workspace path of the JSON file to write")
                  ] = "emails_export.json",
                  max_emails: Annotated[Int | None, Field(
                      ge=1, description="Export at most this many, newest first")] = None,
                  export_all_folders: Annotated[bool, Field(
                      description="Export every folder instead of one")] = False,
                  ) -> dict[str, Any]:
    """Write e-mails (newest first, attachments included as base64) to a JSON file in the
    workspace, replacing it if present: {path,count}. import_emails reads the same format."""
    me = _me(call)
    if export_all_folders and folder is not None:
        raise invalid("give folder or export_all_folders, not both")
    folder_id = None if export_all_folders else _folder(call, me, folder or INBOX).id
    target = _output_path(call, export_path)
    records = _export_records(call, me, folder_id, max_emails)
    document = {"account": me.address, "exported_at": iso_z(call.now), "count": len(records),
                "emails": records}
    write_bytes_atomic(target, json.dumps(document, ensure_ascii=False, indent=2).encode())
    return {"path": display(call.world, target), "count": len(records)}


class _ImportedAttachment(BaseModel):
    model_config = ConfigDict(extra="ignore")
    filename: str
    content_type: str | None = None
    data_base64: str


class _ImportedEmail(BaseModel):
    model_config = ConfigDict(extra="ignore")
    sender: str = Field(alias="from")
    to: list[str] | str = []
    cc: list[str] | str = []
    bcc: list[str] | str = []
    subject: str = ""
    body: str = ""
    html_body: str | None = None
    date: str
    read: bool = False
    important: bool = False
    folder: str | None = None
    message_id: str | None = None
    in_reply_to: str | None = None
    attachments: list[_ImportedAttachment] = []


def _imported_attachment(item: _ImportedAttachment) -> Attachment:
    name = PurePosixPath(item.filename.replace("\\", "/")).name
    if name in ("", ".", ".."):
        raise invalid(f"attachment filename '{item.filename}' is not a file name")
    try:
        data = base64.b64decode(item.data_base64, validate=True)
    except binascii.Error:
        raise invalid(f"attachment '{name}': data_base64 is not valid base64") from None
    return Attachment(name, item.content_type or domain.content_type_for(name), data)


def _import_one(call: Call, me: Account, item: Any, default: Folder,
                preserve_folders: bool) -> None:
    record = _ImportedEmail.model_validate(item)
    folder = default
    if preserve_folders and record.folder:
        folder = (domain.find_folder(call.session, me.id, record.folder)
                  or domain.add_folder(call.session, me.id, record.folder))
    name, sender = domain.split_address(record.sender)
    domain.store_copy(
        call.session, account_id=me.id, folder_id=folder.id, sender=sender, sender_name=name,
        to=record.to, cc=record.cc, bcc=record.bcc, subject=record.subject, body=record.body,
        date=record.date, html_body=record.html_body, message_id=record.message_id,
        in_reply_to=record.in_reply_to, read=record.read, important=record.important,
        attachments=[_imported_attachment(a) for a in record.attachments])


def _reason(exc: ToolFailure | ValidationError) -> str:
    if isinstance(exc, ToolFailure):
        return exc.message
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "e-mail"
    return f"{where}: {first['msg']}"


@toolbox.tool(rw="write")
def import_emails(call: Call,
                  import_path: Annotated[str, Field(
                      description="Workspace path of a JSON file (the export_emails format, "
                                  "or a JSON array of e-mails)")],
                  target_folder: Annotated[str | None, Field(
                      description="Folder for e-mails without one (default INBOX)")] = None,
                  preserve_folders: Annotated[bool, Field(
                      description="Put each e-mail in its own 'folder' (created if missing)")
                  ] = True) -> dict[str, Any]:
    """Import e-mails from a workspace JSON file into your mailbox; each needs from and date
    (with a time zone) and may have to, cc, bcc, subject, body, html_body, read, important,
    folder and attachments ({filename,data_base64}). Invalid entries are skipped:
    {imported,skipped:[{index,error}]}."""
    me = _me(call)
    source = resolve(call.world, import_path)
    if not source.is_file():
        raise not_found(f"'{import_path}' is not a file in the workspace")
    try:
        document = json.loads(source.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise invalid(f"'{import_path}' is not UTF-8 JSON: {exc}") from None
    items = document.get("emails") if isinstance(document, dict) else document
    if not isinstance(items, list):
        raise invalid("expected a JSON array of e-mails or an object with an 'emails' array")
    default = _folder(call, me, target_folder or INBOX)
    imported, skipped = 0, []
    for index, item in enumerate(items):
        try:
            with call.session.begin_nested():
                _import_one(call, me, item, default, preserve_folders)
            imported += 1
        except (ToolFailure, ValidationError) as exc:
            skipped.append({"index": index, "error": _reason(exc)})
    return {"imported": imported, "skipped": skipped}


@toolbox.tool(rw="write", destructive=True, idempotent=True)
def download_attachment(call: Call, email_id: EmailId,
                        attachment_filename: Annotated[str, Field(
                            description="Attachment file name, as listed in the e-mail")],
                        save_path: Annotated[str | None, Field(
                            description="Workspace path to write (default "
                                        "attachments/<email_id>/<filename>)")] = None,
                        ) -> dict[str, Any]:
    """Save an attachment's bytes into the workspace (replacing an existing file):
    {path,filename,size,content_type}."""
    me = _me(call)
    pk = _email_pk(call, me, email_id)
    files = domain.attachments_of(call.session, pk)
    match = next((a for a in files if a.filename == attachment_filename), None)
    if match is None:
        listed = ", ".join(a.filename for a in files) or "none"
        raise not_found(f"e-mail '{email_id}' has no attachment '{attachment_filename}'; "
                        f"it has: {listed}")
    target = _output_path(call, save_path or f"attachments/{pk}/{match.filename}")
    write_bytes_atomic(target, match.data)
    return {"path": display(call.world, target), "filename": match.filename,
            "size": len(match.data), "content_type": match.content_type}
