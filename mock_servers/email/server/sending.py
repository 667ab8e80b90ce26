"""Sending tools: new messages with workspace files attached, replies and forwards."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from mock_servers.core.errors import invalid, not_found
from mock_servers.core.files import resolve
from mock_servers.core.toolkit import Call
from mock_servers.email import domain
from mock_servers.email.domain import Account, Attachment
from mock_servers.email.server import base
from mock_servers.email.server.base import Bcc, Body, Cc, EmailId, HtmlBody, Subject, To, toolbox

_REPLY_PREFIX = re.compile(r"^\s*re:", re.IGNORECASE)
_FORWARD_PREFIX = re.compile(r"^\s*(fwd?|fw):", re.IGNORECASE)


def _read_attachments(call: Call, paths: list[str] | None) -> list[Attachment]:
    """Read workspace files at send time (checked first by name and size); the message stores
    their bytes."""
    files: list[Path] = []
    for raw in paths or []:
        target = resolve(call.world, raw)
        if target.is_dir():
            raise invalid(f"attachment '{raw}' is a directory; attach a file (zip it first)")
        if not target.is_file():
            raise not_found(f"attachment '{raw}' does not exist in the workspace")
        files.append(target)
    domain.check_attachments((p.name for p in files), sum(p.stat().st_size for p in files))
    return [Attachment.of(p.name, p.read_bytes()) for p in files]


def _send(call: Call, me: Account, *, to: list[str], cc: list[str], bcc: list[str],
          subject: str, body: str, html_body: str | None, attachments: list[Attachment],
          in_reply_to: str | None = None) -> dict[str, Any]:
    if not to:
        raise invalid("to: at least one recipient address is required")
    delivery = domain.send(call.session, me, to=to, cc=cc, bcc=bcc, subject=subject, body=body,
                           html_body=html_body or None, in_reply_to=in_reply_to, attachments=attachments,
                           date=call.now)
    assert delivery.sent_pk is not None, "the logged-in sender always has a Sent folder"
    return {**base.email(call, me, delivery.sent_pk), "delivered_to": delivery.delivered_to,
            "undeliverable": delivery.undeliverable}


@toolbox.tool(rw="write", core=True)
def send_email(call: Call, to: To, subject: Subject, body: Body, html_body: HtmlBody = None,
               cc: Cc = None, bcc: Bcc = None,
               attachments: Annotated[list[str] | None, Field(
                   description="Workspace file paths to attach (read now; 25 MB per message)")
               ] = None) -> dict[str, Any]:
    """Send an e-mail. A copy goes to your Sent folder and one to the INBOX of every recipient
    (to, cc, bcc) that has an account here, yourself included; other addresses are reported
    as undeliverable. Attachments are workspace files, stored as bytes (25 MB per message).
    Returns the Sent copy plus {delivered_to,undeliverable}."""
    me = base.me(call)
    return _send(call, me, to=base.addresses(to, "to"), cc=base.addresses(cc, "cc"),
                 bcc=base.addresses(bcc, "bcc"), subject=subject, body=body,
                 html_body=html_body, attachments=_read_attachments(call, attachments))


@toolbox.tool(rw="write")
def reply_email(call: Call, email_id: EmailId, body: Body, html_body: HtmlBody = None,
                cc: Cc = None, bcc: Bcc = None,
                reply_all: Annotated[bool, Field(description="Also reply to every original To "
                                                             "and Cc recipient")] = False,
                ) -> dict[str, Any]:
    """Reply to an e-mail: goes to its sender (to its recipients if you sent it), subject
    prefixed 'Re: ' once, In-Reply-To set. reply_all adds every original To and Cc except
    you. Delivered like send_email; returns the Sent copy plus {delivered_to,undeliverable}."""
    me = base.me(call)
    pk = base.email_pk(call, me, email_id)
    original = base.email(call, me, pk)
    sender, mine = domain.sender_of(call.session, pk), me.address
    to = list(original["to"] or [mine]) if sender == mine else [sender]
    extra_cc: list[str] = []
    if reply_all:
        to += [a for a in original["to"] if a != mine]
        extra_cc = [a for a in original["cc"] if a != mine]
    to = list(dict.fromkeys(to))
    cc_list = [a for a in dict.fromkeys(extra_cc + base.addresses(cc, "cc")) if a not in to]
    subject = original["subject"]
    return _send(call, me, to=to, cc=cc_list, bcc=base.addresses(bcc, "bcc"),
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
def forward_email(call: Call, email_id: EmailId, to: To,
                  body: Annotated[str, Field(description="Text above the quoted original")] = "",
                  html_body: HtmlBody = None, cc: Cc = None, bcc: Bcc = None,
                  ) -> dict[str, Any]:
    """Forward an e-mail: subject prefixed 'Fwd: ' once, your text followed by the quoted
    original, and the original attachments (their bytes) re-attached. Delivered like
    send_email; returns the Sent copy plus {delivered_to,undeliverable}."""
    me = base.me(call)
    pk = base.email_pk(call, me, email_id)
    original = base.email(call, me, pk)
    quoted = _forwarded(original)
    subject = original["subject"]
    return _send(call, me, to=base.addresses(to, "to"), cc=base.addresses(cc, "cc"),
                 bcc=base.addresses(bcc, "bcc"),
                 subject=subject if _FORWARD_PREFIX.match(subject) else f"Fwd: {subject}",
                 body=f"{body}\n\n{quoted}" if body else quoted, html_body=html_body,
                 attachments=domain.attachments_of(call.session, pk))
