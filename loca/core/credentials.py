"""The mail credentials file a task puts in the workspace (a titled block with the mailbox's
address, password and servers), and its parser, which oracles and tests read it with."""

from __future__ import annotations

import re

_FIELD = re.compile(r"^(Email|Password): (\S+)$", re.MULTILINE)


def credentials_text(title: str, address: str, password: str, host: str) -> str:
    """The content of a credentials file."""
    return (f"{title}\nEmail: {address}\nPassword: {password}\n"
            f"IMAP server: imap.{host} (port 993, SSL)\nSMTP server: smtp.{host} (port 465, SSL)\n")


def parse_credentials(text: str) -> tuple[str, str]:
    """(address, password) from a credentials file."""
    found = dict(_FIELD.findall(text))
    if set(found) != {"Email", "Password"}:
        raise ValueError("the credentials file names no e-mail address and password")
    return found["Email"], found["Password"]
