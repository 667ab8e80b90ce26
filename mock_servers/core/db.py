"""SQLite through SQLModel: one file per world, WAL, one transaction per tool call."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event, insert
from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel, create_engine

from loca.core.world import AUDIT_FILE
from mock_servers.core.watchdog import WATCHDOG

_WRITE = "loca_write"
_PROGRESS_STEPS = 20_000  # SQLite VM steps between checks of the call's budget
# The audit log (see docs/concepts/servers.md): one row per tool call, whatever the transport; never
# visible to the agent; what counts tool calls and nested calls. It lives in its own file: a
# row appended to the state's file would make every connection to it drop its page cache.
_AUDIT_TABLE = ("CREATE TABLE IF NOT EXISTS core_audit (seq INTEGER PRIMARY KEY, server TEXT NOT NULL, "
                "tool TEXT NOT NULL, "
                "arguments TEXT NOT NULL, "  # JSON, ASCII-escaped, at most toolkit.AUDIT_ARGUMENT_CHARS
                "is_error INTEGER NOT NULL, output_chars INTEGER NOT NULL, "
                "parent_call_id TEXT, "  # the call whose code made this one (programmatic calls)
                "duration_ms REAL NOT NULL)")
_AUDIT_INSERT = ("INSERT INTO core_audit (server, tool, arguments, is_error, output_chars, parent_call_id, "
                 "duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?)")


def _casefold(value: object) -> object:
    return value.casefold() if isinstance(value, str) else value


def _configure(engine: Engine, readonly: bool, building: bool) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
        # SQL casefold(x): Unicode case folding, for searches whose text LIKE cannot fold
        dbapi_conn.create_function("casefold", 1, _casefold, deterministic=True)
        # a call stopped for its budget has every statement interrupted ("interrupted")
        dbapi_conn.set_progress_handler(WATCHDOG.overdue, _PROGRESS_STEPS)
        cur = dbapi_conn.cursor()
        if building:  # a world being generated: no log to write twice, no sync (it is rebuilt if cut short)
            cur.execute("PRAGMA journal_mode=MEMORY")
            cur.execute("PRAGMA synchronous=OFF")
        elif not readonly:
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=5000")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # on the DB-API connection: SQLAlchemy's statement machinery costs 15 µs more per call
        write = conn.get_execution_options().get(_WRITE, False)
        conn.connection.driver_connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")


class Database:
    """The world's `state.sqlite`. `read()` and `write()` each give a Session inside one
    transaction; a write transaction takes the lock up front (BEGIN IMMEDIATE) and rolls
    back entirely if the block raises."""

    def __init__(self, path: Path, readonly: bool = False, building: bool = False) -> None:
        self.path = Path(path)
        self.building = building
        url = f"sqlite:///file:{self.path}?mode=ro&uri=true" if readonly else f"sqlite:///{self.path}"
        self.engine = create_engine(url, connect_args={"check_same_thread": False})
        _configure(self.engine, readonly, building)
        self._write_engine = self.engine.execution_options(**{_WRITE: True})
        self._audit: sqlite3.Connection | None = None
        self._watch: sqlite3.Connection | None = None

    def create_tables(self, prefixes: list[str]) -> None:
        """Create the registered tables whose names start with one of `prefixes` (a server's
        tables are named `<server>_...`; import its models first)."""
        tables = [t for name, t in SQLModel.metadata.tables.items()
                  if any(name.startswith(p) for p in prefixes)]
        SQLModel.metadata.create_all(self.engine, tables=tables)

    @contextmanager
    def read(self) -> Iterator[Session]:
        with Session(self.engine) as session:
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        with Session(self._write_engine, expire_on_commit=False) as session:
            try:
                yield session
                session.commit()
            except BaseException:
                session.rollback()
                raise

    def version(self) -> int:
        """A number that changes whenever a change to the state is committed, by any connection
        of any process: SQLite's `data_version`, read on a connection of its own that never
        writes (a connection does not see its own commits there)."""
        if self._watch is None:
            self._watch = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        return int(self._watch.execute("PRAGMA data_version").fetchone()[0])

    @property
    def audit_path(self) -> Path:
        return self.path.with_name(AUDIT_FILE)

    def audit(self, row: tuple[Any, ...]) -> None:
        """Append one `core_audit` row (server, tool, arguments, is_error, output_chars,
        parent_call_id, duration_ms) to the audit log beside the state, in its own short
        transaction."""
        if self._audit is None:
            self._audit = sqlite3.connect(self.audit_path, isolation_level=None, check_same_thread=False)
            self._audit.execute("PRAGMA busy_timeout=5000")
            self._audit.execute("PRAGMA journal_mode=WAL")
            self._audit.execute("PRAGMA synchronous=NORMAL")
            self._audit.execute(_AUDIT_TABLE)
        self._audit.execute(_AUDIT_INSERT, row)

    def dispose(self) -> None:
        """Close every connection; a database that was `building` is left in WAL mode, as
        every world is served."""
        for extra in (self._audit, self._watch):
            if extra is not None:
                extra.close()
        self._audit = self._watch = None
        self.engine.dispose()
        if self.building:
            with closing(sqlite3.connect(self.path)) as conn:
                conn.execute("PRAGMA journal_mode=WAL")


def bulk_insert(session: Session, model: type[SQLModel], rows: list[dict[str, Any]]) -> None:
    """Insert many rows in one executemany, bypassing the ORM unit of work: for generators
    that build large worlds and already hold validated values (explicit ids allowed)."""
    if rows:
        session.execute(insert(model), rows)
