"""The stored rows of shown values (`gs_row_values`): after any sequence of writes, every stored
row equals the row read cell by cell, and a range read through them returns the very text the
cell-by-cell read returns, on seeded worlds and on a generated one."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlmodel import Session

from envs.core.registry import get_task
from loca.core.world import World
from mock_servers.core.db import Database
from mock_servers.core.output import dump_json
from mock_servers.gateway import Gateway
from mock_servers.google_sheet import domain
from mock_servers.google_sheet.domain import Box, Sheet, row_values
from mock_servers.google_sheet.domain.book import DEFAULT_COLUMNS
from tests.google_sheet_seed import Sheets, build_sheets
from tests.harness import task_call

VALUES: list[Any] = [
    1, -3, 0, 2.5, 0.1 + 0.2, 1e-7, 1e20, 2**60, True, False, "TRUE", "2025-01-31", "1,234.5", "12%", "$3",
    "text", "'007", "'", "", None, "tab\there", 'say "hi"', "ünïcödé", "=A1*2", "=SUM(A1:C3)", "=B2&\"x\"",
    "=1/0", "=IF(A1>1,\"\",A1)", "=TODAY()", "=Q1 Data!B2", "=Z99", "=A1+"]


def _expected(session: Session, sheet: Sheet, row: int) -> list[Any]:
    found = domain.values(session, sheet, Box(row, 0, row, sheet.column_count - 1))
    return found[0] if found else []


def check(db: Database, rng: random.Random) -> None:
    """Every stored row is exact, and reads of whole, partial and random ranges through the
    stored rows write the same JSON as reads cell by cell."""
    with db.read() as session:
        for (pk,) in session.connection().exec_driver_sql("SELECT pk FROM gs_sheet").fetchall():
            sheet = next(s for book in domain.list_spreadsheets(session)
                         for s in domain.sheets(session, book.pk) if s.pk == pk)
            for row, width, text in session.connection().exec_driver_sql(
                    "SELECT row, width, text FROM gs_row_values WHERE sheet = ?", (pk,)).fetchall():
                line = _expected(session, sheet, row)
                assert (width, text) == (len(line), dump_json(line)), (sheet.title, row)
            rows, cols = sheet.row_count, sheet.column_count
            boxes = [Box(0, 0, rows - 1, cols - 1), Box(0, 0, min(rows, 4) - 1, min(cols, 2) - 1)]
            for _ in range(4):
                r1, c1 = rng.randrange(rows), rng.choice([0, 0, rng.randrange(cols)])
                boxes.append(Box(r1, c1, rng.randrange(r1, rows), rng.randrange(c1, cols)))
            for box in boxes:
                fast = domain.value_rows(session, sheet, box)
                assert dump_json(fast) == dump_json(domain.values(session, sheet, box)), (sheet.title, box)


def _data(rng: random.Random) -> list[list[Any]]:
    return [[rng.choice(VALUES) for _ in range(rng.randint(1, 4))] for _ in range(rng.randint(1, 3))]


def _cell(rng: random.Random, rows: int = 12, cols: int = 6) -> str:
    return f"{'ABCDEFGHIJ'[rng.randrange(cols)]}{rng.randrange(1, rows + 1)}"


def _step(h: Sheets, sid: str, rng: random.Random, n: int) -> None:
    """One write of a random kind, through the tools."""
    tabs = [s["title"] for s in h.ok("list_sheets", spreadsheet_id=sid)["sheets"]]
    sheet = rng.choice(tabs)
    kind = rng.choice(["update", "update", "update", "clear", "rows", "columns", "append", "copy", "rename",
                       "delete"])
    args: dict[str, Any] = {"spreadsheet_id": sid, "sheet": sheet}
    if kind == "update":
        h.call("update_cells", **args, range=f"{_cell(rng)}:J40", data=_data(rng))
    elif kind == "clear":
        h.call("clear_range", **args, range=f"{_cell(rng, 6, 3)}:{_cell(rng)}")
    elif kind == "rows":
        h.call("add_rows", **args, count=rng.randint(1, 3), start_row=rng.randrange(8))
    elif kind == "columns":
        h.call("add_columns", **args, count=rng.randint(1, 2), start_column=rng.randrange(5))
    elif kind == "append":
        h.call("append_rows", **args, data=_data(rng))
    elif kind == "copy":
        h.call("copy_sheet", src_spreadsheet=sid, src_sheet=sheet, dst_spreadsheet=sid, dst_sheet=f"Copy {n}")
    elif kind == "rename":
        h.call("rename_sheet", spreadsheet=sid, sheet=sheet, new_name=rng.choice(["Q1 Data", "Stock", f"Tab {n}"]))
    elif len(tabs) > 1:
        h.call("delete_sheet", **args)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1))
def test_stored_rows_stay_exact_under_any_writes(make_world: Any, seed: int) -> None:
    h, ids = build_sheets(make_world)
    rng = random.Random(seed)
    try:
        check(h.runtime.db, rng)
        for n in range(12):
            _step(h, ids["Inventory"], rng, n)
            check(h.runtime.db, rng)
    finally:
        h.runtime.db.dispose()


def test_a_built_spreadsheet_stores_every_row_formulas_included(make_world: Any) -> None:
    h, ids = build_sheets(make_world)
    with h.runtime.db.read() as session:
        stock = domain.sheet(session, domain.find(session, ids["Inventory"]), "Stock")
        stored = row_values.texts(session, stock.pk, 0, stock.row_count - 1, DEFAULT_COLUMNS)
    h.runtime.db.dispose()
    assert stored == ['["SKU","Name","Qty","Price","Value"]', '["A-1","Bolt",120,0.25,30]',
                      '["A-2","Nut",80,0.1,8]', '["B-7","Washer",0,0.05,0]', '["C-3","Bracket",15,4.5,67.5]',
                      '["Total","",215,"",105.5]']


def _forget_rows(state: Path) -> None:
    conn = sqlite3.connect(state)
    conn.execute("DELETE FROM gs_row_values")
    conn.commit()
    conn.close()


def test_tool_output_is_the_same_text_with_or_without_stored_rows(make_world: Any) -> None:
    """Including a read cut by the output cap (the rows that fit, then a first row cut at a cell)."""
    h, ids = build_sheets(make_world, {"max_output_chars": 1200})
    sid = ids["Inventory"]
    h.ok("update_cells", spreadsheet_id=sid, sheet="Q1 Data", range="A6:H6", data=[["x" * 300] * 8])
    h.ok("update_cells", spreadsheet_id=sid, sheet="Q1 Data", range="A7:C7", data=[[1, 2, 3]])
    h.ok("update_cells", spreadsheet_id=sid, sheet="Stock", range="A20:A49",
         data=[[f"row {i} of the block"] for i in range(30)])
    reads: list[tuple[str, dict[str, Any]]] = [
        ("get_sheet_data", {"sheet": "Stock"}), ("get_sheet_data", {"sheet": "Stock", "range": "A1:E3"}),
        ("get_sheet_data", {"sheet": "Q1 Data", "range": "A6:H7"}),
        ("get_sheet_data", {"sheet": "Q1 Data", "range": "A1:B9"}),
        ("get_multiple_sheet_data", {"queries": [{"spreadsheet_id": sid, "sheet": "Stock", "range": "A1:E9"},
                                                 {"spreadsheet_id": sid, "sheet": "Q1 Data", "range": "A:B"}]})]

    def texts() -> list[str]:
        return [h.ok_text(tool, **({"spreadsheet_id": sid} if "sheet" in args else {}), **args) for tool, args in reads]

    fast = texts()
    assert "output cap reached" in fast[0] and "cells of row 6" in fast[2]
    _forget_rows(h.world.state_path)
    assert texts() == fast
    h.runtime.db.dispose()


@pytest.fixture(scope="module")
def nhl_world(tmp_path_factory: pytest.TempPathFactory) -> World:
    task = get_task("nhl_b2b_analysis")
    return task.generate(tmp_path_factory.mktemp("nhl") / "world", {"num_games": 300}, 0)


def test_a_generated_world_reads_the_same_through_its_stored_rows(nhl_world: World) -> None:
    db = Database(nhl_world.state_path)
    try:
        check(db, random.Random(0))
        with db.read() as session:
            sheet = domain.sheets(session, domain.list_spreadsheets(session)[0].pk)[0]
            stored = row_values.texts(session, sheet.pk, 0, sheet.row_count - 1, sheet.column_count)
            assert len(stored) == domain.last_row(session, sheet) + 1
    finally:
        db.dispose()
    task = get_task("nhl_b2b_analysis")
    book = task_call(nhl_world, task, "google_sheet_list_spreadsheets")["spreadsheets"][0]["id"]
    gateway = Gateway(nhl_world, task.spec.servers)
    try:
        found = asyncio.run(gateway.call("google_sheet_get_sheet_data", {
            "spreadsheet_id": book, "sheet": "Schedule", "range": "A99:H101"}))
    finally:
        gateway.close()
    assert found.text == (
        '{"spreadsheetId":"15-T1AhbbFA6JpfAqoTwIo2ipUPhjlRMWxHKascJbT0g","valueRanges":[{"range":"Schedule!A99:H101",'
        '"majorDimension":"ROWS","values":[["2024-11-19","6:30 PM","7:30 PM","Tampa Bay Lightning",6,'
        '"Pittsburgh Penguins",5,"Final"],["2024-11-19","6:30 PM","7:30 PM","Carolina Hurricanes","",'
        '"Calgary Flames","","Postponed"],["2024-11-19","7:00 PM","8:00 PM","Edmonton Oilers",5,"Anaheim Ducks",7,'
        '"Final"]]}],"rowCount":1000,"columnCount":8}')


def test_a_world_made_before_the_table_reads_and_writes_cell_by_cell(make_world: Any) -> None:
    h, ids = build_sheets(make_world)
    conn = sqlite3.connect(h.world.state_path)
    conn.executescript("DROP TRIGGER gs_cell_value; DROP TRIGGER gs_cell_gone; DROP TABLE gs_row_values;")
    conn.close()
    sid = ids["Inventory"]
    h.ok("update_cells", spreadsheet_id=sid, sheet="Stock", range="C2:C3", data=[[10], [20]])
    h.ok("add_rows", spreadsheet_id=sid, sheet="Stock", count=1, start_row=1)
    h.ok("clear_range", spreadsheet_id=sid, sheet="Stock", range="A4:E4")
    h.ok("copy_sheet", src_spreadsheet=sid, src_sheet="Stock", dst_spreadsheet=sid, dst_sheet="Copy")
    assert h.values(sid, "Copy", "A1:E3") == [["SKU", "Name", "Qty", "Price", "Value"], [],
                                              ["A-1", "Bolt", 10, 0.25, 2.5]]
    h.runtime.db.dispose()
