"""A1 references and rectangular cell ranges of the excel server."""

from __future__ import annotations

import re
from dataclasses import dataclass

from openpyxl.utils import get_column_letter

from mock_servers.core.errors import invalid

MAX_ROW = 1_048_576
MAX_COL = 16_384
_CELL = re.compile(r"\$?([A-Za-z]{1,3})\$?([0-9]{1,7})")
_PLAIN_TITLE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


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
