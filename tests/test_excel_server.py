"""The excel server: every tool's effect on the workbook file, errors, confinement, paging,
the output cap, byte-identical saves, and reads that follow every change to a file."""

from __future__ import annotations

import asyncio
import json
import math
import zipfile
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from openpyxl import Workbook, load_workbook
from openpyxl.chart import BarChart, LineChart
from openpyxl.worksheet.datavalidation import DataValidation

from generators.common import create_world
from loca.core.world import World, WorldMeta
from mock_servers.core.files import workbook_bytes
from mock_servers.excel import toolbox, workbook
from mock_servers.excel.plain import Rows, plain_workbook_bytes
from tests.harness import ServerHarness

TOOLS = {
    "get_workbook_metadata", "read_data_from_excel", "write_data_to_excel", "create_workbook",
    "create_worksheet", "apply_formula", "validate_formula_syntax", "format_range",
    "create_chart", "create_pivot_table", "create_table", "copy_worksheet", "delete_worksheet",
    "rename_worksheet", "merge_cells", "unmerge_cells", "get_merged_cells", "copy_range",
    "delete_range", "validate_excel_range", "get_data_validation_info", "insert_rows",
    "delete_sheet_rows", "insert_columns", "delete_sheet_columns",
}
SALES = [["region", "product", "units", "price"],
         ["East", "pen", 10, 1.5],
         ["West", "pen", 4, 1.5],
         ["East", "ink", 3, 7.25],
         ["West", "ink", None, 7.25],
         ["East", "pen", 6, 1.5]]


class Server(ServerHarness):
    """An excel runtime over a world; `ok` parses the JSON result."""

    def __init__(self, world: World, config: dict[str, Any] | None = None) -> None:
        super().__init__(toolbox, world, config)

    def ok(self, tool: str, **args: Any) -> Any:
        return json.loads(self.ok_text(tool, **args))

    def book(self, name: str = "book.xlsx", data_only: bool = False) -> Workbook:
        return load_workbook(self.ws / name, data_only=data_only)

    def sales(self, name: str = "book.xlsx") -> None:
        self.ok("create_workbook", filepath=name)
        self.ok("write_data_to_excel", filepath=name, sheet_name="Sheet1", data=SALES)


@pytest.fixture
def xl(make_world) -> Server:
    world, _ = make_world(["excel"])
    return Server(world)


def _values(ws: Any) -> list[list[Any]]:
    return [list(row) for row in ws.iter_rows(values_only=True)]


def test_tool_set_and_descriptions(xl: Server) -> None:
    assert set(xl.runtime.tools) == TOOLS
    for tool in xl.runtime.tools.values():
        assert 0 < len(tool.description or "") <= 1024
        assert "excel" in tool.tags
        for name, schema in tool.parameters["properties"].items():
            assert schema.get("description"), f"{tool.name}.{name}"


# ---- workbook, sheets, reading and writing ---------------------------------------------------

def test_create_workbook_and_metadata(xl: Server) -> None:
    assert xl.ok("create_workbook", filepath="book.xlsx") == {
        "message": "Created workbook /workspace/book.xlsx with sheet Sheet1",
        "filepath": "/workspace/book.xlsx"}
    assert xl.book().sheetnames == ["Sheet1"]
    xl.fails("create_workbook", "ALREADY_EXISTS", filepath="/workspace/book.xlsx")
    xl.fails("create_workbook", "NOT_FOUND", filepath="missing/book.xlsx")
    xl.fails("create_workbook", "INVALID_ARGUMENT", filepath="notes.txt")
    xl.ok("write_data_to_excel", filepath="book.xlsx", sheet_name="Sheet1", data=SALES)
    meta = xl.ok("get_workbook_metadata", filepath="book.xlsx")
    assert meta == {"filename": "/workspace/book.xlsx",
                    "sheets": [{"name": "Sheet1", "dimensions": "A1:D6", "max_row": 6,
                                "max_column": 4}],
                    "size": (xl.ws / "book.xlsx").stat().st_size}
    xl.ok("create_table", filepath="book.xlsx", sheet_name="Sheet1", data_range="A1:D6")
    ranged = xl.ok("get_workbook_metadata", filepath="book.xlsx", include_ranges=True)
    assert ranged["sheets"][0]["tables"] == [{"name": "Table1", "range": "A1:D6"}]


def test_write_then_read_back(xl: Server) -> None:
    xl.ok("create_workbook", filepath="book.xlsx")
    assert xl.ok("write_data_to_excel", filepath="book.xlsx", sheet_name="Sheet1", data=SALES,
                 start_cell="B2")["range"] == "B2:E7"
    assert _values(xl.book()["Sheet1"])[1] == [None, "region", "product", "units", "price"]
    read = xl.ok("read_data_from_excel", filepath="book.xlsx", sheet_name="Sheet1",
                 start_cell="B2")
    assert read == {"sheet_name": "Sheet1", "range": "B2:E7", "values": SALES,
                    "uncalculated": [], "has_more": False, "next_start_cell": None}
    part = xl.ok("read_data_from_excel", filepath="book.xlsx", sheet_name="Sheet1",
                 start_cell="C3", end_cell="D4")
    assert part["values"] == [["pen", 10], ["pen", 4]] and part["range"] == "C3:D4"
    assert xl.ok("read_data_from_excel", filepath="book.xlsx", sheet_name="Sheet1",
                 preview_only=True, max_cells=20000)["values"][1] == [None] + SALES[0]


