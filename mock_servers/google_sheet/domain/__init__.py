"""The google_sheet domain layer, shared by the tools, the generators and the checkers."""

from mock_servers.google_sheet.domain.book import (
    Sheet,
    Spreadsheet,
    add_sheet,
    add_spreadsheet,
    find,
    layout_and_cells,
    list_spreadsheets,
    share,
    sheet,
    sheets,
    spreadsheet_id,
    touch,
)
from mock_servers.google_sheet.domain.bulk import SheetSpec, create
from mock_servers.google_sheet.domain.cells import (
    Box,
    clear,
    formulas,
    last_row,
    read_box,
    ref_of,
    value_rows,
    values,
    write,
    write_box,
)
from mock_servers.google_sheet.domain.recalc import recalculate

__all__ = [
    "Box",
    "Sheet",
    "SheetSpec",
    "Spreadsheet",
    "add_sheet",
    "add_spreadsheet",
    "clear",
    "create",
    "find",
    "formulas",
    "last_row",
    "layout_and_cells",
    "list_spreadsheets",
    "read_box",
    "recalculate",
    "ref_of",
    "share",
    "sheet",
    "sheets",
    "spreadsheet_id",
    "touch",
    "value_rows",
    "values",
    "write",
    "write_box",
]
