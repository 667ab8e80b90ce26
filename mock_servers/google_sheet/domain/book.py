"""Spreadsheets and their sheets: ids, lookups by id and title, creation, the modified time."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Collection
from datetime import datetime
from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.formulas.a1 import MAX_COLUMNS
from mock_servers.core.times import iso_z

MAX_CELLS = 10_000_000  # cells of all the grids of one spreadsheet together (the Sheets limit)
MAX_SHEETS = 200
MAX_TITLE = 100
DEFAULT_ROWS, DEFAULT_COLUMNS = 1000, 26
_LIST_HINT = "use list_spreadsheets to see spreadsheet ids"


class Spreadsheet(NamedTuple):
    pk: int
    id: str
    title: str
    locale: str
    time_zone: str
    folder: str | None
    created: str
    modified: str


class Sheet(NamedTuple):
    pk: int
    spreadsheet: int
    sheet_id: int
    title: str
    position: int  # the tab's index
    row_count: int
    column_count: int


_SPREADSHEET = "SELECT pk, id, title, locale, time_zone, folder, created, modified FROM gs_spreadsheet"
_SHEET = "SELECT pk, spreadsheet, sheet_id, title, \"index\", row_count, column_count FROM gs_sheet"


def spreadsheet_id(task: str, seed: int, number: int) -> str:
    """The 44-character id of the `number`th spreadsheet of a world (from its task and seed)."""
    digest = hashlib.sha256(f"{task}\x1f{seed}\x1fgs-spreadsheet\x1f{number}".encode()).digest()
    return "1" + base64.urlsafe_b64encode(digest).decode()[:43]


def find(session: Session, spreadsheet_id: str) -> Spreadsheet:
    found = sql.first(session, Spreadsheet, f"{_SPREADSHEET} WHERE id = ?", (spreadsheet_id,))
    if found is None:
        raise not_found(f"spreadsheet '{spreadsheet_id}' not found", hint=_LIST_HINT)
    return found


def sheets(session: Session, spreadsheet: int) -> list[Sheet]:
    return sql.rows(session, Sheet, f"{_SHEET} WHERE spreadsheet = ? ORDER BY \"index\", pk", (spreadsheet,))


def sheet(session: Session, book: Spreadsheet, title: str) -> Sheet:
    """The sheet of `book` titled `title` (any case)."""
    found = sql.first(session, Sheet, f"{_SHEET} WHERE spreadsheet = ? AND title_key = ?",
                      (book.pk, title.casefold()))
    if found is None:
        titles = ", ".join(s.title for s in sheets(session, book.pk))
        raise not_found(f"sheet '{title}' not found in spreadsheet '{book.id}'; its sheets: {titles}")
    return found


def touch(session: Session, spreadsheet: int, now: datetime | str) -> None:
    sql.run(session, "UPDATE gs_spreadsheet SET modified = ? WHERE pk = ?",
            (now if isinstance(now, str) else iso_z(now), spreadsheet))


def check_title(title: str) -> str:
    if not title.strip():
        raise invalid("a sheet title cannot be empty")
    if len(title) > MAX_TITLE:
        raise invalid(f"a sheet title has at most {MAX_TITLE} characters (received {len(title)})")
    return title


def grid_cells(session: Session, spreadsheet: int, without: int | None = None) -> int:
    return int(sql.scalar(session, "SELECT COALESCE(SUM(row_count * column_count), 0) FROM gs_sheet "
                          "WHERE spreadsheet = ? AND pk IS NOT ?", (spreadsheet, without)))


def check_grid(session: Session, sheet: Sheet, rows: int, columns: int) -> None:
    """Refuse a grid of `rows` x `columns` for `sheet` beyond the limits of Sheets."""
    if columns > MAX_COLUMNS:
        raise ToolFailure(Code.RESOURCE_EXHAUSTED, f"a sheet has at most {MAX_COLUMNS} columns")
    if grid_cells(session, sheet.spreadsheet, sheet.pk) + rows * columns > MAX_CELLS:
        raise ToolFailure(Code.RESOURCE_EXHAUSTED,
                          f"a spreadsheet holds at most {MAX_CELLS} cells in all its sheets")


def add_spreadsheet(session: Session, *, task: str, seed: int, title: str, created: str,
                    time_zone: str = "UTC", folder: str | None = None,
                    spreadsheet_id_: str | None = None) -> Spreadsheet:
    """A new spreadsheet without sheets; its id follows from the world and its row key
    unless given."""
    pk = int(sql.scalar(session, "SELECT seq FROM sqlite_sequence WHERE name = 'gs_spreadsheet'") or 0) + 1
    sql.run(session, "INSERT INTO gs_spreadsheet (pk, id, title, locale, time_zone, folder, created, "
            "modified, next_sheet_id) VALUES (?, ?, ?, 'en_US', ?, ?, ?, ?, 0)",
            (pk, spreadsheet_id_ or spreadsheet_id(task, seed, pk), title, time_zone, folder, created, created))
    return sql.first(session, Spreadsheet, f"{_SPREADSHEET} WHERE pk = ?", (pk,))  # type: ignore[return-value]


def add_sheet(session: Session, book: Spreadsheet, title: str, rows: int = DEFAULT_ROWS,
              columns: int = DEFAULT_COLUMNS) -> Sheet:
    """A new last sheet of `book`; ALREADY_EXISTS when the title is taken (any case)."""
    check_title(title)
    if sql.scalar(session, "SELECT 1 FROM gs_sheet WHERE spreadsheet = ? AND title_key = ?",
                  (book.pk, title.casefold())):
        raise ToolFailure(Code.ALREADY_EXISTS, f"a sheet titled '{title}' already exists in spreadsheet "
                          f"'{book.id}' (titles are compared without case)")
    count = int(sql.scalar(session, "SELECT COUNT(*) FROM gs_sheet WHERE spreadsheet = ?", (book.pk,)))
    if count >= MAX_SHEETS:
        raise ToolFailure(Code.RESOURCE_EXHAUSTED, f"a spreadsheet has at most {MAX_SHEETS} sheets")
    if grid_cells(session, book.pk) + rows * columns > MAX_CELLS:
        raise ToolFailure(Code.RESOURCE_EXHAUSTED, f"a spreadsheet holds at most {MAX_CELLS} cells in all its sheets")
    sheet_id = int(sql.scalar(session, "UPDATE gs_spreadsheet SET next_sheet_id = next_sheet_id + 1 "
                              "WHERE pk = ? RETURNING next_sheet_id - 1", (book.pk,)))
    cur = sql.run(session, "INSERT INTO gs_sheet (spreadsheet, sheet_id, title, title_key, \"index\", "
                  "row_count, column_count) VALUES (?, ?, ?, ?, ?, ?, ?)",
                  (book.pk, sheet_id, title, title.casefold(), count, rows, columns))
    return Sheet(int(cur.lastrowid or 0), book.pk, sheet_id, title, count, rows, columns)


def list_spreadsheets(session: Session) -> list[Spreadsheet]:
    """Every spreadsheet, most recently modified first."""
    return sql.rows(session, Spreadsheet, f"{_SPREADSHEET} ORDER BY modified DESC, pk DESC")


def share(session: Session, book: Spreadsheet, email: str, role: str) -> int:
    """Give `email` the `role` on `book` (replacing an earlier one); the permission's id."""
    return int(sql.scalar(session, "INSERT INTO gs_permission (spreadsheet, email, role) VALUES (?, ?, ?) "
                          "ON CONFLICT (spreadsheet, email) DO UPDATE SET role = excluded.role RETURNING id",
                          (book.pk, email.casefold(), role)))


def layout_and_cells(session: Session, skip_tabs: Collection[str] = ()) -> dict[str, Any]:
    """Every spreadsheet (id, title), every tab (spreadsheet id, sheet id, title, index) and the
    stored cells (row, col, input) of every tab but those titled in `skip_tabs`, as plain data:
    what a task freezes at generation and compares at grading when the agent may rewrite only
    the skipped tabs."""
    books = sql.run(session, "SELECT id, title FROM gs_spreadsheet ORDER BY pk").fetchall()
    tabs = sql.run(session, "SELECT b.id, s.sheet_id, s.title, s.\"index\", s.pk FROM gs_sheet s "
                            "JOIN gs_spreadsheet b ON b.pk = s.spreadsheet ORDER BY b.pk, s.sheet_id").fetchall()
    cells = {f"{book}/{title}": [list(c) for c in sql.run(
        session, "SELECT row, col, input FROM gs_cell WHERE sheet = ? ORDER BY row, col", (pk,))]
        for book, _, title, _, pk in tabs if title not in skip_tabs}
    return {"spreadsheets": [list(b) for b in books], "tabs": [list(t[:4]) for t in tabs], "cells": cells}