def test_write_creates_the_sheet_and_stores_formulas(xl: Server) -> None:
    xl.ok("create_workbook", filepath="book.xlsx")
    xl.ok("write_data_to_excel", filepath="book.xlsx", sheet_name="Totals",
          data=[["a", "b", "sum"], [1, 2, "=A2+B2"], [True, None, 2.5]])
    ws = xl.book()["Totals"]
    assert _values(ws) == [["a", "b", "sum"], [1, 2, "=A2+B2"], [True, None, 2.5]]
    read = xl.ok("read_data_from_excel", filepath="book.xlsx", sheet_name="Totals")
    assert read["values"][1] == [1, 2, None] and read["uncalculated"] == ["C2"]
    xl.fails("write_data_to_excel", "INVALID_ARGUMENT", filepath="book.xlsx",
             sheet_name="Bad/Name", data=[[1]])
    xl.fails("write_data_to_excel", "INVALID_ARGUMENT", filepath="book.xlsx",
             sheet_name="Totals", data=[[]])
    xl.fails("write_data_to_excel", "INVALID_ARGUMENT", filepath="book.xlsx",
             sheet_name="Totals", data=[[{"nested": 1}]])
    xl.fails("write_data_to_excel", "INVALID_ARGUMENT", filepath="book.xlsx",
             sheet_name="Totals", data=[["bell\x07"]])
    xl.fails("write_data_to_excel", "INVALID_ARGUMENT", filepath="book.xlsx",
             sheet_name="Totals", data=[["x" * 32768]])
    assert _values(xl.book()["Totals"])[0] == ["a", "b", "sum"]


def test_read_empty_sheet(xl: Server) -> None:
    xl.ok("create_workbook", filepath="empty.xlsx")
    for start in ("A1", "C40"):
        assert xl.ok("read_data_from_excel", filepath="empty.xlsx", sheet_name="Sheet1",
                     start_cell=start) == {
            "sheet_name": "Sheet1", "range": start, "values": [], "uncalculated": [],
            "has_more": False, "next_start_cell": None}


def test_read_pages_with_max_cells(xl: Server) -> None:
    rows = [[f"r{i}", i, i * 0.5] for i in range(1, 101)]
    xl.ok("create_workbook", filepath="book.xlsx")
    xl.ok("write_data_to_excel", filepath="book.xlsx", sheet_name="Sheet1", data=rows)
    collected, start, pages = [], "A1", 0
    while start:
        page = xl.ok("read_data_from_excel", filepath="book.xlsx", sheet_name="Sheet1",
                     start_cell=start, max_cells=90)
        assert len(page["values"]) <= 30
        collected += page["values"]
        start, pages = page["next_start_cell"], pages + 1
        assert page["has_more"] == (start is not None)
    assert collected == rows and pages == 4
    xl.fails("read_data_from_excel", "INVALID_ARGUMENT", filepath="book.xlsx",
             sheet_name="Sheet1", max_cells=0)
    xl.fails("read_data_from_excel", "INVALID_ARGUMENT", filepath="book.xlsx",
             sheet_name="Sheet1", max_cells=20001)
    xl.fails("read_data_from_excel", "INVALID_ARGUMENT", filepath="book.xlsx",
             sheet_name="Sheet1", max_cells=2)


def test_read_drops_trailing_empty_rows_and_formats_dates(xl: Server) -> None:
    wb = Workbook()
    ws = wb.active
    ws.title = "Log"
    ws.append(["day", "at", "n"])
    ws.append([date(2025, 1, 15), datetime(2025, 1, 15, 10, 30), 1])
    ws["A2"].number_format = "yyyy-mm-dd"
    ws["C10"].number_format = "0.00"  # styled but empty: widens the sheet only
    wb.save(xl.ws / "log.xlsx")
    read = xl.ok("read_data_from_excel", filepath="log.xlsx", sheet_name="Log")
    assert read["values"] == [["day", "at", "n"], ["2025-01-15", "2025-01-15T10:30:00", 1]]
    assert read["range"] == "A1:C10" and read["has_more"] is False


def _edit_sheet_xml(path: Path, old: bytes, new: bytes) -> None:
    """Replace bytes in the first sheet's XML, as if another program had saved the file."""
    with zipfile.ZipFile(path) as src:
        parts = {name: src.read(name) for name in src.namelist()}
    sheet = "xl/worksheets/sheet1.xml"
    parts[sheet] = parts[sheet].replace(old, new)
    with zipfile.ZipFile(path, "w") as dst:
        for name, data in parts.items():
            dst.writestr(name, data)


def _with_cached_value(path: Path) -> None:
    """Give B1's formula a cached result, as a spreadsheet program would have saved it."""
    _edit_sheet_xml(path, b"<f>A1*2</f><v />", b"<f>A1*2</f><v>42</v>")


def test_formulas_read_cached_values_or_uncalculated(xl: Server) -> None:
    wb = Workbook()
    ws = wb.active
    ws.title = "S"
    ws.append([21, "=A1*2", "=A1*3"])
    wb.save(xl.ws / "f.xlsx")
    _with_cached_value(xl.ws / "f.xlsx")
    read = xl.ok("read_data_from_excel", filepath="f.xlsx", sheet_name="S")
    assert read["values"] == [[21, 42, None]]
    assert read["uncalculated"] == ["C1"]


def _cells(xl: Server, **args: Any) -> list[list[Any]]:
    return xl.ok("read_data_from_excel", filepath="book.xlsx", sheet_name="Sheet1",
                 **args)["values"]


