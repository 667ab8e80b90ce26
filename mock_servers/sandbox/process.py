"""Run a pipeline of sandboxed stages: real pipes between them, stdout and stderr drained
concurrently, one wall-clock deadline, and every process group killed and reaped before the
call returns (SIGTERM at the deadline, which the launcher turns into SIGKILL for everything
below it; SIGKILL 2 s later for a launcher still there)."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from mock_servers.sandbox.capture import Capture
from mock_servers.sandbox.confine import Descriptors
from mock_servers.sandbox.launch import SandboxError, spawn

KILL_GRACE_S = 2.0  # between SIGTERM and SIGKILL
DRAIN_GRACE_S = 1.0  # for output still in the pipes once every group is dead
_POLL_S = 0.02  # how often the time left is asked while nothing happens
_CHUNK = 1 << 16

Target = Literal["out", "err"] | int  # the pipeline's stdout (next stage or capture), the stderr capture, an fd


@dataclass(frozen=True)
class Stage:
    """One program of a pipeline. `stdin` None reads the previous stage (or nothing)."""

    argv: list[str]
    stdin: int | None = None
    stdout: Target = "out"
    stderr: Target = "err"


def shell_code(returncode: int) -> int:
    """Exit status as a shell reports it: 128 + N for death by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def run_pipeline(prefix: tuple[list[str], dict[str, Any]], env: dict[str, str], stages: list[Stage],
                 left: Callable[[], float], out: Capture, err: Capture) -> int | None:
    """Run `stages` connected by pipes, under one launcher; the last stage's exit status, or
    None when the time `left()` ran out (everything is killed either way)."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        procs = [_start(prefix, env, stages, out_w, err_w)]
    except BaseException as exc:
        for fd in (out_r, err_r):
            os.close(fd)
        if isinstance(exc, OSError | subprocess.SubprocessError):
            raise SandboxError(f"could not start the command: {getattr(exc, 'strerror', None) or exc}") \
                from None
        raise
    finally:
        os.close(out_w)
        os.close(err_w)
    drain = _Drain({out_r: out, err_r: err}, procs)
    try:
        finished = drain.pump(drain.all_exited, left)
        if not finished:
            _signal(procs, signal.SIGTERM)
            drain.pump(drain.all_exited, _until(time.monotonic() + KILL_GRACE_S))
    finally:  # also when interrupted: nothing outlives the call
        _signal(procs, signal.SIGKILL)  # stragglers of finished leaders too
        try:
            drain.pump(drain.streams_closed, _until(time.monotonic() + DRAIN_GRACE_S))
        finally:
            drain.close()
            codes = [proc.wait() for proc in procs]
    return shell_code(codes[-1]) if finished else None


def _until(moment: float) -> Callable[[], float]:
    return lambda: moment - time.monotonic()


def _start(prefix: tuple[list[str], dict[str, Any]], env: dict[str, str], stages: list[Stage],
           out_w: int, err_w: int) -> subprocess.Popen[bytes]:
    """The launcher of the whole pipeline, given each stage's descriptors: a pipe to the next
    stage, /dev/null for a first stage that reads nothing, the captures, redirections."""
    made: list[int] = []  # closed here once the launcher holds its copies
    try:
        pipeline: list[tuple[Descriptors, list[str]]] = []
        upstream: int | None = None  # read end of the pipe from the previous stage
        for i, stage in enumerate(stages):
            down_r, down_w = os.pipe() if i < len(stages) - 1 else (None, out_w)
            made += [fd for fd in (down_r, down_w) if fd is not None and fd != out_w]
            if stage.stdin is None and upstream is None:
                upstream = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
                made.append(upstream)
            named = {"out": down_w, "err": err_w}
            stdin = stage.stdin if stage.stdin is not None else upstream
            stdout = named[stage.stdout] if isinstance(stage.stdout, str) else stage.stdout
            stderr = named[stage.stderr] if isinstance(stage.stderr, str) else stage.stderr
            assert stdin is not None
            pipeline.append(((stdin, stdout, stderr), stage.argv))
            upstream = down_r
        return spawn(prefix, env, pipeline, err_w)
    finally:
        for fd in made:
            os.close(fd)


def _signal(procs: list[subprocess.Popen[bytes]], sig: int) -> None:
    for proc in procs:
        try:
            os.killpg(proc.pid, sig)  # the group id is the leader's pid (own session)
        except (ProcessLookupError, PermissionError):
            pass


def _exited(pid: int) -> bool:
    """Whether a child has exited, without reaping it (its group id stays reserved)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


class _Drain:
    """Reads the capture pipes while waiting; wakes on output or on a child's exit."""

    def __init__(self, streams: dict[int, Capture], procs: list[subprocess.Popen[bytes]]) -> None:
        self.sel = selectors.DefaultSelector()
        self.streams = dict(streams)
        self.running = {proc.pid for proc in procs}
        for fd, capture in streams.items():
            os.set_blocking(fd, False)
            self.sel.register(fd, selectors.EVENT_READ, capture)
        for proc in procs:
            try:
                self.sel.register(os.pidfd_open(proc.pid), selectors.EVENT_READ, None)
            except OSError:  # no pidfd: the poll interval notices the exit
                pass

    def all_exited(self) -> bool:
        self.running = {pid for pid in self.running if not _exited(pid)}
        return not self.running

    def streams_closed(self) -> bool:
        return not self.streams

    def pump(self, done: Callable[[], bool], left: Callable[[], float]) -> bool:
        """Drain until `done()` or until no time is `left()`; whether `done()` was reached."""
        while not done():
            seconds = left()
            if seconds <= 0:
                return False
            for key, _ in self.sel.select(min(seconds, _POLL_S)):
                if key.data is None:  # a pidfd: the child exited
                    self._forget(key.fd)
                else:
                    self._read(key.fd, key.data)
        return True

    def _read(self, fd: int, capture: Capture) -> None:
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            return
        if chunk:
            capture.feed(chunk)
        else:
            self._forget(fd)

    def _forget(self, fd: int) -> None:
        self.sel.unregister(fd)
        self.streams.pop(fd, None)
        os.close(fd)

    def close(self) -> None:
        for key in list(self.sel.get_map().values()):
            self._forget(key.fd)
        self.sel.close()
