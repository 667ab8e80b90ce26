"""What every google_sheet tool shares: the toolbox, parameter types, and the steps around a
read or a write (finding the spreadsheet and sheet, recalculating, the modified time)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field

from mock_servers.core.formulas import date_serial
from mock_servers.core.formulas.known import formula_problem
from mock_servers.core.output import dump_json, items_that_fit
from mock_servers.core.toolkit import Call, Toolbox
from mock_servers.core.types import CellValue
from mock_servers.google_sheet import domain
from mock_servers.google_sheet.domain import Box, Sheet, Spreadsheet
from mock_servers.google_sheet.domain.values import sheets_date_time

toolbox = Toolbox("google_sheet", table_prefix="gs_", list_keys=("spreadsheets", "sheets", "results", "responses"),
                  snapshot_ignore={"gs_row_values": None},  # derived from gs_cell
                  snapshot_unordered=("gs_cell",),  # a cell is its place: cleared and written again, the same
                  instructions="Google Sheets: spreadsheets (44-character ids, see list_spreadsheets) holding "
                  "sheets of cells addressed in A1 notation (B2:C9, A2:C, B:B, 2:5). Values are entered as "
                  "typed in the Sheets UI: numbers, TRUE/FALSE, YYYY-MM-DD dates, =formulas, 'text.")
build = toolbox.build

SpreadsheetId = Annotated[str, Field(min_length=1, max_length=100,
                                     description="Spreadsheet id (44 characters, from list_spreadsheets)")]
SheetTitle = Annotated[str, Field(min_length=1, max_length=100,
                                  description="Sheet title, e.g. Sheet1 (see list_sheets)")]
RANGE_TEXT = ("A1 range such as B2:C9, A2:C (open below), B:B, 2:5 or Sheet1!A1:D10; a sheet prefix "
              "must name the sheet argument")
Range = Annotated[str, Field(min_length=1, max_length=300, description=RANGE_TEXT)]
OptionalRange = Annotated[str | None, Field(max_length=300, description=RANGE_TEXT + "; omit for the whole sheet")]


def storable_rows(rows: list[list[CellValue]]) -> list[list[CellValue]]:
    """Rows as given, unless a cell cannot be stored faithfully (a ValueError): a text the Sheets
    UI would read as a date or time this server does not store (it takes dates only as
    YYYY-MM-DD, and no times), or a formula it cannot compute as Sheets would."""
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            if not isinstance(cell, str):
                continue
            if sheets_date_time(cell):
                raise ValueError(f"[{i}][{j}] '{cell[:40]}' would be a date or time in Sheets, and this server takes "
                                 "dates only as YYYY-MM-DD (no times); write e.g. 2025-03-15, or "
                                 f"'{cell[:40]} to keep it as text")
            problem = formula_problem(cell) if cell.startswith("=") and cell.strip() != "=" else None
            if problem:
                raise ValueError(f"[{i}][{j}] {cell[:60]} {problem} (or write the value itself)")
    return rows


CellRows = Annotated[list[list[CellValue]], AfterValidator(storable_rows)]
Rows = Annotated[CellRows, Field(
    min_length=1, description="Rows of cell values, first row at the range's first row; numbers, booleans, "
    "dates as YYYY-MM-DD (other date or time forms, such as 3/15/2025 or 10:30, are refused), text (a "
    "leading = makes a formula, a leading ' keeps text as text), \"\" clears a cell, null leaves it")]


ENVELOPE_CHARS = 800  # ids, ranges and a notice around the rows of a read


def target(call: Call, spreadsheet_id: str, sheet: str) -> tuple[Spreadsheet, Sheet]:
    book = domain.find(call.session, spreadsheet_id)
    return book, domain.sheet(call.session, book, sheet)


def today(call: Call) -> float:
    """The world's date today as a day number (for TODAY())."""
    return date_serial(call.world.clock.local(call.now).date())


def changed(call: Call, book: Spreadsheet, cells: list[tuple[Sheet, Box]] | None = None) -> None:
    """After a write to `book`: the formulas reading the changed `cells` (every formula when
    None: the structure changed) recalculated, its modified time now."""
    boxes = None if cells is None else [(sheet.pk, box) for sheet, box in cells]
    domain.recalculate(call.session, book.pk, today(call), boxes)
    domain.touch(call.session, book.pk, call.now)


def fitting_rows(call: Call, rows: list[Any], render: Any, share: int = 1) -> int:
    """How many of `rows` fit in the output cap (divided among `share` results) when rendered
    by `render(n)`, with room left for the envelope and a notice; at least one (a row too
    long alone has its strings shortened by the cap)."""
    room = call.max_output_chars // share
    limit = max(room - ENVELOPE_CHARS, room // 2)
    if len(dump_json(render(len(rows)))) <= limit:
        return len(rows)
    return max(1, items_that_fit(len(rows), render, limit))


def cut_notice(sheet: Sheet, box: Box, shown: int) -> str:
    rest = Box(box.r1 + shown, box.c1, box.r2, box.c2).a1(sheet)
    return f"output cap reached after {shown} rows; request the rest with range={rest}"


def fit_values(call: Call, sheet: Sheet, box: Box, rows: list[Any],
               share: int = 1) -> tuple[Box, list[Any], str | None]:
    """The rows of `box` that fit in the output cap (divided among `share` results): (the box
    they cover, the rows, a notice saying how to get the rest, or None when all fit). A first
    row too wide alone is cut at a cell (read cell by cell when it came as JSON text, an orjson
    fragment)."""
    room = call.max_output_chars // share
    limit = max(room - ENVELOPE_CHARS, room // 2)
    if len(dump_json(rows)) <= limit:
        return box, rows, None
    fit = items_that_fit(len(rows), lambda n: rows[:n], limit)
    if fit:
        return Box(box.r1, box.c1, box.r1 + fit - 1, box.c2), rows[:fit], cut_notice(sheet, box, fit)
    first = rows[0] if isinstance(rows[0], list) else domain.values(call.session, sheet, box._replace(r2=box.r1))[0]
    cells = max(1, items_that_fit(len(first), lambda n: [first[:n]], limit))
    rest = Box(box.r1, box.c1 + cells, box.r1, box.c2).a1(sheet)
    after = Box(box.r1 + 1, box.c1, box.r2, box.c2).a1(sheet) if box.r2 > box.r1 else None
    notice = (f"output cap reached after {cells} cells of row {box.r1 + 1}; request the rest with range={rest}"
              + (f", then range={after}" if after else ""))
    return Box(box.r1, box.c1, box.r1, box.c1 + cells - 1), [first[:cells]], notice
