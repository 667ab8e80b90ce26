"""Excel helper server: workbook tools (openpyxl) over files in the world's workspace."""

from mock_servers.excel.server import build, toolbox

__all__ = ["build", "toolbox"]
