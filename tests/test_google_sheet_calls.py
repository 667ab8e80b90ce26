"""Table-driven google_sheet calls: each case runs on a fresh copy of the seeded world (see
tests/google_sheet_seed.py) and states the output or the error it must give. `@Inventory`
stands for that spreadsheet's id; `Values` compares the values of a get_sheet_data result,
`Exact` their JSON text (telling true from 1 and 1 from 1.0), `Keys` the given keys of a result,
`Err` the error code (and a part of the message)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from tests.google_sheet_seed import build_sheets


@dataclass(frozen=True)
class Values:
    rows: list[list[Any]]
    range: str | None = None


@dataclass(frozen=True)
class Exact:
    text: str


@dataclass(frozen=True)
class Keys:
    keys: dict[str, Any]


@dataclass(frozen=True)
class Err:
    code: str
    part: str = ""


INV, EMPTY = "@Inventory", "@Empty"
Case = tuple[str, str, dict[str, Any], Any]


def read(range_: str, sheet: str = "Stock", sid: str = INV) -> dict[str, Any]:
    return {"spreadsheet_id": sid, "sheet": sheet, "range": range_}


def write(range_: str, data: list[list[Any]], sheet: str = "Sheet1", sid: str = EMPTY) -> dict[str, Any]:
    return {"spreadsheet_id": sid, "sheet": sheet, "range": range_, "data": data}


# (case id, tool, arguments, expected); a write case is followed by the read in AFTER, if any
CASES: list[Case] = [
    # reads: every A1 form, edges of the grid
    ("single-cell", "get_sheet_data", read("A1"), Values([["SKU"]], "Stock!A1")),
    ("rectangle-offset", "get_sheet_data", read("B2:C3"), Values([["Bolt", 120], ["Nut", 80]], "Stock!B2:C3")),
    ("prefixed", "get_sheet_data", read("Stock!D2:D3"), Values([[0.25], [0.1]])),
    ("prefixed-quoted", "get_sheet_data", read("'Stock'!A2"), Values([["A-1"]])),
    ("prefix-any-case", "get_sheet_data", read("STOCK!A2"), Values([["A-1"]])),
    ("sheet-arg-any-case", "get_sheet_data", read("A2", sheet="stock"), Values([["A-1"]])),
    ("open-below", "get_sheet_data", read("A5:B"), Values([["C-3", "Bracket"], ["Total"]], "Stock!A5:B1000")),
    ("whole-column", "get_sheet_data", read("E:E"), Values([["Value"], [30], [8], [0], [67.5], [105.5]])),
    ("row-range", "get_sheet_data", read("2:2"), Values([["A-1", "Bolt", 120, 0.25, 30]], "Stock!A2:Z2")),
    ("reversed-corners", "get_sheet_data", read("C3:B2"), Values([["Bolt", 120], ["Nut", 80]])),
    ("absolute-marks", "get_sheet_data", read("$A$1:$B$1"), Values([["SKU", "Name"]])),
    ("lower-case-a1", "get_sheet_data", read("a1:b1"), Values([["SKU", "Name"]])),
    ("whole-sheet-name", "get_sheet_data", read("Stock"), Values([["SKU", "Name", "Qty", "Price", "Value"],
                                                                  ["A-1", "Bolt", 120, 0.25, 30],
                                                                  ["A-2", "Nut", 80, 0.1, 8],
                                                                  ["B-7", "Washer", 0, 0.05, 0],
                                                                  ["C-3", "Bracket", 15, 4.5, 67.5],
                                                                  ["Total", "", 215, "", 105.5]])),
    ("empty-area", "get_sheet_data", read("H10:J20"), Values([], "Stock!H10:J20")),
    ("trailing-empties-dropped", "get_sheet_data", read("A6:Z7"), Values([["Total", "", 215, "", 105.5]])),
    ("last-row-of-grid", "get_sheet_data", read("A1000:Z1000"), Values([])),
    ("past-last-row", "get_sheet_data", read("A1000:A1001"), Err("INVALID_ARGUMENT", "exceeds the grid")),
    ("past-last-column", "get_sheet_data", read("Z1:AA1"), Err("INVALID_ARGUMENT", "26 columns")),
    ("space-and-quote-title", "get_sheet_data", read("'Q1 Data'!A1:B2", sheet="Q1 Data"),
     Values([["Month", "Sales"], ["2025-01-01", 1200]])),
    ("unquoted-space-title", "get_sheet_data", read("Q1 Data!B2", sheet="Q1 Data"), Values([[1200]])),
    ("other-sheet-prefix", "get_sheet_data", read("'Q1 Data'!A1"), Err("INVALID_ARGUMENT", "names sheet 'Q1 Data'")),
    ("garbage-range", "get_sheet_data", read("hello world"), Err("INVALID_ARGUMENT", "not an A1 range")),
    ("half-range", "get_sheet_data", read("A1:"), Err("INVALID_ARGUMENT", "not an A1 range")),
    ("row-zero", "get_sheet_data", read("A0"), Err("INVALID_ARGUMENT")),
    ("column-past-zzz", "get_sheet_data", read("AAAA1"), Err("INVALID_ARGUMENT")),
    ("missing-sheet", "get_sheet_data", read("A1", sheet="Nope"), Err("NOT_FOUND", "its sheets: Stock, Q1 Data")),
    ("missing-spreadsheet", "get_sheet_data", read("A1", sid="1abc"), Err("NOT_FOUND", "spreadsheet '1abc'")),
    ("unknown-parameter", "get_sheet_data", {**read("A1"), "limit": 3}, Err("INVALID_ARGUMENT", "unknown parameter")),
    ("formulas-read", "get_sheet_formulas", read("C6:E6"), Keys({"range": "Stock!C6:E6",
                                                                  "values": [["=SUM(C2:C5)", "", "=SUM(E2:E5)"]]})),
    ("formulas-missing-sheet", "get_sheet_formulas", read("A1", sheet="Gone"), Err("NOT_FOUND")),
    ("list-sheets", "list_sheets", {"spreadsheet_id": INV}, Keys({"sheets": [
        {"sheetId": 0, "title": "Stock", "index": 0, "rowCount": 1000, "columnCount": 26},
        {"sheetId": 1, "title": "Q1 Data", "index": 1, "rowCount": 1000, "columnCount": 26}]})),
    ("list-sheets-missing", "list_sheets", {"spreadsheet_id": "x"}, Err("NOT_FOUND")),
    ("list-spreadsheets", "list_spreadsheets", {}, Keys({"total": 3})),
    ("summary-rows-over-max", "get_multiple_spreadsheet_summary", {"spreadsheet_ids": [INV], "rows_to_fetch": 51},
     Err("INVALID_ARGUMENT", "allowed 1..50")),
    ("summary-too-many-ids", "get_multiple_spreadsheet_summary", {"spreadsheet_ids": [INV] * 21},
     Err("INVALID_ARGUMENT")),
    ("multi-empty-queries", "get_multiple_sheet_data", {"queries": []}, Err("INVALID_ARGUMENT")),
    ("multi-bad-query-key", "get_multiple_sheet_data", {"queries": [{**read("A1"), "x": 1}]}, Err("INVALID_ARGUMENT")),
    # writes: USER_ENTERED values, formulas and their errors
    ("write-number-text", "update_cells", write("A1", [["42"]]),
     Keys({"updatedRange": "Sheet1!A1", "updatedCells": 1})),
    ("write-thousands", "update_cells", write("A1", [["1,234"]]), Keys({"updatedCells": 1})),
    ("write-forced-text", "update_cells", write("A1:B1", [["'0042", "'=1+1"]]), Keys({"updatedColumns": 2})),
    ("write-bool-text", "update_cells", write("A1", [["true"]]), Keys({"updatedRows": 1})),
    ("write-formula", "update_cells", write("A1:C1", [[2, 3, "=A1*B1"]]), Keys({"updatedCells": 3})),
    ("write-every-kind", "update_cells", write("A1:J3", [
        [True, "FALSE", "2025-03-01", 2.5, 1e20, "", "=1/0", "'", "x", 9007199254740993],
        [],
        ["=C1+0.5", "=A1", -3, "=C1", "0.30000000000000004", -0.0, "'2", "=D1*2", None, "=J1-1"]]),
     Keys({"updatedRows": 3})),
    ("write-open-range", "update_cells", write("B2:C", [[1, 2], [3, 4], [5, 6]]),
     Keys({"updatedRange": "Sheet1!B2:C4"})),
    ("write-row-range", "update_cells", write("3:3", [[1, 2, 3]]), Keys({"updatedRange": "Sheet1!A3:C3"})),
    ("write-too-many-rows", "update_cells", write("A1:A2", [[1], [2], [3]]), Err("INVALID_ARGUMENT", "3 rows")),
    ("write-too-many-cols", "update_cells", write("A1:B1", [[1, 2, 3]]), Err("INVALID_ARGUMENT", "3 columns")),
    ("write-no-data", "update_cells", write("A1", []), Err("INVALID_ARGUMENT")),
    ("write-object-cell", "update_cells", write("A1", [[{"a": 1}]]), Err("INVALID_ARGUMENT")),
    ("write-missing-sheet", "update_cells", write("A1", [[1]], sheet="Nope"), Err("NOT_FOUND")),
    ("write-prefix-mismatch", "update_cells", write("Other!A1", [[1]]), Err("INVALID_ARGUMENT", "names sheet")),
    ("write-grows-grid", "update_cells", write("AD1500", [["x"]]), Keys({"updatedRange": "Sheet1!AD1500"})),
    ("batch-ok", "batch_update_cells", {"spreadsheet_id": EMPTY, "sheet": "Sheet1",
                                        "ranges": {"A1": [[1]], "B1:B2": [[2], [3]]}},
     Keys({"totalUpdatedCells": 3})),
    ("batch-empty", "batch_update_cells", {"spreadsheet_id": EMPTY, "sheet": "Sheet1", "ranges": {}},
     Err("INVALID_ARGUMENT")),
    ("batch-one-bad", "batch_update_cells", {"spreadsheet_id": EMPTY, "sheet": "Sheet1",
                                             "ranges": {"A1": [[1]], "A2:A3": [[1], [2], [3]]}},
     Err("INVALID_ARGUMENT", "nothing was written")),
    ("batch-missing-spreadsheet", "batch_update_cells", {"spreadsheet_id": "no", "sheet": "Sheet1",
                                                         "ranges": {"A1": [[1]]}}, Err("NOT_FOUND")),
    ("append-empty-sheet", "append_rows", {"spreadsheet_id": EMPTY, "sheet": "Sheet1", "data": [["a", 1]]},
     Keys({"updatedRange": "Sheet1!A1:B1", "updatedRows": 1})),
    ("append-after-data", "append_rows", {"spreadsheet_id": INV, "sheet": "Stock", "data": [["x"], ["y"]]},
     Keys({"updatedRange": "Stock!A7:A8", "updatedRows": 2})),
    ("clear", "clear_range", {"spreadsheet_id": INV, "sheet": "Stock", "range": "A2:B"},
     Keys({"clearedRange": "Stock!A2:B1000"})),
    ("clear-bad-range", "clear_range", {"spreadsheet_id": INV, "sheet": "Stock", "range": "x:y:z"},
     Err("INVALID_ARGUMENT")),
    # structure
    ("add-rows-end", "add_rows", {"spreadsheet_id": INV, "sheet": "Stock", "count": 5}, Keys({"rowCount": 1005})),
    ("add-rows-top", "add_rows", {"spreadsheet_id": INV, "sheet": "Stock", "count": 1, "start_row": 0},
     Keys({"rowCount": 1001})),
    ("add-rows-zero", "add_rows", {"spreadsheet_id": INV, "sheet": "Stock", "count": 0}, Err("INVALID_ARGUMENT")),
    ("add-rows-too-many", "add_rows", {"spreadsheet_id": INV, "sheet": "Stock", "count": 100001},
     Err("INVALID_ARGUMENT")),
    ("add-rows-negative-start", "add_rows", {"spreadsheet_id": INV, "sheet": "Stock", "count": 1, "start_row": -1},
     Err("INVALID_ARGUMENT")),
    ("add-rows-count-text", "add_rows", {"spreadsheet_id": INV, "sheet": "Stock", "count": "2"},
     Keys({"rowCount": 1002})),
    ("add-rows-count-fraction", "add_rows", {"spreadsheet_id": INV, "sheet": "Stock", "count": 2.5},
     Err("INVALID_ARGUMENT")),
    ("add-columns", "add_columns", {"spreadsheet_id": INV, "sheet": "Stock", "count": 2, "start_column": 26},
     Keys({"columnCount": 28})),
    ("add-columns-past-end", "add_columns", {"spreadsheet_id": INV, "sheet": "Stock", "count": 1, "start_column": 27},
     Err("INVALID_ARGUMENT", "past the end")),
    ("create-sheet", "create_sheet", {"spreadsheet_id": INV, "title": "Notes"},
     Keys({"sheetId": 2, "title": "Notes", "index": 2})),
    ("create-sheet-taken", "create_sheet", {"spreadsheet_id": INV, "title": "q1 data"}, Err("ALREADY_EXISTS")),
    ("create-sheet-blank", "create_sheet", {"spreadsheet_id": INV, "title": "   "}, Err("INVALID_ARGUMENT")),
    ("rename", "rename_sheet", {"spreadsheet": INV, "sheet": "Stock", "new_name": "Items"},
     Keys({"sheetId": 0, "title": "Items"})),
    ("rename-taken", "rename_sheet", {"spreadsheet": INV, "sheet": "Stock", "new_name": "Q1 DATA"},
     Err("ALREADY_EXISTS")),
    ("copy", "copy_sheet", {"src_spreadsheet": INV, "src_sheet": "Q1 Data", "dst_spreadsheet": EMPTY,
                            "dst_sheet": "Q1 Data"}, Keys({"sheetId": 1, "title": "Q1 Data"})),
    ("copy-missing-source", "copy_sheet", {"src_spreadsheet": INV, "src_sheet": "Nope", "dst_spreadsheet": EMPTY,
                                           "dst_sheet": "X"}, Err("NOT_FOUND")),
    ("delete", "delete_sheet", {"spreadsheet_id": INV, "sheet": "Q1 Data"}, Keys({"deleted": "Q1 Data"})),
    ("delete-last", "delete_sheet", {"spreadsheet_id": EMPTY, "sheet": "Sheet1"}, Err("FAILED_PRECONDITION")),
    ("create-spreadsheet", "create_spreadsheet", {"title": "Orders 2025"},
     Keys({"title": "Orders 2025", "sheets": [{"sheetId": 0, "title": "Sheet1"}]})),
    ("create-spreadsheet-blank", "create_spreadsheet", {"title": ""}, Err("INVALID_ARGUMENT")),
    ("share-bad-role", "share_spreadsheet", {"spreadsheet_id": INV, "recipients": [
        {"email_address": "a@b.co", "role": "owner"}]}, Err("INVALID_ARGUMENT")),
    ("share-all-invalid", "share_spreadsheet", {"spreadsheet_id": INV, "recipients": [
        {"email_address": "nobody", "role": "reader"}]}, Err("INVALID_ARGUMENT", "no recipient")),
]

# reads after a write case: (tool, arguments, expected)
AFTER: dict[str, tuple[str, dict[str, Any], Any]] = {
    "write-number-text": ("get_sheet_data", read("A1", "Sheet1", EMPTY), Values([[42]])),
    "write-thousands": ("get_sheet_data", read("A1", "Sheet1", EMPTY), Values([[1234]])),
    "write-forced-text": ("get_sheet_data", read("A1:B1", "Sheet1", EMPTY), Values([["0042", "=1+1"]])),
    "write-bool-text": ("get_sheet_data", read("A1", "Sheet1", EMPTY), Values([[True]])),
    "write-formula": ("get_sheet_data", read("A1:C1", "Sheet1", EMPTY), Values([[2, 3, 6]])),
    "write-every-kind": ("get_sheet_data", read("A1:K4", "Sheet1", EMPTY), Exact(
        '[[true,false,"2025-03-01",2.5,1e+20,"","#DIV/0!","","x",9007199254740992.0],[],'
        '["2025-03-01",true,-3,"2025-03-01",0.30000000000000004,0,"2",5,"",9007199254740991]]')),
    "write-open-range": ("get_sheet_data", read("A1:C4", "Sheet1", EMPTY), Values([[], ["", 1, 2], ["", 3, 4],
                                                                                   ["", 5, 6]])),
    "write-grows-grid": ("list_sheets", {"spreadsheet_id": EMPTY}, Keys({"sheets": [
        {"sheetId": 0, "title": "Sheet1", "index": 0, "rowCount": 1500, "columnCount": 30}]})),
    "batch-one-bad": ("get_sheet_data", read("A1:A3", "Sheet1", EMPTY), Values([])),
    "append-after-data": ("get_sheet_data", read("A6:A8"), Values([["Total"], ["x"], ["y"]])),
    "clear": ("get_sheet_data", read("A1:C3"), Values([["SKU", "Name", "Qty"], ["", "", 120], ["", "", 80]])),
    "add-rows-top": ("get_sheet_formulas", read("E7"), Keys({"values": [["=SUM(E3:E6)"]]})),
    "rename": ("get_sheet_data", read("A1", sheet="Items"), Values([["SKU"]])),
    "copy": ("get_sheet_data", read("B2:B4", "Q1 Data", EMPTY), Values([[1200], [950], [1430]])),
    "delete": ("list_sheets", {"spreadsheet_id": INV}, Keys({"sheets": [
        {"sheetId": 0, "title": "Stock", "index": 0, "rowCount": 1000, "columnCount": 26}]})),
}


def _resolve(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str) and value.startswith("@"):
        return ids[value[1:]]
    if isinstance(value, list):
        return [_resolve(v, ids) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, ids) for k, v in value.items()}
    return value


def _check(tool: str, text: str, is_error: bool, expected: Any) -> None:
    if isinstance(expected, Err):
        assert is_error and text.startswith(f"Error [{expected.code}]: {tool}: "), text
        assert expected.part in text, text
        return
    assert not is_error, text
    got = json.loads(text)
    if isinstance(expected, Exact):
        assert json.dumps(got["valueRanges"][0]["values"], ensure_ascii=False, separators=(",", ":")) == expected.text
    elif isinstance(expected, Values):
        value_range = got["valueRanges"][0]
        assert value_range["values"] == expected.rows
        assert expected.range is None or value_range["range"] == expected.range, value_range["range"]
    else:
        assert {k: got.get(k) for k in expected.keys} == expected.keys


def test_there_are_enough_cases() -> None:
    assert len(CASES) + len(AFTER) >= 60 and len({c[0] for c in CASES}) == len(CASES)
    assert set(AFTER) <= {c[0] for c in CASES}


@pytest.mark.parametrize(("name", "tool", "args", "expected"), CASES, ids=[c[0] for c in CASES])
def test_call(make_world: Any, name: str, tool: str, args: dict[str, Any], expected: Any) -> None:
    h, ids = build_sheets(make_world)
    text, is_error = h.call(tool, **_resolve(args, ids))
    _check(tool, text, is_error, expected)
    if name in AFTER:
        then_tool, then_args, then_expected = AFTER[name]
        text, is_error = h.call(then_tool, **_resolve(then_args, ids))
        _check(then_tool, text, is_error, then_expected)