def test_reads_see_changes_made_outside(xl: Server) -> None:
    xl.sales()
    assert _cells(xl)[1] == ["East", "pen", 10, 1.5]
    assert len(xl.ok("get_workbook_metadata", filepath="book.xlsx")["sheets"]) == 1
    wb = xl.book()
    wb["Sheet1"]["C2"] = 11
    wb.save(xl.ws / "book.xlsx")  # rewritten in place: same inode, likely the same size
    assert _cells(xl)[1] == ["East", "pen", 11, 1.5]
    wb.create_sheet("Added")
    wb.save(xl.ws / "book.xlsx")
    assert [s["name"] for s in xl.ok("get_workbook_metadata", filepath="book.xlsx")["sheets"]] \
        == ["Sheet1", "Added"]
    xl.ok("apply_formula", filepath="book.xlsx", sheet_name="Sheet1", cell="B1", formula="A1*2")
    assert xl.ok("read_data_from_excel", filepath="book.xlsx", sheet_name="Sheet1",
                 end_cell="B1")["uncalculated"] == ["B1"]
    _with_cached_value(xl.ws / "book.xlsx")  # only the cached formula values change
    assert _cells(xl, end_cell="B1") == [["region", 42]]


def test_reads_follow_writes(xl: Server) -> None:
    xl.sales()
    assert _cells(xl)[1] == ["East", "pen", 10, 1.5]
    assert xl.ok("get_merged_cells", filepath="book.xlsx", sheet_name="Sheet1")["ranges"] == []
    assert _cells(xl, end_cell="Z500")[-1][:4] == SALES[-1]  # far past the data: changes nothing
    xl.ok("write_data_to_excel", filepath="book.xlsx", sheet_name="Sheet1", data=[["North"]],
          start_cell="A2")
    assert _cells(xl)[1] == ["North", "pen", 10, 1.5]
    xl.ok("merge_cells", filepath="book.xlsx", sheet_name="Sheet1", start_cell="E1",
          end_cell="F1")
    assert xl.ok("get_merged_cells", filepath="book.xlsx", sheet_name="Sheet1")["ranges"] == [
        "E1:F1"]
    xl.ok("create_worksheet", filepath="book.xlsx", sheet_name="Notes")
    meta = xl.ok("get_workbook_metadata", filepath="book.xlsx", include_ranges=True)
    assert [(s["name"], s["dimensions"]) for s in meta["sheets"]] == [("Sheet1", "A1:F6"),
                                                                      ("Notes", "A1")]


def test_inline_strings_read_as_openpyxl_reads_them(xl: Server) -> None:
    """Inline strings (how openpyxl writes text) take a fast path; it must give the values
    openpyxl's own reader gives: rich-text runs joined, spaces kept, empty text, and a formula
    cell whose cached value is an inline string."""
    xl.ok("create_workbook", filepath="book.xlsx")
    xl.ok("write_data_to_excel", filepath="book.xlsx", sheet_name="Sheet1",
          data=[["plain", "  spaced  ", "x", "y", "z"]])
    _edit_sheet_xml(xl.ws / "book.xlsx", b"<is><t>x</t></is>",
                    b"<is><r><t>bo</t></r><r><rPr><b/></rPr><t>ld</t></r></is>")
    _edit_sheet_xml(xl.ws / "book.xlsx", b"<is><t>y</t></is>", b"<is><t/></is>")
    _edit_sheet_xml(xl.ws / "book.xlsx", b"<is><t>z</t></is>",
                    b"<f>A1</f><is><t>plain</t></is>")
    expected = _values(load_workbook(xl.ws / "book.xlsx", data_only=True)["Sheet1"])
    assert expected == [["plain", "  spaced  ", "bold", "", "plain"]]
    page = xl.ok("read_data_from_excel", filepath="book.xlsx", sheet_name="Sheet1")
    assert page["values"] == expected
    assert page["uncalculated"] == []


def test_a_damaged_row_fails_every_read(xl: Server) -> None:
    xl.sales()
    _edit_sheet_xml(xl.ws / "book.xlsx", b"<v>3</v>", b"<v>three</v>")  # units in row 4
    assert _cells(xl, end_cell="D2") == SALES[:2]
    for _ in range(2):  # each time: the sheet must not seem to end before the damaged row
        assert xl.call("read_data_from_excel", filepath="book.xlsx", sheet_name="Sheet1")[1]


def test_worlds_read_their_own_files(xl: Server, tmp_path: Path) -> None:
    other = Server(create_world(tmp_path / "other", xl.world.meta, ["excel"])[0])
    for server, region in ((xl, "East"), (other, "West")):
        server.ok("create_workbook", filepath="book.xlsx")
        server.ok("write_data_to_excel", filepath="book.xlsx", sheet_name="Sheet1",
                  data=[[region]])
    assert _cells(xl) == [["East"]] and _cells(other) == [["West"]]


