"""The mailbox domain shared by the e-mail tools, world generators and checkers: accounts and
the login, folders, delivery of one message to every mailbox it reaches, the `Email`
projection, and drafts.

Nothing here commits; the caller owns the transaction. Queries are plain SQL on the session's
DB-API connection (`core.sql`): a tool call runs a handful of them, and SQLAlchemy's
per-statement cost would dominate."""

from mock_servers.email.domain.accounts import (
    SERVER,
    Account,
    add_account,
    add_accounts,
    check_login,
    current_account,
    find_account,
    list_accounts,
    log_in,
    log_out,
)
from mock_servers.email.domain.addresses import (
    display_from,
    join_addresses,
    normalize_address,
    parse_addresses,
    split_address,
    visible_html,
)
from mock_servers.email.domain.delivery import (
    MAX_MESSAGE_BYTES,
    Attachment,
    Delivery,
    check_attachments,
    deliver,
    next_message_id,
    store_copy,
)
from mock_servers.email.domain.drafts import add_draft, draft_view, list_drafts
from mock_servers.email.domain.folders import (
    ALL_FOLDERS,
    INBOX,
    SENT,
    TRASH,
    Folder,
    add_folder,
    find_folder,
    folder_stats,
    remove_folder,
    trash_of,
)
from mock_servers.email.domain.mailboxes import Mailbox, forget_lookups, mailboxes
from mock_servers.email.domain.messages import (
    attachments_of,
    discard,
    emails_by_pk,
    list_emails,
    move_messages,
    owned,
    purge_messages,
    sender_of,
    set_flag,
)
from mock_servers.email.domain.transfers import Transfer, copy_problems, send, transfer_attachments, transfers

__all__ = [
    "ALL_FOLDERS", "INBOX", "MAX_MESSAGE_BYTES", "SENT", "SERVER", "TRASH", "Account",
    "Attachment", "Delivery", "Folder", "Mailbox", "Transfer", "add_account", "add_accounts", "add_draft", "add_folder",
    "attachments_of", "check_attachments", "check_login", "copy_problems", "current_account", "deliver",
    "discard", "display_from", "draft_view", "emails_by_pk", "find_account", "find_folder",
    "folder_stats", "forget_lookups", "join_addresses", "list_accounts", "list_drafts",
    "list_emails", "log_in", "log_out", "mailboxes", "move_messages", "next_message_id",
    "normalize_address", "owned", "parse_addresses", "purge_messages", "remove_folder",
    "send", "sender_of", "set_flag", "split_address", "store_copy", "transfer_attachments", "transfers",
    "trash_of", "visible_html",
]
