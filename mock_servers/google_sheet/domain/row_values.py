"""Each sheet row's values as a read shows them (`gs_row_values`): the JSON array of the row
from column A, so that a range of whole rows is read a row, not a cell, at a time.

A stored row is exact, else absent (read cell by cell). Triggers drop a row when one of its
cells changes value or is deleted; the statements that insert cells (`cells.write`) or move
them (`structure.insert`) drop or move the rows they touch themselves; a new sheet starts with
no rows, built in bulk (`bulk.create`) or copied with its cells (`structure.copy`). A world made
before the table existed has none of it: its reads go cell by cell and nothing is stored."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, cast

import orjson
from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.google_sheet.domain.values import CellInput, entered, shown

TABLE = "gs_row_values"


def present(session: Session) -> bool:
    """Whether this world's database has the table."""
    return sql.scalar(session, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)) is not None


def text(line: list[Any]) -> str:
    """A row of shown values as the JSON a read writes for it."""
    return orjson.dumps(line).decode()


@lru_cache(maxsize=8192, typed=True)
def _piece(raw: CellInput) -> str | None:
    """The JSON of the value a cell entered as `raw` shows: "" when it shows nothing, None when
    that is not known yet (a formula) or not stored as entered (a non-finite number)."""
    entry = entered(raw)
    if entry is None or entry.value == "":
        return ""
    if entry.formula is not None or (isinstance(entry.value, float) and not math.isfinite(entry.value)):
        return None
    return text(shown(entry.value, entry.value_type))


def entered_text(line: list[CellInput]) -> tuple[int, str] | None:
    """(width, text) of a row entered as `line` (USER_ENTERED values from column A), or None
    (see `_piece`). Built from the JSON of each value: the same text as `text`, at a fraction
    of the cost for the rows of a world."""
    found = list(map(_piece, line))
    if None in found:
        return None
    pieces = cast(list[str], found)
    while pieces and not pieces[-1]:
        pieces.pop()
    if "" in pieces:
        pieces = [piece or '""' for piece in pieces]
    return len(pieces), "[" + ",".join(pieces) + "]"


def store(session: Session, sheet: int, rows: list[tuple[int, int, str]]) -> None:
    """Store (row, width, text) triples of a sheet that has none of them yet."""
    sql.cursor(session).executemany(f"INSERT INTO {TABLE} (sheet, row, width, text) VALUES (?, ?, ?, ?)",
                                    [(sheet, *row) for row in rows])


def texts(session: Session, sheet: int, r1: int, r2: int, width: int) -> list[str]:
    """The texts of the stored rows r1..r2 of a sheet no wider than `width`, in row order."""
    return [found[0] for found in sql.run(session, f"SELECT text FROM {TABLE} WHERE sheet = ? AND row BETWEEN ? AND ? "
                                      "AND width <= ? ORDER BY row", (sheet, r1, r2, width))]


def stored(session: Session, sheet: int, r1: int, r2: int, width: int) -> dict[int, str]:
    """`texts` by row."""
    return dict(sql.run(session, f"SELECT row, text FROM {TABLE} WHERE sheet = ? AND row BETWEEN ? AND ? "
                        "AND width <= ?", (sheet, r1, r2, width)))


def drop(session: Session, sheet: int, r1: int, r2: int) -> None:
    """Forget rows r1..r2 of a sheet (their cells are about to change)."""
    if present(session):
        sql.run(session, f"DELETE FROM {TABLE} WHERE sheet = ? AND row BETWEEN ? AND ?", (sheet, r1, r2))


def inserted(session: Session, sheet: int, axis: str, at: int, count: int) -> None:
    """After `count` rows (axis "row") or columns ("col") were inserted before `at`: rows at or
    after it move down; with columns, the rows showing a value at or after it are forgotten."""
    if not present(session):
        return
    if axis == "col":
        sql.run(session, f"DELETE FROM {TABLE} WHERE sheet = ? AND width > ?", (sheet, at))
        return
    # two steps, so that no moved row lands on a key another still holds
    sql.run(session, f"UPDATE {TABLE} SET row = -1 - (row + ?) WHERE sheet = ? AND row >= ?", (count, sheet, at))
    sql.run(session, f"UPDATE {TABLE} SET row = -1 - row WHERE sheet = ? AND row < 0", (sheet,))


def copy(session: Session, source: int, target: int) -> None:
    """Give a sheet copied cell for cell the stored rows of its source."""
    if present(session):
        sql.run(session, f"INSERT INTO {TABLE} (sheet, row, width, text) SELECT ?, row, width, text FROM {TABLE} "
                "WHERE sheet = ?", (target, source))
