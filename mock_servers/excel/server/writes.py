"""Writing tools: blocks of values, and formulas (stored after a syntax check, never
computed here)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mock_servers.core.errors import invalid
from mock_servers.core.toolkit import Call
from mock_servers.core.types import CellValue
from mock_servers.excel import layout
from mock_servers.excel.areas import Box, box, cell_ref, in_sheet
from mock_servers.excel.formula import formula_problem, normalise
from mock_servers.excel.limits import check_cells, check_value
from mock_servers.excel.server.base import (
    FilePath,
    SheetName,
    open_book,
    open_sheet,
    plural,
    room,
    toolbox,
)
from mock_servers.excel.workbook import check_new_title, workbook_file, worksheet


def _check_block(data: list[list[CellValue]]) -> int:
    """The width of `data` once it is known to fit one call and to hold storable values."""
    width = max(len(row) for row in data)
    if width == 0:
        raise invalid("data holds no cells")
    check_cells(len(data), width, "data")
    for i, row in enumerate(data):
        for j, value in enumerate(row):
            check_value(value, f"data row {i + 1}, column {j + 1}")
    return width


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
    width = _check_block(data)
    book, wb = open_book(call, filepath)
    if sheet_name in wb.sheetnames:
        ws = worksheet(wb, sheet_name, book)
    else:
        check_new_title(wb, sheet_name, book)
        ws = wb.create_sheet(sheet_name)
    target = room(wb, ws, box(start_cell).sized(len(data), width), "the block")
    layout.refuse_merged(ws, target, "write there")
    for i, row in enumerate(data):
        for j, value in enumerate(row):
            ws.cell(target.min_row + i, target.min_col + j).value = value
    book.save(call, wb)
    return {"message": f"Wrote {plural(len(data), 'row')} to {in_sheet(ws.title, target)} "
                       f"in {book.shown}", "range": target.a1}


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
    book, wb, ws = open_sheet(call, filepath, sheet_name)
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
    wb = book.cached(read_only=True).wb
    ws = worksheet(wb, sheet_name, book)
    row, col = cell_ref(cell)
    problem = formula_problem(formula, wb.sheetnames)
    where = in_sheet(ws.title, Box(row, col, row, col))
    if problem:
        return {"valid": False, "message": f"{normalise(formula)} for {where}: {problem}"}
    return {"valid": True, "message": f"{normalise(formula)} is valid for {where} (syntax only)"}
