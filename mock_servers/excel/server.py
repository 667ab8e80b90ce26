"""Excel tools (the classic `filepath` / `sheet_name` API) over workbooks in the workspace."""

import re
from dataclasses import dataclass, field
from itertools import islice
from typing import Annotated, Any, Literal

from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.table import Table, TableStyleInfo
from openpyxl.worksheet.worksheet import Worksheet
from pydantic import Field

from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.files import DISPLAY_ROOT
from mock_servers.core.output import dump_json
from mock_servers.core.toolkit import Call, Toolbox
from mock_servers.core.types import CellValue, Int
from mock_servers.excel import layout
from mock_servers.excel.charts import ChartType, build_chart
from mock_servers.excel.formatting import BorderStyle, HorizontalAlignment, formatting
from mock_servers.excel.formula import formula_problem, normalise
from mock_servers.excel.pivot import AggFunc, pivot
from mock_servers.excel.workbook import (
    MAX_COL,
    MAX_ROW,
    Box,
    SheetRows,
    WorkbookFile,
    box,
    cell_ref,
    check_new_title,
    extent,
    in_sheet,
    json_value,
    parse_range,
    workbook_file,
    worksheet,
)

toolbox = Toolbox("excel", list_keys=("values", "ranges", "rules", "sheets"), instructions=(
    f"Excel workbooks (.xlsx/.xlsm) under {DISPLAY_ROOT}. Cells use A1 notation; rows and "
    "columns are 1-based."))
build = toolbox.build

PREVIEW_ROWS = 10
MAX_STYLED_CELLS = 100_000
MAX_CELL_TEXT = 32_767
_TABLE_NAME = re.compile(r"[A-Za-z_\\][A-Za-z0-9_.\\]{0,254}")
_CELL_LIKE = re.compile(r"[A-Za-z]{1,3}[0-9]+|[RrCc]")
_TABLE_STYLE = re.compile(
    r"TableStyle(Light([1-9]|1[0-9]|2[01])|Medium([1-9]|1[0-9]|2[0-8])|Dark([1-9]|1[01]))")

FilePath = Annotated[str, Field(description=(
    f"workbook path (.xlsx or .xlsm), relative to {DISPLAY_ROOT} or absolute under it"))]
SheetName = Annotated[str, Field(description="worksheet name (case-sensitive)")]
StartCell = Annotated[str, Field(description="first (top-left) cell, A1 notation, e.g. B2")]
EndCell = Annotated[str, Field(description="last (bottom-right) cell, A1 notation, e.g. D20")]
OptionalEndCell = Annotated[str | None, Field(description="last cell (default: start_cell only)")]
DataRange = Annotated[str, Field(description=(
    "source cells with a header row, e.g. A1:D20 (an optional 'Sheet!' prefix must name "
    "sheet_name)"))]


# ---- helpers ---------------------------------------------------------------------------------

def _open_sheet(call: Call, filepath: str,
                sheet_name: str) -> tuple[WorkbookFile, Workbook, Worksheet]:
    book = workbook_file(call, filepath)
    wb = book.load()
    return book, wb, worksheet(wb, sheet_name, book)


def _cached_sheet(call: Call, filepath: str,
                  sheet_name: str) -> tuple[WorkbookFile, Worksheet]:
    """A sheet of the shared copy with every cell in memory, for reads; never modify it."""
    book = workbook_file(call, filepath)
    return book, worksheet(book.cached(call, read_only=False).wb, sheet_name, book)


def _sheet_range(text: str, ws: Worksheet) -> Box:
    """An A1 range on `ws`, accepting a `Sheet!` prefix that names `ws`."""
    sheet, bang, cells = text.rpartition("!")
    if bang:
        name = sheet[1:-1].replace("''", "'") if sheet.startswith("'") and sheet.endswith("'") \
            else sheet
        if name != ws.title:
            raise invalid(f"range {text} is not on sheet '{ws.title}'")
    return parse_range(cells)


