"""Workbooks of plain values (text and finite numbers; no styles, formulas or dates) written
fast: openpyxl lays out the package around empty sheets and each sheet's cells are rendered
straight from the values, byte for byte the XML openpyxl writes for them (several times
faster than building and writing openpyxl cells). The process keeps the values of the last
workbooks it wrote, so that a first read of one needs no parse (`written_rows`)."""

from __future__ import annotations

import hashlib
import io
import math
import zipfile
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime
from threading import Lock
from typing import Any
from xml.sax.saxutils import escape

from openpyxl import Workbook
from openpyxl.cell.cell import ERROR_CODES
from openpyxl.utils import get_column_letter
from openpyxl.worksheet._reader import _cast_number

from mock_servers.core.files import workbook_bytes
from mock_servers.excel.limits import MAX_CELL_TEXT, text_problem

Value = str | int | float | None
Rows = Sequence[Sequence[Value]]

_EMPTY_DIMENSION = '<dimension ref="A1:A1" />'
_EMPTY_DATA = "<sheetData></sheetData>"
WRITTEN_KEPT = 8
_written: OrderedDict[bytes, dict[str, Rows]] = OrderedDict()
_written_lock = Lock()


def plain_workbook_bytes(sheets: Sequence[tuple[str, Rows]], moment: datetime) -> bytes:
    """The .xlsx file of one or more `sheets` (title, rows from A1; None leaves a cell out),
    as `workbook_bytes` writes a workbook filled by `Worksheet.append`."""
    wb = Workbook()
    wb.active.title = sheets[0][0]
    for title, _ in sheets[1:]:
        wb.create_sheet(title)
    package = workbook_bytes(wb, moment)
    # each sheet's part name is set by the save above
    parts = {ws.path[1:]: rows for ws, (_, rows) in zip(wb.worksheets, sheets, strict=True)}
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as src, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename in parts:
                data = _filled(data.decode(), parts[info.filename]).encode()
            entry = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            entry.compress_type, entry.external_attr = info.compress_type, info.external_attr
            dst.writestr(entry, data)
    package = out.getvalue()
    _remember(package, sheets)
    return package


def written_rows(data: bytes) -> dict[str, Rows] | None:
    """The rows of each sheet (by title) of the workbook file `data`, when this process wrote it
    with `plain_workbook_bytes` as one of the WRITTEN_KEPT last; None otherwise."""
    key = hashlib.sha256(data).digest()
    with _written_lock:
        return _written.get(key)


def read_back(value: str | int | float) -> tuple[Any, str]:
    """The value and data type that reading the file gives a cell written for `value` (a
    number as parsed back from its 16 significant digits)."""
    if isinstance(value, str):
        return value, "s"
    return _cast_number(f"{value:.16g}"), "n"


def _remember(data: bytes, sheets: Sequence[tuple[str, Rows]]) -> None:
    key = hashlib.sha256(data).digest()
    kept: dict[str, Rows] = {title: tuple(tuple(row) for row in rows) for title, rows in sheets}
    with _written_lock:
        _written[key] = kept
        _written.move_to_end(key)
        if len(_written) > WRITTEN_KEPT:
            _written.popitem(last=False)


def _filled(empty: str, rows: Rows) -> str:
    """An empty sheet's XML with the dimension and cells of `rows`."""
    if empty.count(_EMPTY_DIMENSION) != 1 or empty.count(_EMPTY_DATA) != 1:
        raise RuntimeError("openpyxl wrote an empty sheet in an unexpected layout")
    filled = [r for r, row in enumerate(rows, start=1) if row]
    width = max(len(row) for row in rows) if filled else 1
    dimension = (f'<dimension ref="A{filled[0]}:{get_column_letter(width)}{filled[-1]}" />'
                 if filled else _EMPTY_DIMENSION)
    return empty.replace(_EMPTY_DIMENSION, dimension).replace(
        _EMPTY_DATA, f"<sheetData>{_sheet_data(rows, width)}</sheetData>")


def _sheet_data(rows: Rows, width: int) -> str:
    letters = [get_column_letter(c) for c in range(1, width + 1)]
    out = []
    for r, row in enumerate(rows, start=1):
        if not row:
            continue
        cells = "".join(_cell(f"{letter}{r}", value)
                        for letter, value in zip(letters, row) if value is not None)
        out.append(f'<row r="{r}">{cells}</row>')
    return "".join(out)


def _cell(ref: str, value: Value) -> str:
    if isinstance(value, str):
        return _text_cell(ref, value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"cell {ref}: {value!r} is not text or a number")
    if not math.isfinite(value):
        raise ValueError(f"cell {ref}: {value} is not a finite number")
    return f'<c r="{ref}" t="n"><v>{value:.16g}</v></c>'  # as openpyxl's "%.16g"


def _text_cell(ref: str, text: str) -> str:
    problem = _text_problem(text)
    if problem is not None:
        raise ValueError(f"cell {ref}: {text!r} {problem}")
    stripped = text.strip()
    space = ' xml:space="preserve"' if stripped and stripped != text else ""
    return f'<c r="{ref}" t="inlineStr"><is><t{space}>{escape(text)}</t></is></c>'


def _text_problem(text: str) -> str | None:
    """Why `text` would not be stored as plain text that reads back as itself; None when it
    would."""
    if not text:
        return "is empty (leave the cell out with None)"
    if "\r" in text:
        return "holds a carriage return (it would read back as a line feed)"
    if text in ERROR_CODES or (len(text) > 1 and text.startswith("=")):
        return "would be stored as an error value or a formula"
    return text_problem(text, MAX_CELL_TEXT)
