"""Address -> mailbox lookups made while delivering, kept for the life of the session (in
`session.info`), so a generator delivering thousands of messages in one transaction looks each
address up once. Every domain function that adds or removes accounts or folders drops the
cache; code that changes those tables by other means must call `forget_lookups`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.errors import not_found

_CACHE_KEY = "email.lookups"


@dataclass
class Mailbox:
    """An account's id and its folders."""

    address: str
    account_id: int
    folders: dict[str, int]  # lower-case folder name -> folder id

    def folder(self, name: str) -> int:
        folder_id = self.folders.get(name.lower())
        if folder_id is None:
            raise not_found(f"{self.address} has no folder '{name}'")
        return folder_id


class _Lookups:
    """Address -> mailbox, None for addresses not in the world."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.boxes: dict[str, Mailbox | None] = {}

    def mailboxes(self, addresses: Sequence[str]) -> dict[str, Mailbox | None]:
        missing = [a for a in dict.fromkeys(addresses) if a not in self.boxes]
        if missing:
            self.boxes.update(dict.fromkeys(missing))
            rows = sql.run(self.session,
                           "SELECT a.address, a.id, f.name, f.id FROM email_account a "
                           "JOIN email_folder f ON f.account_id = a.id "
                           f"WHERE a.address IN ({sql.marks(len(missing))})", missing)
            for address, account_id, folder_name, folder_id in rows:
                box = self.boxes[address] or Mailbox(address, account_id, {})
                box.folders[folder_name.lower()] = folder_id
                self.boxes[address] = box
        return {a: self.boxes[a] for a in addresses}


def mailboxes(session: Session, addresses: Sequence[str]) -> dict[str, Mailbox | None]:
    """The mailbox of each address (normalised), None where the world has no such account."""
    cached = session.info.get(_CACHE_KEY)
    if cached is None:
        cached = session.info[_CACHE_KEY] = _Lookups(session)
    return cached.mailboxes(addresses)


def forget_lookups(session: Session) -> None:
    """Drop the address/folder cache of `session` (after accounts or folders changed)."""
    session.info.pop(_CACHE_KEY, None)
