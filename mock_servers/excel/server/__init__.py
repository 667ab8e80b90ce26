"""Excel tools (the classic `filepath` / `sheet_name` API) over workbooks in the workspace.
Each module registers one family of tools on the shared `toolbox`."""

from mock_servers.excel.server import presentation, reads, structure, writes
from mock_servers.excel.server.base import build, toolbox

__all__ = ["build", "presentation", "reads", "structure", "toolbox", "writes"]
