"""Drafts: unsent messages of one account, address lists stored as `a@x.org, b@y.org`."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.core import paging
from mock_servers.core.times import instant
from mock_servers.email.domain.addresses import join_addresses, parse_addresses, visible_html
from mock_servers.email.models import EmailDraft


class _DraftRow(NamedTuple):
    id: int
    subject: str
    body: str
    html_body: str | None
    to: str | None
    cc: str | None
    bcc: str | None
    updated_at: str


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


def list_drafts(session: Session, account_id: int, *, page: int,
                size: int) -> tuple[list[dict[str, Any]], int]:
    """One page of the account's drafts, most recently updated first; plus the total."""
    rows, total = paging.fetch_page(
        session, _DraftRow, 'SELECT id, subject, body, html_body, "to", cc, bcc, updated_at '
                            "FROM email_draft WHERE account_id = ? "
                            "ORDER BY updated_at DESC, id DESC",
        "SELECT count(*) FROM email_draft WHERE account_id = ?", (account_id,), page, size)
    return [draft_view(r) for r in rows], total
