"""Message tools: listing, search, reading, and moving, flagging and deleting e-mails."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from mock_servers.core.errors import invalid
from mock_servers.core.toolkit import Call
from mock_servers.email import domain
from mock_servers.email.domain import ALL_FOLDERS, INBOX
from mock_servers.email.server import base
from mock_servers.email.server.base import (
    PAGE_SIZE,
    EmailId,
    EmailIds,
    FolderParam,
    Page,
    PageSize,
    TargetFolder,
    toolbox,
)


@toolbox.tool(rw="read", core=True)
def get_emails(call: Call, folder: FolderParam = INBOX, page: Page = 1,
               page_size: PageSize = PAGE_SIZE) -> dict[str, Any]:
    """List the e-mails of a folder (default INBOX), newest first (date desc, then id desc),
    with full bodies. Paged: page_size default 20, max 50; returns
    {emails,total,page,page_size,total_pages}. Does not change read flags."""
    me = base.me(call)
    folder_id = base.folder(call, me, folder).id
    emails, total = domain.list_emails(call.session, me.id, folder_id=folder_id, page=page,
                                       size=page_size)
    return base.envelope("emails", emails, total, page, page_size)


@toolbox.tool(rw="write", core=True, idempotent=True)
def read_email(call: Call, email_id: EmailId) -> dict[str, Any]:
    """Read one e-mail with its body, recipients and attachment list; marks it read."""
    me = base.me(call)
    pk = base.email_pk(call, me, email_id)
    domain.set_flag(call.session, [pk], "read", True)
    return base.email(call, me, pk)


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
    me = base.me(call)
    if not query.strip():
        raise invalid("query must not be empty")
    folder_id = None if folder.strip().upper() == ALL_FOLDERS else \
        base.folder(call, me, folder).id
    emails, total = domain.list_emails(call.session, me.id, folder_id=folder_id,
                                       query=query.strip(), page=page, size=page_size)
    return base.envelope("emails", emails, total, page, page_size)


@toolbox.tool(rw="read")
def get_email_headers(call: Call, email_id: EmailId) -> dict[str, Any]:
    """The headers of one e-mail (no body): {message_id,in_reply_to,from,to,cc,subject,date,
    content_type}. Does not change the read flag."""
    me = base.me(call)
    email = base.email(call, me, base.email_pk(call, me, email_id))
    content_type = ("multipart/mixed" if email["has_attachments"] else
                    "multipart/alternative" if email["html_body"] else "text/plain")
    return {"message_id": email["message_id"], "in_reply_to": email["in_reply_to"],
            "from": email["from"], "to": email["to"], "cc": email["cc"],
            "subject": email["subject"], "date": email["date"], "content_type": content_type}


@toolbox.tool(rw="write", destructive=True)
def delete_email(call: Call, email_id: EmailId) -> dict[str, Any]:
    """Delete an e-mail: it moves to Trash, or is deleted for good when already in Trash.
    Returns {id,action} with action moved_to_trash or deleted."""
    me = base.me(call)
    pk = base.email_pk(call, me, email_id)
    trashed, _ = domain.discard(call.session, me.id, [pk])
    return {"id": str(pk), "action": "moved_to_trash" if trashed else "deleted"}


@toolbox.tool(rw="write", idempotent=True)
def move_email(call: Call, email_id: EmailId, target_folder: TargetFolder) -> dict[str, Any]:
    """Move one e-mail to another folder; returns the moved e-mail. Unknown folder is
    NOT_FOUND."""
    me = base.me(call)
    pk = base.email_pk(call, me, email_id)
    domain.move_messages(call.session, [pk], base.folder(call, me, target_folder).id)
    return base.email(call, me, pk)


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
    me = base.me(call)
    hits, misses = base.batch(call, me, email_ids)
    domain.set_flag(call.session, hits, *_FLAGS[status])
    return {"updated": [str(pk) for pk in hits], "not_found": misses}


@toolbox.tool(rw="write", idempotent=True)
def move_emails(call: Call, email_ids: EmailIds, target_folder: TargetFolder) -> dict[str, Any]:
    """Move several e-mails to a folder. Reports {moved,not_found}; an error only when none
    of the ids exists or the folder does not."""
    me = base.me(call)
    folder = base.folder(call, me, target_folder)
    hits, misses = base.batch(call, me, email_ids)
    domain.move_messages(call.session, hits, folder.id)
    return {"moved": [str(pk) for pk in hits], "not_found": misses}


@toolbox.tool(rw="write", destructive=True)
def delete_emails(call: Call, email_ids: EmailIds) -> dict[str, Any]:
    """Delete several e-mails: moved to Trash, or deleted for good when already in Trash.
    Reports {moved_to_trash,deleted,not_found}; an error only when none of the ids exists."""
    me = base.me(call)
    hits, misses = base.batch(call, me, email_ids)
    trashed, deleted = domain.discard(call.session, me.id, hits)
    return {"moved_to_trash": [str(pk) for pk in trashed], "deleted": [str(pk) for pk in deleted],
            "not_found": misses}
