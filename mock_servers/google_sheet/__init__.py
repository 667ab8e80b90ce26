"""Google Sheets mock server: spreadsheets, sheets and cells with A1 ranges and formulas."""

from mock_servers.google_sheet import domain as domain
from mock_servers.google_sheet import models as models
from mock_servers.google_sheet.server import build, toolbox

__all__ = ["build", "domain", "models", "toolbox"]
