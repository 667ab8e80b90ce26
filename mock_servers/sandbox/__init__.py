"""The code-execution sandbox shared by python_execute, terminal and code_execution: one argv
per child (never a shell), resource limits, a minimal environment, a wall-clock timeout, capped
output, a disk budget, no process left behind, and confinement: bubblewrap (strong) where it
runs, else Landlock, else a refusal unless unconfined runs were asked for (`sandbox_mode()`
says which)."""

from mock_servers.sandbox.disk import CONFIG_CALL_DISK, CONFIG_EPISODE_DISK, DiskLimitExceeded, DiskLimits
from mock_servers.sandbox.execution import (
    CONFIG_MODE,
    CONFIG_PYTHON,
    Execution,
    interpreter,
    open_execution,
)
from mock_servers.sandbox.launch import SCRIPT_FLAGS, Limits, Mode, SandboxError
from mock_servers.sandbox.mode import (
    ENV_ALLOW_UNCONFINED,
    ENV_MODE,
    SandboxUnavailable,
    describe,
    landlock_problem,
    recorded_mode,
    sandbox_mode,
    strong_problem,
)
from mock_servers.sandbox.names import safe_filename
from mock_servers.sandbox.process import KILL_GRACE_S, Stage

__all__ = [
    "CONFIG_CALL_DISK", "CONFIG_EPISODE_DISK", "CONFIG_MODE", "CONFIG_PYTHON", "ENV_ALLOW_UNCONFINED",
    "ENV_MODE", "KILL_GRACE_S", "SCRIPT_FLAGS", "DiskLimitExceeded", "DiskLimits", "Execution", "Limits", "Mode",
    "SandboxError", "SandboxUnavailable", "Stage", "describe", "interpreter", "landlock_problem",
    "open_execution", "recorded_mode", "safe_filename", "sandbox_mode", "strong_problem",
]
