"""Structure tools: workbooks and worksheets, merged cells, moving ranges, and inserting or
deleting rows and columns."""

from __future__ import annotations

from typing import Annotated, Literal

from openpyxl import Workbook
from openpyxl.utils import get_column_letter
from pydantic import Field

from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.toolkit import Call
from mock_servers.core.types import Int
from mock_servers.excel import layout
from mock_servers.excel.areas import MAX_COL, MAX_ROW, box, in_sheet
from mock_servers.excel.limits import check_growth
from mock_servers.excel.server.base import (
    EndCell,
    FilePath,
    SheetName,
    StartCell,
    bounded,
    free_title,
    open_book,
    open_sheet,
    plural,
    room,
    toolbox,
)
from mock_servers.excel.workbook import check_new_title, workbook_file, worksheet


@toolbox.tool(rw="write", core=True)
def create_workbook(call: Call, filepath: FilePath) -> dict:
    """Create a new empty .xlsx workbook with one sheet named Sheet1; returns
    `{message,filepath}`. The folder must exist; an existing file is never replaced."""
    book = workbook_file(call, filepath, must_exist=False)
    if book.path.exists():
        raise ToolFailure(Code.ALREADY_EXISTS, f"{book.shown} already exists")
    if book.macros:
        raise invalid("create_workbook makes .xlsx files; use a .xlsx name")
    if not book.path.parent.is_dir():
        raise not_found(f"the folder of {book.shown} does not exist",
                        hint="create it with the filesystem create_directory tool")
    wb = Workbook()
    wb.active.title = "Sheet1"
    book.save(call, wb)
    return {"message": f"Created workbook {book.shown} with sheet Sheet1", "filepath": book.shown}


@toolbox.tool(rw="write", core=True)
def create_worksheet(call: Call, filepath: FilePath, sheet_name: SheetName) -> dict:
    """Add an empty worksheet at the end of the workbook; returns `{message}`. Sheet names are
    1-31 characters without \\ / * ? : [ ] and must be unique (ignoring case)."""
    book, wb = open_book(call, filepath)
    check_new_title(wb, sheet_name, book)
    wb.create_sheet(sheet_name)
    book.save(call, wb)
    return {"message": f"Created sheet '{sheet_name}' in {book.shown}"}


@toolbox.tool(rw="write")
def copy_worksheet(
    call: Call,
    filepath: FilePath,
    source_sheet: Annotated[str, Field(description="sheet to copy")],
    target_sheet: Annotated[str, Field(description="name of the new copy")],
) -> dict:
    """Copy a worksheet (values, formulas, styles, merged cells, row and column sizes) into a
    new sheet at the end of the workbook; charts, images and tables are not copied. Returns
    `{message}`."""
    book, wb = open_book(call, filepath)
    source = worksheet(wb, source_sheet, book)
    check_new_title(wb, target_sheet, book)
    check_growth(wb, len(source._cells))
    wb.copy_worksheet(source).title = target_sheet
    book.save(call, wb)
    return {"message": f"Copied sheet '{source_sheet}' to '{target_sheet}' in {book.shown}"}


@toolbox.tool(rw="write", destructive=True)
def delete_worksheet(call: Call, filepath: FilePath, sheet_name: SheetName) -> dict:
    """Delete a worksheet and everything on it; returns `{message}`. The last sheet of a
    workbook cannot be deleted."""
    book, wb, ws = open_sheet(call, filepath, sheet_name)
    if len(wb.sheetnames) == 1:
        raise ToolFailure(Code.FAILED_PRECONDITION,
                          f"'{sheet_name}' is the only sheet of {book.shown}; a workbook needs one")
    wb.remove(ws)
    book.save(call, wb)
    return {"message": f"Deleted sheet '{sheet_name}' from {book.shown}"}


