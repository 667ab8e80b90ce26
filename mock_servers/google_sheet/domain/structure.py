"""Changes to a spreadsheet's sheets: inserting rows and columns (cells shift, formula
references follow), renaming (formulas follow the new title), copying and deleting."""

from __future__ import annotations

from collections.abc import Callable

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid
from mock_servers.core.formulas import Ref
from mock_servers.core.formulas.rewrite import inserted, renamed, rewrite
from mock_servers.google_sheet.domain import row_values
from mock_servers.google_sheet.domain.book import Sheet, Spreadsheet, add_sheet, check_grid, check_title, sheets


def _rewrite_formulas(session: Session, spreadsheet: int, change: Callable[[Sheet, Ref], Ref]) -> None:
    """Apply `change(sheet holding the formula, reference)` to every formula of the spreadsheet."""
    owners = {s.pk: s for s in sheets(session, spreadsheet)}
    found = sql.run(session, "SELECT c.sheet, c.row, c.col, c.formula FROM gs_cell c JOIN gs_sheet s "
                    "ON s.pk = c.sheet WHERE s.spreadsheet = ? AND c.formula IS NOT NULL", (spreadsheet,)).fetchall()
    updates = []
    for pk, row, col, formula in found:
        owner = owners[pk]
        new = rewrite(formula, lambda ref: change(owner, ref))  # noqa: B023 (used at once)
        if new != formula:
            updates.append((new, new, pk, row, col))
    sql.cursor(session).executemany(
        "UPDATE gs_cell SET formula = ?, input = ? WHERE sheet = ? AND row = ? AND col = ?", updates)


def _targets(sheet: Sheet) -> Callable[[Sheet, Ref], bool]:
    """Whether a reference in a formula on `owner` points at `sheet`."""
    folded = sheet.title.casefold()
    return lambda owner, ref: (owner.pk == sheet.pk if ref.sheet is None else ref.sheet.casefold() == folded)


def insert(session: Session, sheet: Sheet, axis: str, at: int | None, count: int) -> Sheet:
    """Insert `count` empty rows (axis "row") or columns ("col") before 0-based `at` (None: at
    the end); the cells at or after it move on and formula references follow them."""
    size = sheet.row_count if axis == "row" else sheet.column_count
    at = size if at is None else at
    if at > size:
        raise invalid(f"start {at} is past the end of the sheet's {size} {'rows' if axis == 'row' else 'columns'}")
    rows = sheet.row_count + (count if axis == "row" else 0)
    columns = sheet.column_count + (count if axis == "col" else 0)
    check_grid(session, sheet, rows, columns)
    column = "row" if axis == "row" else "col"
    # two steps, so that no moved cell lands on a key another still holds
    sql.run(session, f"UPDATE gs_cell SET {column} = -1 - ({column} + ?) WHERE sheet = ? AND {column} >= ?",
            (count, sheet.pk, at))
    sql.run(session, f"UPDATE gs_cell SET {column} = -1 - {column} WHERE sheet = ? AND {column} < 0", (sheet.pk,))
    row_values.inserted(session, sheet.pk, axis, at, count)
    sql.run(session, "UPDATE gs_sheet SET row_count = ?, column_count = ? WHERE pk = ?", (rows, columns, sheet.pk))
    points = _targets(sheet)
    shift = inserted(axis, at, count)
    _rewrite_formulas(session, sheet.spreadsheet, lambda owner, ref: shift(ref) if points(owner, ref) else ref)
    return sheet._replace(row_count=rows, column_count=columns)


def rename(session: Session, sheet: Sheet, title: str) -> Sheet:
    check_title(title)
    clash = sql.scalar(session, "SELECT title FROM gs_sheet WHERE spreadsheet = ? AND title_key = ? AND pk != ?",
                       (sheet.spreadsheet, title.casefold(), sheet.pk))
    if clash is not None:
        raise ToolFailure(Code.ALREADY_EXISTS, f"a sheet titled '{clash}' already exists in this spreadsheet "
                          "(titles are compared without case)")
    sql.run(session, "UPDATE gs_sheet SET title = ?, title_key = ? WHERE pk = ?", (title, title.casefold(), sheet.pk))
    change = renamed(sheet.title, title)
    _rewrite_formulas(session, sheet.spreadsheet, lambda owner, ref: change(ref))
    return sheet._replace(title=title)


def delete(session: Session, sheet: Sheet) -> None:
    """Delete the sheet and its cells; the last sheet of a spreadsheet is kept."""
    if len(sheets(session, sheet.spreadsheet)) == 1:
        raise ToolFailure(Code.FAILED_PRECONDITION, f"'{sheet.title}' is the only sheet of its spreadsheet; "
                          "a spreadsheet keeps at least one sheet")
    sql.run(session, "DELETE FROM gs_cell WHERE sheet = ?", (sheet.pk,))
    sql.run(session, "DELETE FROM gs_sheet WHERE pk = ?", (sheet.pk,))
    sql.run(session, "UPDATE gs_sheet SET \"index\" = \"index\" - 1 WHERE spreadsheet = ? AND \"index\" > ?",
            (sheet.spreadsheet, sheet.position))


def copy(session: Session, source: Sheet, target: Spreadsheet, title: str) -> Sheet:
    """A copy of `source` (grid size and every cell) as the last sheet of `target`."""
    new = add_sheet(session, target, title, source.row_count, source.column_count)
    sql.run(session, "INSERT INTO gs_cell (sheet, row, col, input, formula, value, value_type) "
            "SELECT ?, row, col, input, formula, value, value_type FROM gs_cell WHERE sheet = ?",
            (new.pk, source.pk))
    row_values.copy(session, source.pk, new.pk)
    return new