def test_workbook_errors(xl: Server) -> None:
    xl.fails("read_data_from_excel", "NOT_FOUND", filepath="none.xlsx", sheet_name="S")
    (xl.ws / "broken.xlsx").write_bytes(b"this is not a zip file")
    text = xl.fails("get_workbook_metadata", "INVALID_ARGUMENT", filepath="broken.xlsx")
    assert "/workspace/broken.xlsx" in text
    xl.fails("write_data_to_excel", "INVALID_ARGUMENT", filepath="broken.xlsx",
             sheet_name="S", data=[[1]])
    xl.sales()
    assert "Sheet1" in xl.fails("read_data_from_excel", "NOT_FOUND", filepath="book.xlsx",
                                sheet_name="Nope")
    for bad in ("A0", "1A", "XFE1", "A1048577", "", "B:C"):
        xl.fails("read_data_from_excel", "INVALID_ARGUMENT", filepath="book.xlsx",
                 sheet_name="Sheet1", start_cell=bad)
    xl.fails("read_data_from_excel", "INVALID_ARGUMENT", filepath="book.xlsx",
             sheet_name="Sheet1", start_cell="C3", end_cell="A1")
    xl.fails("read_data_from_excel", "INVALID_ARGUMENT", filepath="book.xls", sheet_name="S")


def test_worksheet_management(xl: Server) -> None:
    xl.sales()
    xl.ok("create_worksheet", filepath="book.xlsx", sheet_name="Notes")
    xl.fails("create_worksheet", "ALREADY_EXISTS", filepath="book.xlsx", sheet_name="notes")
    xl.fails("create_worksheet", "INVALID_ARGUMENT", filepath="book.xlsx", sheet_name="x" * 32)
    xl.ok("copy_worksheet", filepath="book.xlsx", source_sheet="Sheet1", target_sheet="Backup")
    assert _values(xl.book()["Backup"]) == SALES
    xl.fails("copy_worksheet", "ALREADY_EXISTS", filepath="book.xlsx", source_sheet="Sheet1",
             target_sheet="Notes")
    xl.ok("rename_worksheet", filepath="book.xlsx", old_name="Backup", new_name="backup")
    xl.ok("rename_worksheet", filepath="book.xlsx", old_name="Notes", new_name="Memo")
    xl.fails("rename_worksheet", "ALREADY_EXISTS", filepath="book.xlsx", old_name="Memo",
             new_name="SHEET1")
    assert xl.book().sheetnames == ["Sheet1", "Memo", "backup"]
    xl.ok("delete_worksheet", filepath="book.xlsx", sheet_name="Memo")
    xl.ok("delete_worksheet", filepath="book.xlsx", sheet_name="backup")
    xl.fails("delete_worksheet", "FAILED_PRECONDITION", filepath="book.xlsx",
             sheet_name="Sheet1")
    assert xl.book().sheetnames == ["Sheet1"]


# ---- formulas, formats, charts, pivots, tables -----------------------------------------------

def test_apply_and_validate_formula(xl: Server) -> None:
    xl.sales()
    assert xl.ok("apply_formula", filepath="book.xlsx", sheet_name="Sheet1", cell="e2",
                 formula="C2*D2") == {"message": "Set Sheet1!E2 to =C2*D2", "cell": "E2",
                                      "value": None}
    assert xl.book()["Sheet1"]["E2"].value == "=C2*D2"
    assert xl.ok("read_data_from_excel", filepath="book.xlsx", sheet_name="Sheet1",
                 start_cell="E2", end_cell="E2")["uncalculated"] == ["E2"]
    xl.fails("apply_formula", "INVALID_ARGUMENT", filepath="book.xlsx", sheet_name="Sheet1",
             cell="E3", formula="=SUM(C2:C3")
    valid = xl.ok("validate_formula_syntax", filepath="book.xlsx", sheet_name="Sheet1",
                  cell="F1", formula="=SUM(Sheet1!C2:C6)/COUNT(C2:C6)")
    assert valid["valid"] is True
    for formula, reason in [("=SUMM(C2)", "unknown function SUMM"),
                            ("=Other!A1", "sheet 'Other'"), ("=(1+2", "parentheses"),
                            ("=C2+", "operator")]:
        result = xl.ok("validate_formula_syntax", filepath="book.xlsx", sheet_name="Sheet1",
                       cell="F1", formula=formula)
        assert result["valid"] is False and reason in result["message"], result


def test_format_range(xl: Server) -> None:
    xl.sales()
    result = xl.ok("format_range", filepath="book.xlsx", sheet_name="Sheet1", start_cell="A1",
                   end_cell="D1", bold=True, italic=True, underline=True, font_size=14,
                   font_color="#FF0000", bg_color="FFFF00", border_style="thick",
                   border_color="0000FF", alignment="center", wrap_text=True)
    assert result["range"] == "A1:D1"
    cell = xl.book()["Sheet1"]["C1"]
    assert (cell.font.b, cell.font.i, cell.font.u, cell.font.sz) == (True, True, "single", 14)
    assert cell.font.color.rgb == "FFFF0000" and cell.fill.fgColor.rgb == "FFFFFF00"
    assert cell.border.left.style == "thick" and cell.border.bottom.color.rgb == "FF0000FF"
    assert cell.alignment.horizontal == "center" and cell.alignment.wrap_text
    xl.ok("format_range", filepath="book.xlsx", sheet_name="Sheet1", start_cell="D2",
          end_cell="D6", number_format="0.00")
    assert xl.book()["Sheet1"]["D4"].number_format == "0.00"
    assert xl.book()["Sheet1"]["C1"].font.b  # earlier formatting kept
    xl.fails("format_range", "INVALID_ARGUMENT", filepath="book.xlsx", sheet_name="Sheet1",
             start_cell="A1", font_color="red")
    xl.fails("format_range", "INVALID_ARGUMENT", filepath="book.xlsx", sheet_name="Sheet1",
             start_cell="A1")
    xl.fails("format_range", "INVALID_ARGUMENT", filepath="book.xlsx", sheet_name="Sheet1",
             start_cell="A1", end_cell="Z10000", bold=True)
    xl.ok("format_range", filepath="book.xlsx", sheet_name="Sheet1", start_cell="A8",
          end_cell="D8", bold=True, merge_cells=True)
    assert [str(r) for r in xl.book()["Sheet1"].merged_cells.ranges] == ["A8:D8"]


