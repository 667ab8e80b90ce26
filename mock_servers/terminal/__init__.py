"""terminal helper server: allow-listed command lines in the workspace, run in the sandbox."""

from mock_servers.terminal.server import build, toolbox

__all__ = ["build", "toolbox"]