def _bounded(area: Box, limit: int = MAX_STYLED_CELLS) -> Box:
    if area.rows * area.cols > limit:
        raise ToolFailure(Code.RESOURCE_EXHAUSTED,
                          f"{area.a1} has {area.rows * area.cols} cells; at most {limit} per call")
    return area


def _free_title(wb: Workbook, base: str) -> str:
    taken = {name.lower() for name in wb.sheetnames}
    candidate, number = base[:31], 1
    while candidate.lower() in taken:
        number += 1
        suffix = f"_{number}"
        candidate = base[:31 - len(suffix)] + suffix
    return candidate


def _check_storable(value: CellValue, i: int, j: int) -> None:
    """Excel keeps at most 32767 characters per cell and no control characters."""
    if isinstance(value, str) and (len(value) > MAX_CELL_TEXT
                                   or ILLEGAL_CHARACTERS_RE.search(value)):
        raise invalid(f"data row {i + 1}, column {j + 1}: text longer than {MAX_CELL_TEXT} "
                      "characters or with control characters cannot be stored in a cell")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


# ---- workbook and sheets ---------------------------------------------------------------------

def _sheet_info(ws: Any) -> dict[str, Any]:
    used = extent(ws)
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
    if include_ranges:
        sheets = [_sheet_info(ws) | {"tables": [{"name": t.displayName, "range": t.ref}
                                                for t in ws.tables.values()]}
                  for ws in book.cached(call, read_only=False).wb.worksheets]
    else:
        sheets = [_sheet_info(ws) for ws in book.cached(call, read_only=True).wb.worksheets]
    return {"filename": book.shown, "sheets": sheets, "size": size}


@dataclass
class _Page:
    """Rows read from one window of a sheet; formula cells are filled in afterwards."""

    sheet: str
    window: Box
    values: list[list[Any]]
    formulas: list[tuple[int, int]] = field(default_factory=list)
    uncalculated: list[tuple[int, str]] = field(default_factory=list)
    has_more: bool = False

    def drop_trailing_empty_rows(self) -> None:
        formula_rows = {i for i, _ in self.formulas}
        while self.values and len(self.values) - 1 not in formula_rows \
                and all(v is None for v in self.values[-1]):
            self.values.pop()

    def result(self, rows: int | None = None) -> dict[str, Any]:
        """The JSON answer; with `rows`, only that many rows, reported as cut by the cap."""
        cut = rows is not None
        window = self.window if rows is None else Box(
            self.window.min_row, self.window.min_col, self.window.min_row + rows - 1,
            self.window.max_col)
        has_more = self.has_more or cut
        out = {
            "sheet_name": self.sheet,
            "range": window.a1,
            "values": self.values[:rows] if cut else self.values,
            "uncalculated": [ref for row, ref in self.uncalculated if row <= window.max_row],
            "has_more": has_more,
            "next_start_cell": f"{get_column_letter(window.min_col)}{window.max_row + 1}"
                               if has_more else None,
        }
        if cut:
            out["notice"] = (f"output cap reached after {rows} rows; "
                             "request the next page from next_start_cell")
        return out


def _read_page(sheet: SheetRows, area: Box, per_page: int) -> _Page:
    rows = sheet.iter_rows(area)
    values: list[list[Any]] = []
    formulas: list[tuple[int, int]] = []
    for i, row in enumerate(islice(rows, per_page)):
        line = []
        for j, cell in enumerate(row):
            if cell.data_type == "f":
                formulas.append((i, j))
                line.append(None)
            else:
                line.append(json_value(cell.value, cell.number_format))
        values.append(line)
    has_more = any(any(cell.value is not None for cell in row) for row in rows)
    last = area.min_row + len(values) - 1 if values else area.max_row  # nothing stored there
    window = Box(area.min_row, area.min_col, last, area.max_col)
    return _Page(sheet.ws.title, window, values, formulas, has_more=has_more)


def _fill_cached_values(sheet: SheetRows, page: _Page) -> None:
    """Formula cells take the value a spreadsheet program cached in the file, if any."""
    w = page.window
    cached = list(sheet.iter_rows(w))
    for i, j in page.formulas:
        cell = cached[i][j]
        value = json_value(cell.value, cell.number_format)
        page.values[i][j] = value
        if value is None:
            page.uncalculated.append(
                (w.min_row + i, f"{get_column_letter(w.min_col + j)}{w.min_row + i}"))


