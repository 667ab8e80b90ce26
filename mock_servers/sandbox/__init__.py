"""The code-execution sandbox shared by python_execute, terminal and code_execution: one argv
per child (never a shell), its own process group, resource limits, a minimal environment, a
wall-clock timeout that kills the whole group, capped output, and bubblewrap isolation where
the machine allows it (`sandbox_mode()` says which)."""

from mock_servers.sandbox.execution import (
    CONFIG_MODE,
    CONFIG_PYTHON,
    Execution,
    interpreter,
    open_execution,
)
from mock_servers.sandbox.launch import SCRIPT_FLAGS, Limits, Mode, SandboxError
from mock_servers.sandbox.mode import SandboxUnavailable, sandbox_mode, strong_problem
from mock_servers.sandbox.names import safe_filename
from mock_servers.sandbox.process import KILL_GRACE_S, Stage

__all__ = [
    "CONFIG_MODE", "CONFIG_PYTHON", "KILL_GRACE_S", "SCRIPT_FLAGS", "Execution", "Limits", "Mode",
    "SandboxError", "SandboxUnavailable", "Stage", "interpreter", "open_execution",
    "safe_filename", "sandbox_mode", "strong_problem",
]
