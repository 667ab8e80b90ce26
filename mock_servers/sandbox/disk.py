"""Disk bounds of sandboxed executions. One execution may add at most `sandbox_call_disk_mib`
(server config, default 256) to its workspace and private scratch together, and the executions
of one world (an episode) at most `sandbox_episode_disk_mib` (default 1024) to its workspace.

Sizes are apparent sizes (`du --apparent-size -s`, each inode once). The two folders are
measured every 20 ms or so while the execution runs (no file can grow past the budget at all:
it is also the children's RLIMIT_FSIZE); past the budget the execution ends as at its
deadline, every process killed. After an execution that went past it, the files it created are
deleted and the files it grew are cut back to their former size. The world's running total is
kept in `scratch/sandbox-disk.json`."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import stat
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mock_servers.core.errors import Code
from mock_servers.sandbox.launch import MiB, SandboxError

CONFIG_CALL_DISK = "sandbox_call_disk_mib"
CONFIG_EPISODE_DISK = "sandbox_episode_disk_mib"
DEFAULT_CALL_MIB = 256
DEFAULT_EPISODE_MIB = 1024
LEDGER = "sandbox-disk.json"
POLL_S = 0.02
log = logging.getLogger("loca.sandbox")


class DiskLimitExceeded(SandboxError):
    """An execution went past its disk budget: it was stopped and its additions removed."""

    def __init__(self, message: str) -> None:
        super().__init__(message, Code.RESOURCE_EXHAUSTED)


@dataclass(frozen=True)
class DiskLimits:
    call_mib: int
    episode_mib: int

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> DiskLimits:
        values = []
        for key, default in ((CONFIG_CALL_DISK, DEFAULT_CALL_MIB), (CONFIG_EPISODE_DISK, DEFAULT_EPISODE_MIB)):
            value = config.get(key, default)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SandboxError(f"{key} must be a whole number of MiB, at least 0")
            values.append(value)
        return cls(*values)

    def describe(self) -> str:
        return f"disk added: {self.call_mib} MiB per call, {self.episode_mib} MiB per episode"

    def budget(self, ledger: Path) -> int:
        """Bytes the next execution may add: the call's limit, or what is left of the episode's."""
        return max(0, min(self.call_mib * MiB, self.episode_mib * MiB - spent(ledger)))


def spent(ledger: Path) -> int:
    """Bytes the world's executions have added to its workspace so far."""
    with _held(ledger, fcntl.LOCK_SH) as fd:
        return _read(fd)


def add_spent(ledger: Path, added: int) -> None:
    """Add `added` (negative when an execution freed space) to the world's total."""
    with _held(ledger, fcntl.LOCK_EX) as fd:
        text = json.dumps({"added": max(0, _read(fd) + added)}).encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, text, 0)


@contextmanager
def _held(ledger: Path, how: int) -> Iterator[int]:
    fd = os.open(ledger, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, how)
        yield fd
    finally:
        os.close(fd)


def _read(fd: int) -> int:
    try:
        return int(json.loads(os.pread(fd, 4096, 0))["added"])
    except (ValueError, KeyError, TypeError):
        return 0


def _scan(folder: str) -> list[os.DirEntry[str]]:
    """The entries of `folder`; one the children made unreadable is opened up first."""
    try:
        return list(os.scandir(folder))
    except PermissionError:
        os.chmod(folder, 0o700)
        return list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []


def _entries(root: Path) -> dict[str, os.stat_result]:
    """Every path below `root` (relative) and its lstat, links never followed."""
    found: dict[str, os.stat_result] = {}
    stack = [str(root)]
    while stack:
        for entry in _scan(stack.pop()):
            try:
                found[os.path.relpath(entry.path, root)] = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return found


def _size(*found: dict[str, os.stat_result]) -> int:
    """Apparent size of the entries found, each inode counted once."""
    return sum({(st.st_dev, st.st_ino): st.st_size for entries in found for st in entries.values()}.values())


def usage(*roots: Path) -> int:
    """Apparent size of everything below `roots`, each inode counted once."""
    return _size(*map(_entries, roots))


class DiskGuard:
    """Watches one execution's workspace and private scratch from its first child on; its
    callers ask `over()` while they wait for the children (every 20 ms or so)."""

    def __init__(self, workspace: Path, scratch: Path, budget: int) -> None:
        self.workspace = workspace
        self.scratch = scratch
        self.budget = budget
        self.exceeded = False
        self._before: dict[str, os.stat_result] | None = None
        self._workspace_before = 0
        self._limit = 0
        self._next = 0.0

    def start(self) -> None:
        """Take the baseline (once; later calls do nothing)."""
        if self._before is None:
            self._before = _entries(self.workspace)
            self._workspace_before = _size(self._before)
            self._limit = self._workspace_before + usage(self.scratch) + self.budget
            self._next = time.monotonic() + POLL_S

    def over(self) -> bool:
        """Whether the execution went past its budget, measured at most every POLL_S (and at
        most a fifth of the time: a large workspace takes longer to measure)."""
        now = time.monotonic()
        if self._before is None or self.exceeded or now < self._next:
            return self.exceeded
        self.exceeded = usage(self.workspace, self.scratch) > self._limit
        self._next = time.monotonic() + max(POLL_S, 4 * (time.monotonic() - now))
        return self.exceeded

    def finish(self) -> int:
        """Once every child is gone: roll back an execution that went past its budget. The
        bytes it added to the workspace (negative when it freed some)."""
        if self._before is None:
            return 0
        self._next = 0.0
        if self.over():
            self._roll_back()
        return usage(self.workspace) - self._workspace_before

    def _roll_back(self) -> None:
        """Delete what the execution created in the workspace, cut what it grew back to size."""
        assert self._before is not None
        for rel, st in sorted(_entries(self.workspace).items()):
            path = self.workspace / rel
            old = self._before.get(rel)
            if old is None or stat.S_IFMT(old.st_mode) != stat.S_IFMT(st.st_mode):
                remove(path)
            elif stat.S_ISREG(st.st_mode) and st.st_size > old.st_size:
                os.chmod(path, stat.S_IMODE(st.st_mode) | stat.S_IWUSR)
                os.truncate(path, old.st_size)

    def message(self, limits: DiskLimits, left: int) -> str:
        return (f"the call wrote more than {self.budget / MiB:g} MiB to the workspace and /tmp "
                f"(limits: {limits.call_mib} MiB per call, {limits.episode_mib} MiB per episode, "
                f"{left / MiB:g} MiB of it left before this call); it was stopped, the files it "
                "created were deleted and the files it grew were cut back to their former size")


def remove(path: Path) -> None:
    """Remove a file, link or folder (folders the children made unreadable included)."""
    if not path.is_dir() or path.is_symlink():
        path.unlink(missing_ok=True)
        return

    def unlock_and_retry(func: Any, target: str, _exc: Any) -> None:
        for folder in (os.path.dirname(target), target):
            if os.path.isdir(folder) and not os.path.islink(folder):
                os.chmod(folder, 0o700)
        func(target)

    try:
        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=unlock_and_retry)
        else:
            shutil.rmtree(path, onerror=unlock_and_retry)
    except OSError as exc:
        log.warning("could not remove %s: %s", path, exc)
