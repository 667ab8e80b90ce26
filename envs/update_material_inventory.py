"""update_material_inventory: deduct the bill-of-materials consumption of the paid (processing)
WooCommerce orders from a Google Sheet inventory, then set each BOM product's store stock to what
the new balances can make."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any

from loca.core.outputs import DbRows, Rows, sql_text
from loca.core.script import Script, ToolRequest, Tools, call, call_all, paged
from loca.core.task import Scale, TaskSpec

if TYPE_CHECKING:
    from pathlib import Path

    from loca.core.world import World

SPREADSHEET = "Material Inventory Management"
BOM_SHEET, INVENTORY_SHEET = "BOM", "Material_Inventory"
BOM_HEADERS = ("Product SKU", "Product Name", "Raw Material ID", "Raw Material Name", "Unit Quantity", "Unit")
INVENTORY_HEADERS = ("Material ID", "Material Name", "Current Stock", "Unit", "Min Stock", "Supplier")
STOCK_COLUMN = INVENTORY_HEADERS.index("Current Stock")  # 0-based: column C
PAID = "processing"
OTHER_STATUSES = ("pending", "on-hold", "cancelled", "refunded", "completed")
# What the agent may change: the Current Stock cells of the material rows and the BOM products'
# stock_quantity (stock_status follows it; an update stamps date_modified). The BOM's SKUs are read
# from the BOM tab, which must stay as it is.
_BOOK = f"SELECT pk FROM gs_spreadsheet WHERE title = {sql_text(SPREADSHEET)}"


def _tab(title: str) -> str:
    return f"SELECT pk FROM gs_sheet WHERE spreadsheet = ({_BOOK}) AND title = {sql_text(title)}"


CELL_VALUE = ("input", "formula", "value", "value_type")
INVENTORY_CELLS = DbRows(table="gs_cell", key=("sheet", "row", "col"), columns=CELL_VALUE, values=("value",),
                         where=f"sheet = ({_tab(INVENTORY_SHEET)}) AND col = {STOCK_COLUMN} AND row >= 1")
STOCK_FIELDS = ("stock_quantity", "stock_status", "date_modified")
PRODUCT_STOCK = DbRows(table="woo_product", key=("id",), columns=STOCK_FIELDS, values=("stock_quantity",),
                       where=f"sku IN (SELECT input FROM gs_cell WHERE sheet = ({_tab(BOM_SHEET)}) AND col = 0 "
                             "AND row >= 1)")
BOOK_STAMP = Rows("gs_spreadsheet", f"pk = ({_BOOK})", ("modified",))  # stamped by every write
BALANCES, STOCK = "balances", "stock"  # the answer's keys
# The pagination trap: a processing order with BOM lines lies beyond the first page of the order
# listings at WooCommerce's default page size (which the first-page mutant reads); a BOM product
# lies beyond the first page of the default product listing.
TRAP_PAGE = 10
PAGE = 100  # the oracle's page size (WooCommerce's maximum)
CENT = Decimal("0.01")

TOOLS: dict[str, tuple[str, ...]] = {
    "google_sheet": ("list_spreadsheets", "get_multiple_spreadsheet_summary", "list_sheets", "get_sheet_data",
                     "update_cells", "batch_update_cells"),
    "woocommerce": ("woo_orders_list", "woo_orders_get", "woo_products_list", "woo_products_get",
                    "woo_products_update", "woo_products_batch_update"),
    "filesystem": ("list_directory", "read_text_file", "write_file"),
    "terminal": ("run_command",),
    "python_execute": ("python_execute",),
    "claim_done": ("claim_done",),
}

INSTRUCTION = """\
The Google Sheet `{title}` has tab `{bom}` ({bom_columns}) and tab `{inventory}` ({inventory_columns}). \
Every WooCommerce order with status `{paid}` is a new paid order whose materials have not been \
deducted yet; ignore orders with any other status and order lines whose SKU is not in the BOM. For \
each such line, deduct quantity × Unit Quantity of every BOM material of that SKU from its Current \
Stock, and write the new balances, rounded to 2 decimals, into the Current Stock column only. Then, \
for every product in the BOM, set its WooCommerce `stock_quantity` to the maximum producible \
quantity = floor(min over its materials of new balance ÷ Unit Quantity). Do not change order \
statuses. Change nothing else."""


def instruction(_world: World) -> str:
    return INSTRUCTION.format(title=SPREADSHEET, bom=BOM_SHEET, bom_columns=", ".join(BOM_HEADERS),
                              inventory=INVENTORY_SHEET, inventory_columns=", ".join(INVENTORY_HEADERS),
                              paid=PAID)


# ---------------------------------------------------------------- the arithmetic

Bom = dict[str, list[tuple[str, Decimal]]]  # product SKU -> (material ID, unit quantity), in sheet order


def decimal(value: Any) -> Decimal:
    """A sheet value (a JSON number or a numeric string) as an exact decimal."""
    return Decimal(str(value).strip())


def cents(value: Decimal) -> str:
    """A balance as the answer holds it: 2 decimals, as text."""
    return str(value.quantize(CENT, rounding=ROUND_HALF_UP))


def deduct(stock: Mapping[str, Decimal], bom: Bom, lines: Iterable[tuple[str, int]]) -> dict[str, Decimal]:
    """The balances after every (SKU, quantity) line: quantity × unit quantity of each of the
    SKU's materials taken from its stock; lines of SKUs outside the BOM change nothing."""
    left = dict(stock)
    for sku, quantity in lines:
        for material, per_unit in bom.get(sku, ()):
            left[material] -= quantity * per_unit
    return left


