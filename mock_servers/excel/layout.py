"""Moving cells around a worksheet: merging, merged ranges that follow inserted or deleted rows
and columns, range deletion with shifting, and range copies."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from copy import copy
from typing import Literal

from openpyxl.cell.cell import Cell, MergedCell
from openpyxl.formula.translate import Translator, TranslatorError
from openpyxl.styles.cell_style import StyleArray
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from mock_servers.core.errors import invalid
from mock_servers.excel.areas import MAX_COL, MAX_ROW, Box

Axis = Literal["row", "col"]


def merged_boxes(ws: Worksheet) -> list[Box]:
    """The sheet's merged ranges, top to bottom, left to right."""
    boxes = [Box(r.min_row, r.min_col, r.max_row, r.max_col) for r in ws.merged_cells.ranges]
    return sorted(boxes, key=lambda b: (b.min_row, b.min_col))


def refuse_merged(ws: Worksheet, area: Box, action: str, anchors_ok: bool = True) -> None:
    """INVALID_ARGUMENT when `area` overlaps a merged range; with `anchors_ok`, touching only
    a merge's top-left cell (the one that holds its value) is allowed."""
    for merged in merged_boxes(ws):
        if not merged.overlaps(area):
            continue
        inner = Box(max(merged.min_row, area.min_row), max(merged.min_col, area.min_col),
                    min(merged.max_row, area.max_row), min(merged.max_col, area.max_col))
        anchor = Box(merged.min_row, merged.min_col, merged.min_row, merged.min_col)
        if not (anchors_ok and inner == anchor):
            raise invalid(f"cannot {action}: {area.a1} overlaps merged range {merged.a1}",
                          hint="unmerge_cells first")


def merge(ws: Worksheet, area: Box) -> None:
    """Merge `area` (two cells at least), unless it overlaps a merged range."""
    if area.rows == 1 and area.cols == 1:
        raise invalid(f"{area.a1} is a single cell; merge at least two")
    for merged in merged_boxes(ws):
        if merged.overlaps(area):
            raise invalid(f"{area.a1} overlaps merged range {merged.a1}",
                          hint="unmerge_cells it first")
    ws.merge_cells(area.a1)


def _shifted(lo: int, hi: int, at: int, delta: int) -> tuple[int, int] | None:
    """Where the span lo..hi goes when `delta` lines are inserted (delta > 0) or deleted
    (delta < 0) at line `at`; None when nothing of it survives."""
    if delta > 0:
        if lo >= at:
            return lo + delta, hi + delta
        return (lo, hi + delta) if hi >= at else (lo, hi)
    gone = -delta
    new_lo = lo if lo < at else (at if lo < at + gone else lo - gone)
    new_hi = hi if hi < at else (at - 1 if hi < at + gone else hi - gone)
    return (new_lo, new_hi) if new_hi >= new_lo else None


@contextmanager
def merges_follow(ws: Worksheet, axis: Axis, at: int, delta: int) -> Iterator[None]:
    """Wrap a row/column insert or delete so merged ranges move, grow or shrink with it."""
    moves: list[Box] = []
    for merged in merged_boxes(ws):
        span = (merged.min_row, merged.max_row) if axis == "row" \
            else (merged.min_col, merged.max_col)
        new = _shifted(*span, at, delta)
        if new == span:
            continue
        ws.unmerge_cells(merged.a1)
        if new is not None:
            moves.append(Box(new[0], merged.min_col, new[1], merged.max_col) if axis == "row"
                         else Box(merged.min_row, new[0], merged.max_row, new[1]))
    yield
    for target in moves:
        if target.rows > 1 or target.cols > 1:
            ws.merge_cells(target.a1)


def shift_cells(ws: Worksheet, axis: Axis, at: int, delta: int,
                band: tuple[int, int] | None = None) -> None:
    """Move the stored cells on line `at` (a row or a column) and beyond by `delta` lines; a
    deletion (delta < 0) drops the cells of lines at..at-delta-1. With `band` only the cells
    whose other coordinate lies in it move or go. The cost grows with the cells stored, never
    with the sheet's used range."""
    along = 0 if axis == "row" else 1
    kept: dict[tuple[int, int], Cell | MergedCell] = {}
    for coord, cell in ws._cells.items():
        line = coord[along]
        if line < at or (band is not None and not band[0] <= coord[1 - along] <= band[1]):
            kept[coord] = cell
        elif delta > 0 or line >= at - delta:
            if axis == "row":
                cell.row = line + delta
            else:
                cell.column = line + delta
            kept[(cell.row, cell.column)] = cell
    ws._cells = kept
    ws._current_row = ws.max_row if kept else 0


def delete_range(ws: Worksheet, area: Box, direction: Literal["up", "left"]) -> None:
    """Remove the cells of `area`; the cells below (or to the right) move in to fill it."""
    if direction == "up":
        refuse_merged(ws, Box(area.min_row, area.min_col, MAX_ROW, area.max_col),
                      "delete the range", anchors_ok=False)
        shift_cells(ws, "row", area.min_row, -area.rows, (area.min_col, area.max_col))
    else:
        refuse_merged(ws, Box(area.min_row, area.min_col, area.max_row, MAX_COL),
                      "delete the range", anchors_ok=False)
        shift_cells(ws, "col", area.min_col, -area.cols, (area.min_row, area.max_row))


def copy_range(source: Worksheet, area: Box, target: Worksheet, dest: Box) -> None:
    """Copy values and styles of `area` onto `dest` (a box of the same size); relative
    references in formulas are shifted. Source cells not stored are copied as empty cells
    without being created."""
    refuse_merged(target, dest, "copy there")
    stored = source._cells
    staged = [[_staged(stored.get((r, c)), dest.min_row + i, dest.min_col + j)
               for j, c in enumerate(range(area.min_col, area.max_col + 1))]
              for i, r in enumerate(range(area.min_row, area.max_row + 1))]
    for i, row in enumerate(staged):
        for j, (value, style) in enumerate(row):
            if style is None and (dest.min_row + i, dest.min_col + j) not in target._cells:
                continue  # empty onto empty
            cell = target.cell(dest.min_row + i, dest.min_col + j)
            cell.value = value
            cell._style = style or StyleArray()  # style ids of the same workbook


def _staged(cell: Cell | MergedCell | None, row: int,
            col: int) -> tuple[object, StyleArray | None]:
    if cell is None:
        return None, None
    return _moved_value(cell, row, col), copy(cell._style) if cell._style else StyleArray()


def _moved_value(cell: Cell | MergedCell, row: int, col: int) -> object:
    value = cell.value
    if isinstance(value, str) and value.startswith("="):
        dest = f"{get_column_letter(col)}{row}"
        try:
            return Translator(value, origin=cell.coordinate).translate_formula(dest)
        except TranslatorError:
            raise invalid(f"the formula of {cell.coordinate} copied to {dest} would refer to cells "
                          f"beyond the sheet's edge") from None
    return value