@toolbox.tool(rw="write")
def rename_worksheet(
    call: Call,
    filepath: FilePath,
    old_name: Annotated[str, Field(description="current sheet name")],
    new_name: Annotated[str, Field(description="new sheet name (1-31 characters, unique)")],
) -> dict:
    """Rename a worksheet; returns `{message}`. Formulas elsewhere that name the old sheet are
    not rewritten."""
    book, wb = open_book(call, filepath)
    ws = worksheet(wb, old_name, book)
    check_new_title(wb, new_name, book, ignore=old_name)
    if new_name.lower() == old_name.lower():  # openpyxl counts the sheet's own name as taken
        ws.title = free_title(wb, "renaming")
    ws.title = new_name
    book.save(call, wb)
    return {"message": f"Renamed sheet '{old_name}' to '{new_name}' in {book.shown}"}


@toolbox.tool(rw="write", destructive=True)
def merge_cells(call: Call, filepath: FilePath, sheet_name: SheetName,
                start_cell: StartCell, end_cell: EndCell) -> dict:
    """Merge a range into one cell; only the top-left value is kept. Returns
    `{message,range}`. The range may not overlap an existing merged range."""
    book, wb, ws = open_sheet(call, filepath, sheet_name)
    area = room(wb, ws, box(start_cell, end_cell), "the merge")
    layout.merge(ws, area)
    book.save(call, wb)
    return {"message": f"Merged {in_sheet(ws.title, area)}", "range": area.a1}


@toolbox.tool(rw="write")
def unmerge_cells(call: Call, filepath: FilePath, sheet_name: SheetName,
                  start_cell: StartCell, end_cell: EndCell) -> dict:
    """Split a merged range back into cells (the value stays in the top-left cell). The range
    must be exactly one merged range (see get_merged_cells). Returns `{message,range}`."""
    book, wb, ws = open_sheet(call, filepath, sheet_name)
    area = box(start_cell, end_cell)
    merged = layout.merged_boxes(ws)
    if area not in merged:
        raise not_found(f"{area.a1} is not a merged range of '{ws.title}'; merged: "
                        + (", ".join(m.a1 for m in merged) or "none"))
    ws.unmerge_cells(area.a1)
    book.save(call, wb)
    return {"message": f"Unmerged {in_sheet(ws.title, area)}", "range": area.a1}


@toolbox.tool(rw="write", destructive=True)
def copy_range(
    call: Call,
    filepath: FilePath,
    sheet_name: SheetName,
    source_start: Annotated[str, Field(description="top-left cell of the source range")],
    source_end: Annotated[str, Field(description="bottom-right cell of the source range")],
    target_start: Annotated[str, Field(description="top-left cell of the destination")],
    target_sheet: Annotated[str | None, Field(
        description="destination sheet (default: the same sheet)")] = None,
) -> dict:
    """Copy values and styles of a range to another place (same or other sheet), overwriting
    the destination; relative references in formulas shift with the copy. Returns
    `{message,range}` (the destination). At most 100000 cells."""
    book, wb, ws = open_sheet(call, filepath, sheet_name)
    area = bounded(box(source_start, source_end), "the source")
    target = worksheet(wb, target_sheet, book) if target_sheet else ws
    dest = room(wb, target, box(target_start).sized(area.rows, area.cols), "the destination")
    layout.copy_range(ws, area, target, dest)
    book.save(call, wb)
    return {"message": f"Copied {in_sheet(ws.title, area)} to {in_sheet(target.title, dest)}",
            "range": dest.a1}


@toolbox.tool(rw="write", destructive=True)
def delete_range(
    call: Call,
    filepath: FilePath,
    sheet_name: SheetName,
    start_cell: StartCell,
    end_cell: EndCell,
    shift_direction: Annotated[Literal["up", "left"], Field(
        description="how the remaining cells move in: up (cells below) or left (cells to the "
                    "right)")] = "up",
) -> dict:
    """Delete the cells of a range and shift the cells below it up (or those to its right
    left), like Excel's Delete Cells. Returns `{message}`. Refused when merged cells are in
    the way; formula references are not rewritten."""
    book, wb, ws = open_sheet(call, filepath, sheet_name)
    area = box(start_cell, end_cell)
    layout.delete_range(ws, area, shift_direction)
    book.save(call, wb)
    return {"message": f"Deleted {in_sheet(ws.title, area)}, shifting cells {shift_direction}"}


