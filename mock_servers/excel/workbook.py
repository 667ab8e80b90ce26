"""Workbook files for the excel server: locating, loading (parsed copies cached for reads) and
saving them, sheet names and used ranges."""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from threading import Lock
from typing import Any

from openpyxl import Workbook, load_workbook
from openpyxl.chartsheet import Chartsheet
from openpyxl.worksheet.worksheet import Worksheet

from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.files import display, resolve, save_workbook
from mock_servers.core.toolkit import Call
from mock_servers.excel.areas import Box
from mock_servers.excel.limits import check_archive, text_problem
from mock_servers.excel.plain import Rows, written_rows
from mock_servers.excel.sheet_rows import SheetRows

SUFFIXES = (".xlsx", ".xlsm")
_BAD_TITLE = re.compile(r"[\\/*?:\[\]]")


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


PAGE_CHARS = 2_000_000  # the texts of read pages a parsed workbook keeps, at most


@dataclass
class CachedWorkbook:
    """A workbook parsed from `data`, with the rows of its streamed sheets kept once read and
    the texts of the latest pages read; `written`: the rows of each sheet when this process
    wrote the file (`written_rows`)."""

    data: bytes
    wb: Workbook
    written: dict[str, Rows] | None = None
    _rows: dict[str, SheetRows] = field(default_factory=dict, init=False)
    _extents: dict[str, Box] = field(default_factory=dict, init=False)
    _pages: OrderedDict[tuple[Any, ...], str] = field(default_factory=OrderedDict, init=False)
    _pages_lock: Lock = field(default_factory=Lock, init=False)
    _page_chars: int = field(default=0, init=False)  # of the pages kept

    def page(self, key: tuple[Any, ...], build: Callable[[], str]) -> str:
        """The text of the page that `key` names, built once while the file keeps these bytes
        (agents read pages again, e.g. after old tool results were cleared from their context);
        the latest pages are kept, up to PAGE_CHARS characters in all."""
        with self._pages_lock:
            text = self._pages.get(key)
            if text is not None:
                self._pages.move_to_end(key)
                return text
        text = build()
        with self._pages_lock:
            if key not in self._pages:
                self._pages[key] = text
                self._page_chars += len(text)
            while self._page_chars > PAGE_CHARS and len(self._pages) > 1:
                self._page_chars -= len(self._pages.popitem(last=False)[1])
        return text

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