def producible(balances: Mapping[str, Decimal], bom: Bom) -> dict[str, int]:
    """Per BOM product, floor(min over its materials of balance ÷ unit quantity)."""
    return {sku: int(min(balances[m] / per_unit for m, per_unit in materials).to_integral_value(ROUND_FLOOR))
            for sku, materials in bom.items()}


def bom_of(rows: Sequence[Sequence[Any]]) -> Bom:
    """The BOM from the tab's rows (header first)."""
    bom: Bom = {}
    for row in rows[1:]:
        if len(row) > 4 and str(row[0]).strip():
            bom.setdefault(str(row[0]).strip(), []).append((str(row[2]).strip(), decimal(row[4])))
    return bom


# ---------------------------------------------------------------- the state the checks compare

def sheet_and_store(state_path: Path) -> dict[str, Any]:
    """What the checks read, straight from the world's state, read-only: every spreadsheet, tab
    and stored cell (value and value type), every product row."""
    conn = sqlite3.connect(f"file:{state_path}?mode=ro", uri=True)
    try:
        books = [list(r) for r in conn.execute("SELECT pk, id, title FROM gs_spreadsheet ORDER BY pk")]
        tabs = [list(r) for r in conn.execute(
            'SELECT pk, spreadsheet, sheet_id, title, "index", row_count, column_count FROM gs_sheet ORDER BY pk')]
        cells = [list(r) for r in conn.execute(
            "SELECT sheet, row, col, value, value_type FROM gs_cell ORDER BY sheet, row, col")]
        cursor = conn.execute("SELECT * FROM woo_product ORDER BY id")
        columns = [d[0] for d in cursor.description]
        products = [list(r) for r in cursor]
    finally:
        conn.close()
    return {"spreadsheets": books, "sheets": tabs, "cells": cells, "product_columns": columns, "products": products}


# ---------------------------------------------------------------- reading

def find_spreadsheet(tools: Tools) -> Script:
    """The id of the spreadsheet titled `SPREADSHEET`."""
    found = yield from call(tools("google_sheet", "list_spreadsheets"), {})
    [book] = [b["id"] for b in found["spreadsheets"] if b["title"] == SPREADSHEET]
    return book


def read_everything(tools: Tools, statuses: Sequence[str] = (PAID,), order_page: int = PAGE,
                    orders_first_page: bool = False, product_page: int = PAGE,
                    products_first_page: bool = False) -> Script:
    """The read set: both tabs, the orders of `statuses` (all pages) and the products (all
    pages). Returns (spreadsheet id, BOM rows, inventory rows, orders, products)."""
    book = yield from find_spreadsheet(tools)
    bom, inventory = yield from call_all([
        ToolRequest(tools("google_sheet", "get_sheet_data"), {"spreadsheet_id": book, "sheet": tab})
        for tab in (BOM_SHEET, INVENTORY_SHEET)])
    [orders] = yield from paged(tools("woocommerce", "woo_orders_list"), [{"status": list(statuses)}], "items",
                                "perPage", order_page, orders_first_page)
    [products] = yield from paged(tools("woocommerce", "woo_products_list"), [{}], "items", "perPage",
                                  product_page, products_first_page)
    return book, _values(bom), _values(inventory), orders, products


def _values(reply: Mapping[str, Any]) -> list[list[Any]]:
    [block] = reply["valueRanges"]
    values: list[list[Any]] = block["values"]
    return values


def read_set(_instruction: str, tools: list[dict[str, Any]]) -> Script:
    yield from read_everything(Tools(tools))


TASK = TaskSpec(
    name="update_material_inventory",
    version=0,
    summary="deduct the BOM materials of paid orders from a sheet inventory and sync producible stock to the store",
    servers={key: key for key in TOOLS},
    scale=Scale(primary="num_orders", lo=11, hi=6500, fine="num_extra_lines"),
    instruction=instruction,
    read_set=read_set,
    outputs=(INVENTORY_CELLS, PRODUCT_STOCK),
    extra_rows=(BOOK_STAMP,),
    tools=tuple((key, tool) for key, names in TOOLS.items() for tool in names),
)