def _within_cap(page: _Page, cap: int) -> dict[str, Any]:
    full = page.result()
    if len(dump_json(full)) <= cap or len(page.values) < 2:
        return full
    lo, hi = 1, len(page.values) - 1  # most rows that fit, reported as a cut page
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(dump_json(page.result(mid))) <= cap:
            lo = mid
        else:
            hi = mid - 1
    return page.result(lo)


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
) -> dict:
    """Read cell values as `{sheet_name,range,values,uncalculated,has_more,next_start_cell}`:
    `values` is a list of rows over the range (`range` = cells this page covers; trailing empty
    rows are dropped). Pages hold at most max_cells cells (default 5000, max 20000); when
    has_more is true, call again with start_cell=next_start_cell and the same end_cell. Dates
    and times are ISO 8601 strings. A formula gives the value cached in the file; without one
    it is null and its cell is listed in `uncalculated`."""
    book = workbook_file(call, filepath)
    start = box(start_cell)
    parsed = book.cached(call, read_only=True)
    ws = worksheet(parsed.wb, sheet_name, book)
    if end_cell:
        area = box(start_cell, end_cell)
    else:
        used = extent(ws)
        area = Box(start.min_row, start.min_col, max(used.max_row, start.min_row),
                   max(used.max_col, start.min_col))
    per_page = max_cells // area.cols
    if per_page == 0:
        raise invalid(f"the range is {area.cols} columns wide, more than max_cells={max_cells}",
                      hint="read fewer columns or raise max_cells")
    page = _read_page(parsed.rows(ws), area,
                      min(per_page, PREVIEW_ROWS) if preview_only else per_page)
    if page.formulas:
        values = book.cached(call, read_only=True, data_only=True)
        _fill_cached_values(values.rows(values.wb[sheet_name]), page)
    page.drop_trailing_empty_rows()
    return _within_cap(page, call.max_output_chars)


@toolbox.tool(rw="write", core=True, destructive=True)
def write_data_to_excel(
    call: Call,
    filepath: FilePath,
    sheet_name: Annotated[str, Field(description="worksheet name; created when missing")],
    data: Annotated[list[list[CellValue]], Field(min_length=1, description=(
        "rows of cell values (string, number, boolean or null to clear); strings starting "
        "with '=' are stored as formulas"))],
    start_cell: Annotated[str, Field(description="top-left cell of the block (default A1)")] = "A1",
) -> dict:
    """Write a block of rows starting at start_cell, overwriting what is there; returns
    `{message,range}`. Creates the worksheet if it does not exist (the workbook must exist:
    create_workbook). Formulas are stored, not computed."""
    book = workbook_file(call, filepath)
    wb = book.load()
    if sheet_name in wb.sheetnames:
        ws = worksheet(wb, sheet_name, book)
    else:
        check_new_title(wb, sheet_name, book)
        ws = wb.create_sheet(sheet_name)
    width = max(len(row) for row in data)
    if width == 0:
        raise invalid("data holds no cells")
    target = box(start_cell).sized(len(data), width)
    layout.refuse_merged(ws, target, "write there")
    for i, row in enumerate(data):
        for j, value in enumerate(row):
            _check_storable(value, i, j)
            ws.cell(target.min_row + i, target.min_col + j).value = value
    book.save(call, wb)
    return {"message": f"Wrote {_plural(len(data), 'row')} to {in_sheet(ws.title, target)} "
                       f"in {book.shown}", "range": target.a1}


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
    book = workbook_file(call, filepath)
    wb = book.load()
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
    book = workbook_file(call, filepath)
    wb = book.load()
    source = worksheet(wb, source_sheet, book)
    check_new_title(wb, target_sheet, book)
    wb.copy_worksheet(source).title = target_sheet
    book.save(call, wb)
    return {"message": f"Copied sheet '{source_sheet}' to '{target_sheet}' in {book.shown}"}


