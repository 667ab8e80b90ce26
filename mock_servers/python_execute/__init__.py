"""python_execute helper server: run a Python script in the sandbox."""

from mock_servers.python_execute.server import build, toolbox

__all__ = ["build", "toolbox"]