def _check_room(used_end: int, start: int, count: int, limit: int, what: str) -> None:
    if start <= used_end and used_end + count > limit:
        raise invalid(f"inserting {count} {what}s would push data past the sheet's last {what} "
                      f"({limit})")


@toolbox.tool(rw="write")
def insert_rows(
    call: Call,
    filepath: FilePath,
    sheet_name: SheetName,
    start_row: Annotated[Int, Field(ge=1, le=MAX_ROW, description="1-based row the new rows take")],
    count: Annotated[Int, Field(ge=1, le=MAX_ROW, description="rows to insert (default 1)")] = 1,
) -> dict:
    """Insert empty rows before start_row, moving that row and those below down. Returns
    `{message}`. Merged ranges follow; formula references, tables and charts are not
    rewritten."""
    book, wb, ws = open_sheet(call, filepath, sheet_name)
    _check_room(ws.max_row, start_row, count, MAX_ROW, "row")
    with layout.merges_follow(ws, "row", start_row, count):
        layout.shift_cells(ws, "row", start_row, count)
    book.save(call, wb)
    return {"message": f"Inserted {plural(count, 'row')} at row {start_row} of '{ws.title}'"}


@toolbox.tool(rw="write", destructive=True)
def delete_sheet_rows(
    call: Call,
    filepath: FilePath,
    sheet_name: SheetName,
    start_row: Annotated[Int, Field(ge=1, le=MAX_ROW, description="first row to delete (1-based)")],
    count: Annotated[Int, Field(ge=1, le=MAX_ROW, description="rows to delete (default 1)")] = 1,
) -> dict:
    """Delete whole rows, moving the rows below up. Returns `{message}`. Merged ranges follow;
    formula references, tables and charts are not rewritten."""
    book, wb, ws = open_sheet(call, filepath, sheet_name)
    with layout.merges_follow(ws, "row", start_row, -count):
        layout.shift_cells(ws, "row", start_row, -count)
    book.save(call, wb)
    return {"message": f"Deleted {plural(count, 'row')} from row {start_row} of '{ws.title}'"}


@toolbox.tool(rw="write")
def insert_columns(
    call: Call,
    filepath: FilePath,
    sheet_name: SheetName,
    start_col: Annotated[Int, Field(ge=1, le=MAX_COL,
                                    description="1-based column the new columns take (A=1)")],
    count: Annotated[Int, Field(ge=1, le=MAX_COL, description="columns to insert (default 1)")] = 1,
) -> dict:
    """Insert empty columns before start_col (A=1), moving that column and those to its right.
    Returns `{message}`. Merged ranges follow; formula references, tables and charts are not
    rewritten."""
    book, wb, ws = open_sheet(call, filepath, sheet_name)
    _check_room(ws.max_column, start_col, count, MAX_COL, "column")
    with layout.merges_follow(ws, "col", start_col, count):
        layout.shift_cells(ws, "col", start_col, count)
    book.save(call, wb)
    return {"message": f"Inserted {plural(count, 'column')} at column "
                       f"{get_column_letter(start_col)} of '{ws.title}'"}


@toolbox.tool(rw="write", destructive=True)
def delete_sheet_columns(
    call: Call,
    filepath: FilePath,
    sheet_name: SheetName,
    start_col: Annotated[Int, Field(ge=1, le=MAX_COL, description="first column to delete (A=1)")],
    count: Annotated[Int, Field(ge=1, le=MAX_COL, description="columns to delete (default 1)")] = 1,
) -> dict:
    """Delete whole columns, moving the columns to the right left. Returns `{message}`. Merged
    ranges follow; formula references, tables and charts are not rewritten."""
    book, wb, ws = open_sheet(call, filepath, sheet_name)
    with layout.merges_follow(ws, "col", start_col, -count):
        layout.shift_cells(ws, "col", start_col, -count)
    book.save(call, wb)
    return {"message": f"Deleted {plural(count, 'column')} from column "
                       f"{get_column_letter(start_col)} of '{ws.title}'"}