def test_create_chart(xl: Server) -> None:
    xl.sales()
    xl.ok("create_chart", filepath="book.xlsx", sheet_name="Sheet1", data_range="B1:C6",
          chart_type="bar", target_cell="F2", title="Units", x_axis="product", y_axis="units")
    xl.ok("create_chart", filepath="book.xlsx", sheet_name="Sheet1",
          data_range="Sheet1!C1:D6", chart_type="line", target_cell="F20")
    charts = xl.book()["Sheet1"]._charts
    assert [type(c) for c in charts] == [BarChart, LineChart]
    assert len(charts[0].series) == 1 and len(charts[1].series) == 1
    xl.fails("create_chart", "INVALID_ARGUMENT", filepath="book.xlsx", sheet_name="Sheet1",
             data_range="Other!A1:B3", chart_type="pie", target_cell="A1")
    xl.fails("create_chart", "INVALID_ARGUMENT", filepath="book.xlsx", sheet_name="Sheet1",
             data_range="A1:B3", chart_type="radar", target_cell="A1")
    xl.fails("create_chart", "INVALID_ARGUMENT", filepath="book.xlsx", sheet_name="Sheet1",
             data_range="C1:C6", chart_type="scatter", target_cell="A1")


def test_create_pivot_table(xl: Server) -> None:
    xl.sales()
    result = xl.ok("create_pivot_table", filepath="book.xlsx", sheet_name="Sheet1",
                   data_range="A1:D6", rows=["region"], values=["units"], agg_func="sum")
    assert result["range"] == "Sheet1_pivot!A1:B3"
    assert _values(xl.book()["Sheet1_pivot"]) == [["region", "sum(units)"], ["East", 19],
                                                  ["West", 4]]
    xl.ok("create_pivot_table", filepath="book.xlsx", sheet_name="Sheet1", data_range="A1:D6",
          rows=["product"], columns=["region"], values=["units"])
    assert _values(xl.book()["Sheet1_pivot_2"]) == [
        ["product", "mean(units) | East", "mean(units) | West"], ["ink", 3, None],
        ["pen", 8, 4]]
    xl.fails("create_pivot_table", "INVALID_ARGUMENT", filepath="book.xlsx",
             sheet_name="Sheet1", data_range="A1:D6", rows=["city"], values=["units"])


def test_create_table(xl: Server) -> None:
    xl.sales()
    assert xl.ok("create_table", filepath="book.xlsx", sheet_name="Sheet1", data_range="A1:D6",
                 table_name="Sales", table_style="TableStyleLight9")["table_name"] == "Sales"
    table = xl.book()["Sheet1"].tables["Sales"]
    assert table.ref == "A1:D6" and table.tableStyleInfo.name == "TableStyleLight9"
    xl.ok("write_data_to_excel", filepath="book.xlsx", sheet_name="Sheet1",
          data=[["k", "v"], [1, 2]], start_cell="G1")
    xl.fails("create_table", "ALREADY_EXISTS", filepath="book.xlsx", sheet_name="Sheet1",
             data_range="G1:H2", table_name="sales")
    xl.fails("create_table", "INVALID_ARGUMENT", filepath="book.xlsx", sheet_name="Sheet1",
             data_range="C1:E3")
    xl.fails("create_table", "INVALID_ARGUMENT", filepath="book.xlsx", sheet_name="Sheet1",
             data_range="G1:H2", table_style="Fancy")
    xl.fails("create_table", "INVALID_ARGUMENT", filepath="book.xlsx", sheet_name="Sheet1",
             data_range="G2:H2")
    assert xl.ok("create_table", filepath="book.xlsx", sheet_name="Sheet1",
                 data_range="G1:H2")["table_name"] == "Table1"


# ---- merged cells, ranges, rows and columns --------------------------------------------------

def test_merge_unmerge(xl: Server) -> None:
    xl.sales()
    assert xl.ok("merge_cells", filepath="book.xlsx", sheet_name="Sheet1", start_cell="A8",
                 end_cell="C9")["range"] == "A8:C9"
    xl.ok("merge_cells", filepath="book.xlsx", sheet_name="Sheet1", start_cell="E1",
          end_cell="E2")
    assert xl.ok("get_merged_cells", filepath="book.xlsx", sheet_name="Sheet1") == \
        {"ranges": ["E1:E2", "A8:C9"]}
    xl.fails("merge_cells", "INVALID_ARGUMENT", filepath="book.xlsx", sheet_name="Sheet1",
             start_cell="B9", end_cell="D10")
    xl.fails("unmerge_cells", "NOT_FOUND", filepath="book.xlsx", sheet_name="Sheet1",
             start_cell="A8", end_cell="B9")
    xl.fails("write_data_to_excel", "INVALID_ARGUMENT", filepath="book.xlsx",
             sheet_name="Sheet1", data=[[1, 2]], start_cell="A9")
    xl.ok("unmerge_cells", filepath="book.xlsx", sheet_name="Sheet1", start_cell="A8",
          end_cell="C9")
    assert [str(r) for r in xl.book()["Sheet1"].merged_cells.ranges] == ["E1:E2"]


