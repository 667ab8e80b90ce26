"""What every e-mail tool shares: the toolbox, parameter types, the logged-in account, and
id, folder and address arguments turned into domain values."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from mock_servers.core import paging
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.toolkit import Call, Toolbox
from mock_servers.core.types import Int, page_param, size_param
from mock_servers.email import domain
from mock_servers.email.domain import Account, Folder

toolbox = Toolbox("email", list_keys=("emails", "drafts", "folders", "users"),
                  page_keys=("page", "page_size"),
                  snapshot_ignore={"email_message": frozenset({"read"}), "email_counter": None},
                  instructions="An e-mail account: folders, messages, drafts and "
                  "attachments. Log in first unless the world logs you in.")
build = toolbox.build

PAGE_SIZE, MAX_PAGE_SIZE = 20, 50
_LOGIN_HINT = "call login with your e-mail address and password"
_FIND_HINT = "use get_emails or search_emails to find e-mail ids"
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
To = Annotated[str, Field(description="Recipient addresses, comma- or semicolon-separated")]
Cc = Annotated[str | None, Field(description="Cc addresses, comma- or semicolon-separated")]
Bcc = Annotated[str | None, Field(description="Bcc addresses, comma- or semicolon-separated")]
FolderParam = Annotated[str, Field(description="Folder name (see get_folders)")]
FolderName = Annotated[str | None, Field(description="Folder name; omit for every folder")]
TargetFolder = Annotated[str, Field(description="Destination folder name")]


def me(call: Call) -> Account:
    """The logged-in account, else UNAUTHENTICATED."""
    account = domain.current_account(call.session)
    if account is None:
        raise ToolFailure(Code.UNAUTHENTICATED, "no account is logged in", hint=_LOGIN_HINT)
    return account


def _as_pk(value: str) -> int | None:
    text = value.strip()
    return int(text) if _DIGITS.fullmatch(text) else None


def pk(value: str, param: str) -> int:
    """The row id in a string id argument, else INVALID_ARGUMENT naming `param`."""
    number = _as_pk(value)
    if number is None:
        raise invalid(f"{param} must be a numeric id such as '42' (received '{value}')")
    return number


def email_pk(call: Call, account: Account, email_id: str) -> int:
    """The row id of one of the account's messages, else NOT_FOUND."""
    number = pk(email_id, "email_id")
    if not domain.owned(call.session, account.id, [number]):
        raise not_found(f"e-mail '{email_id}' is not in the mailbox of {account.address}",
                        hint=_FIND_HINT)
    return number


def email(call: Call, account: Account, number: int) -> dict[str, Any]:
    """The `Email` projection of one of the account's messages."""
    return domain.emails_by_pk(call.session, account.id, [number])[0]


def folder(call: Call, account: Account, name: str) -> Folder:
    """The account's folder `name` (any case), else NOT_FOUND."""
    found = domain.find_folder(call.session, account.id, name)
    if found is None:
        raise not_found(f"folder '{name}' does not exist", hint="get_folders lists the folders")
    return found


def addresses(value: str | None, param: str) -> list[str]:
    """The addresses of an argument; a bad one is INVALID_ARGUMENT naming `param`."""
    try:
        return domain.parse_addresses(value)
    except ToolFailure as exc:
        raise invalid(f"{param}: {exc.message}") from None


def envelope(key: str, items: list[dict[str, Any]], total: int, page: int,
             page_size: int) -> dict[str, Any]:
    """The e-mail service's page: `{<key>,total,page,page_size,total_pages}`."""
    return {key: items, "total": total, "page": page, "page_size": page_size,
            "total_pages": paging.total_pages(total, page_size)}


def batch(call: Call, account: Account, email_ids: list[str]) -> tuple[list[int], list[str]]:
    """(row ids found in the mailbox, given ids that are not); NOT_FOUND when none is found."""
    given = {raw: _as_pk(raw) for raw in dict.fromkeys(i.strip() for i in email_ids)}
    found = domain.owned(call.session, account.id,
                         [number for number in given.values() if number is not None])
    hits = list(dict.fromkeys(number for number in given.values() if number in found))
    misses = [raw for raw, number in given.items() if number not in found]
    if not hits:
        raise not_found(f"none of the e-mail ids is in the mailbox: {', '.join(misses)}",
                        hint=_FIND_HINT)
    return hits, misses
