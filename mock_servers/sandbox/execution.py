"""One sandboxed execution on a world: the world's lock held (one execution at a time), a
private scratch folder under `world.scratch` (the child's /tmp and HOME, removed afterwards),
one deadline, one disk budget and one pair of capped output captures for everything it runs."""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from loca.core.world import World
from mock_servers.core.files import DISPLAY_ROOT
from mock_servers.sandbox.capture import Capture
from mock_servers.sandbox.confine import stage
from mock_servers.sandbox.disk import LEDGER, DiskGuard, DiskLimitExceeded, DiskLimits, add_spent, remove
from mock_servers.sandbox.launch import INSIDE_TMP, Launcher, Limits, SandboxError, make_mount_points
from mock_servers.sandbox.mode import sandbox_mode
from mock_servers.sandbox.process import Stage, run_pipeline

CONFIG_MODE = "sandbox"  # server config: "auto", "strong", "landlock" or "unconfined"
CONFIG_PYTHON = "sandbox_python"  # server config: the interpreter children use
ENV_PYTHON = "LOCA_SANDBOX_PYTHON"
LOCK_FILE = ".sandbox.lock"


def interpreter(config: dict[str, Any]) -> str:
    """The Python children run: configured, else `LOCA_SANDBOX_PYTHON`, else the gym's own;
    made absolute without `..` (the sandbox mounts the interpreter's own folders, so a path
    through another one, such as `bench/../.venv/bin/python`, would not exist there). Symlinks
    are kept: a virtualenv's interpreter is a link whose name finds its packages."""
    chosen = str(config.get(CONFIG_PYTHON) or os.environ.get(ENV_PYTHON) or sys.executable)
    return os.path.abspath(chosen)


@contextmanager
def open_execution(world: World, config: dict[str, Any], limits: Limits,
                   scratch: Path | None = None) -> Iterator[Execution]:
    """Hold the world's sandbox for one execution; cleans up whatever happens. `scratch`
    replaces the world's scratch folder (and its lock) for a caller whose code calls the
    world's tools while it runs, so that the two never wait on each other. Raises
    `DiskLimitExceeded` after an execution that went past its disk budget."""
    mode = sandbox_mode(config.get(CONFIG_MODE))
    disk = DiskLimits.from_config(config)
    world.scratch.mkdir(parents=True, exist_ok=True)
    ledger = world.scratch / LEDGER
    scratch = (scratch or world.scratch).resolve()  # a child's working folder is the workspace
    scratch.mkdir(parents=True, exist_ok=True)
    workspace = world.workspace.resolve()
    if not workspace.is_dir():
        raise SandboxError("the world has no workspace folder")
    with _world_lock(scratch / LOCK_FILE):
        private = Path(tempfile.mkdtemp(prefix="run-", dir=scratch))
        try:
            if mode == "strong":
                make_mount_points(private, interpreter(config))
            budget = disk.budget(ledger)
            execution = Execution(Launcher(mode, workspace, private, interpreter(config), limits,
                                           world.meta.tz, budget))
            try:
                yield execution
            finally:
                if added := execution.guard.finish():
                    add_spent(ledger, added)
            if execution.guard.exceeded:
                raise DiskLimitExceeded(execution.guard.message(disk, budget))
        finally:
            remove(private)


class Execution:
    """What a tool drives: run pipelines until the shared deadline, then read the output."""

    def __init__(self, launcher: Launcher) -> None:
        self.launcher = launcher
        self.mode = launcher.mode
        self._prefix = launcher.prefix()
        self._env = launcher.env()
        self.out = Capture(launcher.limits.stdout_chars)
        self.err = Capture(launcher.limits.stderr_chars)
        self.started = time.monotonic()
        self.deadline = self.started + launcher.limits.timeout_s
        self.timed_out = False
        self.guard = DiskGuard(launcher.workspace, launcher.tmp, launcher.file_bytes)

    @property
    def workspace(self) -> str:
        """The workspace as the child sees it."""
        return self.launcher.inside_workspace

    def python(self, *flags: str) -> list[str]:
        """argv start for the configured interpreter."""
        return [self.launcher.interpreter, *flags]

    def program(self, name: str, path: str) -> str:
        """How argv names a system program: its bare name when the child's PATH finds that
        same file (messages then read `cat: ...`), else its path."""
        return name if shutil.which(name, path=self._env["PATH"]) == path else path

    def write_script(self, name: str, text: str) -> str:
        """Write a script into the private scratch; its path as the child sees it."""
        (self.launcher.tmp / name).write_text(text, encoding="utf-8")
        return f"{self.launcher.inside_tmp}/{name}"

    def command(self, argv: list[str]) -> tuple[list[str], dict[str, Any]]:
        """The whole argv and the Popen keywords that start `argv` sandboxed, for a caller
        that runs the child itself (its own pipes, its own event loop) until `left()` is 0."""
        self.guard.start()
        head, extra = self._prefix
        return [*head, *stage(argv)], {"env": self._env, "start_new_session": True, **extra}

    def run(self, stages: list[Stage]) -> int | None:
        """Run one pipeline; its exit status, or None once the deadline has passed."""
        if self.timed_out:
            return None
        self.guard.start()
        code = run_pipeline(self._prefix, self._env, stages, self.left, self.out, self.err)
        self.timed_out = code is None
        return code

    def left(self) -> float:
        """Seconds left before the deadline; 0 once it passed, or once the execution went past
        its disk budget (asked every few ms by whoever waits for the children)."""
        if self.guard.over():
            self.deadline = min(self.deadline, time.monotonic())
        return max(0.0, self.deadline - time.monotonic())

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def stdout(self) -> str:
        return self.show(self.out.text())

    def stderr(self) -> str:
        return self.show(self.err.text())

    def show(self, text: str) -> str:
        """Host paths of a child without its own mount table rewritten to the names a strong
        child sees."""
        if self.mode != "strong":
            text = text.replace(str(self.launcher.tmp), INSIDE_TMP)
            text = text.replace(str(self.launcher.workspace), DISPLAY_ROOT)
        return text


@contextmanager
def _world_lock(path: Path) -> Iterator[None]:
    """An exclusive lock across threads and processes serving the same world."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
