"""Workbook files for the excel server: locating, loading (parsed copies cached for reads)
and saving them, A1 references, sheet names, and cell values as JSON."""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from io import BytesIO
from pathlib import Path
from threading import Lock
from typing import Any

from openpyxl import Workbook, load_workbook
from openpyxl.cell.read_only import ReadOnlyCell
from openpyxl.chartsheet import Chartsheet
from openpyxl.utils import coordinate_to_tuple, get_column_letter
from openpyxl.worksheet._reader import WorkSheetParser
from openpyxl.worksheet.worksheet import Worksheet
from openpyxl.xml.constants import SHEET_MAIN_NS

from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.files import display, resolve, save_workbook
from mock_servers.core.output import dump_json
from mock_servers.core.toolkit import Call
from mock_servers.excel.limits import check_archive, text_problem
from mock_servers.excel.plain import Rows, read_back, written_rows

MAX_ROW = 1_048_576
MAX_COL = 16_384
SUFFIXES = (".xlsx", ".xlsm")
_CELL = re.compile(r"\$?([A-Za-z]{1,3})\$?([0-9]{1,7})")
_BAD_TITLE = re.compile(r"[\\/*?:\[\]]")
_PLAIN_TITLE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


# ---- A1 references ---------------------------------------------------------------------------

def column_index(letters: str) -> int:
    index = 0
    for char in letters.upper():
        index = index * 26 + ord(char) - 64
    return index


def cell_ref(ref: str) -> tuple[int, int]:
    """`"B3"` -> (row 3, column 2); `$` anchors are ignored. Bad or out-of-sheet refs are
    INVALID_ARGUMENT."""
    match = _CELL.fullmatch(ref.strip()) if isinstance(ref, str) else None
    if match is None:
        raise invalid(f"'{ref}' is not a cell reference; use A1 notation such as B3")
    row, col = int(match[2]), column_index(match[1])
    if not (1 <= row <= MAX_ROW and 1 <= col <= MAX_COL):
        raise invalid(f"cell '{ref}' is outside the sheet "
                      f"(max {get_column_letter(MAX_COL)}{MAX_ROW})")
    return row, col


@dataclass(frozen=True)
class Box:
    """A rectangular cell range, 1-based and inclusive."""

    min_row: int
    min_col: int
    max_row: int
    max_col: int

    @property
    def rows(self) -> int:
        return self.max_row - self.min_row + 1

    @property
    def cols(self) -> int:
        return self.max_col - self.min_col + 1

    @property
    def a1(self) -> str:
        start = f"{get_column_letter(self.min_col)}{self.min_row}"
        end = f"{get_column_letter(self.max_col)}{self.max_row}"
        return start if start == end else f"{start}:{end}"

    def overlaps(self, other: Box) -> bool:
        return not (other.max_row < self.min_row or other.min_row > self.max_row
                    or other.max_col < self.min_col or other.min_col > self.max_col)

    def sized(self, rows: int, cols: int) -> Box:
        """The box of `rows` x `cols` cells starting at this box's top-left cell."""
        end_row, end_col = self.min_row + rows - 1, self.min_col + cols - 1
        if end_row > MAX_ROW or end_col > MAX_COL:
            raise invalid(f"{rows}x{cols} cells starting at {self.a1.split(':')[0]} "
                          "run past the edge of the sheet")
        return Box(self.min_row, self.min_col, end_row, end_col)


def box(start: str, end: str | None = None) -> Box:
    """The range from `start` to `end` (a single cell when `end` is missing)."""
    r0, c0 = cell_ref(start)
    r1, c1 = cell_ref(end) if end else (r0, c0)
    if r1 < r0 or c1 < c0:
        raise invalid(f"end cell {end} comes before start cell {start}")
    return Box(r0, c0, r1, c1)


def parse_range(text: str) -> Box:
    """`"A1:C10"` (or a single cell) as a Box."""
    start, _, end = text.strip().partition(":")
    return box(start, end or None)


def in_sheet(title: str, area: Box) -> str:
    """`Sheet!A1:B2`, quoting the sheet name when it is not a plain word."""
    plain = _PLAIN_TITLE.fullmatch(title) and not _CELL.fullmatch(title)
    name = title if plain else "'" + title.replace("'", "''") + "'"
    return f"{name}!{area.a1}"


# ---- files -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class WorkbookFile:
    """A workbook path inside the workspace, as the agent named it and as shown back."""

    path: Path
    shown: str

    @property
    def macros(self) -> bool:
        return self.path.suffix.lower() == ".xlsm"

    def load(self) -> Workbook:
        """A fresh copy to edit and save (formulas as text)."""
        with self._opening():
            data = self.path.read_bytes()
            check_archive(data, self.shown)
            return load_workbook(BytesIO(data), keep_vba=self.macros)

    def cached(self, *, read_only: bool, data_only: bool = False) -> CachedWorkbook:
        """The parsed workbook that reads share while the file keeps the same bytes; never
        modify it. `read_only` is openpyxl's streaming mode: cheap to open, with cells read
        through `rows`; otherwise all of it is in memory (merged ranges, tables, validations).
        `data_only` gives formula cells the values cached in the file."""
        with self._opening():
            return _parsed(self, read_only, data_only)

    @contextmanager
    def _opening(self) -> Iterator[None]:
        try:
            yield
        except ToolFailure:
            raise
        except Exception as exc:  # openpyxl raises many kinds on damaged files
            raise invalid(f"cannot open {self.shown} as a workbook ({type(exc).__name__})",
                          hint="only .xlsx/.xlsm files written by a spreadsheet program can be "
                               "read") from None

    def save(self, call: Call, wb: Workbook) -> None:
        save_workbook(wb, self.path, call.now)


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


