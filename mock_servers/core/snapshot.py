"""Snapshots of a world's state for `no_side_effects`: per table, how many rows it had, its
largest rowid and a digest of those rows; per workspace file, a digest. Each server declares the
columns an agent may change without a side effect (read flags) and the tables that are mere
bookkeeping; sessions, the clock and the claim are always ignored.

`changes` compares a world with its snapshot: a row that existed may not change or vanish;
rows added after the snapshot are allowed only in the tables a task lets grow (sent mail,
new events)."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

from pydantic import BaseModel

from loca.core.world import World, table_digest, tables

# table -> ignored columns (None: the whole table)
Ignored = Mapping[str, frozenset[str] | None]
CORE_IGNORED: dict[str, frozenset[str] | None] = {
    "core_clock": None, "core_claim": None, "core_session": None}


class TableState(BaseModel):
    rows: int
    max_rowid: int
    digest: str  # of the rows with rowid <= max_rowid, ignored columns left out


class Snapshot(BaseModel):
    tables: dict[str, TableState]
    files: dict[str, str]


def _table_state(conn: sqlite3.Connection, name: str, ignored: frozenset[str],
                 max_rowid: int | None = None) -> TableState:
    cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{name}")') if r[1] not in ignored]
    top = conn.execute(f'SELECT max(rowid) FROM "{name}"').fetchone()[0] or 0
    limit = top if max_rowid is None else max_rowid
    count, digest = table_digest(conn, name, cols, limit)
    return TableState(rows=count, max_rowid=limit, digest=digest)


def _ignored_for(ignored: Ignored, name: str) -> frozenset[str] | None:
    merged = {**CORE_IGNORED, **ignored}
    return merged.get(name, frozenset())


def file_digests(world: World, exclude: Iterable[str] = ()) -> dict[str, str]:
    """sha256 of every workspace file whose relative path matches none of `exclude` (globs)."""
    root = world.workspace
    patterns = list(exclude)
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not path.is_symlink() and not any(fnmatchcase(rel, p) for p in patterns):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def take(world: World, ignored: Ignored, exclude_files: Iterable[str] = (),
         known: Mapping[str, TableState] | None = None) -> Snapshot:
    """The snapshot of `world` as it stands. `known`: states of tables with no column ignored
    that the caller took itself (a generator digesting the rows it wrote), not read again."""
    known = known or {}
    conn = sqlite3.connect(f"file:{world.state_path}?mode=ro", uri=True)
    try:
        states = {}
        for name in tables(conn):
            skip = _ignored_for(ignored, name)
            if skip is not None:
                states[name] = known[name] if name in known and not skip else _table_state(conn, name, skip)
    finally:
        conn.close()
    return Snapshot(tables=states, files=file_digests(world, exclude_files))


def whole_tables(snapshot: Snapshot, ignored: Ignored) -> dict[str, str]:
    """Of a snapshot just taken with `ignored`, the digests of the tables it read whole (no
    column ignored): each is that table's `table_digest`, which `content_hash` need not take
    again."""
    return {name: state.digest for name, state in snapshot.tables.items() if _ignored_for(ignored, name) == frozenset()}


def changes(world: World, before: Snapshot, ignored: Ignored, exclude_files: Iterable[str] = (),
            growable: Iterable[str] = ()) -> list[str]:
    """What changed since `before`, beyond what a task allows; empty when nothing did."""
    grow = set(growable)
    problems: list[str] = []
    conn = sqlite3.connect(f"file:{world.state_path}?mode=ro", uri=True)
    try:
        now = set(tables(conn))
        for name, old in before.tables.items():
            if name not in now:
                problems.append(f"table {name} was dropped")
                continue
            skip = _ignored_for(ignored, name) or frozenset()
            state = _table_state(conn, name, skip, old.max_rowid)
            if state.rows != old.rows or state.digest != old.digest:
                problems.append(f"existing rows of {name} changed or were deleted")
            top = conn.execute(f'SELECT max(rowid) FROM "{name}"').fetchone()[0] or 0
            if name not in grow and top > old.max_rowid:
                problems.append(f"rows were added to {name}")
        for name in sorted(now - set(before.tables)):
            if _ignored_for(ignored, name) is not None and name not in grow:
                problems.append(f"table {name} was created")
    finally:
        conn.close()
    files = file_digests(world, exclude_files)
    for rel, digest in before.files.items():
        if rel not in files:
            problems.append(f"workspace file {rel} was removed")
        elif files[rel] != digest:
            problems.append(f"workspace file {rel} was changed")
    return problems
