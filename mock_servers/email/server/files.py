"""Tools that move mail to and from workspace files: export, import and attachment download."""

from __future__ import annotations

import base64
import binascii
import json
from itertools import count
from pathlib import Path, PurePosixPath
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loca.core.world import write_bytes_atomic
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.files import display, resolve
from mock_servers.core.times import instant
from mock_servers.core.toolkit import Call
from mock_servers.core.types import Int
from mock_servers.email import domain
from mock_servers.email.domain import INBOX, Account, Attachment, Folder
from mock_servers.email.server import base
from mock_servers.email.server.base import EmailId, toolbox

EXPORT_CHUNK = 500
MAX_EXPORT_ATTACHMENT_BYTES = 50 * 1024 * 1024
MAX_IMPORT_BYTES = 100 * 1024 * 1024


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


def _export_records(call: Call, me: Account, folder_id: int | None,
                    limit: int | None) -> list[dict[str, Any]]:
    """E-mails newest first, each attachment with its bytes in base64 `data_base64`; at most
    MAX_EXPORT_ATTACHMENT_BYTES of attachments in all (RESOURCE_EXHAUSTED)."""
    records: list[dict[str, Any]] = []
    attached = 0
    for page in count(1):
        emails, _ = domain.list_emails(call.session, me.id, folder_id=folder_id, page=page,
                                       size=EXPORT_CHUNK)
        for email in emails[:None if limit is None else limit - len(records)]:
            files = domain.attachments_of(call.session, int(email["id"]))
            attached += sum(len(a.data) for a in files)
            if attached > MAX_EXPORT_ATTACHMENT_BYTES:
                raise ToolFailure(Code.RESOURCE_EXHAUSTED,
                                  f"the e-mails hold more than {MAX_EXPORT_ATTACHMENT_BYTES} "
                                  "bytes (50 MB) of attachments, the most one export takes",
                                  hint="export fewer with max_emails, or one folder at a time")
            email["attachments"] = [{"filename": a.filename, "size": len(a.data),
                                     "content_type": a.content_type,
                                     "data_base64": base64.b64encode(a.data).decode("ascii")}
                                    for a in files]
            records.append(email)
        if len(emails) < EXPORT_CHUNK or len(records) == limit:
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
    """Write e-mails (newest first, attachments included as base64, 50 MB of them at most) to
    a JSON file in the workspace, replacing it if present: {path,count}. import_emails reads
    the same format."""
    me = base.me(call)
    if export_all_folders and folder is not None:
        raise invalid("give folder or export_all_folders, not both")
    folder_id = None if export_all_folders else base.folder(call, me, folder or INBOX).id
    target = _output_path(call, export_path)
    records = _export_records(call, me, folder_id, max_emails)
    document = {"account": me.address, "exported_at": instant(call.now), "count": len(records),
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
    return Attachment.of(name, data, item.content_type)


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


def _import_items(call: Call, import_path: str) -> list[Any]:
    """The e-mail entries of a workspace JSON file of at most MAX_IMPORT_BYTES."""
    source = resolve(call.world, import_path)
    if not source.is_file():
        raise not_found(f"'{import_path}' is not a file in the workspace")
    if source.stat().st_size > MAX_IMPORT_BYTES:
        raise ToolFailure(Code.RESOURCE_EXHAUSTED,
                          f"'{import_path}' has more than {MAX_IMPORT_BYTES} bytes (100 MB), "
                          "the most one import reads", hint="split it into smaller files")
    try:
        document = json.loads(source.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise invalid(f"'{import_path}' is not UTF-8 JSON: {exc}") from None
    items = document.get("emails") if isinstance(document, dict) else document
    if not isinstance(items, list):
        raise invalid("expected a JSON array of e-mails or an object with an 'emails' array")
    return items


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
    """Import e-mails from a workspace JSON file (100 MB at most) into your mailbox; each needs
    from and date (with a time zone) and may have to, cc, bcc, subject, body, html_body, read,
    important, folder and attachments ({filename,data_base64}). Invalid entries are skipped:
    {imported,skipped:[{index,error}]}."""
    me = base.me(call)
    items = _import_items(call, import_path)
    default = base.folder(call, me, target_folder or INBOX)
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
    me = base.me(call)
    pk = base.email_pk(call, me, email_id)
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
