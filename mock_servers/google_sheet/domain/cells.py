"""Reading and writing the cells of one sheet: rectangles resolved from A1 ranges, values
written with USER_ENTERED semantics, the grid grown to fit; ranges of whole rows read from the
rows' stored values (row_values.py)."""

from __future__ import annotations

from itertools import groupby
from operator import itemgetter
from typing import Any, NamedTuple

import orjson
from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.errors import invalid
from mock_servers.core.formulas import Ref, parse_ref
from mock_servers.core.formulas.a1 import MAX_ROWS, render_box
from mock_servers.google_sheet.domain import row_values
from mock_servers.google_sheet.domain.book import Sheet, check_grid
from mock_servers.google_sheet.domain.values import SHOWN_KIND_SQL, SHOWN_SQL, CellInput, Entry, entered, shown

MAX_CELL_CHARS = 50_000  # the Sheets limit of one cell
_MAX_RUNS = 32  # runs of rows read cell by cell in separate queries; more: one query over them all


class Box(NamedTuple):
    """A closed rectangle of a sheet, 0-based and inclusive."""

    r1: int
    c1: int
    r2: int
    c2: int

    def a1(self, sheet: Sheet) -> str:
        return render_box(sheet.title, *self)


def ref_of(sheet: Sheet, range_: str | None) -> Ref:
    """The parsed `range_` (None: the whole sheet); a sheet prefix must name `sheet`."""
    if range_ is None:
        return parse_ref(sheet.title.replace("'", "''").join("''"))
    try:
        ref = parse_ref(range_)
    except ValueError as exc:
        raise invalid(f"range: {exc}") from None
    if ref.sheet is not None and ref.sheet.casefold() != sheet.title.casefold():
        if ref.start.row is None and ref.start.col is None:  # a bare word: not a sheet of ours
            raise invalid(f"range: '{range_}' is not an A1 range (examples: B2:C9, A2:C, B:B, 2:5, Sheet1!A1:D10)")
        raise invalid(f"range '{range_}' names sheet '{ref.sheet}', but the sheet argument is '{sheet.title}'",
                      hint="leave the sheet prefix out of the range, or make it match the sheet argument")
    return ref


def read_box(sheet: Sheet, ref: Ref) -> Box:
    """The rectangle a read covers: open sides end at the grid's edge; a range past the grid
    is INVALID_ARGUMENT, as Sheets has it."""
    r1, c1, r2, c2 = ref.bounds
    last_row = sheet.row_count - 1 if r2 is None else r2
    last_col = sheet.column_count - 1 if c2 is None else c2
    if last_row >= sheet.row_count or last_col >= sheet.column_count or r1 > last_row or c1 > last_col:
        raise invalid(f"range {render_box(sheet.title, r1, c1, max(r1, last_row), max(c1, last_col))} exceeds "
                      f"the grid limits of sheet '{sheet.title}': {sheet.row_count} rows, "
                      f"{sheet.column_count} columns", hint="add_rows or add_columns grow the grid")
    return Box(r1, c1, last_row, last_col)


def values(session: Session, sheet: Sheet, box: Box) -> list[list[Any]]:
    """The values of the rectangle, row 1 of the result being its first row; trailing empty
    rows and each row's trailing empty cells left out, as the Sheets API does. SQL shows most
    values and leaves out the cells shown as "" (`value != ''` also drops empty results)."""
    found = sql.run(session, f"SELECT row - ?, col - ?, {SHOWN_SQL}, {SHOWN_KIND_SQL} FROM gs_cell WHERE sheet = ? "
                    "AND row BETWEEN ? AND ? AND col BETWEEN ? AND ? AND value != '' ORDER BY row, col",
                    (box.r1, box.c1, sheet.pk, box.r1, box.r2, box.c1, box.c2))
    rows: list[list[Any]] = []
    for row, cells in groupby(found, itemgetter(0)):
        line: list[Any] = []
        for _, col, value, kind in cells:
            if col > len(line):
                line += [""] * (col - len(line))
            line.append(value if kind is None else shown(value, kind))
        rows += [[] for _ in range(row - len(rows))]
        rows.append(line)
    return rows


def value_rows(session: Session, sheet: Sheet, box: Box) -> list[Any]:
    """`values` of the rectangle, as a read writes them: a range from column A takes each row
    whose values are stored and fit in it as their JSON text (an orjson fragment, written as
    it is), the other rows read cell by cell."""
    if box.c1 != 0 or not row_values.present(session):
        return values(session, sheet, box)
    texts = row_values.texts(session, sheet.pk, box.r1, box.r2, box.c2 + 1)
    if len(texts) < box.r2 - box.r1 + 1:
        texts = _filled(session, sheet, box)
    while texts and texts[-1] == "[]":
        texts.pop()
    return list(map(orjson.Fragment, texts))


def _filled(session: Session, sheet: Sheet, box: Box) -> list[str]:
    """The texts of the rows of `box` up to the sheet's last row holding a cell: stored, else
    read cell by cell."""
    last = min(box.r2, last_row(session, sheet))
    found = row_values.stored(session, sheet.pk, box.r1, last, box.c2 + 1)
    missing = [r for r in range(box.r1, last + 1) if r not in found]
    for row, line in lines(session, sheet, missing, box.c1, box.c2).items():
        found[row] = row_values.text(line)
    return [found[r] for r in range(box.r1, last + 1)]