@dataclass
class CachedWorkbook:
    """A workbook parsed from `data`, with the rows of its streamed sheets kept once read;
    `written`: the rows of each sheet when this process wrote the file (`written_rows`)."""

    data: bytes
    wb: Workbook
    written: dict[str, Rows] | None = None
    _rows: dict[str, SheetRows] = field(default_factory=dict, init=False)
    _extents: dict[str, Box] = field(default_factory=dict, init=False)

    def extent(self, ws: Any) -> Box:
        """`extent` of `ws`, one of this workbook's worksheets, worked out once (a sheet whose
        file has no dimension record is streamed to find it)."""
        used = self._extents.get(ws.title)
        if used is None:
            used = self._extents[ws.title] = extent(ws)
        return used

    def rows(self, ws: Any) -> SheetRows:
        """The rows of `ws`, one of this (streaming mode) workbook's worksheets."""
        rows = self._rows.get(ws.title)
        if rows is None:
            written = None if self.written is None else self.written[ws.title]
            rows = self._rows.setdefault(ws.title, SheetRows(ws, written))
        return rows


CACHED_WORKBOOKS = 8
_cache: OrderedDict[tuple[Path, bool, bool], CachedWorkbook] = OrderedDict()
_cache_lock = Lock()


def _parsed(book: WorkbookFile, read_only: bool, data_only: bool) -> CachedWorkbook:
    """The workbook of `book`, parsed once per mode and reused while the file holds the same
    bytes (a same-size rewrite can keep inode, size and mtime, as inodes are reused and mtimes
    can be coarse). The cache is the process's, so the server instance that measures a world
    and the one that serves it parse a file once; it keeps the CACHED_WORKBOOKS most recently
    used."""
    data = book.path.read_bytes()
    key = (book.path, read_only, data_only)
    with _cache_lock:
        entry = _cache.get(key)
    if entry is None or entry.data != data:
        check_archive(data, book.shown)
        entry = CachedWorkbook(data, load_workbook(BytesIO(data), read_only=read_only,
                                                   data_only=data_only),
                               written_rows(data) if read_only else None)
    with _cache_lock:
        _cache[key] = entry
        _cache.move_to_end(key)
        if len(_cache) > CACHED_WORKBOOKS:
            _cache.popitem(last=False)
    return entry


def workbook_file(call: Call, filepath: str, must_exist: bool = True) -> WorkbookFile:
    """Resolve `filepath` in the workspace and check it names an .xlsx/.xlsm file."""
    path = resolve(call.world, filepath)
    book = WorkbookFile(path, display(call.world, path))
    if path.suffix.lower() not in SUFFIXES:
        raise invalid(f"{book.shown} is not an .xlsx or .xlsm workbook")
    if path.is_dir():
        raise invalid(f"{book.shown} is a directory")
    if must_exist and not path.exists():
        raise not_found(f"workbook {book.shown} does not exist",
                        hint="create it with create_workbook, or check the name with "
                             "list_directory")
    return book


def worksheet(wb: Workbook, name: str, book: WorkbookFile) -> Worksheet:
    """The worksheet called `name`; NOT_FOUND lists the sheets there are."""
    if name not in wb.sheetnames:
        raise not_found(f"sheet '{name}' not found in {book.shown}; sheets: "
                        + ", ".join(wb.sheetnames))
    ws = wb[name]
    if isinstance(ws, Chartsheet):
        raise invalid(f"'{name}' in {book.shown} is a chart sheet, not a worksheet")
    return ws


def check_new_title(wb: Workbook, title: str, book: WorkbookFile,
                    ignore: str | None = None) -> None:
    """A valid sheet name (1-31 characters, none of \\ / * ? : [ ]) that no other sheet uses
    (names ignore case); `ignore` is the sheet being renamed."""
    if not title or len(title) > 31 or _BAD_TITLE.search(title) or title.startswith("'") \
            or title.endswith("'") or text_problem(title) is not None:
        raise invalid(f"invalid sheet name {title!r}: use 1 to 31 characters, none of "
                      "\\ / * ? : [ ], no control characters and no leading or trailing "
                      "apostrophe")
    clash = next((name for name in wb.sheetnames
                  if name.lower() == title.lower() and name != ignore), None)
    if clash is not None:
        raise ToolFailure(Code.ALREADY_EXISTS,
                          f"sheet '{clash}' already exists in {book.shown} (names ignore case)")


def extent(ws: Any) -> Box:
    """The used range of a sheet (A1 for an empty one). Streams the sheet when a read-only
    file carries no dimension record."""
    if ws.max_row and ws.max_column:
        return Box(ws.min_row or 1, ws.min_column or 1, ws.max_row, ws.max_column)
    rows = cols = 0
    for index, values in enumerate(ws.iter_rows(values_only=True), start=1):
        filled = [i for i, v in enumerate(values, start=1) if v is not None]
        if filled:
            rows, cols = index, max(cols, filled[-1])
    return Box(1, 1, max(rows, 1), max(cols, 1))


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
