"""Reading tools: workbook metadata, cell values page by page, merged ranges, range checks
and data-validation rules. Reads share a parsed copy of each workbook (`WorkbookFile.cached`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice
from typing import Annotated, Any

from openpyxl.utils import get_column_letter
from pydantic import Field

from mock_servers.core.errors import ToolFailure, invalid
from mock_servers.core.output import dump_json, most_that_fit
from mock_servers.core.toolkit import Call
from mock_servers.core.types import Int
from mock_servers.excel import layout
from mock_servers.excel.areas import Box, box
from mock_servers.excel.server.base import (
    FilePath,
    OptionalEndCell,
    SheetName,
    StartCell,
    cached_sheet,
    toolbox,
)
from mock_servers.excel.sheet_rows import FORMULA, SheetRows
from mock_servers.excel.workbook import CachedWorkbook, workbook_file, worksheet

PREVIEW_ROWS = 10


def _sheet_info(parsed: CachedWorkbook, ws: Any) -> dict[str, Any]:
    used = parsed.extent(ws)
    return {"name": ws.title, "dimensions": used.a1, "max_row": used.max_row,
            "max_column": used.max_col}


@toolbox.tool(rw="read", core=True)
def get_workbook_metadata(
    call: Call,
    filepath: FilePath,
    include_ranges: Annotated[bool, Field(
        description="also list each sheet's Excel tables as `tables:[{name,range}]`")] = False,
) -> dict:
    """Describe a workbook: `{filename,sheets:[{name,dimensions,max_row,max_column}],size}`
    with each worksheet's used range and the file size in bytes. With include_ranges=true each
    sheet also carries `tables:[{name,range}]`."""
    book = workbook_file(call, filepath)
    size = book.path.stat().st_size
    parsed = book.cached(read_only=not include_ranges)
    sheets = [_sheet_info(parsed, ws) for ws in parsed.wb.worksheets]
    if include_ranges:
        for info, ws in zip(sheets, parsed.wb.worksheets, strict=True):
            info["tables"] = [{"name": t.displayName, "range": t.ref} for t in ws.tables.values()]
    return {"filename": book.shown, "sheets": sheets, "size": size}


@dataclass
class _Page:
    """Rows read from one window of a sheet, each with its JSON text (kept in step with its
    values); formula cells are filled in afterwards."""

    sheet: str
    window: Box
    values: list[list[Any]]
    texts: list[str]
    formulas: list[tuple[int, int]] = field(default_factory=list)
    uncalculated: list[tuple[int, str]] = field(default_factory=list)
    has_more: bool = False

    def drop_trailing_empty_rows(self) -> None:
        formula_rows = {i for i, _ in self.formulas}
        while self.values and len(self.values) - 1 not in formula_rows \
                and all(v is None for v in self.values[-1]):
            self.values.pop()
            self.texts.pop()

    def text(self, rows: int | None = None) -> str:
        """The JSON answer; with `rows`, only that many rows, reported as cut by the cap. Built
        from the rows' texts: the same text as serialising the whole answer at once."""
        cut = rows is not None
        window = self.window if rows is None else Box(
            self.window.min_row, self.window.min_col, self.window.min_row + rows - 1,
            self.window.max_col)
        has_more = self.has_more or cut
        head = {"sheet_name": self.sheet, "range": window.a1}
        tail: dict[str, Any] = {
            "uncalculated": [ref for row, ref in self.uncalculated if row <= window.max_row],
            "has_more": has_more,
            "next_start_cell": f"{get_column_letter(window.min_col)}{window.max_row + 1}"
                               if has_more else None,
        }
        if cut:
            tail["notice"] = (f"output cap reached after {rows} rows; "
                              "request the next page from next_start_cell")
        values = ",".join(self.texts[:rows] if cut else self.texts)
        return f'{dump_json(head)[:-1]},"values":[{values}],{dump_json(tail)[1:]}'


def _read_page(sheet: SheetRows, area: Box, per_page: int) -> _Page:
    values: list[list[Any]] = []
    texts: list[str] = []
    formulas: list[tuple[int, int]] = []
    for i, (line, text) in enumerate(islice(sheet.lines(area), per_page)):
        if text is None:  # formula cells are filled in from the cached copy
            formulas += [(i, j) for j, value in enumerate(line) if value is FORMULA]
            line = [None if value is FORMULA else value for value in line]
            text = dump_json(line)
        values.append(line)
        texts.append(text)
    last = area.min_row + len(values) - 1 if values else area.max_row  # nothing stored there
    has_more = last < area.max_row and sheet.has_values(
        Box(last + 1, area.min_col, area.max_row, area.max_col))
    window = Box(area.min_row, area.min_col, last, area.max_col)
    return _Page(sheet.ws.title, window, values, texts, formulas, has_more=has_more)


