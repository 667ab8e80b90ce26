"""Per-call budgets of time and memory, enforced from one watchdog thread per process.

A call runs inside `guard(seconds, memory)`. The watchdog looks at the calls in flight every
few milliseconds; one over its time (or growing the process's resident memory by more than
its budget since it started) gets an exception raised in its thread at the next bytecode, and
every SQLite statement of that thread is interrupted from then on (`overdue`, the progress
handler of `core.db`). The guard turns that into `Budget` carrying the error code. A call stuck
inside one long C operation is stopped when it returns to Python."""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from mock_servers.core.errors import Code

POLL_S = 0.01
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_STATM = "/proc/self/statm"


class _OverTime(BaseException):
    """Raised into a call's thread by the watchdog (BaseException: `except Exception` in tool
    code cannot swallow it)."""


class _OverMemory(BaseException):
    """Raised into a call's thread by the watchdog."""


class Budget(Exception):
    """A call stopped for going over its budget."""

    def __init__(self, code: Code, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(eq=False)
class _Armed:
    thread: int
    deadline: float | None
    memory: int | None
    baseline: int | None = None  # resident bytes when the watchdog first saw the call
    fired: type[BaseException] | None = field(default=None)


def _resident() -> int | None:
    try:
        with open(_STATM, "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


def _raise_in(thread: int, exc: type[BaseException] | None) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread),
                                               ctypes.py_object(exc) if exc else None)


class Watchdog:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls = threading.Condition(self._lock)  # notified when a call arrives while idle
        self._idle = False
        self._armed: set[_Armed] = set()
        self._overdue: set[int] = set()  # threads whose current call was stopped
        self._thread: threading.Thread | None = None

    def overdue(self) -> bool:
        """Whether the current thread's call has been stopped (its SQL must not go on)."""
        return bool(self._overdue) and threading.get_ident() in self._overdue

    @contextmanager
    def guard(self, seconds: float | None, memory: int | None) -> Iterator[None]:
        """Run the block within `seconds` of wall-clock time and `memory` more resident bytes
        (None: unbounded); over either, `Budget` is raised out of it."""
        armed = _Armed(threading.get_ident(), None if seconds is None else time.monotonic() + seconds,
                       memory)
        with self._lock:
            self._armed.add(armed)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="call-watchdog", daemon=True)
                self._thread.start()
            elif self._idle:
                self._idle = False
                self._calls.notify()
        try:
            yield
            self._disarm(armed)  # a stop still pending when the block ends is raised here
        except BaseException:
            self._disarm(armed)
            if armed.fired is None:
                raise
            raise self._budget(armed, seconds, memory) from None

    def _disarm(self, armed: _Armed) -> None:
        with self._lock:
            self._armed.discard(armed)
            if armed.fired is not None:
                _raise_in(armed.thread, None)  # drop the exception if it is still pending
                self._overdue.discard(armed.thread)

    @staticmethod
    def _budget(armed: _Armed, seconds: float | None, memory: int | None) -> Budget:
        if armed.fired is _OverMemory:
            return Budget(Code.RESOURCE_EXHAUSTED,
                          f"the call needed more than {(memory or 0) >> 20} MiB of memory and was stopped")
        return Budget(Code.DEADLINE_EXCEEDED, f"the call took longer than {seconds:g} s and was stopped")

    def _watch(self) -> None:
        """Look at the calls in flight every POLL_S; sleep without waking while there are none."""
        while True:
            with self._lock:
                while not self._armed:
                    self._idle = True
                    self._calls.wait()
            time.sleep(POLL_S)
            with self._lock:
                now = time.monotonic()
                resident = _resident() if any(a.memory is not None for a in self._armed) else None
                for armed in self._armed:
                    if armed.fired is not None:
                        continue
                    if armed.baseline is None:
                        armed.baseline = resident
                    if armed.deadline is not None and now > armed.deadline:
                        self._fire(armed, _OverTime)
                    elif (armed.memory is not None and resident is not None and armed.baseline is not None
                          and resident - armed.baseline > armed.memory):
                        self._fire(armed, _OverMemory)

    def _fire(self, armed: _Armed, exc: type[BaseException]) -> None:
        armed.fired = exc
        self._overdue.add(armed.thread)
        _raise_in(armed.thread, exc)


WATCHDOG = Watchdog()
