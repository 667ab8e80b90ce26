"""Reading tools: sheet data (values or grid data), formulas, several ranges at once, and
summaries of spreadsheets."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from mock_servers.core.errors import ToolFailure, not_found
from mock_servers.core.toolkit import Call
from mock_servers.core.types import Int
from mock_servers.google_sheet import domain
from mock_servers.google_sheet.domain import Box, Sheet
from mock_servers.google_sheet.domain.grid import grid_rows
from mock_servers.google_sheet.server.base import (
    OptionalRange,
    Range,
    SheetTitle,
    SpreadsheetId,
    cut_notice,
    fit_values,
    fitting_rows,
    target,
    toolbox,
)


def _value_range(call: Call, sheet: Sheet, box: Box, share: int = 1) -> tuple[str, list[Any], str | None]:
    """(range returned, values, notice when the output cap cut the rows)."""
    shown, rows, notice = fit_values(call, sheet, box, domain.value_rows(call.session, sheet, box), share)
    return shown.a1(sheet), rows, notice


@toolbox.tool(rw="read", core=True)
def get_sheet_data(call: Call, spreadsheet_id: SpreadsheetId, sheet: SheetTitle, range: OptionalRange = None,
                   include_grid_data: Annotated[bool, Field(description=(
                       "Return grid data (userEnteredValue, effectiveValue, formattedValue per cell) "
                       "instead of plain values"))] = False) -> dict[str, Any]:
    """Read a range of a sheet (default: the whole sheet). Values come row by row, the first
    row of `values` being the range's first row; trailing empty rows and cells are left out;
    numbers and booleans are JSON values, dates YYYY-MM-DD, formula cells their computed
    value. A range past the sheet's grid (rowCount x columnCount) is INVALID_ARGUMENT. Large
    ranges are cut at a row boundary under the output cap; `range` says which rows came back
    and `notice` how to get the rest."""
    book, found = target(call, spreadsheet_id, sheet)
    box = domain.read_box(found, domain.ref_of(found, range))
    if include_grid_data:
        return _grid_data(call, book.id, found, box)
    returned, values, notice = _value_range(call, found, box)
    result: dict[str, Any] = {"spreadsheetId": book.id, "valueRanges": [
        {"range": returned, "majorDimension": "ROWS", "values": values}],
        "rowCount": found.row_count, "columnCount": found.column_count}
    if notice:
        result["notice"] = notice
    return result


def _grid_data(call: Call, spreadsheet_id: str, sheet: Sheet, box: Box) -> dict[str, Any]:
    rows = grid_rows(call.session, sheet, box)

    def render(n: int) -> dict[str, Any]:
        return {"spreadsheetId": spreadsheet_id, "sheets": [{
            "properties": {"sheetId": sheet.sheet_id, "title": sheet.title, "gridProperties": {
                "rowCount": sheet.row_count, "columnCount": sheet.column_count}},
            "data": [{"startRow": box.r1, "startColumn": box.c1, "rowData": rows[:n]}]}]}
    fit = fitting_rows(call, rows, render)
    result = render(fit)
    if fit < len(rows):
        result["notice"] = cut_notice(sheet, box, fit)
    return result


@toolbox.tool(rw="read")
def get_sheet_formulas(call: Call, spreadsheet_id: SpreadsheetId, sheet: SheetTitle,
                       range: OptionalRange = None) -> dict[str, Any]:
    """Read what was entered in a range (default: the whole sheet): formulas as written
    (=SUM(B2:B9)), other cells as their values. Trimmed and capped as get_sheet_data."""
    book, found = target(call, spreadsheet_id, sheet)
    box = domain.read_box(found, domain.ref_of(found, range))
    shown, rows, notice = fit_values(call, found, box, domain.formulas(call.session, found, box))
    result: dict[str, Any] = {"spreadsheetId": book.id, "range": shown.a1(found), "values": rows}
    if notice:
        result["notice"] = notice
    return result


class Query(BaseModel):
    model_config = ConfigDict(extra="forbid")
    spreadsheet_id: SpreadsheetId
    sheet: SheetTitle
    range: Range


@toolbox.tool(rw="read")
def get_multiple_sheet_data(call: Call, queries: Annotated[list[Query], Field(
        min_length=1, max_length=20, description="1 to 20 {spreadsheet_id, sheet, range} to read")]) -> dict[str, Any]:
    """Read several ranges, possibly of different spreadsheets. Each result has the values of
    its range (as get_sheet_data) or an error; the call fails only when every query does. The
    output cap is shared among the queries."""
    results: list[dict[str, Any]] = []
    failures = []
    for query in queries:
        head = {"spreadsheet_id": query.spreadsheet_id, "sheet": query.sheet, "range": query.range}
        try:
            _book, found = target(call, query.spreadsheet_id, query.sheet)
            box = domain.read_box(found, domain.ref_of(found, query.range))
            returned, values, notice = _value_range(call, found, box, len(queries))
        except ToolFailure as exc:
            failures.append(exc)
            results.append({**head, "error": f"{exc.code.value}: {exc.message}"})
            continue
        results.append({**head, "range": returned, "values": values} | ({"notice": notice} if notice else {}))
    if len(failures) == len(queries):
        first = failures[0]
        raise ToolFailure(first.code, "; ".join(r["error"] for r in results), first.hint)
    return {"results": results}


@toolbox.tool(rw="read", core=True)
def get_multiple_spreadsheet_summary(
        call: Call,
        spreadsheet_ids: Annotated[list[SpreadsheetId], Field(min_length=1, max_length=20,
                                                              description="1 to 20 spreadsheet ids")],
        rows_to_fetch: Annotated[Int, Field(ge=1, le=50, description="Rows after the header row to show "
                                            "per sheet (default 5, max 50)")] = 5) -> dict[str, Any]:
    """Summarise spreadsheets: title and, per sheet, its id, title, size, header row (row 1)
    and the next rows_to_fetch rows. A missing spreadsheet gets an error entry; the call
    fails only when every id is missing."""
    results: list[dict[str, Any]] = []
    for spreadsheet_id in spreadsheet_ids:
        try:
            book = domain.find(call.session, spreadsheet_id)
        except ToolFailure as exc:
            results.append({"spreadsheet_id": spreadsheet_id, "title": None, "sheets": [],
                            "error": f"{exc.code.value}: {exc.message}"})
            continue
        summaries = []
        tabs = domain.sheets(call.session, book.pk)
        for found in tabs:
            box = Box(0, 0, min(rows_to_fetch, found.row_count - 1), found.column_count - 1)
            rows = _first_rows(call, found, box, len(spreadsheet_ids) * len(tabs))
            summaries.append({"sheet_id": found.sheet_id, "title": found.title, "rowCount": found.row_count,
                              "columnCount": found.column_count, "headers": rows[0] if rows else [],
                              "first_rows": rows[1:]})
        results.append({"spreadsheet_id": book.id, "title": book.title, "sheets": summaries, "error": None})
    if all(r["error"] for r in results):
        raise not_found("; ".join(str(r["error"]) for r in results),
                        hint="use list_spreadsheets to see spreadsheet ids")
    return {"results": results}


def _first_rows(call: Call, sheet: Sheet, box: Box, share: int) -> list[list[Any]]:
    """The rows of `box` that fit in this sheet's share of the output cap."""
    rows = domain.values(call.session, sheet, box)
    return rows[:fitting_rows(call, rows, lambda n: rows[:n], share)]


@toolbox.tool(rw="read", core=True)
def list_sheets(call: Call, spreadsheet_id: SpreadsheetId) -> dict[str, Any]:
    """List the sheets of a spreadsheet in tab order: sheetId, title, index, rowCount,
    columnCount."""
    book = domain.find(call.session, spreadsheet_id)
    return {"sheets": [{"sheetId": s.sheet_id, "title": s.title, "index": s.position, "rowCount": s.row_count,
                        "columnCount": s.column_count} for s in domain.sheets(call.session, book.pk)]}


@toolbox.tool(rw="read", core=True)
def list_spreadsheets(call: Call) -> dict[str, Any]:
    """List every spreadsheet: id, title, modifiedTime (UTC), most recently modified first."""
    found = domain.list_spreadsheets(call.session)
    return {"spreadsheets": [{"id": b.id, "title": b.title, "modifiedTime": b.modified} for b in found],
            "total": len(found)}
