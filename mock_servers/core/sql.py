"""Plain SQL inside a tool call's transaction. Tools run a handful of statements each, and
SQLAlchemy's per-statement cost would dominate, so domain code talks to the session's DB-API
connection directly (pending ORM changes are flushed first). Rows come back as named tuples
whose fields are named after their columns; flags in them are SQLite's 0/1."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from itertools import repeat
from typing import Any, TypeVar

from sqlmodel import Session

R = TypeVar("R")


def cursor(session: Session) -> sqlite3.Cursor:
    """A DB-API cursor inside the session's transaction, after flushing pending ORM changes."""
    if session.new or session.dirty or session.deleted:
        session.flush()
    return session.connection().connection.cursor()  # type: ignore[return-value]


def run(session: Session, statement: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
    """Execute one statement; the cursor gives its rows, `rowcount` and `lastrowid`."""
    return cursor(session).execute(statement, params)


def rows(session: Session, row: type[R], statement: str, params: Sequence[Any] = ()) -> list[R]:
    """The result as rows of a named tuple type, built as `row._make` builds them but without a
    Python call per row (listings build many); the column count is checked once."""
    build: Any = tuple.__new__
    found: list[Any] = list(map(build, repeat(row), run(session, statement, params)))
    width = len(row._fields)  # type: ignore[attr-defined]
    if found and len(found[0]) != width:
        raise TypeError(f"{row.__name__} has {width} fields; the query gives {len(found[0])}")
    return found


def first(session: Session, row: type[R], statement: str, params: Sequence[Any] = ()) -> R | None:
    found = run(session, statement, params).fetchone()
    return None if found is None else row._make(found)  # type: ignore[attr-defined]


def scalar(session: Session, statement: str, params: Sequence[Any] = ()) -> Any:
    """The first column of the first row, or None."""
    found = run(session, statement, params).fetchone()
    return None if found is None else found[0]


def marks(count: int) -> str:
    """`?, ?, ?` for `count` parameters."""
    return ", ".join("?" * count)


def quoted(values: Sequence[str]) -> str:
    """Constant strings as an SQL list: `'a', 'b'`."""
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


def columns(row: type[tuple[Any, ...]], alias: str) -> str:
    """The columns of a row type whose fields are named after them: `x.id, x.name, ...`."""
    return ", ".join(f"{alias}.{name}" for name in row._fields)  # type: ignore[attr-defined]