def test_copy_range(xl: Server) -> None:
    xl.sales()
    xl.ok("apply_formula", filepath="book.xlsx", sheet_name="Sheet1", cell="E2", formula="=C2*D2")
    xl.ok("format_range", filepath="book.xlsx", sheet_name="Sheet1", start_cell="C2", bold=True)
    assert xl.ok("copy_range", filepath="book.xlsx", sheet_name="Sheet1", source_start="C2",
                 source_end="E3", target_start="G10")["range"] == "G10:I11"
    ws = xl.book()["Sheet1"]
    assert [[c.value for c in row] for row in ws["G10:I11"]] == [[10, 1.5, "=G10*H10"],
                                                                  [4, 1.5, None]]
    assert ws["G10"].font.b and not ws["G11"].font.b
    xl.ok("create_worksheet", filepath="book.xlsx", sheet_name="Out")
    xl.ok("copy_range", filepath="book.xlsx", sheet_name="Sheet1", source_start="A1",
          source_end="B2", target_start="B2", target_sheet="Out")
    assert _values(xl.book()["Out"]) == [[None, None, None], [None, "region", "product"],
                                         [None, "East", "pen"]]
    xl.fails("copy_range", "NOT_FOUND", filepath="book.xlsx", sheet_name="Sheet1",
             source_start="A1", source_end="B2", target_start="A1", target_sheet="Nope")
    text = xl.fails("copy_range", "INVALID_ARGUMENT", filepath="book.xlsx", sheet_name="Sheet1",
                    source_start="E2", source_end="E2", target_start="A1")  # =C2*D2 would point left of A
    assert "beyond the sheet's edge" in text
    assert xl.book()["Sheet1"]["A1"].value == "region"  # nothing written


def test_delete_range(xl: Server) -> None:
    xl.sales()
    xl.ok("delete_range", filepath="book.xlsx", sheet_name="Sheet1", start_cell="B2",
          end_cell="B3")
    assert [row[1] for row in _values(xl.book()["Sheet1"])] == \
        ["product", "ink", "ink", "pen", None, None]
    xl.ok("delete_range", filepath="book.xlsx", sheet_name="Sheet1", start_cell="A1",
          end_cell="B1", shift_direction="left")
    assert _values(xl.book()["Sheet1"])[0] == ["units", "price", None, None]
    xl.ok("delete_range", filepath="book.xlsx", sheet_name="Sheet1", start_cell="A5",
          end_cell="D50")
    assert len(_values(xl.book()["Sheet1"])) == 4


def test_validate_excel_range(xl: Server) -> None:
    xl.sales()
    assert xl.ok("validate_excel_range", filepath="book.xlsx", sheet_name="Sheet1",
                 start_cell="B2", end_cell="C3") == {
        "valid": True, "range": "B2:C3",
        "message": "B2:C3 is a valid range, inside the used data A1:D6"}
    assert "not entirely inside" in xl.ok("validate_excel_range", filepath="book.xlsx",
                                          sheet_name="Sheet1", start_cell="A1",
                                          end_cell="Z9")["message"]
    invalid = xl.ok("validate_excel_range", filepath="book.xlsx", sheet_name="Sheet1",
                    start_cell="A1", end_cell="??")
    assert invalid["valid"] is False and invalid["range"] is None


def test_get_data_validation_info(xl: Server) -> None:
    wb = Workbook()
    ws = wb.active
    rule = DataValidation(type="list", formula1='"Yes,No"', allow_blank=True)
    rule.add("B2:B10")
    ws.add_data_validation(rule)
    limit = DataValidation(type="whole", operator="between", formula1="1", formula2="5")
    limit.add("C2")
    ws.add_data_validation(limit)
    wb.save(xl.ws / "dv.xlsx")
    assert xl.ok("get_data_validation_info", filepath="dv.xlsx", sheet_name="Sheet") == {
        "rules": [{"range": "B2:B10", "type": "list", "formula1": '"Yes,No"', "formula2": None,
                   "allow_blank": True},
                  {"range": "C2", "type": "whole", "formula1": "1", "formula2": "5",
                   "allow_blank": False}]}


def test_insert_and_delete_rows_and_columns(xl: Server) -> None:
    xl.sales()
    xl.ok("merge_cells", filepath="book.xlsx", sheet_name="Sheet1", start_cell="A8",
          end_cell="B9")
    xl.ok("insert_rows", filepath="book.xlsx", sheet_name="Sheet1", start_row=2, count=2)
    ws = xl.book()["Sheet1"]
    assert _values(ws)[1:4] == [[None] * 4, [None] * 4, SALES[1]]
    assert [str(r) for r in ws.merged_cells.ranges] == ["A10:B11"]
    xl.ok("delete_sheet_rows", filepath="book.xlsx", sheet_name="Sheet1", start_row=2, count=2)
    assert _values(xl.book()["Sheet1"])[:6] == SALES
    xl.ok("insert_columns", filepath="book.xlsx", sheet_name="Sheet1", start_col=2)
    ws = xl.book()["Sheet1"]
    assert _values(ws)[0] == ["region", None, "product", "units", "price"]
    assert [str(r) for r in ws.merged_cells.ranges] == ["A8:C9"]
    xl.ok("delete_sheet_columns", filepath="book.xlsx", sheet_name="Sheet1", start_col=1,
          count=2)
    ws = xl.book()["Sheet1"]
    assert _values(ws)[0][:3] == ["product", "units", "price"]
    assert [str(r) for r in ws.merged_cells.ranges] == ["A8:A9"]  # column C survived
    xl.fails("insert_rows", "INVALID_ARGUMENT", filepath="book.xlsx", sheet_name="Sheet1",
             start_row=0)