def _fill_cached_values(sheet: SheetRows, page: _Page) -> None:
    """Formula cells take the value a spreadsheet program cached in the file, if any."""
    w = page.window
    cached = [line for line, _ in sheet.lines(w)]
    for i, j in page.formulas:
        value = cached[i][j]
        value = None if value is FORMULA else value
        page.values[i][j] = value
        if value is None:
            page.uncalculated.append(
                (w.min_row + i, f"{get_column_letter(w.min_col + j)}{w.min_row + i}"))
    for i in {i for i, _ in page.formulas}:
        page.texts[i] = dump_json(page.values[i])


def _within_cap(page: _Page, cap: int) -> str:
    """The page as JSON text within the output cap (built once when it fits)."""
    text = page.text()
    if len(text) <= cap or len(page.values) < 2:
        return text
    rows = most_that_fit(1, len(page.values) - 1, lambda n: len(page.text(n)) <= cap)
    return page.text(rows)  # reported as a cut page


@toolbox.tool(rw="read", core=True)
def read_data_from_excel(
    call: Call,
    filepath: FilePath,
    sheet_name: SheetName,
    start_cell: Annotated[str, Field(description="first cell to read (default A1)")] = "A1",
    end_cell: Annotated[str | None, Field(
        description="last cell to read (default: the sheet's last used row and column)")] = None,
    preview_only: Annotated[bool, Field(
        description=f"return at most the first {PREVIEW_ROWS} rows")] = False,
    max_cells: Annotated[Int, Field(ge=1, le=20000,
                                    description="cells per page (default 5000, max 20000)")] = 5000,
) -> str:
    """Read cell values as `{sheet_name,range,values,uncalculated,has_more,next_start_cell}`:
    `values` is a list of rows over the range (`range` = cells this page covers; trailing empty
    rows are dropped). Pages hold at most max_cells cells (default 5000, max 20000); when
    has_more is true, call again with start_cell=next_start_cell and the same end_cell. Dates
    and times are ISO 8601 strings. A formula gives the value cached in the file; without one
    it is null and its cell is listed in `uncalculated`."""
    book = workbook_file(call, filepath)
    start = box(start_cell)
    parsed = book.cached(read_only=True)
    ws = worksheet(parsed.wb, sheet_name, book)
    if end_cell:
        area = box(start_cell, end_cell)
    else:
        used = parsed.extent(ws)
        area = Box(start.min_row, start.min_col, max(used.max_row, start.min_row),
                   max(used.max_col, start.min_col))
    per_page = max_cells // area.cols
    if per_page == 0:
        raise invalid(f"the range is {area.cols} columns wide, more than max_cells={max_cells}",
                      hint="read fewer columns or raise max_cells")
    rows = min(per_page, PREVIEW_ROWS) if preview_only else per_page

    def build() -> str:
        page = _read_page(parsed.rows(ws), area, rows)
        if page.formulas:
            values = book.cached(read_only=True, data_only=True)
            _fill_cached_values(values.rows(values.wb[ws.title]), page)
        page.drop_trailing_empty_rows()
        return _within_cap(page, call.max_output_chars)
    return parsed.page((ws.title, area, rows, call.max_output_chars), build)


@toolbox.tool(rw="read")
def get_merged_cells(call: Call, filepath: FilePath, sheet_name: SheetName) -> dict:
    """List the merged ranges of a sheet as `{ranges:[...]}`, top to bottom, left to right."""
    _, ws = cached_sheet(call, filepath, sheet_name)
    return {"ranges": [m.a1 for m in layout.merged_boxes(ws)]}


@toolbox.tool(rw="read")
def validate_excel_range(
    call: Call,
    filepath: FilePath,
    sheet_name: SheetName,
    start_cell: StartCell,
    end_cell: OptionalEndCell = None,
) -> dict:
    """Check that cell references form a valid range on the sheet and say whether it lies
    inside the sheet's used data. Returns `{valid,range,message}` (range null when invalid)."""
    book = workbook_file(call, filepath)
    parsed = book.cached(read_only=True)
    used = parsed.extent(worksheet(parsed.wb, sheet_name, book))
    try:
        area = box(start_cell, end_cell)
    except ToolFailure as exc:
        return {"valid": False, "range": None, "message": exc.message}
    inside = used.min_row <= area.min_row and used.min_col <= area.min_col \
        and area.max_row <= used.max_row and area.max_col <= used.max_col
    where = "inside" if inside else "not entirely inside"
    return {"valid": True, "range": area.a1,
            "message": f"{area.a1} is a valid range, {where} the used data {used.a1}"}


@toolbox.tool(rw="read")
def get_data_validation_info(call: Call, filepath: FilePath, sheet_name: SheetName) -> dict:
    """List the sheet's data-validation rules (drop-down lists, number or date limits) as
    `{rules:[{range,type,formula1,formula2,allow_blank}]}` in file order; type null means any
    value."""
    _, ws = cached_sheet(call, filepath, sheet_name)
    return {"rules": [{"range": str(dv.sqref), "type": dv.type, "formula1": dv.formula1,
                       "formula2": dv.formula2, "allow_blank": bool(dv.allow_blank)}
                      for dv in ws.data_validations.dataValidation]}
