"""What every excel tool shares: the toolbox, parameter types, and opening a sheet for an
edit or a read."""

from __future__ import annotations

from typing import Annotated

from openpyxl import Workbook
from openpyxl.worksheet.worksheet import Worksheet
from pydantic import Field

from mock_servers.core.errors import invalid
from mock_servers.core.files import DISPLAY_ROOT
from mock_servers.core.toolkit import Call, Toolbox
from mock_servers.excel.areas import Box, parse_range
from mock_servers.excel.limits import check_cells, check_growth, new_cells
from mock_servers.excel.workbook import WorkbookFile, workbook_file, worksheet

toolbox = Toolbox("excel", list_keys=("values", "ranges", "rules", "sheets"), instructions=(
    f"Excel workbooks (.xlsx/.xlsm) under {DISPLAY_ROOT}. Cells use A1 notation; rows and "
    "columns are 1-based."))
build = toolbox.build

FilePath = Annotated[str, Field(description=(
    f"workbook path (.xlsx or .xlsm), relative to {DISPLAY_ROOT} or absolute under it"))]
SheetName = Annotated[str, Field(description="worksheet name (case-sensitive)")]
StartCell = Annotated[str, Field(description="first (top-left) cell, A1 notation, e.g. B2")]
EndCell = Annotated[str, Field(description="last (bottom-right) cell, A1 notation, e.g. D20")]
OptionalEndCell = Annotated[str | None, Field(description="last cell (default: start_cell only)")]
DataRange = Annotated[str, Field(description=(
    "source cells with a header row, e.g. A1:D20 (an optional 'Sheet!' prefix must name "
    "sheet_name)"))]


def open_book(call: Call, filepath: str) -> tuple[WorkbookFile, Workbook]:
    """A fresh copy of the workbook to edit (save it with `book.save`)."""
    book = workbook_file(call, filepath)
    return book, book.load()


def open_sheet(call: Call, filepath: str,
               sheet_name: str) -> tuple[WorkbookFile, Workbook, Worksheet]:
    """A fresh copy of the workbook to edit, and its sheet `sheet_name`."""
    book, wb = open_book(call, filepath)
    return book, wb, worksheet(wb, sheet_name, book)


def cached_sheet(call: Call, filepath: str,
                 sheet_name: str) -> tuple[WorkbookFile, Worksheet]:
    """A sheet of the shared copy with every cell in memory, for reads; never modify it."""
    book = workbook_file(call, filepath)
    return book, worksheet(book.cached(read_only=False).wb, sheet_name, book)


def sheet_range(text: str, ws: Worksheet) -> Box:
    """An A1 range on `ws`, accepting a `Sheet!` prefix that names `ws`."""
    sheet, bang, cells = text.rpartition("!")
    if bang:
        name = sheet[1:-1].replace("''", "'") if sheet.startswith("'") and sheet.endswith("'") \
            else sheet
        if name != ws.title:
            raise invalid(f"range {text} is not on sheet '{ws.title}'")
    return parse_range(cells)


def bounded(area: Box, what: str) -> Box:
    """`area`, unless it has more cells than one call may touch (INVALID_ARGUMENT)."""
    check_cells(area.rows, area.cols, f"{what} {area.a1}")
    return area


def room(wb: Workbook, ws: Worksheet, area: Box, what: str) -> Box:
    """`area` (see `bounded`), unless storing its cells would grow the workbook past its cap."""
    bounded(area, what)
    check_growth(wb, new_cells(ws, area.min_row, area.min_col, area.rows, area.cols))
    return area


def free_title(wb: Workbook, base: str) -> str:
    """`base`, or `base_2`, `base_3`... (at most 31 characters): a sheet name not yet taken."""
    taken = {name.lower() for name in wb.sheetnames}
    candidate, number = base[:31], 1
    while candidate.lower() in taken:
        number += 1
        suffix = f"_{number}"
        candidate = base[:31 - len(suffix)] + suffix
    return candidate


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