@toolbox.tool(rw="write", destructive=True)
def delete_worksheet(call: Call, filepath: FilePath, sheet_name: SheetName) -> dict:
    """Delete a worksheet and everything on it; returns `{message}`. The last sheet of a
    workbook cannot be deleted."""
    book, wb, ws = _open_sheet(call, filepath, sheet_name)
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
    book = workbook_file(call, filepath)
    wb = book.load()
    ws = worksheet(wb, old_name, book)
    check_new_title(wb, new_name, book, ignore=old_name)
    if new_name.lower() == old_name.lower():  # openpyxl counts the sheet's own name as taken
        ws.title = _free_title(wb, "renaming")
    ws.title = new_name
    book.save(call, wb)
    return {"message": f"Renamed sheet '{old_name}' to '{new_name}' in {book.shown}"}


# ---- formulas --------------------------------------------------------------------------------

FormulaArg = Annotated[str, Field(
    description="formula such as =SUM(B2:B10); '=' is added if missing")]


@toolbox.tool(rw="write", destructive=True)
def apply_formula(
    call: Call,
    filepath: FilePath,
    sheet_name: SheetName,
    cell: Annotated[str, Field(description="target cell, A1 notation")],
    formula: FormulaArg,
) -> dict:
    """Store a formula in one cell after checking its syntax (see validate_formula_syntax);
    returns `{message,cell,value}`. There is no formula engine here: `value` is null, and the
    result is computed by a spreadsheet program when it opens the file; until then readers of
    cached values see the cell as uncalculated."""
    book, wb, ws = _open_sheet(call, filepath, sheet_name)
    row, col = cell_ref(cell)
    problem = formula_problem(formula, wb.sheetnames)
    if problem:
        raise invalid(f"formula {normalise(formula)}: {problem}")
    layout.refuse_merged(ws, Box(row, col, row, col), "write there")
    target = ws.cell(row, col)
    target.value = normalise(formula)
    book.save(call, wb)
    return {"message": f"Set {in_sheet(ws.title, Box(row, col, row, col))} to {target.value}",
            "cell": target.coordinate, "value": None}


@toolbox.tool(rw="read")
def validate_formula_syntax(
    call: Call,
    filepath: FilePath,
    sheet_name: SheetName,
    cell: Annotated[str, Field(description="cell the formula is meant for, A1 notation")],
    formula: FormulaArg,
) -> dict:
    """Check a formula without storing or evaluating it: it must parse, use known functions,
    balance its parentheses and reference sheets of this workbook. Returns `{valid,message}`."""
    book = workbook_file(call, filepath)
    wb = book.cached(call, read_only=True).wb
    ws = worksheet(wb, sheet_name, book)
    row, col = cell_ref(cell)
    problem = formula_problem(formula, wb.sheetnames)
    where = in_sheet(ws.title, Box(row, col, row, col))
    if problem:
        return {"valid": False, "message": f"{normalise(formula)} for {where}: {problem}"}
    return {"valid": True, "message": f"{normalise(formula)} is valid for {where} (syntax only)"}


# ---- formatting, charts, pivots, tables ------------------------------------------------------

