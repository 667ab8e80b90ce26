"""A google_sheet world for the server tests: spreadsheets built through the domain layer."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from mock_servers.google_sheet import domain, toolbox
from mock_servers.google_sheet.domain import SheetSpec
from tests.harness import ServerHarness

STOCK = [["SKU", "Name", "Qty", "Price", "Value"],
         ["A-1", "Bolt", 120, 0.25, "=C2*D2"],
         ["A-2", "Nut", 80, 0.1, "=C3*D3"],
         ["B-7", "Washer", 0, 0.05, "=C4*D4"],
         ["C-3", "Bracket", 15, 4.5, "=C5*D5"],
         ["Total", "", "=SUM(C2:C5)", "", "=SUM(E2:E5)"]]
QUARTER = [["Month", "Sales"], ["2025-01-01", 1200], ["2025-02-01", 950], ["2025-03-01", 1430]]


class Sheets(ServerHarness):
    def ok(self, tool: str, **args: Any) -> Any:
        return json.loads(self.ok_text(tool, **args))

    def values(self, spreadsheet_id: str, sheet: str, range_: str | None = None) -> list[list[Any]]:
        args = {"spreadsheet_id": spreadsheet_id, "sheet": sheet} | ({"range": range_} if range_ else {})
        found: list[list[Any]] = self.ok("get_sheet_data", **args)["valueRanges"][0]["values"]
        return found


def build_sheets(make_world: Any, config: dict[str, Any] | None = None) -> tuple[Sheets, dict[str, str]]:
    """The world (Inventory with Stock and 'Q1 Data', a spreadsheet whose sheets are Sheet1 and
    Sheet1_x, an empty one) and the ids of its spreadsheets by title."""
    world, db = make_world(["google_sheet"], now="2025-03-15T09:00:00Z")
    ids = {}
    with db.write() as s:
        for title, created, sheets in [
                ("Inventory", "2025-01-10T08:00:00Z", [SheetSpec("Stock", STOCK), SheetSpec("Q1 Data", QUARTER)]),
                ("Lookalikes", "2025-01-11T08:00:00Z",
                 [SheetSpec("Sheet1", [["one"]]), SheetSpec("Sheet1_x", [["two"]])]),
                ("Empty", "2025-01-12T08:00:00Z", [SheetSpec("Sheet1")])]:
            book = domain.create(s, task="test", seed=0, title=title, sheets=sheets, created=created,
                                 today=date(2025, 3, 15))
            ids[title] = book.id
    db.dispose()
    return Sheets(toolbox, world, config), ids
