"""Changes to the workspace: an input file appended to, moved or deleted (side effects), and
the table an answer writes (`TableFile`) with one row dropped, duplicated or invented, one
value altered or two values swapped (wrong answers), or written another way the instruction
allows (variants: text padded with spaces, case changed where case is free, numbers as text,
native date and time cells)."""

from __future__ import annotations

import csv
import io
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from openpyxl import load_workbook

from loca.adversary.base import NotApplicable, Once, Rewrite
from loca.adversary.values import alterable, altered
from loca.core.outputs import TableFile, csv_text
from loca.core.script import ToolRequest
from mock_servers.core.snapshot import Snapshot

if TYPE_CHECKING:
    from envs.core.registry import Task
    from loca.core.world import World

_WS = re.compile(r"\s+")


def _inputs(world: World) -> list[str]:
    """The workspace files the agent must leave as they are, turned by the seed."""
    found = sorted(Snapshot.model_validate(world.read_truth("snapshot.json")).files)
    if not found:
        raise NotApplicable("the workspace has no input file")
    turn = world.meta.seed % len(found)
    return found[turn:] + found[:turn]


def append_to_input(task: Task, world: World) -> None:
    """A line appended to an input file (a note, a log line)."""
    with open(world.workspace / _inputs(world)[0], "ab") as fh:
        fh.write(b"\nchecked\n")


def move_input(task: Task, world: World) -> None:
    """An input file moved into a folder of its own (tidied away)."""
    name = _inputs(world)[0]
    (world.workspace / "done").mkdir(exist_ok=True)
    shutil.move(world.workspace / name, world.workspace / "done" / name.replace("/", "_"))


def delete_input(task: Task, world: World) -> None:
    (world.workspace / _inputs(world)[0]).unlink()


# ---------------------------------------------------------------- the table an answer writes

@dataclass
class Table:
    """An answer's table as stored: its header row and its non-empty data rows."""

    header: list[Any]
    rows: list[list[Any]]

    def index(self, names: tuple[str, ...]) -> list[int]:
        shown = [_WS.sub(" ", str(h or "")).strip() for h in self.header]
        return [shown.index(n) for n in names if n in shown]


def _blank(row: list[Any]) -> bool:
    return all(v is None or str(v).strip() == "" for v in row)


def _load(world: World, out: TableFile) -> Table:
    path = world.workspace / out.file
    if not path.is_file():
        raise NotApplicable(f"{out.file} is not in the workspace")
    if out.kind == "csv":
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"), newline="")))
    else:
        wb = load_workbook(path)
        ws = wb[out.sheet] if out.sheet in wb.sheetnames else wb.worksheets[0]
        rows = [list(r) for r in ws.iter_rows(values_only=True)]
    if not rows:
        raise NotApplicable(f"{out.file} is empty")
    return Table(rows[0], [r for r in rows[1:] if not _blank(r)])


def _store(world: World, out: TableFile, table: Table) -> None:
    path = world.workspace / out.file
    if out.kind == "csv":
        path.write_text(csv_text(table.header, table.rows), encoding="utf-8")
        return
    wb = load_workbook(path)
    ws = wb[out.sheet] if out.sheet in wb.sheetnames else wb.worksheets[0]
    ws.delete_rows(2, max(1, ws.max_row))
    for row in table.rows:
        ws.append(row)
    wb.save(path)


def _data(table: Table) -> list[list[Any]]:
    if not table.rows:
        raise NotApplicable("the table has no data row")
    return table.rows


def drop_row(table: Table, out: TableFile, seed: int) -> None:
    _data(table).pop()


def duplicate_row(table: Table, out: TableFile, seed: int) -> None:
    table.rows.append(list(_data(table)[0]))


def extra_row(table: Table, out: TableFile, seed: int) -> None:
    """A row the answer does not have: the first row with its key altered."""
    row = list(_data(table)[0])
    keys = table.index(out.key)
    if not keys or not all(alterable(row[k]) for k in keys):
        raise NotApplicable("no key to alter")
    for k in keys:
        row[k] = altered(row[k])
    table.rows.append(row)


def _open(table: Table, out: TableFile, row: list[Any]) -> list[int]:
    """The columns of `row` outside the key whose value can be altered."""
    keys = set(table.index(out.key))
    return [j for j, v in enumerate(row) if j not in keys and j < len(table.header) and alterable(v)]