@toolbox.tool(rw="write")
def format_range(
    call: Call,
    filepath: FilePath,
    sheet_name: SheetName,
    start_cell: StartCell,
    end_cell: OptionalEndCell = None,
    bold: Annotated[bool | None, Field(description="bold font on/off")] = None,
    italic: Annotated[bool | None, Field(description="italic font on/off")] = None,
    underline: Annotated[bool | None, Field(description="single underline on/off")] = None,
    font_size: Annotated[Int | None, Field(ge=1, le=409, description="font size in points")] = None,
    font_color: Annotated[str | None, Field(description="font colour, hex such as FF0000")] = None,
    bg_color: Annotated[str | None, Field(
        description="solid fill colour, hex such as FFFF00")] = None,
    border_style: Annotated[BorderStyle | None, Field(
        description="border line on all four sides")] = None,
    border_color: Annotated[str | None, Field(
        description="border colour, hex (thin line if no style)")] = None,
    number_format: Annotated[str | None, Field(
        description="number format, e.g. 0.00, 0%, yyyy-mm-dd")] = None,
    alignment: Annotated[HorizontalAlignment | None, Field(
        description="horizontal alignment")] = None,
    wrap_text: Annotated[bool | None, Field(description="wrap text on/off")] = None,
    merge_cells: Annotated[bool, Field(description="merge the range after formatting")] = False,
) -> dict:
    """Format every cell of a range; options not given are left as they are. Returns
    `{message,range}`. At most 100000 cells per call; merge_cells=true also merges the range
    (keeping only the top-left value)."""
    book, wb, ws = _open_sheet(call, filepath, sheet_name)
    area = _bounded(box(start_cell, end_cell))
    style = formatting(bold=bold, italic=italic, underline=underline, font_size=font_size,
                       font_color=font_color, bg_color=bg_color, border_style=border_style,
                       border_color=border_color, number_format=number_format,
                       alignment=alignment, wrap_text=wrap_text)
    if style.empty and not merge_cells:
        raise invalid("no formatting option given")
    for row in range(area.min_row, area.max_row + 1):
        for col in range(area.min_col, area.max_col + 1):
            style.apply(ws.cell(row, col))
    if merge_cells:
        _merge(ws, area)
    book.save(call, wb)
    return {"message": f"Formatted {in_sheet(ws.title, area)}", "range": area.a1}


@toolbox.tool(rw="write")
def create_chart(
    call: Call,
    filepath: FilePath,
    sheet_name: SheetName,
    data_range: Annotated[str, Field(description=(
        "cells to plot, e.g. A1:C13: first row = series names, first column = categories "
        "(x values), one series per further column"))],
    chart_type: Annotated[ChartType, Field(description="chart kind")],
    target_cell: Annotated[str, Field(description="cell where the chart's top-left corner sits")],
    title: Annotated[str | None, Field(description="chart title")] = None,
    x_axis: Annotated[str | None, Field(description="x axis title")] = None,
    y_axis: Annotated[str | None, Field(description="y axis title")] = None,
) -> dict:
    """Add a native Excel chart (line, bar, pie, scatter or area) built from a block of cells on
    the same sheet; returns `{message}`. The chart references the cells, so it follows later
    edits of their values."""
    book, wb, ws = _open_sheet(call, filepath, sheet_name)
    data = _sheet_range(data_range, ws)
    row, col = cell_ref(target_cell)
    anchor = f"{get_column_letter(col)}{row}"
    ws.add_chart(build_chart(ws, data, chart_type, title, x_axis, y_axis), anchor)
    book.save(call, wb)
    return {"message": f"Added a {chart_type} chart of {in_sheet(ws.title, data)} at {anchor}"}


@toolbox.tool(rw="write")
def create_pivot_table(
    call: Call,
    filepath: FilePath,
    sheet_name: SheetName,
    data_range: DataRange,
    rows: Annotated[list[str], Field(min_length=1, description="header names to group rows by")],
    values: Annotated[list[str], Field(min_length=1, description="header names to aggregate")],
    columns: Annotated[list[str] | None, Field(
        description="header names whose values become column groups")] = None,
    agg_func: Annotated[AggFunc, Field(description="aggregation (default mean)")] = "mean",
) -> dict:
    """Summarise a table (header row + records) into a static pivot written to a new sheet
    named `<sheet_name>_pivot` (suffixed _2, _3... if taken); returns `{message,range}`.
    Groups are sorted; sum/mean/min/max use the numeric values only, count counts non-empty
    cells; empty keys show as (blank). Formula cells count with their cached values."""
    book, wb, ws = _open_sheet(call, filepath, sheet_name)
    area = _sheet_range(data_range, ws)
    cached = book.cached(call, read_only=True, data_only=True).wb[sheet_name]
    table = list(cached.iter_rows(min_row=area.min_row, max_row=area.max_row,
                                  min_col=area.min_col, max_col=area.max_col, values_only=True))
    summary = pivot(table, rows, values, columns or [], agg_func)
    out = wb.create_sheet(_free_title(wb, f"{sheet_name}_pivot"))
    for line in summary:
        out.append(line)
    for cell in out[1]:
        cell.font = Font(bold=True)
    book.save(call, wb)
    written = Box(1, 1, len(summary), len(summary[0]))
    return {"message": f"Wrote a {agg_func} pivot of {in_sheet(ws.title, area)} to sheet "
                       f"'{out.title}'", "range": in_sheet(out.title, written)}


