"""Scripted agents of update_material_inventory: the oracle (reads both tabs, the paid orders and
the products, all pages; deducts in exact decimals; writes the Current Stock column and the BOM
products' stock) and its failure-mode mutants."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from envs.update_material_inventory import (
    BALANCES,
    INVENTORY_HEADERS,
    INVENTORY_SHEET,
    PAGE,
    PAID,
    STOCK,
    TRAP_PAGE,
    Bom,
    bom_of,
    cents,
    decimal,
    deduct,
    find_spreadsheet,
    producible,
    read_everything,
)
from loca.core.script import Mutant, Script, ScriptedAgents, Tools, call

BATCH = 100  # woo_products_batch_update takes at most 100 items a call
NOTE_HEADER = "Last Updated"


@dataclass(frozen=True)
class Knobs:
    """How an agent deviates from the oracle (all off: the oracle)."""

    other_statuses: bool = False  # M1: also deducts completed and pending orders
    orders_first_page: bool = False  # M2: one page of paid orders at the default page size
    stock_from_before: bool = False  # M3: producible quantities from the stock before the orders
    whole_balances: bool = False  # M4: balances rounded to integers
    completes_orders: bool = False  # M5: marks the paid orders completed
    float_math: bool = False  # balances and quotients in floating point
    sku_once: bool = False  # a SKU counted once per order, however many lines carry it
    skips_text_stock: bool = False  # stocks stored as text are left as they are
    products_first_page: bool = False  # one page of products at the default page size
    note_column: bool = False  # adds a "Last Updated" column to the inventory tab
    zeroes_other_products: bool = False  # also sets the stock of products without a BOM to 0
    rounds_quantities: bool = False  # the producible quantity rounded (half up), not floored


def _lines(orders: Iterable[dict[str, Any]], once: bool) -> list[tuple[str, int]]:
    lines: list[tuple[str, int]] = []
    for order in orders:
        seen: set[str] = set()
        for item in order["line_items"]:
            if not (once and item["sku"] in seen):
                lines.append((item["sku"], int(item["quantity"])))
            seen.add(item["sku"])
    return lines


def _float_answer(stock: dict[str, Decimal], bom: Bom, lines: list[tuple[str, int]]) -> tuple[
        dict[str, Decimal], dict[str, int]]:
    """Balances and quantities as floating-point arithmetic gives them."""
    left = {m: float(v) for m, v in stock.items()}
    for sku, quantity in lines:
        for material, per_unit in bom.get(sku, ()):
            left[material] -= quantity * float(per_unit)
    rounded = {m: round(v, 2) for m, v in left.items()}
    quantities = {sku: math.floor(min(rounded[m] / float(q) for m, q in materials))
                  for sku, materials in bom.items()}
    return {m: Decimal(f"{v:.2f}") for m, v in rounded.items()}, quantities


def derive(instruction: str, tools: Tools, knobs: Knobs) -> Script:
    """Read everything and compute the balances and quantities (for some mutants, also the ids
    their extra writes need)."""
    statuses = (PAID, "completed", "pending") if knobs.other_statuses else (PAID,)
    _, bom_rows, inventory, orders, products = yield from read_everything(
        tools, statuses, TRAP_PAGE if knobs.orders_first_page else PAGE, knobs.orders_first_page,
        TRAP_PAGE if knobs.products_first_page else PAGE, knobs.products_first_page)
    bom = bom_of(bom_rows)
    rows = [r for r in inventory[1:] if r and str(r[0]).strip()]
    stock = {str(r[0]).strip(): decimal(r[2]) for r in rows}
    lines = _lines(orders, knobs.sku_once)
    if knobs.float_math:
        balances, quantities = _float_answer(stock, bom, lines)
    else:
        balances = deduct(stock, bom, lines)
        if knobs.skips_text_stock:
            balances |= {str(r[0]).strip(): stock[str(r[0]).strip()] for r in rows if isinstance(r[2], str)}
        if knobs.whole_balances:
            balances = {m: v.quantize(Decimal(1)) for m, v in balances.items()}
        quantities = producible(stock if knobs.stock_from_before else balances, bom)
        if knobs.rounds_quantities:
            quantities = {sku: int(min(balances[m] / per_unit for m, per_unit in materials).to_integral_value(
                ROUND_HALF_UP)) for sku, materials in bom.items()}
    ids = {p["sku"]: p["id"] for p in products}
    answer: dict[str, Any] = {
        BALANCES: [{INVENTORY_HEADERS[0]: m, "Current Stock": cents(balances[m])} for m in stock],
        STOCK: [{"id": ids[sku], "sku": sku, "stock_quantity": quantities[sku]} for sku in sorted(bom) if sku in ids]}
    if knobs.completes_orders:
        answer["orders"] = [o["id"] for o in orders if o["status"] == PAID]
    if knobs.zeroes_other_products:
        answer["others"] = [p["id"] for p in products if p["sku"] not in bom]
    return answer


def write(instruction: str, tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    """The new balances into Current Stock, then the BOM products' stock_quantity."""
    book = yield from find_spreadsheet(tools)
    rows = answer[BALANCES]
    column = chr(ord("A") + INVENTORY_HEADERS.index("Current Stock"))
    yield from call(tools("google_sheet", "update_cells"), {
        "spreadsheet_id": book, "sheet": INVENTORY_SHEET, "range": f"{column}2:{column}{len(rows) + 1}",
        "data": [[float(entry["Current Stock"])] for entry in rows]})
    if knobs.note_column:
        note = chr(ord("A") + len(INVENTORY_HEADERS))
        yield from call(tools("google_sheet", "update_cells"), {
            "spreadsheet_id": book, "sheet": INVENTORY_SHEET, "range": f"{note}1:{note}{len(rows) + 1}",
            "data": [[NOTE_HEADER], *(["2025-05-20"] for _ in rows)]})
    updates = [{"id": entry["id"], "stock_quantity": entry["stock_quantity"]} for entry in answer[STOCK]]
    updates += [{"id": pid, "stock_quantity": 0} for pid in answer.get("others", [])]
    for start in range(0, len(updates), BATCH):
        yield from call(tools("woocommerce", "woo_products_batch_update"), {"update": updates[start:start + BATCH]})
    ids = answer.get("orders", [])
    for start in range(0, len(ids), BATCH):
        yield from call(tools("woocommerce", "woo_orders_batch_update"), {
            "update": [{"id": oid, "status": "completed"} for oid in ids[start:start + BATCH]]})


AGENTS = ScriptedAgents(
    derive=derive,
    write=write,
    oracle=Knobs(),
    mutants={
        "other_statuses": Mutant(Knobs(other_statuses=True), "balances"),
        "first_page": Mutant(Knobs(orders_first_page=True), "balances"),
        "stock_from_before": Mutant(Knobs(stock_from_before=True), "woo_stock"),
        "whole_balances": Mutant(Knobs(whole_balances=True), "balances"),
        "completes_orders": Mutant(Knobs(completes_orders=True), "no_side_effects"),
        "float_math": Mutant(Knobs(float_math=True), "woo_stock"),
        "sku_once": Mutant(Knobs(sku_once=True), "balances"),
        "skips_text_stock": Mutant(Knobs(skips_text_stock=True), "balances"),
        "products_first_page": Mutant(Knobs(products_first_page=True), "woo_stock"),
        "note_column": Mutant(Knobs(note_column=True), "no_side_effects"),
        "zeroes_other_products": Mutant(Knobs(zeroes_other_products=True), "no_side_effects"),
        "rounds_quantities": Mutant(Knobs(rounds_quantities=True), "woo_stock"),
    },
    noop_must_fail="balances",
)