def change_value(table: Table, out: TableFile, seed: int) -> None:
    """One value of a row altered (which one turns with the seed)."""
    for row in _data(table):
        columns = _open(table, out, row)
        if columns:
            j = columns[seed % len(columns)]
            row[j] = altered(row[j])
            return
    raise NotApplicable("no value to alter")


def swap_values(table: Table, out: TableFile, seed: int) -> None:
    """Two different values of the same kind in one row, each in the other's place."""
    norms = {c.name: c.norm for c in out.columns}
    for row in _data(table):
        columns = _open(table, out, row)
        kinds = [(norms.get(str(table.header[j]).strip()), type(row[j])) for j in columns]
        pairs = [(a, b) for i, a in enumerate(columns) for b in columns[i + 1:]
                 if kinds[columns.index(a)] == kinds[columns.index(b)] and row[a] != row[b]]
        if pairs:
            a, b = pairs[seed % len(pairs)]
            row[a], row[b] = row[b], row[a]
            return
    raise NotApplicable("no two values of the same kind differ in a row")


Perturb = Callable[[Table, TableFile, int], None]


def perturbed(out: TableFile, perturb: Perturb) -> Callable[[Task, World], None]:
    """A world change that applies `perturb` to the table of `out` as stored."""

    def alter(task: Task, world: World) -> None:
        table = _load(world, out)
        perturb(table, out, world.meta.seed)
        _store(world, out, table)

    return alter


# ---------------------------------------------------------------- allowed renderings

CellChange = Callable[[Any, str | None], Any]  # (cell, the column's normalisation) -> cell


def padded(value: Any, norm: str | None) -> Any:
    """Text with a space before and after (every text normalisation trims)."""
    return f" {value} " if isinstance(value, str) and value.strip() else value


def recased(value: Any, norm: str | None) -> Any:
    """Text in upper case where the column compares without case."""
    return value.upper() if norm in ("Si", "E") and isinstance(value, str) else value


def as_text(value: Any, norm: str | None) -> Any:
    """A number written as text where the column reads numbers from text too."""
    return str(value) if norm in ("N", "I") and isinstance(value, int | float) and not isinstance(value, bool) \
        else value


def native(value: Any, norm: str | None) -> Any:
    """A date or time written as text, as a native cell instead."""
    if isinstance(value, str) and norm == "date" and re.fullmatch(r"\d{1,2}/\d{1,2}/\d{4}", value.strip()):
        return datetime.strptime(value.strip(), "%m/%d/%Y")
    if isinstance(value, str) and norm == "time" and re.fullmatch(r"\d{1,2}:\d{2}", value.strip()):
        return datetime.strptime(value.strip(), "%H:%M").time()
    return value


def _rendered(table: Table, out: TableFile, change: CellChange) -> bool:
    """Apply `change` to every data cell; whether any cell changed."""
    norms = {c.name: c.norm for c in out.columns}
    names = [_WS.sub(" ", str(h or "")).strip() for h in table.header]
    changed = False
    for row in table.rows:
        for j, value in enumerate(row):
            new = change(value, norms.get(names[j]) if j < len(names) else None)
            changed = changed or new != value or type(new) is not type(value)
            row[j] = new
    return changed


def rendered_after(out: TableFile, change: CellChange) -> Callable[[Task, World], None]:
    """A world change writing the stored table of `out` another allowed way."""

    def alter(task: Task, world: World) -> None:
        table = _load(world, out)
        if not _rendered(table, out, change):
            raise NotApplicable(f"no cell of {out.file} to write another way")
        _store(world, out, table)

    return alter


def rendered_during(out: TableFile, change: CellChange) -> Callable[[Task, World], Rewrite]:
    """A rewriter of the call that writes the CSV text of `out` (its copies elsewhere, an
    upload or an attachment made from the file, follow)."""

    def make(task: Task, world: World) -> Rewrite:
        def rewrite(request: ToolRequest) -> ToolRequest | None:
            args = request.arguments
            if isinstance(args, str) or args.get("path") != out.file or not isinstance(args.get("content"), str):
                return None
            rows = list(csv.reader(io.StringIO(args["content"], newline="")))
            table = Table(rows[0], [r for r in rows[1:] if not _blank(r)])
            if not _rendered(table, out, change):
                return None
            return ToolRequest(request.name, {**args, "content": csv_text(table.header, table.rows)})

        return Once(rewrite)

    return make
