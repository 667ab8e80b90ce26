"""Draft tools: save, list, change and delete unsent messages."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mock_servers.core.errors import invalid, not_found
from mock_servers.core.times import instant
from mock_servers.core.toolkit import Call
from mock_servers.email import domain
from mock_servers.email.domain import Account
from mock_servers.email.models import EmailDraft
from mock_servers.email.server import base
from mock_servers.email.server.base import (
    PAGE_SIZE,
    Bcc,
    Body,
    Cc,
    DraftId,
    DraftPageSize,
    HtmlBody,
    Page,
    Subject,
    toolbox,
)


def _draft(call: Call, me: Account, draft_id: str) -> EmailDraft:
    draft = call.session.get(EmailDraft, base.pk(draft_id, "draft_id"))
    if draft is None or draft.account_id != me.id:
        raise not_found(f"draft '{draft_id}' does not exist", hint="get_drafts lists the drafts")
    return draft


@toolbox.tool(rw="write")
def save_draft(call: Call, subject: Subject, body: Body, html_body: HtmlBody = None,
               to: Annotated[str | None, Field(description="To addresses, comma- or "
                                                           "semicolon-separated")] = None,
               cc: Cc = None, bcc: Bcc = None) -> dict[str, Any]:
    """Save a new draft (not sent): {id,subject,body,html_body,to,cc,bcc,updated_at}."""
    me = base.me(call)
    draft = domain.add_draft(call.session, account_id=me.id, subject=subject, body=body,
                             html_body=html_body or None, to=base.addresses(to, "to"),
                             cc=base.addresses(cc, "cc"), bcc=base.addresses(bcc, "bcc"),
                             updated_at=call.now)
    return domain.draft_view(draft)


@toolbox.tool(rw="read")
def get_drafts(call: Call, page: Page = 1,
               page_size: DraftPageSize = PAGE_SIZE) -> dict[str, Any]:
    """List your drafts, most recently updated first. Paged: page_size default 20, max 50;
    returns {drafts,total,page,page_size,total_pages}."""
    drafts, total = domain.list_drafts(call.session, base.me(call).id, page=page,
                                       size=page_size)
    return base.envelope("drafts", drafts, total, page, page_size)


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
    me = base.me(call)
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
            setattr(draft, field, domain.join_addresses(base.addresses(value, field)))
    draft.updated_at = instant(call.now)
    return domain.draft_view(draft)


@toolbox.tool(rw="write", destructive=True)
def delete_draft(call: Call, draft_id: DraftId) -> dict[str, Any]:
    """Delete a draft for good: {deleted:draft_id}."""
    draft = _draft(call, base.me(call), draft_id)
    call.session.delete(draft)
    return {"deleted": str(draft.id)}
