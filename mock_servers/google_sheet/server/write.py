"""Writing tools: update a range, several ranges at once (all or nothing), append rows, clear
a range. Every write recalculates the formulas that read the cells it changed."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mock_servers.core.errors import ToolFailure, invalid
from mock_servers.core.formulas import parse_ref
from mock_servers.core.toolkit import Call
from mock_servers.google_sheet import domain
from mock_servers.google_sheet.domain import Box, Sheet
from mock_servers.google_sheet.server.base import (
    CellRows,
    Range,
    Rows,
    SheetTitle,
    SpreadsheetId,
    changed,
    target,
    toolbox,
)

MAX_BATCH_RANGES = 100


def _updated(sheet: Sheet, box: Box, cells: int) -> dict[str, Any]:
    return {"updatedRange": box.a1(sheet), "updatedRows": box.r2 - box.r1 + 1,
            "updatedColumns": box.c2 - box.c1 + 1, "updatedCells": cells}


@toolbox.tool(rw="write", core=True, idempotent=True, destructive=True)
def update_cells(call: Call, spreadsheet_id: SpreadsheetId, sheet: SheetTitle, range: Range,
                 data: Rows) -> dict[str, Any]:
    """Write rows of values into a range, starting at its top-left cell, as typed in the
    Sheets UI (USER_ENTERED: "12" becomes a number, "TRUE" a boolean, "2025-01-15" a date,
    "=SUM(A1:A3)" a formula, "'12" the text 12; other date and time forms such as 3/15/2025 or
    10:30 are INVALID_ARGUMENT, and so is a formula this server cannot compute as Sheets would:
    one calling QUERY, FILTER or another Sheets function it lacks, holding an array literal
    {1,2} or returning a range such as =A1:A3; an unknown name is #NAME? as in Sheets). Data
    with more rows or columns than a closed range is INVALID_ARGUMENT; open ranges (A2:C, B:B)
    take any number of rows. The grid grows to fit. Formulas depending on the cells are
    recalculated."""
    book, found = target(call, spreadsheet_id, sheet)
    box = domain.write_box(found, domain.ref_of(found, range), data)
    found, cells = domain.write(call.session, found, box, data)
    changed(call, book, [(found, box)])
    return {"spreadsheetId": book.id, **_updated(found, box, cells)}


@toolbox.tool(rw="write", core=True, idempotent=True, destructive=True)
def batch_update_cells(call: Call, spreadsheet_id: SpreadsheetId, sheet: SheetTitle,
                       ranges: Annotated[dict[str, CellRows], Field(description=(
                           f"Map of A1 range -> rows of values, e.g. {{\"A1:B2\": [[1, 2], [3, 4]]}} "
                           f"(at most {MAX_BATCH_RANGES} ranges), each written as update_cells writes"))]
                       ) -> dict[str, Any]:
    """Write several ranges of one sheet in one call, all or nothing: if any range or its data
    is invalid nothing is written. Returns the total of updated cells and one response per
    range (updatedRange, updatedRows, updatedColumns, updatedCells)."""
    if not ranges:
        raise invalid("ranges is empty; give at least one A1 range with its rows of values")
    if len(ranges) > MAX_BATCH_RANGES:
        raise invalid(f"{len(ranges)} ranges; at most {MAX_BATCH_RANGES} per call")
    book, found = target(call, spreadsheet_id, sheet)
    planned = []
    for range_, data in ranges.items():
        try:
            planned.append((domain.write_box(found, domain.ref_of(found, range_), data), data))
        except ToolFailure as exc:
            raise invalid(f"range '{range_}': {exc.message}", hint="nothing was written") from None
    responses, total = [], 0
    for box, data in planned:
        found, cells = domain.write(call.session, found, box, data)
        total += cells
        responses.append(_updated(found, box, cells))
    changed(call, book, [(found, box) for box, _data in planned])
    return {"spreadsheetId": book.id, "totalUpdatedCells": total, "responses": responses}


@toolbox.tool(rw="write")
def append_rows(call: Call, spreadsheet_id: SpreadsheetId, sheet: SheetTitle, data: Rows) -> dict[str, Any]:
    """Append rows after the last non-empty row of the sheet, from column A (values are
    entered as update_cells enters them; the grid grows to fit). Returns the range written."""
    book, found = target(call, spreadsheet_id, sheet)
    start = domain.last_row(call.session, found) + 1
    box = domain.write_box(found, parse_ref(f"A{start + 1}:ZZZ"), data)
    found, _cells = domain.write(call.session, found, box, data)
    changed(call, book, [(found, box)])
    return {"updatedRange": box.a1(found), "updatedRows": box.r2 - box.r1 + 1}


@toolbox.tool(rw="write", idempotent=True, destructive=True)
def clear_range(call: Call, spreadsheet_id: SpreadsheetId, sheet: SheetTitle, range: Range) -> dict[str, Any]:
    """Empty every cell of a range (the grid keeps its size). Formulas reading the cells are
    recalculated."""
    book, found = target(call, spreadsheet_id, sheet)
    box = domain.clear(call.session, found, domain.ref_of(found, range))
    changed(call, book, [(found, box)])
    return {"clearedRange": box.a1(found)}