def _table_names(wb: Workbook) -> set[str]:
    return {name.lower() for ws in wb.worksheets for name in ws.tables}


def _check_table(ws: Worksheet, area: Box, name: str, wb: Workbook) -> None:
    if not _TABLE_NAME.fullmatch(name) or _CELL_LIKE.fullmatch(name):
        raise invalid(f"invalid table name '{name}': start with a letter or _, then letters, "
                      "digits, _ or . (no spaces, not a cell reference)")
    if name.lower() in _table_names(wb):
        raise ToolFailure(Code.ALREADY_EXISTS, f"a table named '{name}' already exists")
    for table in ws.tables.values():
        if parse_range(table.ref).overlaps(area):
            raise invalid(f"{area.a1} overlaps table '{table.displayName}' ({table.ref})")
    layout.refuse_merged(ws, area, "make a table", anchors_ok=False)
    header = [ws.cell(area.min_row, col).value for col in range(area.min_col, area.max_col + 1)]
    if not all(isinstance(h, str) and h.strip() for h in header):
        raise invalid("the first row of data_range must hold a text header in every column")
    if len({h.lower() for h in header}) < len(header):
        raise invalid("table headers must be unique (ignoring case)")


@toolbox.tool(rw="write")
def create_table(
    call: Call,
    filepath: FilePath,
    sheet_name: SheetName,
    data_range: DataRange,
    table_name: Annotated[str | None, Field(
        description="table name, unique in the workbook (default Table1, Table2, ...)")] = None,
    table_style: Annotated[str, Field(
        description="built-in style: TableStyleLight1-21, TableStyleMedium1-28 or "
                    "TableStyleDark1-11 (default TableStyleMedium9)")] = "TableStyleMedium9",
) -> dict:
    """Turn a range with a text header row into a native Excel table (filter buttons, banded
    rows); returns `{message,table_name}`. The range may not overlap another table or merged
    cells."""
    book, wb, ws = _open_sheet(call, filepath, sheet_name)
    area = _sheet_range(data_range, ws)
    if not _TABLE_STYLE.fullmatch(table_style):
        raise invalid(f"unknown table_style '{table_style}'",
                      hint="use TableStyleLight1-21, TableStyleMedium1-28 or TableStyleDark1-11")
    taken = _table_names(wb)
    name = table_name or next(f"Table{n}" for n in range(1, len(taken) + 2)
                              if f"table{n}" not in taken)
    _check_table(ws, area, name, wb)
    ws.add_table(Table(displayName=name, ref=area.a1, tableStyleInfo=TableStyleInfo(
        name=table_style, showRowStripes=True)))
    book.save(call, wb)
    return {"message": f"Created table '{name}' over {in_sheet(ws.title, area)}",
            "table_name": name}


# ---- merged cells ----------------------------------------------------------------------------

def _merge(ws: Worksheet, area: Box) -> None:
    if area.rows == 1 and area.cols == 1:
        raise invalid(f"{area.a1} is a single cell; merge at least two")
    for merged in layout.merged_boxes(ws):
        if merged.overlaps(area):
            raise invalid(f"{area.a1} overlaps merged range {merged.a1}",
                          hint="unmerge_cells it first")
    ws.merge_cells(area.a1)


@toolbox.tool(rw="write", destructive=True)
def merge_cells(call: Call, filepath: FilePath, sheet_name: SheetName,
                start_cell: StartCell, end_cell: EndCell) -> dict:
    """Merge a range into one cell; only the top-left value is kept. Returns
    `{message,range}`. The range may not overlap an existing merged range."""
    book, wb, ws = _open_sheet(call, filepath, sheet_name)
    area = box(start_cell, end_cell)
    _merge(ws, area)
    book.save(call, wb)
    return {"message": f"Merged {in_sheet(ws.title, area)}", "range": area.a1}


