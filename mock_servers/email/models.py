"""Mail tables: one row per mailbox copy of a message. Instants are UTC strings
`YYYY-MM-DDTHH:MM:SSZ`."""

from __future__ import annotations

from sqlalchemy import Column, Index, LargeBinary, UniqueConstraint
from sqlmodel import Field, SQLModel

DEFAULT_FOLDERS = ("INBOX", "Sent", "Drafts", "Trash", "Spam", "Archive")


class EmailAccount(SQLModel, table=True):
    __tablename__ = "email_account"
    id: int | None = Field(default=None, primary_key=True)
    address: str = Field(unique=True)
    name: str
    password_hash: str
    created_at: str


class EmailFolder(SQLModel, table=True):
    __tablename__ = "email_folder"
    __table_args__ = (UniqueConstraint("account_id", "name"),)
    id: int | None = Field(default=None, primary_key=True)
    account_id: int = Field(foreign_key="email_account.id", index=True)
    name: str
    system: bool = False


class EmailMessage(SQLModel, table=True):
    __tablename__ = "email_message"
    __table_args__ = (
        Index("ix_email_message_listing", "folder_id", "date", "id"),
        Index("ix_email_message_unread", "folder_id", "read"),
        {"sqlite_autoincrement": True},  # ids are shown to the agent: never reuse one
    )
    id: int | None = Field(default=None, primary_key=True)
    account_id: int = Field(foreign_key="email_account.id", index=True)
    folder_id: int = Field(foreign_key="email_folder.id", index=True)
    message_id: str  # RFC 5322 Message-ID, shared by all copies of one sent message
    in_reply_to: str | None = None
    from_addr: str
    from_name: str | None = None
    date: str
    subject: str
    body: str
    html_body: str | None = None
    read: bool = False
    important: bool = False


class EmailRecipient(SQLModel, table=True):
    __tablename__ = "email_recipient"
    id: int | None = Field(default=None, primary_key=True)
    message_pk: int = Field(foreign_key="email_message.id", index=True)
    kind: str  # to / cc / bcc
    address: str


class EmailAttachment(SQLModel, table=True):
    __tablename__ = "email_attachment"
    id: int | None = Field(default=None, primary_key=True)
    message_pk: int = Field(foreign_key="email_message.id", index=True)
    filename: str
    content_type: str
    size: int
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class EmailDraft(SQLModel, table=True):
    __tablename__ = "email_draft"
    __table_args__ = ({"sqlite_autoincrement": True},)
    id: int | None = Field(default=None, primary_key=True)
    account_id: int = Field(foreign_key="email_account.id", index=True)
    subject: str
    body: str
    html_body: str | None = None
    to: str | None = None
    cc: str | None = None
    bcc: str | None = None
    updated_at: str



class EmailCounter(SQLModel, table=True):
    """How many Message-IDs the world has issued (the sequence they derive from)."""

    __tablename__ = "email_counter"
    id: int = Field(default=1, primary_key=True)
    issued: int = 0


class EmailTransfer(SQLModel, table=True):
    """A message the send tools handed to the mail system: its envelope and content as sent and
    the copies it stored (`[[row id, account id, folder id], ...]`, the Sent copy first). It is
    the outside world's record of what left: no tool lists, changes or removes it."""

    __tablename__ = "email_transfer"
    __table_args__ = ({"sqlite_autoincrement": True},)
    id: int | None = Field(default=None, primary_key=True)
    message_id: str
    account_id: int = Field(foreign_key="email_account.id")
    from_addr: str
    date: str
    subject: str
    body: str
    html_body: str | None = None
    to_json: str  # JSON arrays of addresses
    cc_json: str
    bcc_json: str
    copies_json: str


class EmailTransferAttachment(SQLModel, table=True):
    __tablename__ = "email_transfer_attachment"
    id: int | None = Field(default=None, primary_key=True)
    transfer_id: int = Field(foreign_key="email_transfer.id", index=True)
    filename: str
    content_type: str
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
