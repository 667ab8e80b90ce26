"""Changes made straight to a world's state, as its tools would store them: the unrelated
change a careless agent leaves in a server's tables (a field edited, a row added or deleted,
outside the task's footprint), and the wrong answer it writes to the rows it must write (one
row dropped or duplicated, one value changed). Which table a side effect lands in turns with the
world's seed, so the matrix of worlds covers a server's tables one after another."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from loca.adversary.base import NotApplicable
from loca.adversary.values import alterable, altered
from loca.core.outputs import DbRows
from mock_servers import load_toolbox, snapshot_rules
from mock_servers.core.snapshot import Rules, Snapshot

if TYPE_CHECKING:
    from envs.core.registry import Task
    from loca.core.world import World


def rules_of(task: Task) -> Rules:
    spec = task.spec
    return snapshot_rules(list(spec.servers.values()), spec.footprint, spec.writable_files)


@contextmanager
def state(world: World) -> Iterator[sqlite3.Connection]:
    """The world's state, changed in one transaction committed on success."""
    conn = sqlite3.connect(world.state_path)
    try:
        with conn:
            yield conn
    finally:
        conn.close()


def _columns(conn: sqlite3.Connection, table: str) -> list[tuple[str, str, int]]:
    """(name, declared type, primary-key position) of each column."""
    return [(r[1], str(r[2]).upper(), int(r[5])) for r in conn.execute(f'PRAGMA table_info("{table}")')]


def _rowid_alias(conn: sqlite3.Connection, table: str) -> str | None:
    """The column that is the table's rowid (a lone INTEGER PRIMARY KEY), if any."""
    keys = [(name, kind) for name, kind, pk in _columns(conn, table) if pk]
    return keys[0][0] if len(keys) == 1 and keys[0][1] == "INTEGER" else None


def _before(world: World) -> Snapshot:
    return Snapshot.model_validate(world.read_truth("snapshot.json"))


def _outside(rules: Rules, table: str, top: int) -> str:
    """Rows that existed at the snapshot and that the footprint does not let change."""
    changeable = rules.scope(table).changeable
    return f"rowid <= {top}" + (f" AND NOT ({changeable})" if changeable else "")


def _candidates(task: Task, world: World, server: str, conn: sqlite3.Connection) -> list[str]:
    """The server's compared tables holding a row outside the footprint, turned by the seed."""
    rules, before = rules_of(task), _before(world)
    prefixes = load_toolbox(server).table_prefixes
    found = [t for t in sorted(before.tables) if t.startswith(prefixes) and conn.execute(
        f'SELECT 1 FROM "{t}" WHERE {_outside(rules, t, before.tables[t].max_rowid)} LIMIT 1').fetchone()]
    if not found:
        raise NotApplicable(f"no {server} row outside the task's footprint")
    turn = world.meta.seed % len(found)
    return found[turn:] + found[:turn]


def _first_row(conn: sqlite3.Connection, table: str, where: str, last: bool = False) -> tuple[int, dict[str, Any]]:
    cursor = conn.execute(f'SELECT rowid, * FROM "{table}" WHERE {where} ORDER BY rowid {"DESC" if last else ""} '
                          "LIMIT 1")
    row = cursor.fetchone()
    if row is None:
        raise NotApplicable(f"no row of {table} to change")
    return row[0], dict(zip([d[0] for d in cursor.description[1:]], row[1:], strict=True))


def _edit(conn: sqlite3.Connection, table: str, rowid: int, row: dict[str, Any], columns: list[str]) -> None:
    column = next((c for c in columns if alterable(row.get(c))), None)
    if column is None:
        raise NotApplicable(f"no value of {table} to alter")
    try:
        conn.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = ?', (altered(row[column]), rowid))
    except sqlite3.IntegrityError:
        raise NotApplicable(f"the altered {table}.{column} breaks the table's constraints") from None


def _editable(conn: sqlite3.Connection, table: str, rules: Rules) -> list[str]:
    skipped = rules.skipped(table) or frozenset()
    return [name for name, _, pk in _columns(conn, table) if not pk and name not in skipped]


Change = Callable[["Task", "World"], None]


def edit_field(server: str) -> Change:
    """One field of a row the task leaves alone, altered (a name re-cased or a count off by
    one: a value the agent had no business writing)."""
    return lambda task, world: _edit_field(task, world, server)


def _edit_field(task: Task, world: World, server: str) -> None:
    rules, before = rules_of(task), _before(world)
    with state(world) as conn:
        for table in _candidates(task, world, server, conn):
            rowid, row = _first_row(conn, table, _outside(rules, table, before.tables[table].max_rowid))
            try:
                _edit(conn, table, rowid, row, _editable(conn, table, rules))
                return
            except NotApplicable:
                continue
    raise NotApplicable(f"no {server} field to alter")


