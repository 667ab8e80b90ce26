"""Checker of update_material_inventory: the inventory tab's Current Stock against the balances
after the paid orders, every BOM product's stock_quantity against what they can make, and
nothing else changed (`no_side_effects`: every other cell, tab and spreadsheet, every product
field but a BOM product's stock, every order and the rest of the store exactly as generated)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from checkers.kit import SHOWN, Checks, Context
from checkers.normalize import N, S
from checkers.side_effects import no_side_effects
from checkers.verdict import CheckFailed
from envs.update_material_inventory import (
    BALANCES,
    INVENTORY_HEADERS,
    INVENTORY_SHEET,
    SPREADSHEET,
    STOCK,
    STOCK_COLUMN,
    TASK,
    sheet_and_store,
)
from mock_servers.google_sheet.domain.values import shown

TOLERANCE = Decimal("0.005")


def _state(ctx: Context) -> dict[str, Any]:
    """The sheet and the store as they stand."""
    found: dict[str, Any] = ctx.memo(("state",), lambda: sheet_and_store(ctx.world.state_path))
    return found


def _inventory_tab(state: dict[str, Any]) -> int:
    """The row key of the inventory tab of the inventory spreadsheet."""
    books = [pk for pk, _, title in state["spreadsheets"] if title == SPREADSHEET]
    tabs = [t[0] for t in state["sheets"] if t[1] in books and t[3] == INVENTORY_SHEET]
    if len(tabs) != 1:
        raise CheckFailed(f"{len(tabs)} tabs {INVENTORY_SHEET!r} in spreadsheets titled {SPREADSHEET!r}, expected one")
    return int(tabs[0])


def balances(ctx: Context) -> str:
    """Each material's Current Stock (`N`: a number or a numeric string) is within ±0.005 of its
    balance after the paid orders; every material row is there once."""
    now = _state(ctx)
    tab = _inventory_tab(now)
    rows: dict[int, dict[int, Any]] = {}
    for sheet, row, col, value, kind in now["cells"]:
        if sheet == tab:
            rows.setdefault(row, {})[col] = shown(value, kind)
    stock: dict[str, list[Any]] = {}
    for row, cols in sorted(rows.items()):
        if row > 0 and S(cols.get(0)):
            stock.setdefault(S(cols.get(0)), []).append(cols.get(STOCK_COLUMN))
    wrong = []
    for entry in ctx.answer(BALANCES):
        material, want = entry[INVENTORY_HEADERS[0]], Decimal(entry["Current Stock"])
        found = stock.get(material, [])
        if len(found) != 1:
            wrong.append(f"{material}: {len(found)} rows")
            continue
        got = N(found[0])
        if got is None or abs(got - want) > TOLERANCE:
            wrong.append(f"{material}: got {found[0]!r}, expected {want}")
    if wrong:
        raise CheckFailed(f"{len(wrong)} wrong balances: {'; '.join(wrong[:SHOWN])}" + (" ..." if len(wrong) > SHOWN
                                                                                      else ""))
    return f"the {len(ctx.answer(BALANCES))} balances are right"


def woo_stock(ctx: Context) -> str:
    """Each BOM product's stock_quantity (`I`) equals what its materials can make."""
    now = _state(ctx)
    columns = now["product_columns"]
    products = {int(row[0]): dict(zip(columns, row, strict=True)) for row in now["products"]}
    wrong = []
    for entry in ctx.answer(STOCK):
        row = products.get(entry["id"])
        got = None if row is None else row["stock_quantity"]
        if got != entry["stock_quantity"]:
            wrong.append(f"{entry['sku']}: got {got}, expected {entry['stock_quantity']}")
    if wrong:
        raise CheckFailed(f"{len(wrong)} wrong stock quantities: {'; '.join(wrong[:SHOWN])}"
                          + (" ..." if len(wrong) > SHOWN else ""))
    return f"the {len(ctx.answer(STOCK))} BOM products have the right stock"


CHECKS = Checks(
    TASK,
    balances=balances,
    woo_stock=woo_stock,
    no_side_effects=no_side_effects(TASK),
)
