"""Bounds of the excel server: every call that could touch or add a huge number of cells is
refused before the work (INVALID_ARGUMENT naming the cap and the size asked) or done at a cost
that grows with the cells stored, never with the used range. The reproductions run in a child
process under an address-space limit and a timeout; after each, the workbook still opens.
Text a workbook cannot hold is an argument error."""

from __future__ import annotations

import io
import json
import resource
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from openpyxl import Workbook, load_workbook

from loca.core.world import World
from mock_servers.excel import limits, toolbox
from tests.harness import ServerHarness

ROOT = Path(__file__).resolve().parents[1]
ADDRESS_SPACE = 3 * 512 * 1024 * 1024  # 1.5 GiB
CALL_SECONDS = 10
CAP = f"at most {limits.MAX_CELLS} cells per call"
WHOLE = {"start_cell": "A1", "end_cell": "XFD1048576"}
SHEET = {"filepath": "book.xlsx", "sheet_name": "Sheet1"}
FAR = ("write_data_to_excel", {**SHEET, "data": [["far"]], "start_cell": "XFD1048576"})

_CHILD = """
import json, re, sys, time
from openpyxl import load_workbook
from loca.core.world import World
from mock_servers.excel import toolbox
from tests.harness import ServerHarness

world = World.load(sys.argv[1])
server = ServerHarness(toolbox, world)
calls = []
for tool, args in json.loads(sys.stdin.read()):
    start = time.monotonic()
    text, error = server.call(tool, **args)
    calls.append({"tool": tool, "error": error, "text": text,
                  "seconds": time.monotonic() - start})
load_workbook(world.workspace / "book.xlsx")  # the workbook still opens
# VmHWM is this process's own peak; ru_maxrss would carry the forking pytest's over exec
peak = int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)) // 1024
print(json.dumps({"calls": calls, "peak_mb": peak}))
"""


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run_bounded(world: World, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Run the calls in a child process under the limits; each call's outcome."""
    done = subprocess.run([sys.executable, "-c", _CHILD, str(world.root)],
                          input=json.dumps(calls), cwd=ROOT, preexec_fn=_limit, capture_output=True, text=True,
                          timeout=len(calls) * CALL_SECONDS + 30)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["peak_mb"] < 1024
    for call in report["calls"]:
        assert call["seconds"] < CALL_SECONDS, call
    return report["calls"]


def refused(call: dict[str, Any], *words: str) -> None:
    assert call["error"], call
    assert call["text"].startswith(f"Error [INVALID_ARGUMENT]: {call['tool']}: "), call
    for word in words:
        assert word in call["text"], call


@pytest.fixture
def world(make_world) -> World:
    world, _ = make_world(["excel"])
    wb = Workbook()
    wb.active.title = "Sheet1"
    for row in [["name", "n"], ["a", 1], ["b", 2]]:
        wb.active.append(row)
    wb.save(world.workspace / "book.xlsx")
    return world


@pytest.mark.slow
def test_merging_a_whole_sheet_is_refused_before_the_work(world: World) -> None:
    merge, unmerge, fmt = run_bounded(world, [
        ("merge_cells", {**SHEET, **WHOLE}),
        ("unmerge_cells", {**SHEET, **WHOLE}),
        ("format_range", {**SHEET, **WHOLE, "bold": True, "merge_cells": True})])
    refused(merge, CAP, "17179869184 cells")
    assert unmerge["text"].startswith("Error [NOT_FOUND]: unmerge_cells: ")
    refused(fmt, CAP, "17179869184 cells")
    assert not load_workbook(world.workspace / "book.xlsx")["Sheet1"].merged_cells.ranges


@pytest.mark.slow
def test_rows_and_columns_move_at_the_cost_of_the_stored_cells(world: World) -> None:
    calls = run_bounded(world, [
        FAR,
        ("delete_sheet_rows", {**SHEET, "start_row": 1, "count": 1}),
        ("delete_sheet_rows", {**SHEET, "start_row": 2, "count": 1048000}),
        ("delete_sheet_columns", {**SHEET, "start_col": 2, "count": 16000}),
        ("insert_rows", {**SHEET, "start_row": 1, "count": 2}),
        ("insert_columns", {**SHEET, "start_col": 1, "count": 1})])
    assert not any(call["error"] for call in calls), calls
    ws = load_workbook(world.workspace / "book.xlsx")["Sheet1"]
    values = {c.coordinate: c.value for row in ws.iter_rows() for c in row if c.value is not None}
    # the header row goes, then row 2 ("b", 2) with 1047999 empty ones, then column B (1); the
    # far cell ends at row 1048576 - 1 - 1048000 + 2 = 577, column 16384 - 16000 + 1 = 385 (NU)
    assert values == {"B3": "a", "NU577": "far"}


@pytest.mark.slow
def test_deleting_or_charting_a_whole_sheet_is_bounded(world: World) -> None:
    delete, chart, wide = run_bounded(world, [
        FAR,
        ("delete_range", {**SHEET, **WHOLE}),
        ("create_chart", {**SHEET, "data_range": "A1:XFD1048576", "chart_type": "bar",
                          "target_cell": "B2"}),
        ("create_chart", {**SHEET, "data_range": "A1:JZ3", "chart_type": "line",
                          "target_cell": "B2"})])[1:]
    assert not delete["error"], delete
    refused(chart, CAP, "17179869184 cells")
    refused(wide, f"at most {limits.MAX_SERIES}", "285 series")
    assert load_workbook(world.workspace / "book.xlsx")["Sheet1"].max_row == 1


@pytest.mark.slow
def test_range_tools_refuse_more_cells_than_the_cap(world: World) -> None:
    too_many = [["x"] * 10] * 10_001
    calls = run_bounded(world, [
        FAR,
        ("copy_range", {**SHEET, "source_start": "A1", "source_end": "XFD1048576",
                        "target_start": "A1"}),
        ("create_table", {**SHEET, "data_range": "A1:XFD1048576"}),
        ("create_pivot_table", {**SHEET, "data_range": "A1:XFD1048576", "rows": ["name"],
                                "values": ["n"]}),
        ("write_data_to_excel", {**SHEET, "data": too_many}),
        ("read_data_from_excel", {**SHEET, **WHOLE, "max_cells": 20000}),
        ("read_data_from_excel", {**SHEET, "start_cell": "XFD1", "end_cell": "XFD1048576"}),
        ("get_workbook_metadata", {"filepath": "book.xlsx"})])
    for call in calls[1:4]:
        refused(call, CAP, "17179869184 cells")
    refused(calls[4], "more than 100000 values")  # the core's bound on one call's arguments comes first
    wide = json.loads(calls[5]["text"])
    assert wide["range"] == "A1:XFD1" and wide["has_more"]
    column = json.loads(calls[6]["text"])
    assert column["values"] == [] and column["range"] == "XFD1:XFD5000" and column["has_more"]
    assert json.loads(calls[7]["text"])["sheets"][0]["dimensions"] == "A1:XFD1048576"


def _with_sheet_xml(world: World, edit: Any, extra: bytes = b"") -> None:
    path = world.workspace / "book.xlsx"
    src = zipfile.ZipFile(io.BytesIO(path.read_bytes()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            dst.writestr(info.filename, edit(data) if info.filename.endswith("sheet1.xml") else data)
        if extra:
            dst.writestr("docProps/extra.bin", extra)
    path.write_bytes(out.getvalue())


def test_files_that_would_blow_up_when_parsed_are_refused(world: World) -> None:
    _with_sheet_xml(world, lambda xml: xml.replace(
        b"</sheetData>", b'</sheetData><mergeCells count="1"><mergeCell ref="A1:XFD1048576"/>'
                         b"</mergeCells>"))
    planted = (world.workspace / "book.xlsx").read_bytes()
    probe = ServerHarness(toolbox, world)
    for tool, args in [("get_merged_cells", SHEET), ("merge_cells", {**SHEET, "start_cell": "A1",
                                                                   "end_cell": "B1"}),
                       ("get_workbook_metadata", {"filepath": "book.xlsx", "include_ranges": True})]:
        text = probe.fails(tool, "INVALID_ARGUMENT", **args)
        assert "17179869184 cells" in text and str(limits.MAX_BOOK_CELLS) in text
    assert (world.workspace / "book.xlsx").read_bytes() == planted
    _with_sheet_xml(world, lambda xml: xml.replace(b"<sheetData>",
                                                   b"<sheetData>" + b" " * ((limits.MAX_SHEET_XML >> 20) + 1 << 20)))
    text = probe.fails("read_data_from_excel", "INVALID_ARGUMENT", **SHEET)
    assert f"bytes of worksheets; at most {limits.MAX_SHEET_XML} are read" in text
    _with_sheet_xml(world, lambda xml: xml.replace(b"<sheetData>" + b" " * ((limits.MAX_SHEET_XML >> 20) + 1 << 20),
                                                   b"<sheetData>"), extra=b" " * (65 << 20))
    text = probe.fails("write_data_to_excel", "INVALID_ARGUMENT", **SHEET, data=[[1]])
    assert f"at most {limits.MAX_UNPACKED} are read" in text


# ---- in process: growth cap, pivot size, text a workbook cannot hold --------------------------

@pytest.fixture
def xl(world: World) -> ServerHarness:
    return ServerHarness(toolbox, world)


def test_a_workbook_stops_growing_at_its_cap(xl: ServerHarness, monkeypatch) -> None:
    monkeypatch.setattr(limits, "MAX_BOOK_CELLS", 20)
    xl.ok_text("write_data_to_excel", **SHEET, data=[[1, 2, 3, 4, 5]] * 2, start_cell="A4")
    text = xl.fails("write_data_to_excel", "INVALID_ARGUMENT", **SHEET, data=[[1] * 5],
                    start_cell="A6")
    assert "would store 21 cells; at most 20 per workbook" in text
    xl.ok_text("write_data_to_excel", **SHEET, data=[[9] * 5], start_cell="A5")  # overwrites
    xl.fails("format_range", "INVALID_ARGUMENT", **SHEET, start_cell="F1", end_cell="J1",
             bold=True)
    xl.fails("copy_worksheet", "INVALID_ARGUMENT", filepath="book.xlsx", source_sheet="Sheet1",
             target_sheet="Copy")
    xl.fails("create_pivot_table", "INVALID_ARGUMENT", **SHEET, data_range="A1:B3",
             rows=["name"], values=["n"])


def test_a_pivot_larger_than_the_cap_is_refused_before_it_is_built(xl: ServerHarness) -> None:
    rows = [["k", "c", "v"]] + [[f"r{i}", f"c{i}", i] for i in range(400)]
    xl.ok_text("write_data_to_excel", **SHEET, data=rows)
    text = xl.fails("create_pivot_table", "INVALID_ARGUMENT", **SHEET, data_range="A1:C401",
                    rows=["k"], values=["v"], columns=["c"])
    assert "the pivot covers 160801 cells (401 rows x 401 columns)" in text
    # 8 value fields x 2,050 column groups + 1 row field = 16,401 columns, one over a sheet's.
    fields = [f"v{n}" for n in range(8)]
    wide = [["k", "c", *fields]] + [["r", f"c{i}", *range(8)] for i in range(2_050)]
    xl.ok_text("write_data_to_excel", filepath="book.xlsx", sheet_name="Wide", data=wide)
    text = xl.fails("create_pivot_table", "INVALID_ARGUMENT", filepath="book.xlsx",
                    sheet_name="Wide", data_range="A1:J2051", rows=["k"], values=fields,
                    columns=["c"])
    assert "16401 columns wide" in text


BAD = ["\x00", "\x0b", "\x1f", "\ud800", "\udfff", "\ufffe", "\uffff"]


def _text_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("write_data_to_excel", {**SHEET, "data": [[f"a{text}b"]]}),
        ("write_data_to_excel", {**SHEET, "data": [[f"=\"{text}\""]]}),
        ("write_data_to_excel", {"filepath": "book.xlsx", "sheet_name": f"S{text}",
                                 "data": [[1]]}),
        ("apply_formula", {**SHEET, "cell": "C1", "formula": f"=\"a{text}\""}),
        ("create_worksheet", {"filepath": "book.xlsx", "sheet_name": f"N{text}"}),
        ("rename_worksheet", {"filepath": "book.xlsx", "old_name": "Sheet1",
                              "new_name": f"R{text}"}),
        ("copy_worksheet", {"filepath": "book.xlsx", "source_sheet": "Sheet1",
                            "target_sheet": f"C{text}"}),
        ("format_range", {**SHEET, "start_cell": "A1", "number_format": f"0.0{text}"}),
        ("create_chart", {**SHEET, "data_range": "A1:B3", "chart_type": "bar",
                          "target_cell": "D2", "title": f"t{text}"}),
        ("create_chart", {**SHEET, "data_range": "A1:B3", "chart_type": "bar",
                          "target_cell": "D2", "x_axis": f"x{text}", "y_axis": "y"}),
    ]


@pytest.mark.parametrize("char", BAD, ids=[f"U+{ord(c):04X}" for c in BAD])
def test_text_a_workbook_cannot_hold_is_an_argument_error(xl: ServerHarness, char: str) -> None:
    for tool, args in _text_calls(char):
        text, error = xl.call(tool, **args)
        assert error and text.startswith(f"Error [INVALID_ARGUMENT]: {tool}: "), (tool, text)
    wb = load_workbook(xl.ws / "book.xlsx")
    assert wb.sheetnames == ["Sheet1"] and wb["Sheet1"]["A1"].value == "name"


def test_validate_formula_syntax_refuses_unstorable_text(xl: ServerHarness) -> None:
    text = xl.fails("validate_formula_syntax", "INVALID_ARGUMENT", **SHEET, cell="A1",
                    formula="=\"a\ufffe\"")
    assert "parameter 'formula'" in text and "U+FFFE" in text


def test_edge_text_and_numbers_are_checked_and_saved_readably(xl: ServerHarness) -> None:
    long_format = "0" * (limits.MAX_NUMBER_FORMAT + 1)
    xl.fails("format_range", "INVALID_ARGUMENT", **SHEET, start_cell="A1",
             number_format=long_format)
    xl.fails("format_range", "INVALID_ARGUMENT", **SHEET, start_cell="A1", number_format=" ")
    xl.fails("write_data_to_excel", "INVALID_ARGUMENT", **SHEET, data=[[float("nan")]])
    xl.fails("write_data_to_excel", "INVALID_ARGUMENT", **SHEET, data=[[float("inf")]])
    xl.fails("apply_formula", "INVALID_ARGUMENT", **SHEET, cell="A1",
             formula="=" + "1+" * 5000 + "1")
    fine = "tab\tline\n \U0001F600 \ufffd \ue000"
    xl.ok_text("write_data_to_excel", **SHEET, data=[[fine]], start_cell="D1")
    xl.ok_text("create_worksheet", filepath="book.xlsx", sheet_name="Über \U0001F600")
    xl.ok_text("create_chart", **SHEET, data_range="A1:B3", chart_type="bar", target_cell="D2",
               title=fine)
    wb = load_workbook(xl.ws / "book.xlsx")
    assert wb["Sheet1"]["D1"].value == fine and "Über \U0001F600" in wb.sheetnames
