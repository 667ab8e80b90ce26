"""Presentation tools: cell formatting, native charts, static pivot tables and Excel tables."""

from __future__ import annotations

import re
from typing import Annotated

from openpyxl import Workbook
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.table import Table, TableStyleInfo
from openpyxl.worksheet.worksheet import Worksheet
from pydantic import Field

from mock_servers.core.errors import Code, ToolFailure, invalid
from mock_servers.core.toolkit import Call
from mock_servers.core.types import Int
from mock_servers.excel import layout
from mock_servers.excel.areas import Box, box, cell_ref, in_sheet, parse_range
from mock_servers.excel.charts import ChartType, build_chart
from mock_servers.excel.formatting import BorderStyle, HorizontalAlignment, formatting
from mock_servers.excel.limits import check_growth
from mock_servers.excel.pivot import UNCALCULATED, AggFunc, pivot
from mock_servers.excel.server.base import (
    DataRange,
    FilePath,
    OptionalEndCell,
    SheetName,
    StartCell,
    bounded,
    free_title,
    open_sheet,
    room,
    sheet_range,
    toolbox,
)

_TABLE_NAME = re.compile(r"[A-Za-z_\\][A-Za-z0-9_.\\]{0,254}")
_CELL_LIKE = re.compile(r"[A-Za-z]{1,3}[0-9]+|[RrCc]")
_TABLE_STYLE = re.compile(
    r"TableStyle(Light([1-9]|1[0-9]|2[01])|Medium([1-9]|1[0-9]|2[0-8])|Dark([1-9]|1[01]))")


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
    book, wb, ws = open_sheet(call, filepath, sheet_name)
    area = room(wb, ws, box(start_cell, end_cell), "the range")
    style = formatting(bold=bold, italic=italic, underline=underline, font_size=font_size,
                       font_color=font_color, bg_color=bg_color, border_style=border_style,
                       border_color=border_color, number_format=number_format,
                       alignment=alignment, wrap_text=wrap_text)
    if style.empty and not merge_cells:
        raise invalid("no formatting option given")
    style.apply_all(ws.cell(row, col) for row in range(area.min_row, area.max_row + 1)
                    for col in range(area.min_col, area.max_col + 1))
    if merge_cells:
        layout.merge(ws, area)
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
    book, wb, ws = open_sheet(call, filepath, sheet_name)
    data = bounded(sheet_range(data_range, ws), "data_range")
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
    Groups are sorted; sum/mean/min/max take numbers (blank cells are skipped; text, booleans
    or dates among the values are INVALID_ARGUMENT), count counts non-empty cells; empty keys
    show as (blank). Formula cells count with the values cached in the file; a used formula
    cell without one is INVALID_ARGUMENT."""
    book, wb, ws = open_sheet(call, filepath, sheet_name)
    area = bounded(sheet_range(data_range, ws), "data_range")
    bounds = {"min_row": area.min_row, "max_row": area.max_row, "min_col": area.min_col, "max_col": area.max_col,
              "values_only": True}
    stored = book.cached(read_only=True).wb[sheet_name].iter_rows(**bounds)
    cached = book.cached(read_only=True, data_only=True).wb[sheet_name].iter_rows(**bounds)
    table = [[UNCALCULATED if value is None and isinstance(kept, str) and kept.startswith("=") else value
              for kept, value in zip(formulas, line, strict=True)]
             for formulas, line in zip(stored, cached, strict=True)]
    summary = pivot(table, rows, values, columns or [], agg_func)
    check_growth(wb, len(summary) * len(summary[0]))
    out = wb.create_sheet(free_title(wb, f"{sheet_name}_pivot"))
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
    book, wb, ws = open_sheet(call, filepath, sheet_name)
    area = bounded(sheet_range(data_range, ws), "data_range")
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