# ---- confinement, cap, determinism, MCP ------------------------------------------------------

def test_paths_outside_the_workspace_are_denied(xl: Server) -> None:
    wb = Workbook()
    wb.save(xl.world.truth_dir / "answer.xlsx")
    (xl.ws / "link.xlsx").symlink_to(xl.world.truth_dir / "answer.xlsx")
    for path in ["../truth/answer.xlsx", "/workspace/../truth/answer.xlsx", "/tmp/x.xlsx",
                 str(xl.world.truth_dir / "answer.xlsx"), "link.xlsx"]:
        xl.fails("get_workbook_metadata", "PERMISSION_DENIED", filepath=path)
        xl.fails("read_data_from_excel", "PERMISSION_DENIED", filepath=path, sheet_name="Sheet")
        xl.fails("write_data_to_excel", "PERMISSION_DENIED", filepath=path, sheet_name="Sheet",
                 data=[[1]])
        xl.fails("create_workbook", "PERMISSION_DENIED", filepath=path)


def test_reads_respect_the_output_cap(make_world) -> None:
    world, _ = make_world(["excel"])
    xl = Server(world, {"max_output_chars": 500})
    rows = [[f"item {i}", i, "some text"] for i in range(200)]
    xl.ok("create_workbook", filepath="big.xlsx")
    xl.ok("write_data_to_excel", filepath="big.xlsx", sheet_name="Sheet1", data=rows)
    collected, start = [], "A1"
    while start:
        text, is_error = xl.call("read_data_from_excel", filepath="big.xlsx",
                                 sheet_name="Sheet1", start_cell=start)
        assert not is_error and len(text) <= 500
        page = json.loads(text)
        assert page["range"].startswith(start)
        collected += page["values"]
        start = page["next_start_cell"]
        if start:
            assert page["has_more"] and "output cap reached" in page["notice"]
    assert collected == rows


def _same_calls(root: Path) -> bytes:
    meta = WorldMeta(task="t", seed=0, params={}, now="2025-03-01T12:00:00Z",
                     generator_version="test")
    world, db = create_world(root, meta, ["excel"])
    xl = Server(world)
    xl.sales()
    xl.ok("format_range", filepath="book.xlsx", sheet_name="Sheet1", start_cell="A1",
          end_cell="D1", bold=True)
    xl.ok("create_chart", filepath="book.xlsx", sheet_name="Sheet1", data_range="B1:C6",
          chart_type="bar", target_cell="F2")
    xl.ok("create_table", filepath="book.xlsx", sheet_name="Sheet1", data_range="A1:D6")
    xl.ok("create_pivot_table", filepath="book.xlsx", sheet_name="Sheet1", data_range="A1:D6",
          rows=["region"], values=["units"])
    db.dispose()
    return (world.workspace / "book.xlsx").read_bytes()


def test_same_calls_give_identical_bytes(tmp_path: Path) -> None:
    first = _same_calls(tmp_path / "one")
    assert first == _same_calls(tmp_path / "two")


def test_rewriting_with_a_frozen_clock_is_byte_stable(make_world) -> None:
    world, _ = make_world(["excel"], tick_s=0)
    xl = Server(world)
    xl.sales()
    before = (xl.ws / "book.xlsx").read_bytes()
    xl.ok("write_data_to_excel", filepath="book.xlsx", sheet_name="Sheet1", data=SALES)
    assert (xl.ws / "book.xlsx").read_bytes() == before


def test_through_an_mcp_client(xl: Server) -> None:
    async def scenario() -> tuple[set[str], dict[str, Any]]:
        async with Client(xl.runtime.app) as client:
            names = {t.name for t in await client.list_tools()}
            await client.call_tool("create_workbook", {"filepath": "mcp.xlsx"})
            await client.call_tool("write_data_to_excel", {
                "filepath": "mcp.xlsx", "sheet_name": "Sheet1", "data": [["a", 1]]})
            result = await client.call_tool("read_data_from_excel", {
                "filepath": "mcp.xlsx", "sheet_name": "Sheet1"})
            return names, json.loads(result.content[0].text)

    names, read = asyncio.run(scenario())
    assert names == TOOLS
    assert read["values"] == [["a", 1]]


def test_a_page_read_again_is_the_same_text_until_the_file_changes(xl: Server) -> None:
    """Pages are kept as text per version of the file: a second read gives the first one's
    text, and a read after a write (here of a number as long as the old one) the new value."""
    xl.sales()
    read = {"filepath": "book.xlsx", "sheet_name": "Sheet1", "max_cells": 8}
    first = xl.ok_text("read_data_from_excel", **read)
    assert xl.ok_text("read_data_from_excel", **read) == first
    assert json.loads(first)["values"][1] == SALES[1]
    xl.ok("write_data_to_excel", filepath="book.xlsx", sheet_name="Sheet1", start_cell="C2", data=[[11]])
    assert json.loads(xl.ok_text("read_data_from_excel", **read))["values"][1] == ["East", "pen", 11, 1.5]


