"""Snapshots of a world's state for `no_side_effects`: per table, how many rows it had, its
largest rowid and a digest of those rows; per workspace file, a digest. Each server declares the
columns an agent may change without a side effect (read flags), the tables that are mere
bookkeeping, and the tables whose rows have no identity of their own (links, cells, warehouse
rows: a row deleted and written again as it was is no change), which are compared as multisets;
sessions, the clock and the claim are always ignored. A task's footprint (`Rows`, from its
outputs) names the rows it may touch: their changeable part is left out of the digest, and what
must stay of rows whose named columns may change is digested on its own, as a multiset.

`changes` compares a world with its snapshot: a row that existed may not change or vanish
unless the footprint lets it; rows may be added only where the footprint lets the table grow;
values are compared exactly, as stored."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

from pydantic import BaseModel

from loca.core.outputs import Rows
from loca.core.world import World, table_digest, tables

CORE_IGNORED: dict[str, frozenset[str] | None] = {
    "core_clock": None, "core_claim": None, "core_session": None}
_BATCH = 4096


@dataclass(frozen=True)
class Rules:
    """What a snapshot compares. `ignored`: table -> columns left out (None: the whole table);
    `unordered`: tables compared as multisets of rows; `footprint`: the rows a task may touch;
    `files`: workspace globs a task may change."""

    ignored: Mapping[str, frozenset[str] | None]
    unordered: frozenset[str] = frozenset()
    footprint: tuple[Rows, ...] = ()
    files: tuple[str, ...] = ()

    def skipped(self, table: str) -> frozenset[str] | None:
        """The columns of `table` left out (None: the whole table)."""
        return {**CORE_IGNORED, **self.ignored}.get(table, frozenset())

    def scope(self, table: str) -> Scope:
        return Scope.of(self.footprint, table)


class TableState(BaseModel):
    rows: int
    max_rowid: int
    digest: str  # of the rows with rowid <= max_rowid the footprint does not let change, ignored columns left out
    kept: str | None = None  # of what must stay of the rows whose named columns may change (rowids left out)


class Snapshot(BaseModel):
    tables: dict[str, TableState]
    files: dict[str, str]


@dataclass(frozen=True)
class Scope:
    """What a footprint says of one table, as SQL conditions (None: no such rows)."""

    changeable: str | None  # existing rows that may change (in some or all columns) or go
    partial: Rows | None  # the rows that may change in named columns only
    free: str | None  # existing rows that may change in any way or go
    grows: str | None  # where rows may be added

    @classmethod
    def of(cls, footprint: Iterable[Rows], table: str) -> Scope:
        mine = [rows for rows in footprint if rows.table == table]
        partial = next((rows for rows in mine if rows.partial), None)
        return cls(_any(rows.where for rows in mine if rows.columns != ()), partial,
                   _any(rows.where for rows in mine if rows.free), _any(rows.where for rows in mine))


def _any(conditions: Iterable[str]) -> str | None:
    found = [f"({c})" for c in conditions]
    return " OR ".join(found) if found else None


def _columns(conn: sqlite3.Connection, name: str, ignored: frozenset[str]) -> list[str]:
    return [r[1] for r in conn.execute(f'PRAGMA table_info("{name}")') if r[1] not in ignored]


def _multiset(conn: sqlite3.Connection, name: str, columns: list[str], where: str | None) -> tuple[int, str]:
    """How many rows hold where `where` does and the digest of their `columns`, sorted (the
    same rows in any order, under any rowids, give the same digest)."""
    selected = ", ".join(f'"{c}"' for c in columns) or "1"
    order = ", ".join(str(i + 1) for i in range(max(1, len(columns))))
    clause = f" WHERE {where}" if where else ""
    rows = conn.execute(f'SELECT {selected} FROM "{name}"{clause} ORDER BY {order}')
    h, count = hashlib.sha256(), 0
    while batch := rows.fetchmany(_BATCH):
        count += len(batch)
        h.update("".join(map(repr, batch)).encode())
    return count, h.hexdigest()


def _both(*conditions: str | None) -> str | None:
    found = [f"({c})" for c in conditions if c]
    return " AND ".join(found) if found else None


def _table_state(conn: sqlite3.Connection, name: str, rules: Rules, max_rowid: int | None = None) -> TableState:
    columns = _columns(conn, name, rules.skipped(name) or frozenset())
    scope = rules.scope(name)
    top = conn.execute(f'SELECT max(rowid) FROM "{name}"').fetchone()[0] or 0
    limit = top if max_rowid is None else max_rowid
    fixed = f"NOT ({scope.changeable})" if scope.changeable else None
    if name in rules.unordered:
        added = f"NOT (rowid > {int(limit)} AND ({scope.grows}))" if scope.grows else None
        count, digest = _multiset(conn, name, columns, _both(fixed, added))
    else:
        count, digest = table_digest(conn, name, columns, limit, fixed)
    kept = None
    if scope.partial is not None:
        assert scope.partial.columns
        unchanged = [c for c in columns if c not in scope.partial.columns]
        kept = _multiset(conn, name, unchanged, _both(scope.partial.where, f"NOT ({scope.free})" if scope.free
                                                      else None))[1]
    return TableState(rows=count, max_rowid=limit, digest=digest, kept=kept)


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


def _whole(rules: Rules, name: str) -> bool:
    """Whether the state of `name` is the plain `table_digest` of all its rows and columns."""
    return rules.skipped(name) == frozenset() and name not in rules.unordered and rules.scope(name).changeable is None


def take(world: World, rules: Rules, known: Mapping[str, TableState] | None = None) -> Snapshot:
    """The snapshot of `world` as it stands. `known`: states of tables that the caller took
    itself (a generator digesting the rows it wrote), not read again; used for tables whose
    state is their plain `table_digest`."""
    known = known or {}
    conn = sqlite3.connect(f"file:{world.state_path}?mode=ro", uri=True)
    try:
        states = {name: known[name] if name in known and _whole(rules, name) else _table_state(conn, name, rules)
                  for name in tables(conn) if rules.skipped(name) is not None}
    finally:
        conn.close()
    return Snapshot(tables=states, files=file_digests(world, rules.files))


def whole_tables(snapshot: Snapshot, rules: Rules) -> dict[str, str]:
    """Of a snapshot just taken with `rules`, the digests that are the plain `table_digest` of
    their table, which `content_hash` need not take again."""
    return {name: state.digest for name, state in snapshot.tables.items() if _whole(rules, name)}


def changes(world: World, before: Snapshot, rules: Rules) -> list[str]:
    """What changed since `before`, beyond what the rules allow; empty when nothing did."""
    named = {rows.table for rows in rules.footprint}
    problems: list[str] = []
    conn = sqlite3.connect(f"file:{world.state_path}?mode=ro", uri=True)
    try:
        now = set(tables(conn))
        for name, old in before.tables.items():
            if name not in now:
                problems.append(f"table {name} was dropped")
                continue
            try:
                problems += _table_changes(conn, name, old, rules)
            except sqlite3.Error as exc:
                problems.append(f"table {name} can no longer be compared: {exc}")
        for name in sorted(now - set(before.tables)):
            if rules.skipped(name) is not None and name not in named:
                problems.append(f"table {name} was created")
    finally:
        conn.close()
    files = file_digests(world, rules.files)
    for rel, digest in before.files.items():
        if rel not in files:
            problems.append(f"workspace file {rel} was removed")
        elif files[rel] != digest:
            problems.append(f"workspace file {rel} was changed")
    return problems


def _table_changes(conn: sqlite3.Connection, name: str, old: TableState, rules: Rules) -> list[str]:
    problems = []
    scope = rules.scope(name)
    state = _table_state(conn, name, rules, old.max_rowid)
    if state.rows != old.rows or state.digest != old.digest:
        problems.append(f"rows of {name} were changed, added or deleted" if name in rules.unordered
                        else f"existing rows of {name} changed or were deleted")
    if state.kept != old.kept:
        assert scope.partial is not None
        problems.append(f"rows of {name} changed beyond the columns {', '.join(scope.partial.columns or ())} "
                        "the task may change, or were added or deleted")
    if name not in rules.unordered:
        outside = "" if scope.grows is None else f" AND NOT ({scope.grows})"
        added = conn.execute(f'SELECT count(*) FROM "{name}" WHERE rowid > ?{outside}',
                             (old.max_rowid,)).fetchone()[0]
        if added:
            problems.append(f"{added} rows were added to {name}" + (" outside the task's writable set" if outside
                                                                    else ""))
    return problems
