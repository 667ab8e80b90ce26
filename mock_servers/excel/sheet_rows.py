"""The stored rows of a streamed sheet, parsed as far as reads have gone, and cell values as
JSON."""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from threading import Lock
from typing import Any

from openpyxl.cell.read_only import ReadOnlyCell
from openpyxl.utils import coordinate_to_tuple
from openpyxl.worksheet._reader import WorkSheetParser
from openpyxl.xml.constants import SHEET_MAIN_NS

from mock_servers.core.output import dump_json
from mock_servers.excel.areas import Box
from mock_servers.excel.plain import Rows, read_back

_AHEAD = 256  # rows a read parses ahead in one step

FORMULA = object()
"""Stands for a formula cell in the values of `SheetRows.lines` (its value is read from the
cached copy)."""

Line = tuple[list[Any], str | None]
"""A row of a window: its JSON values (never modify them) and, when it holds no formula, their
JSON text."""


@dataclass(slots=True)
class _Stored:
    """A row the file stores: its cells in column order, their JSON values once read, and the
    line of the last window read from it, after that window's first and last columns."""

    columns: list[int]
    cells: list[Any]
    values: list[Any] | None = None
    window: tuple[tuple[int, int], Line] | None = None


class SheetRows:
    """A streamed sheet's stored rows, parsed only as far as reads have gone and kept sparse
    (a row holds only the cells its file stores, so a far-off cell costs nothing). Rows end at
    the file's last one, as openpyxl's streaming reader's do. A row's cells are turned into JSON
    values once, on the first read that reaches them, and the JSON text of the last window read
    from it is kept for the next read of that window."""

    def __init__(self, ws: Any, written: Rows | None = None) -> None:
        self.ws = ws
        self._written = written
        self._lock = Lock()
        self._restart()

    def lines(self, area: Box) -> Iterator[Line]:
        """The lines of `area` row by row (None where the file has no cell, FORMULA for a
        formula cell), up to the sheet's last row."""
        parsed, i, span = 0, 0, (area.min_col, area.max_col)
        for row in range(area.min_row, area.max_row + 1):
            if row > parsed:  # parse a stretch ahead, then walk the stored rows in step
                parsed = self._parsed_to(min(row + _AHEAD, area.max_row))
                if parsed < row:
                    return
                i = bisect_left(self._numbers, row)
            if i == len(self._numbers) or self._numbers[i] != row:
                empty = [None] * area.cols
                yield empty, dump_json(empty)
                continue
            stored = self._stored[i]
            i += 1
            window = stored.window  # one attribute: reads in other threads see it whole
            if window is None or window[0] != span:
                window = stored.window = (span, self._line(stored, area))
            yield window[1]

    def has_values(self, area: Box) -> bool:
        """Whether any cell of `area` holds a value (parsing no further than the first)."""
        row = area.min_row
        while row <= area.max_row and self._parsed_to(row) >= row:
            i = bisect_left(self._numbers, row)
            if self._numbers[i] > area.max_row:
                return False
            stored = self._stored[i]
            lo, hi = _within(stored.columns, area)
            if any(cell.value is not None for cell in stored.cells[lo:hi]):
                return True
            row = self._numbers[i] + 1
        return False

    @staticmethod
    def _line(stored: _Stored, area: Box) -> Line:
        if stored.values is None:
            stored.values = [FORMULA if cell.data_type == "f" else json_value(cell)
                             for cell in stored.cells]
        lo, hi = _within(stored.columns, area)
        if hi - lo == area.cols:  # every cell of the row's span is stored
            values = stored.values[lo:hi]
        else:
            values = [None] * area.cols
            for k in range(lo, hi):
                values[stored.columns[k] - area.min_col] = stored.values[k]
        return values, None if FORMULA in values else dump_json(values)

    def _parsed_to(self, row: int) -> int:
        """Parse on to `row` if need be; the last stored row number parsed."""
        with self._lock:
            try:
                while not self._done and (not self._numbers or self._numbers[-1] < row):
                    self._take(next(self._stream, None))
            except Exception:
                self._restart()  # a damaged row fails every read, not cuts the sheet short
                raise
            return self._numbers[-1] if self._numbers else 0

    def _take(self, parsed: tuple[int, list[Any]] | None) -> None:
        if parsed is None:
            self._done = True
        elif not self._numbers or parsed[0] > self._numbers[-1]:
            self._numbers.append(parsed[0])
            self._stored.append(_Stored([cell.column for cell in parsed[1]], parsed[1]))

    def _restart(self) -> None:
        self._numbers: list[int] = []
        self._stored: list[_Stored] = []
        self._done = False
        self._stream = _stored_rows(self.ws) if self._written is None \
            else _written_rows(self.ws, self._written)