def lines(session: Session, sheet: Sheet, wanted: list[int], c1: int, c2: int) -> dict[int, list[Any]]:
    """The values of columns c1..c2 of the `wanted` rows (ascending), read cell by cell: a
    query for each run of consecutive rows, or one over them all when they are scattered."""
    runs: list[tuple[int, int]] = []
    for row in wanted:
        if runs and runs[-1][1] == row - 1:
            runs[-1] = (runs[-1][0], row)
        else:
            runs.append((row, row))
    if len(runs) > _MAX_RUNS:
        runs = [(runs[0][0], runs[-1][1])]
    out: dict[int, list[Any]] = {}
    for r1, r2 in runs:
        got = values(session, sheet, Box(r1, c1, r2, c2))
        out.update((r1 + i, line) for i, line in enumerate(got))
    return {row: out.get(row, []) for row in wanted}


def _entries(data: list[list[CellInput]]) -> list[tuple[int, int, Entry | None]]:
    out = []
    for i, line in enumerate(data):
        for j, raw in enumerate(line):
            if raw is None:
                continue
            if isinstance(raw, str) and len(raw) > MAX_CELL_CHARS:
                raise invalid(f"data[{i}][{j}] has {len(raw)} characters; a cell holds at most {MAX_CELL_CHARS}")
            out.append((i, j, entered(raw)))
    return out


def write_box(sheet: Sheet, ref: Ref, data: list[list[CellInput]]) -> Box:
    """Where `data` goes in `ref`: from its top-left corner; data larger than a closed side of
    the range is INVALID_ARGUMENT."""
    if not data or not any(data):
        raise invalid("data holds no values; give rows of values such as [[\"a\", 1]]")
    r1, c1, r2, c2 = ref.bounds
    height, width = len(data), max(len(line) for line in data)
    if r2 is not None and height > r2 - r1 + 1:
        raise invalid(f"data has {height} rows but the range has {r2 - r1 + 1}")
    if c2 is not None and width > c2 - c1 + 1:
        raise invalid(f"data has {width} columns but the range has {c2 - c1 + 1}")
    if r1 + height > MAX_ROWS:
        raise invalid(f"data would reach past row {MAX_ROWS}")
    return Box(r1, c1, r1 + height - 1, c1 + width - 1)


def write(session: Session, sheet: Sheet, box: Box, data: list[list[CellInput]]) -> tuple[Sheet, int]:
    """Write `data` at the box's corner (None keeps a cell, "" clears it), growing the grid
    to fit; returns the sheet as it now is and the number of cells written."""
    entries = _entries(data)
    rows, columns = max(sheet.row_count, box.r2 + 1), max(sheet.column_count, box.c2 + 1)
    if (rows, columns) != (sheet.row_count, sheet.column_count):
        check_grid(session, sheet, rows, columns)
        sql.run(session, "UPDATE gs_sheet SET row_count = ?, column_count = ? WHERE pk = ?", (rows, columns, sheet.pk))
        sheet = sheet._replace(row_count=rows, column_count=columns)
    row_values.drop(session, sheet.pk, box.r1, box.r2)
    cur = sql.cursor(session)
    cur.executemany("DELETE FROM gs_cell WHERE sheet = ? AND row = ? AND col = ?",
                    [(sheet.pk, box.r1 + i, box.c1 + j) for i, j, e in entries if e is None])
    cur.executemany("INSERT INTO gs_cell (sheet, row, col, input, formula, value, value_type) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (sheet, row, col) DO UPDATE SET "
                    "input = excluded.input, formula = excluded.formula, value = excluded.value, "
                    "value_type = excluded.value_type",
                    [(sheet.pk, box.r1 + i, box.c1 + j, *e) for i, j, e in entries if e is not None])
    return sheet, len(entries)


def clear(session: Session, sheet: Sheet, ref: Ref) -> Box:
    """Empty the range (open sides to the grid's edge)."""
    box = read_box(sheet, ref)
    sql.run(session, "DELETE FROM gs_cell WHERE sheet = ? AND row BETWEEN ? AND ? AND col BETWEEN ? AND ?",
            (sheet.pk, box.r1, box.r2, box.c1, box.c2))
    return box


def last_row(session: Session, sheet: Sheet) -> int:
    """The 0-based index of the last row holding a value, -1 when the sheet is empty."""
    found = sql.scalar(session, "SELECT MAX(row) FROM gs_cell WHERE sheet = ?", (sheet.pk,))
    return -1 if found is None else int(found)


def formulas(session: Session, sheet: Sheet, box: Box) -> list[list[Any]]:
    """What was entered in the rectangle (formulas as written, other cells as their values),
    trimmed as `values` trims."""
    found = sql.run(session, "SELECT row, col, formula, value, value_type FROM gs_cell WHERE sheet = ? "
                    "AND row BETWEEN ? AND ? AND col BETWEEN ? AND ? ORDER BY row, col",
                    (sheet.pk, box.r1, box.r2, box.c1, box.c2))
    rows: list[list[Any]] = []
    for row, col, formula, value, kind in found:
        while len(rows) <= row - box.r1:
            rows.append([])
        line = rows[row - box.r1]
        line.extend([""] * (col - box.c1 - len(line)))
        line.append(formula if formula is not None else shown(value, kind))
    return rows
