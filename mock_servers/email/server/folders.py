"""Folder tools and message counts per folder."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mock_servers.core.toolkit import Call
from mock_servers.email import domain
from mock_servers.email.domain import ALL_FOLDERS
from mock_servers.email.server import base
from mock_servers.email.server.base import FolderName, toolbox


@toolbox.tool(rw="read")
def get_folders(call: Call) -> dict[str, Any]:
    """Every folder of the mailbox with its message and unread counts:
    {folders:[{name,total,unread}]}."""
    return {"folders": domain.folder_stats(call.session, base.me(call).id)}


@toolbox.tool(rw="write")
def create_folder(call: Call,
                  folder_name: Annotated[str, Field(description="New folder name")],
                  ) -> dict[str, Any]:
    """Create a folder. Names are unique ignoring case (ALREADY_EXISTS); 'ALL' is reserved."""
    folder = domain.add_folder(call.session, base.me(call).id, folder_name)
    return {"name": folder.name, "total": 0, "unread": 0}


@toolbox.tool(rw="write", destructive=True)
def delete_folder(call: Call,
                  folder_name: Annotated[str, Field(description="Folder to delete")],
                  ) -> dict[str, Any]:
    """Delete a user folder; its e-mails move to Trash. Default folders (INBOX, Sent, Drafts,
    Trash, Spam, Archive) are FAILED_PRECONDITION."""
    me = base.me(call)
    folder = base.folder(call, me, folder_name)
    moved = domain.remove_folder(call.session, me.id, folder)
    return {"deleted": folder.name, "moved_to_trash": moved}


@toolbox.tool(rw="read")
def get_mailbox_stats(call: Call, folder_name: FolderName = None) -> dict[str, Any]:
    """Message and unread counts: one folder's {name,total,unread}, or without folder_name
    {total_emails,total_unread,folders:[{name,total,unread}]}."""
    me = base.me(call)
    if folder_name is not None:
        return domain.folder_stats(call.session, me.id, base.folder(call, me, folder_name).id)[0]
    folders = domain.folder_stats(call.session, me.id)
    return {"total_emails": sum(f["total"] for f in folders),
            "total_unread": sum(f["unread"] for f in folders), "folders": folders}


@toolbox.tool(rw="read")
def get_unread_count(call: Call, folder_name: FolderName = None) -> dict[str, Any]:
    """Unread e-mails in one folder, or in every folder (folder 'ALL') when folder_name is
    omitted: {folder,unread}."""
    me = base.me(call)
    if folder_name is None:
        folders = domain.folder_stats(call.session, me.id)
        return {"folder": ALL_FOLDERS, "unread": sum(f["unread"] for f in folders)}
    stats = domain.folder_stats(call.session, me.id, base.folder(call, me, folder_name).id)[0]
    return {"folder": stats["name"], "unread": stats["unread"]}