def test_kept_pages_stay_under_their_bound(monkeypatch) -> None:
    """The latest pages are kept up to PAGE_CHARS characters; older ones are built again."""
    monkeypatch.setattr(workbook, "PAGE_CHARS", 12)
    parsed = workbook.CachedWorkbook(b"", Workbook())
    built: list[str] = []

    def build(name: str) -> str:
        built.append(name)
        return name * 5

    for name in ("a", "b", "c", "b"):
        assert parsed.page((name,), lambda name=name: build(name)) == name * 5
    assert built == ["a", "b", "c"]  # "b" was still kept: two pages of 5 fit in 12
    assert parsed.page(("a",), lambda: build("a")) == "aaaaa" and built[-1] == "a"  # "a" was dropped


def test_a_read_gives_these_exact_bytes(xl: Server) -> None:
    """Pages pinned byte for byte: compact JSON in key order, numbers as stored, dates as ISO
    8601, a formula without a cached value, a page cut by max_cells and the page after it."""
    wb = Workbook()
    ws = wb.active
    ws.append(["name", "when", "amount", None, "ratio"])
    ws.append(["Zoë & <co>", datetime(2024, 2, 29), 1234.5, None, "=C2*2"])
    ws.append(["x", datetime(2024, 3, 1, 12, 30), -7, 1e-7, 0.1 + 0.2])
    wb.save(xl.ws / "pin.xlsx")
    for _ in range(2):  # the first read parses the file, the second reads the cached rows
        assert xl.ok_text("read_data_from_excel", filepath="pin.xlsx", sheet_name="Sheet",
                          max_cells=10) == (
            '{"sheet_name":"Sheet","range":"A1:E2","values":[["name","when","amount",null,'
            '"ratio"],["Zoë & <co>","2024-02-29T00:00:00",1234.5,null,null]],'
            '"uncalculated":["E2"],"has_more":true,"next_start_cell":"A3"}')
        assert xl.ok_text("read_data_from_excel", filepath="pin.xlsx", sheet_name="Sheet",
                          start_cell="A3") == (
            '{"sheet_name":"Sheet","range":"A3:E3","values":[["x","2024-03-01T12:30:00",-7,'
            '1e-7,0.3]],"uncalculated":[],"has_more":false,"next_start_cell":null}')


PLAIN = [["Year", "x & <y> z", " lead", "trail ", "  ", "a\nb", "\tt", "ü€😀", "#REF"],
         [1989, 2.5, 0.0, -0.0, 1e-7, 1e20, 12345678901234567, 0.1 + 0.2, -3],
         [],
         [None, 1.7976931348623157e308, None],
         [None, None],
         ["=", 5]]


def _appended(sheets: list[tuple[str, Rows]]) -> bytes:
    wb = Workbook()
    wb.active.title = sheets[0][0]
    for title, _ in sheets[1:]:
        wb.create_sheet(title)
    for ws, (_, rows) in zip(wb.worksheets, sheets, strict=True):
        for row in rows:
            ws.append(list(row))
    return workbook_bytes(wb, datetime(2025, 1, 1))


@pytest.mark.parametrize("sheets", [
    [("Data", PLAIN), ("Other sheet", [[1.5]])],
    [("Empty", [])],
    [("Blank rows", [[], [None], [], ["a", None, "c"], []])],
    [("Wide", [[None] * 30 + [7]] * 3)],
])
def test_plain_workbooks_are_what_openpyxl_writes(sheets: list[tuple[str, Rows]]) -> None:
    assert plain_workbook_bytes(sheets, datetime(2025, 1, 1)) == _appended(sheets)


@pytest.mark.parametrize("value", ["", "=A1", "#N/A", "a\rb", "\x01", "x" * 32_768,
                                   math.nan, math.inf, True, date(2025, 1, 1)])
def test_plain_workbooks_refuse_what_would_not_read_back(value: Any) -> None:
    with pytest.raises(ValueError):
        plain_workbook_bytes([("S", [[1, value]])], datetime(2025, 1, 1))


def test_a_workbook_this_process_wrote_reads_as_a_parsed_one(
        xl: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first read of a plain workbook takes its rows from the values written; every page
    is the one parsing the file gives."""
    data = plain_workbook_bytes([("Data", PLAIN), ("More", [[1, 2], ["z"]])],
                                datetime(2025, 1, 1))
    (xl.ws / "written.xlsx").write_bytes(data)
    (xl.ws / "parsed.xlsx").write_bytes(data)
    reads = [{"sheet_name": "Data"}, {"sheet_name": "Data", "start_cell": "B2", "end_cell": "D5"},
             {"sheet_name": "Data", "start_cell": "C1", "max_cells": 12},
             {"sheet_name": "More", "preview_only": True}]
    written = [xl.ok_text("read_data_from_excel", filepath="written.xlsx", **r) for r in reads]
    monkeypatch.setattr(workbook, "written_rows", lambda _data: None)
    assert [xl.ok_text("read_data_from_excel", filepath="parsed.xlsx", **r)
            for r in reads] == written


def test_a_sheet_without_a_dimension_record(xl: Server) -> None:
    """openpyxl's write-only workbooks carry no dimension record: the used range is found by
    streaming the sheet, once per file version."""
    wb = Workbook(write_only=True)
    ws = wb.create_sheet("S")
    for row in SALES:
        ws.append(row)
    wb.save(xl.ws / "streamed.xlsx")
    for _ in range(2):
        meta = xl.ok("get_workbook_metadata", filepath="streamed.xlsx")
        assert meta["sheets"] == [{"name": "S", "dimensions": "A1:D6", "max_row": 6,
                                   "max_column": 4}]
        assert xl.ok("read_data_from_excel", filepath="streamed.xlsx", sheet_name="S")[
            "values"] == SALES