@toolbox.tool(rw="write")
def unmerge_cells(call: Call, filepath: FilePath, sheet_name: SheetName,
                  start_cell: StartCell, end_cell: EndCell) -> dict:
    """Split a merged range back into cells (the value stays in the top-left cell). The range
    must be exactly one merged range (see get_merged_cells). Returns `{message,range}`."""
    book, wb, ws = _open_sheet(call, filepath, sheet_name)
    area = box(start_cell, end_cell)
    merged = layout.merged_boxes(ws)
    if area not in merged:
        raise not_found(f"{area.a1} is not a merged range of '{ws.title}'; merged: "
                        + (", ".join(m.a1 for m in merged) or "none"))
    ws.unmerge_cells(area.a1)
    book.save(call, wb)
    return {"message": f"Unmerged {in_sheet(ws.title, area)}", "range": area.a1}


@toolbox.tool(rw="read")
def get_merged_cells(call: Call, filepath: FilePath, sheet_name: SheetName) -> dict:
    """List the merged ranges of a sheet as `{ranges:[...]}`, top to bottom, left to right."""
    _, ws = _cached_sheet(call, filepath, sheet_name)
    return {"ranges": [m.a1 for m in layout.merged_boxes(ws)]}


# ---- ranges ----------------------------------------------------------------------------------

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
    book, wb, ws = _open_sheet(call, filepath, sheet_name)
    area = _bounded(box(source_start, source_end))
    target = worksheet(wb, target_sheet, book) if target_sheet else ws
    dest = layout.copy_range(ws, area, target, box(target_start))
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
    book, wb, ws = _open_sheet(call, filepath, sheet_name)
    area = box(start_cell, end_cell)
    layout.delete_range(ws, area, shift_direction)
    book.save(call, wb)
    return {"message": f"Deleted {in_sheet(ws.title, area)}, shifting cells {shift_direction}"}


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
    used = extent(worksheet(book.cached(call, read_only=True).wb, sheet_name, book))
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
    _, ws = _cached_sheet(call, filepath, sheet_name)
    return {"rules": [{"range": str(dv.sqref), "type": dv.type, "formula1": dv.formula1,
                       "formula2": dv.formula2, "allow_blank": bool(dv.allow_blank)}
                      for dv in ws.data_validations.dataValidation]}


# ---- rows and columns ------------------------------------------------------------------------

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
    book, wb, ws = _open_sheet(call, filepath, sheet_name)
    _check_room(ws.max_row, start_row, count, MAX_ROW, "row")
    with layout.merges_follow(ws, "row", start_row, count):
        ws.insert_rows(start_row, count)
    book.save(call, wb)
    return {"message": f"Inserted {_plural(count, 'row')} at row {start_row} of '{ws.title}'"}


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
    book, wb, ws = _open_sheet(call, filepath, sheet_name)
    with layout.merges_follow(ws, "row", start_row, -count):
        ws.delete_rows(start_row, count)
    book.save(call, wb)
    return {"message": f"Deleted {_plural(count, 'row')} from row {start_row} of '{ws.title}'"}


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
    book, wb, ws = _open_sheet(call, filepath, sheet_name)
    _check_room(ws.max_column, start_col, count, MAX_COL, "column")
    with layout.merges_follow(ws, "col", start_col, count):
        ws.insert_cols(start_col, count)
    book.save(call, wb)
    return {"message": f"Inserted {_plural(count, 'column')} at column "
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
    book, wb, ws = _open_sheet(call, filepath, sheet_name)
    with layout.merges_follow(ws, "col", start_col, -count):
        ws.delete_cols(start_col, count)
    book.save(call, wb)
    return {"message": f"Deleted {_plural(count, 'column')} from column "
                       f"{get_column_letter(start_col)} of '{ws.title}'"}