def _insert_copy(conn: sqlite3.Connection, table: str, row: dict[str, Any]) -> int | None:
    """Insert a copy of `row` as a new row (its own key, unique values altered as needed); the
    new rowid, or None when no copy fits the table's constraints."""
    alias = _rowid_alias(conn, table)
    columns = _columns(conn, table)
    keys = [name for name, _, pk in columns if pk and name != alias]
    copy = {k: v for k, v in row.items() if k != alias}
    attempts = [copy, {k: altered(v) if isinstance(v, str) and v and k not in keys else v for k, v in copy.items()}]
    attempts.append({k: v + 1_000_000 if k in keys and isinstance(v, int) else v for k, v in attempts[1].items()})
    for values in attempts:
        names = ", ".join(f'"{k}"' for k in values)
        try:
            cursor = conn.execute(f'INSERT INTO "{table}" ({names}) VALUES ({", ".join("?" for _ in values)})',
                                  list(values.values()))
            return cursor.lastrowid
        except sqlite3.IntegrityError:
            continue
    return None


def add_row(server: str) -> Change:
    """A row added where the task adds none: a copy of an existing row (a second account,
    bucket, table, event or log entry beside the real one)."""
    return lambda task, world: _add_row(task, world, server)


def _add_row(task: Task, world: World, server: str) -> None:
    rules, before = rules_of(task), _before(world)
    with state(world) as conn:
        for table in _candidates(task, world, server, conn):
            _, row = _first_row(conn, table, _outside(rules, table, before.tables[table].max_rowid))
            rowid = _insert_copy(conn, table, row)
            grows = rules.scope(table).grows
            if rowid is not None and grows and conn.execute(
                    f'SELECT 1 FROM "{table}" WHERE rowid = ? AND ({grows})', (rowid,)).fetchone():
                conn.execute(f'DELETE FROM "{table}" WHERE rowid = ?', (rowid,))  # an addition the task may make
                continue
            if rowid is not None:
                return
    raise NotApplicable(f"no {server} row that could be added")


def delete_row(server: str) -> Change:
    """One row the task leaves alone, deleted."""
    return lambda task, world: _delete_row(task, world, server)


def _delete_row(task: Task, world: World, server: str) -> None:
    rules, before = rules_of(task), _before(world)
    with state(world) as conn:
        table = _candidates(task, world, server, conn)[0]
        rowid, _ = _first_row(conn, table, _outside(rules, table, before.tables[table].max_rowid))
        conn.execute(f'DELETE FROM "{table}" WHERE rowid = ?', (rowid,))


# ---------------------------------------------------------------- the rows an answer writes

def _added(out: DbRows, top: int) -> str:
    return f"rowid > {top} AND ({out.where})"


def _values(conn: sqlite3.Connection, out: DbRows) -> list[str]:
    """The columns that hold the answer of `out`."""
    if out.values:
        return list(out.values)
    if out.columns:
        return list(out.columns)
    return [name for name, _, pk in _columns(conn, out.table) if name not in out.key and not pk]


def drop_added(out: DbRows) -> Change:
    """The last row the answer added to `out.table`, deleted."""
    return lambda task, world: _drop_added(world, out)


def _drop_added(world: World, out: DbRows) -> None:
    with state(world) as conn:
        rowid, _ = _first_row(conn, out.table, _added(out, _before(world).tables[out.table].max_rowid), last=True)
        conn.execute(f'DELETE FROM "{out.table}" WHERE rowid = ?', (rowid,))


def duplicate_added(out: DbRows) -> Change:
    """The last row the answer added to `out.table`, added once more."""
    return lambda task, world: _duplicate_added(world, out)


def _duplicate_added(world: World, out: DbRows) -> None:
    with state(world) as conn:
        _, row = _first_row(conn, out.table, _added(out, _before(world).tables[out.table].max_rowid), last=True)
        if _insert_copy(conn, out.table, row) is None:
            raise NotApplicable(f"no copy of a row fits {out.table}")


def change_answer(out: DbRows) -> Change:
    """One value of the answer's rows altered (which one turns with the seed): of the last row
    added, or of a row it changes."""
    return lambda task, world: _change_answer(world, out)


def _change_answer(world: World, out: DbRows) -> None:
    top = _before(world).tables[out.table].max_rowid
    with state(world) as conn:
        where = _added(out, top) if out.columns == () else f"({out.where})"
        rowid, row = _first_row(conn, out.table, where, last=True)
        columns = _values(conn, out)
        if not columns:
            raise NotApplicable(f"{out.table} names no column holding the answer")
        turn = world.meta.seed % len(columns)
        _edit(conn, out.table, rowid, row, columns[turn:] + columns[:turn])
