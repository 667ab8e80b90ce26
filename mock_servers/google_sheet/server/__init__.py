"""Google Sheets tools (the 18 of docs/reference/servers.md). Each module registers its tools on the
shared `toolbox`."""

from mock_servers.google_sheet.server import read, sheets, write
from mock_servers.google_sheet.server.base import build, toolbox

__all__ = ["build", "read", "sheets", "toolbox", "write"]
