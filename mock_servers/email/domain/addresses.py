"""Address values: parsing the comma- or semicolon-separated lists tools take, and how senders
and HTML bodies are shown."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from mock_servers.core.errors import invalid

_ADDRESS = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*")
_ANGLE = re.compile(r"^(.*?)<([^<>]*)>$")
_SEPARATORS = re.compile(r"[,;]")
_TAG = re.compile(r"<[^>]*>")


def split_address(raw: str) -> tuple[str | None, str]:
    """`"Ann Lee" <Ann@x.org>` -> ("Ann Lee", "ann@x.org"); a bare address has no name.
    Anything that is not an address is INVALID_ARGUMENT."""
    text = raw.strip()
    name: str | None = None
    angle = _ANGLE.match(text)
    if angle:
        name = angle.group(1).strip().strip('"').strip() or None
        text = angle.group(2).strip()
    if not _ADDRESS.fullmatch(text):
        raise invalid(f"'{raw.strip()}' is not a valid e-mail address")
    return name, text.lower()


def normalize_address(raw: str) -> str:
    """The lower-case address inside `raw` (`Name <a@b.org>` or `a@b.org`)."""
    return split_address(raw)[1]


def parse_addresses(value: str | Iterable[str] | None) -> list[str]:
    """Comma- or semicolon-separated addresses (or an iterable of them), normalised, each once."""
    if value is None:
        return []
    parts = _SEPARATORS.split(value) if isinstance(value, str) else value
    return list(dict.fromkeys(normalize_address(p) for p in parts if p.strip()))


def join_addresses(addresses: Iterable[str]) -> str | None:
    """How draft address lists are stored: `a@x.org, b@y.org`, or None when empty."""
    return ", ".join(addresses) or None


def visible_html(html_body: str | None, body: str) -> str | None:
    """`html_body`, or None when it is empty or only repeats the plain body."""
    if not html_body:
        return None
    text = html.unescape(_TAG.sub(" ", html_body))
    return None if text.split() == body.split() else html_body


def display_from(address: str, name: str | None) -> str:
    return f"{name} <{address}>" if name else address
