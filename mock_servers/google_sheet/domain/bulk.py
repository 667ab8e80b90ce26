"""Building spreadsheets in bulk, for world generators: sheets and their rows in one
executemany per sheet, formulas evaluated once at the end, the rows' shown values stored
(row_values.py) from the values entered, or once evaluated for rows holding formulas."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.formulas import date_serial
from mock_servers.google_sheet.domain import row_values
from mock_servers.google_sheet.domain.book import (
    DEFAULT_COLUMNS,
    DEFAULT_ROWS,
    Sheet,
    Spreadsheet,
    add_sheet,
    add_spreadsheet,
)
from mock_servers.google_sheet.domain.cells import lines
from mock_servers.google_sheet.domain.recalc import recalculate
from mock_servers.google_sheet.domain.values import CellInput, entered


@dataclass
class SheetSpec:
    """A sheet to build: its title and rows of USER_ENTERED values from A1 (None or "" leave
    a cell empty); the grid is at least the Sheets default and grows to fit the rows."""

    title: str
    rows: list[list[CellInput]] = field(default_factory=list)
    row_count: int = DEFAULT_ROWS
    column_count: int = DEFAULT_COLUMNS


def create(session: Session, *, task: str, seed: int, title: str, sheets: list[SheetSpec], created: str,
           today: date, time_zone: str = "UTC", folder: str | None = None,
           spreadsheet_id: str | None = None) -> Spreadsheet:
    """A spreadsheet with `sheets` (at least one) filled in; `created` (UTC ISO instant) is also
    its modified time, `today` the date TODAY() gives while building."""
    if not sheets:
        raise ValueError("a spreadsheet has at least one sheet")
    book = add_spreadsheet(session, task=task, seed=seed, title=title, created=created, time_zone=time_zone,
                           folder=folder, spreadsheet_id_=spreadsheet_id)
    with_formulas = []
    for spec in sheets:
        width = max((len(r) for r in spec.rows), default=0)
        sheet = add_sheet(session, book, spec.title, max(spec.row_count, len(spec.rows)),
                          max(spec.column_count, width))
        with_formulas.append((sheet, _fill(session, sheet, spec.rows)))
    recalculate(session, book.pk, date_serial(today))
    for sheet, rows in with_formulas:  # their values known now
        found = lines(session, sheet, rows, 0, sheet.column_count - 1)
        row_values.store(session, sheet.pk, [(row, len(line), row_values.text(line)) for row, line in found.items()])
    return book


def _fill(session: Session, sheet: Sheet, rows: list[list[CellInput]]) -> list[int]:
    """Insert the cells of `rows` and store the shown values of the rows without formulas;
    returns the rows with formulas."""
    cells: list[tuple[Any, ...]] = []
    texts: list[tuple[int, int, str]] = []
    with_formulas: list[int] = []
    for i, line in enumerate(rows):
        cells += [(sheet.pk, i, j, *entry) for j, raw in enumerate(line)
                  if raw is not None and (entry := entered(raw)) is not None]
        shown = row_values.entered_text(line)
        if shown is None:
            with_formulas.append(i)
        else:
            texts.append((i, *shown))
    sql.cursor(session).executemany("INSERT INTO gs_cell (sheet, row, col, input, formula, value, value_type) "
                                    "VALUES (?, ?, ?, ?, ?, ?, ?)", cells)
    row_values.store(session, sheet.pk, texts)
    return with_formulas
