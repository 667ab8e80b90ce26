"""How much one excel call may touch or produce, checked before the work is done, and the text
a workbook can hold. Every refusal is INVALID_ARGUMENT naming the cap and the size asked."""

from __future__ import annotations

import math
import re
import zipfile
from io import BytesIO
from typing import Any

from openpyxl import Workbook
from openpyxl.utils import range_boundaries
from openpyxl.worksheet.worksheet import Worksheet

from mock_servers.core.errors import invalid

MAX_CELLS = 100_000  # cells one call may read, write, style, merge, move, copy or reference
MAX_BOOK_CELLS = 100_000  # cells a workbook may store after a call that adds cells
MAX_SERIES = 255  # series per chart, as in Excel
MAX_CELL_TEXT = 32_767  # characters per cell, as in Excel
MAX_NUMBER_FORMAT = 255  # characters per number format, as in Excel
MAX_FORMULA = 8_192  # characters per formula, as in Excel
MAX_LABEL = 1_000  # characters of a chart or axis title

MAX_UNPACKED = 64 * 1024 * 1024  # bytes a workbook file may unpack to
MAX_SHEET_XML = 32 * 1024 * 1024  # bytes of worksheet XML (of cells) a workbook may hold (a 2M-token world: ~25 MB)
_MERGE_REF = re.compile(rb'<(?:\w+:)?mergeCell\b[^>]*?\bref="([^"]+)"')

# Characters XML 1.0 cannot carry: C0 controls except tab, LF and CR; lone surrogates;
# U+FFFE and U+FFFF. openpyxl would refuse them or write a file nothing can open.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def check_cells(rows: int, cols: int, what: str) -> None:
    """Refuse a block of `rows` x `cols` cells larger than MAX_CELLS."""
    if rows * cols > MAX_CELLS:
        raise invalid(f"{what} covers {rows * cols} cells ({rows} rows x {cols} columns); "
                      f"at most {MAX_CELLS} cells per call", hint="work on a smaller range")


def stored_cells(wb: Workbook) -> int:
    return sum(len(ws._cells) for ws in wb.worksheets if isinstance(ws, Worksheet))


def check_growth(wb: Workbook, added: int) -> None:
    """Refuse a call that would leave more than MAX_BOOK_CELLS stored cells in the workbook."""
    if added <= 0:
        return
    total = stored_cells(wb) + added
    if total > MAX_BOOK_CELLS:
        raise invalid(f"the workbook would store {total} cells; at most {MAX_BOOK_CELLS} per "
                      "workbook", hint="keep large data in several workbooks or in CSV files")


def new_cells(ws: Worksheet, min_row: int, min_col: int, rows: int, cols: int) -> int:
    """How many cells of the block are not stored yet (the block is at most MAX_CELLS)."""
    stored = ws._cells
    return sum((r, c) not in stored for r in range(min_row, min_row + rows)
               for c in range(min_col, min_col + cols))


def check_archive(data: bytes, shown: str) -> None:
    """Refuse, before parsing it, a workbook file that unpacks to more than MAX_UNPACKED bytes,
    holds more than MAX_SHEET_XML bytes of worksheets (parsing time grows with them), or whose
    merged ranges span more than MAX_BOOK_CELLS cells (openpyxl makes a cell of each merged
    cell when it loads a file)."""
    with zipfile.ZipFile(BytesIO(data)) as archive:
        entries = archive.infolist()
        unpacked = sum(entry.file_size for entry in entries)
        if unpacked > MAX_UNPACKED:
            raise invalid(f"{shown} unpacks to {unpacked} bytes; at most {MAX_UNPACKED} are read")
        sheets = [entry for entry in entries if entry.filename.startswith("xl/worksheets/")
                  and entry.filename.endswith(".xml")]
        sheet_bytes = sum(entry.file_size for entry in sheets)
        if sheet_bytes > MAX_SHEET_XML:
            raise invalid(f"{shown} holds {sheet_bytes} bytes of worksheets; at most "
                          f"{MAX_SHEET_XML} are read")
        merged = 0
        for entry in sheets:
            for ref in _MERGE_REF.findall(archive.read(entry)):
                min_col, min_row, max_col, max_row = range_boundaries(ref.decode())
                merged += (max_row - min_row + 1) * (max_col - min_col + 1)
        if merged > MAX_BOOK_CELLS:
            raise invalid(f"{shown} has merged ranges of {merged} cells in all; at most "
                          f"{MAX_BOOK_CELLS} are loaded")


def text_problem(text: str, limit: int | None = None) -> str | None:
    """Why a workbook cannot hold `text` (a character XML 1.0 lacks, or more than `limit`
    characters), or None when it can."""
    bad = _NOT_XML.search(text)
    if bad is not None:
        return f"contains the character U+{ord(bad[0]):04X}, which a workbook cannot hold"
    if limit is not None and len(text) > limit:
        return f"has {len(text)} characters; at most {limit}"
    return None


def check_text(text: str, what: str, limit: int | None = None) -> str:
    """`text` when a workbook can hold it; INVALID_ARGUMENT naming `what` otherwise."""
    problem = text_problem(text, limit)
    if problem is not None:
        raise invalid(f"{what} {problem}")
    return text


def check_value(value: Any, what: str) -> None:
    """A cell value a workbook can hold: text within MAX_CELL_TEXT XML characters, or a
    finite number."""
    if isinstance(value, str):
        check_text(value, what, MAX_CELL_TEXT)
    elif isinstance(value, float) and not math.isfinite(value):
        raise invalid(f"{what} is {value}; a cell holds finite numbers only")