def _within(columns: list[int], area: Box) -> tuple[int, int]:
    """The bounds of the stored `columns` inside `area`."""
    if columns and columns[0] >= area.min_col and columns[-1] <= area.max_col:
        return 0, len(columns)
    return bisect_left(columns, area.min_col), bisect_right(columns, area.max_col)


_INLINE, _FORMULA = f"{{{SHEET_MAIN_NS}}}is", f"{{{SHEET_MAIN_NS}}}f"
_TEXT, _RUN = f"{{{SHEET_MAIN_NS}}}t", f"{{{SHEET_MAIN_NS}}}r"


class _SheetParser(WorkSheetParser):
    """openpyxl's sheet parser with a fast path for plain inline strings (how openpyxl itself
    writes text), which it would build as rich-text objects only to take their text: the same
    value, about half the parsing time of a text-heavy sheet."""

    def parse_cell(self, element: Any) -> dict[str, Any]:
        inline = element.find(_INLINE) if element.get("t") == "inlineStr" else None
        if inline is None or self.rich_text or (
                not self.data_only and element.find(_FORMULA) is not None):
            return super().parse_cell(element)
        coordinate = element.get("r")
        if coordinate:
            row, column = coordinate_to_tuple(coordinate)
            self.col_counter = column
        else:
            self.col_counter += 1
            row, column = self.row_counter, self.col_counter
        parts = [inline.findtext(_TEXT), *(run.findtext(_TEXT) for run in inline.iterfind(_RUN))]
        return {"row": row, "column": column, "value": "".join(p for p in parts if p),
                "data_type": "s", "style_id": int(element.get("s") or 0)}


def _stored_rows(ws: Any) -> Iterator[tuple[int, list[Any]]]:
    """Each row the file of a streamed sheet holds: its number and its stored cells."""
    book = ws.parent
    with ws._get_source() as source:
        parser = _SheetParser(source, ws._shared_strings, data_only=book.data_only,
                                 epoch=book.epoch, date_formats=book._date_formats,
                                 timedelta_formats=book._timedelta_formats)
        for number, cells in parser.parse():
            yield number, sorted((ReadOnlyCell(ws, **cell) for cell in cells),
                                 key=lambda cell: cell.column)


def _written_rows(ws: Any, rows: Rows) -> Iterator[tuple[int, list[Any]]]:
    """`_stored_rows` of a sheet this process wrote with `plain_workbook_bytes`, made from the
    values it wrote instead of parsed from the file."""
    for number, row in enumerate(rows, start=1):
        if row:
            yield number, [ReadOnlyCell(ws, number, column, *read_back(value))
                           for column, value in enumerate(row, start=1) if value is not None]


# ---- values ----------------------------------------------------------------------------------

def _date_only(number_format: str) -> bool:
    plain = re.sub(r'"[^"]*"|\[[^\]]*\]', "", number_format or "").lower()
    return "h" not in plain and "s" not in plain


def _duration(value: timedelta) -> str:
    sign = "-" if value < timedelta(0) else ""
    seconds = abs(value.total_seconds())
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{sign}PT{int(hours)}H{int(minutes)}M{secs:g}S"


_PLAIN = (str, int, bool, type(None))


def json_value(cell: Any) -> Any:
    """A cell's value as JSON: dates and times as ISO 8601, durations as `PT..H..M..S`,
    non-finite numbers as null. The number format (a style lookup) is read only for a
    midnight datetime, the one value it changes."""
    value = cell.value
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, datetime):
        if value.time() == time(0) and _date_only(cell.number_format):
            return value.date().isoformat()
        return value.isoformat()
    if isinstance(value, (date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return _duration(value)
    return str(value)
