"""The mail credentials file of the workspace: written and read back."""

from __future__ import annotations

import pytest

from loca.core.credentials import credentials_text, parse_credentials


def test_credentials_round_trip() -> None:
    text = credentials_text("Accounts payable mailbox", "ap@firm.com", "s3cret-pw", "firm.com")
    assert text.startswith("Accounts payable mailbox\n") and "imap.firm.com" in text
    assert parse_credentials(text) == ("ap@firm.com", "s3cret-pw")
    with pytest.raises(ValueError):
        parse_credentials("Email: ap@firm.com\n")
