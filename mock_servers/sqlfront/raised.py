"""Errors a statement raises while it runs. SQLite reports an exception of a Python function
only as "user-defined function raised exception"; a function of ours that fails calls `fail`,
which keeps its error for `failure`, the error of the statement."""

from __future__ import annotations

import sqlite3
import threading

from mock_servers.core.errors import Code, ToolFailure, invalid

_kept = threading.local()  # the error of the function that failed last, on this thread


def fail(message: str, code: Code = Code.INVALID_ARGUMENT) -> ValueError:
    """The exception a SQL function raises for `message`, kept for the statement's error."""
    _kept.failure = ToolFailure(code, message)
    return ValueError(message)


def failure(exc: sqlite3.Error, message: str) -> ToolFailure:
    """The error of a statement that SQLite stopped with `exc` (`message`: its text, with
    logical table names): the kept error of a function of ours when one failed, else
    INVALID_ARGUMENT."""
    kept: ToolFailure | None = getattr(_kept, "failure", None)
    _kept.failure = None
    if kept is not None and "user-defined" in str(exc):
        return kept
    return invalid(f"SQL error: {message}")
