"""Checker of update_material_inventory: the inventory tab's Current Stock against the balances
after the paid orders, every BOM product's stock_quantity against what they can make, and
nothing else changed: every other cell, tab and spreadsheet as frozen at generation
(`sheet_untouched`); every product field but a BOM product's stock, every order and the rest of
the store as they were (`woo_untouched`)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from checkers.kit import SHOWN, Checks, Context
from checkers.normalize import N, S
from checkers.verdict import CheckFailed
from envs.update_material_inventory import (
    BALANCES,
    INVENTORY_HEADERS,
    INVENTORY_SHEET,
    SPREADSHEET,
    STOCK,
    STOCK_COLUMN,
    STOCK_FIELDS,
    TASK,
    sheet_and_store,
)
from mock_servers import snapshot_ignore
from mock_servers.core import snapshot
from mock_servers.core.formulas.a1 import render_box
from mock_servers.google_sheet.domain.values import shown

TOLERANCE = Decimal("0.005")
SHEET_TABLES, STORE_TABLES = "gs_", "woo_"


def _state(ctx: Context) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the state frozen at generation, the state now)."""
    found: tuple[dict[str, Any], dict[str, Any]] = ctx.memo(
        ("state",), lambda: (ctx.truth["initial"], sheet_and_store(ctx.world.state_path)))
    return found


def _inventory_tab(state: dict[str, Any]) -> int:
    """The row key of the inventory tab of the inventory spreadsheet (as generated)."""
    [book] = [pk for pk, _, title in state["spreadsheets"] if title == SPREADSHEET]
    [tab] = [t[0] for t in state["sheets"] if t[1] == book and t[3] == INVENTORY_SHEET]
    return int(tab)


def _writable(ctx: Context) -> set[tuple[int, int, int]]:
    """The cells the agent may change: Current Stock of every material row."""
    tab = _inventory_tab(ctx.truth["initial"])
    return {(tab, row, STOCK_COLUMN) for row in range(1, len(ctx.answer(BALANCES)) + 1)}


def _cells(state: dict[str, Any], tab: int | None = None) -> dict[tuple[int, int, int], Any]:
    return {(sheet, row, col): shown(value, kind) for sheet, row, col, value, kind in state["cells"]
            if tab is None or sheet == tab}


def balances(ctx: Context) -> str:
    """Each material's Current Stock (`N`: a number or a numeric string) is within ±0.005 of its
    balance after the paid orders; every material row is there once."""
    initial, now = _state(ctx)
    tab = _inventory_tab(initial)
    rows: dict[int, dict[int, Any]] = {}
    for (_, row, col), value in _cells(now, tab).items():
        rows.setdefault(row, {})[col] = value
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


def sheet_untouched(ctx: Context) -> str:
    """Every cell but Current Stock of the material rows is unchanged (`S`), none added or
    cleared; the spreadsheets and their tabs (titles, order, grid size) are as they were."""
    initial, now = _state(ctx)
    if now["spreadsheets"] != initial["spreadsheets"]:
        raise CheckFailed(f"spreadsheets changed: {[b[2] for b in now['spreadsheets']]}, "
                          f"at the start {[b[2] for b in initial['spreadsheets']]}")
    if now["sheets"] != initial["sheets"]:
        raise CheckFailed(f"tabs changed: {[t[3:] for t in now['sheets']]}, at the start "
                          f"{[t[3:] for t in initial['sheets']]}")
    before, after, free = _cells(initial), _cells(now), _writable(ctx)
    titles = {t[0]: t[3] for t in initial["sheets"]}
    changed = sorted(key for key in before.keys() | after.keys()
                     if key not in free and S(before.get(key)) != S(after.get(key)))
    if changed:
        shown_cells = [f"{render_box(titles[s], r, c, r, c)}: {before.get((s, r, c), '')!r} -> "
                       f"{after.get((s, r, c), '')!r}" for s, r, c in changed[:SHOWN]]
        raise CheckFailed(f"{len(changed)} cells changed outside Current Stock: {'; '.join(shown_cells)}"
                          + (" ..." if len(changed) > SHOWN else ""))
    problems = _other_changes(ctx, SHEET_TABLES, compared=("gs_spreadsheet", "gs_sheet", "gs_cell"))
    if problems:
        raise CheckFailed("; ".join(problems[:SHOWN]))
    return "only Current Stock cells of the material rows changed"


def woo_stock(ctx: Context) -> str:
    """Each BOM product's stock_quantity (`I`) equals what its materials can make."""
    _, now = _state(ctx)
    products = _products(now)
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


def _products(state: dict[str, Any]) -> dict[int, dict[str, Any]]:
    columns = state["product_columns"]
    return {int(row[0]): dict(zip(columns, row, strict=True)) for row in state["products"]}


def woo_untouched(ctx: Context) -> str:
    """Products without a BOM, every field of a BOM product but its stock, every order (status
    and lines) and the rest of the store are as they were; no product added or removed."""
    initial, now = _state(ctx)
    before, after = _products(initial), _products(now)
    made = {entry["id"] for entry in ctx.answer(STOCK)}
    if set(after) != set(before):
        raise CheckFailed(f"products added {sorted(set(after) - set(before))[:SHOWN]}, "
                          f"removed {sorted(set(before) - set(after))[:SHOWN]}")
    changed = [f"{before[pid]['sku']}.{field}: {before[pid][field]!r} -> {after[pid][field]!r}"
               for pid in sorted(before) for field in before[pid]
               if after[pid][field] != before[pid][field] and not (pid in made and field in STOCK_FIELDS)]
    if changed:
        raise CheckFailed(f"{len(changed)} product fields changed: {'; '.join(changed[:SHOWN])}"
                          + (" ..." if len(changed) > SHOWN else ""))
    statuses = [f"order {oid}: {status} -> {now['order_status'].get(oid)}"
                for oid, status in initial["order_status"].items() if now["order_status"].get(oid) != status]
    if statuses:
        raise CheckFailed(f"{len(statuses)} order statuses changed: {'; '.join(statuses[:SHOWN])}"
                          + (" ..." if len(statuses) > SHOWN else ""))
    problems = _other_changes(ctx, STORE_TABLES, compared=("woo_product",))
    if problems:
        raise CheckFailed("; ".join(problems[:SHOWN]))
    return "only the BOM products' stock changed in the store"


def _other_changes(ctx: Context, prefix: str, compared: tuple[str, ...]) -> list[str]:
    """What changed, against the snapshot, in the tables named `prefix*` other than those
    compared field by field (`compared`): rows changed, removed or added, tables created."""
    before = snapshot.Snapshot.model_validate(ctx.world.read_truth("snapshot.json"))
    kept = {name: state for name, state in before.tables.items() if name.startswith(prefix) and name not in compared}
    left_out: dict[str, frozenset[str] | None] = {name: None for name in before.tables if name not in kept}
    rules = {**snapshot_ignore(list(TASK.servers.values())), **left_out}
    return snapshot.changes(ctx.world, snapshot.Snapshot(tables=kept, files=before.files), rules)


CHECKS = Checks(
    TASK,
    balances=balances,
    sheet_untouched=sheet_untouched,
    woo_stock=woo_stock,
    woo_untouched=woo_untouched,
)
