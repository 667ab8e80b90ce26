"""update_material_inventory: the world keeps its guarantees at every size; balances and
producible quantities follow the instruction in exact decimals; the checker accepts every right
way of writing the answer and refuses wrong ones. (Oracle, mutants and lengths at every tier:
the generic acceptance suite.)"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest

from envs.core.registry import get_task
from envs.update_material_inventory import (
    BALANCES,
    BOM_SHEET,
    INVENTORY_SHEET,
    OTHER_STATUSES,
    PAID,
    SPREADSHEET,
    STOCK,
    TRAP_PAGE,
    bom_of,
    decimal,
    deduct,
    producible,
)
from generators.update_material_inventory import draw
from generators.update_material_inventory.plan import num_distractors, num_materials, num_products, problems
from loca.core.world import World
from loca.validate import play_script
from tests.harness import task_call, world_copy

TASK = get_task("update_material_inventory")


# ---------------------------------------------------------------- the world

LARGEST = pytest.param(TASK.spec.scale.hi, marks=pytest.mark.slow, id="largest")


@pytest.mark.parametrize("orders", [11, 40, 300, 700, LARGEST])
@pytest.mark.parametrize("seed", range(3))
def test_every_world_keeps_its_guarantees(orders: int, seed: int) -> None:
    plan = draw(seed, orders, orders // 4)
    assert problems(plan) == []
    assert len(plan.paid) == orders and len(plan.orders) == orders + num_distractors(orders)
    assert len(plan.bom) == num_products(orders) and len(plan.materials) == num_materials(orders)
    assert all(2 <= len(lines) <= 5 and len({m for m, _ in lines}) == len(lines) for lines in plan.bom.values())
    assert {o.status for o in plan.orders} == {PAID, *OTHER_STATUSES}
    assert all(v >= 0 for v in plan.after.values())
    assert all(v == v.quantize(Decimal("0.01")) for v in [*plan.after.values(), *plan.before.values()])
    assert [o.created for o in plan.orders] == sorted((o.created for o in plan.orders), reverse=True)


@pytest.mark.parametrize("orders", [11, 12, 40, 300, 700, 3000, LARGEST])
@pytest.mark.parametrize("seed", range(6))
def test_some_producible_quantity_has_a_fraction_of_a_half_or_more(orders: int, seed: int) -> None:
    """So rounding the quantities (half up) never gives the floor for every product."""
    plan = draw(seed, orders, orders // 4)
    limits = {sku: min(plan.after[m] / q for m, q in lines) for sku, lines in plan.bom.items()}
    assert any(limit % 1 >= Decimal("0.5") for limit in limits.values())
    assert {sku: int(limit.to_integral_value(ROUND_HALF_UP)) for sku, limit in limits.items()} != plan.stock()
    assert {sku: math.floor(limit) for sku, limit in limits.items()} == plan.stock()


def test_worlds_follow_the_seed() -> None:
    assert draw(3, 60, 15).after == draw(3, 60, 15).after
    assert draw(3, 60, 15).after != draw(4, 60, 15).after


def test_the_fine_knob_adds_lines_of_products_without_a_bom_only() -> None:
    few, more = draw(1, 50, 0), draw(1, 50, 40)
    assert few.bom == more.bom and few.after == more.after and few.before == more.before
    extra = Counter(s for o in more.orders for s, _ in o.lines) - Counter(s for o in few.orders for s, _ in o.lines)
    assert extra.total() == 40 and not set(extra) & set(more.bom)


# ---------------------------------------------------------------- the arithmetic

def test_deduction_and_producible_quantities_as_the_instruction_defines_them() -> None:
    bom = bom_of([["Product SKU", "Product Name", "Raw Material ID", "Raw Material Name", "Unit Quantity", "Unit"],
                  ["CHAIR_101", "Oak Chair", "RM1", "Oak Plank", 0.45, "m"],
                  ["CHAIR_101", "Oak Chair", "RM2", "Wood Screw", 8, "pcs"],
                  ["TABLE_202", "Oak Table", "RM1", "Oak Plank", 2.5, "m"]])
    stock = {"RM1": decimal("20.1"), "RM2": decimal(100), "RM3": decimal("7.25")}
    lines = [("CHAIR_101", 2), ("LAMP_300", 4), ("CHAIR_101", 1), ("TABLE_202", 1)]  # a SKU twice, one not in the BOM
    after = deduct(stock, bom, lines)
    assert after == {"RM1": Decimal("16.25"), "RM2": Decimal(76), "RM3": Decimal("7.25")}
    assert producible(after, bom) == {"CHAIR_101": 9, "TABLE_202": 6}  # the screws limit the chair: 76 / 8
    exact = {"RM1": Decimal("5.85"), "RM2": Decimal(400)}
    assert producible(exact, bom)["CHAIR_101"] == 13  # 5.85 / 0.45, which floating point makes 12.99...
    assert math.floor(5.85 / 0.45) == 12


@pytest.mark.parametrize("seed", range(5))
def test_a_shared_material_limits_a_product_at_an_exact_quotient_that_floats_miss(seed: int) -> None:
    plan = draw(seed, 12, 3)
    users = Counter(m for lines in plan.bom.values() for m, _ in lines)
    trapped = []
    for sku, lines in plan.bom.items():
        quotients = {m: plan.after[m] / q for m, q in lines}
        limit = min(quotients.values())
        assert plan.stock()[sku] == math.floor(limit)
        trapped += [m for m, q in lines if quotients[m] == limit == int(limit) and users[m] > 1
                    and math.floor(float(plan.after[m]) / float(q)) < limit]
    assert trapped


def test_the_truth_holds_the_plan_s_quantities_by_sku(blank: World) -> None:
    stock = draw(2, 13, 3).stock()
    assert blank.read_truth()["answer"][STOCK] == [
        {"id": e["id"], "sku": sku, "stock_quantity": stock[sku]}
        for e, sku in zip(blank.read_truth()["answer"][STOCK], sorted(stock), strict=True)]


# ---------------------------------------------------------------- the checker

@pytest.fixture(scope="module")
def blank(tmp_path_factory: pytest.TempPathFactory) -> World:
    return TASK.generate(tmp_path_factory.mktemp("blank") / "w", {"num_orders": 13, "num_extra_lines": 3}, 2)


@pytest.fixture
def world(blank: World, tmp_path: Path) -> World:
    return world_copy(blank, tmp_path / "w")


def _call(world: World, tool: str, **args: Any) -> Any:
    return task_call(world, TASK, tool, **args)


def _book(world: World) -> str:
    [book] = [b["id"] for b in _call(world, "google_sheet_list_spreadsheets")["spreadsheets"]
              if b["title"] == SPREADSHEET]
    return str(book)


def _inventory(world: World) -> list[list[Any]]:
    reply = _call(world, "google_sheet_get_sheet_data", spreadsheet_id=_book(world), sheet=INVENTORY_SHEET)
    values: list[list[Any]] = reply["valueRanges"][0]["values"]
    return values


def _write_balances(world: World, cell: Any = float) -> None:
    balances = world.read_truth()["answer"][BALANCES]
    _call(world, "google_sheet_update_cells", spreadsheet_id=_book(world), sheet=INVENTORY_SHEET,
          range=f"C2:C{len(balances) + 1}", data=[[cell(e["Current Stock"])] for e in balances])


def _write_stock(world: World, shift: int = 0) -> None:
    for entry in world.read_truth()["answer"][STOCK]:
        _call(world, "woocommerce_woo_products_update", productId=entry["id"],
              productData={"stock_quantity": entry["stock_quantity"] + shift, "manage_stock": True})


def _failed(world: World) -> list[str]:
    return TASK.check(world).failed_names()


def test_a_right_answer_passes_whichever_way_it_is_written(world: World) -> None:
    _write_balances(world, cell=lambda v: f"'{v}")  # numeric text, as some stocks were stored
    _write_stock(world)
    (world.workspace / "work.py").write_text("# scratch\n")
    assert _failed(world) == []


def test_rewriting_whole_rows_with_the_same_values_passes(world: World) -> None:
    rows = _inventory(world)
    want = {e["Material ID"]: e["Current Stock"] for e in world.read_truth()["answer"][BALANCES]}
    rows = [rows[0], *([r[0], r[1], float(want[r[0]]) + 1e-9, *r[3:]] for r in rows[1:])]
    _call(world, "google_sheet_update_cells", spreadsheet_id=_book(world), sheet=INVENTORY_SHEET,
          range=f"A1:F{len(rows)}", data=rows)
    _write_stock(world)
    assert _failed(world) == []


@pytest.mark.parametrize("value", ["{v} ", "{v}0"])
def test_balances_accept_spaces_and_trailing_zeros(world: World, value: str) -> None:
    _write_balances(world, cell=lambda v: value.format(v=v))
    _write_stock(world)
    assert _failed(world) == []


@pytest.mark.parametrize(("wrong", "failed"), [
    ("cent", ["balances"]), ("thousands", ["balances"]), ("unit", ["balances"]),
    ("empty", ["balances", "no_side_effects"]),  # an emptied cell is gone: only its value may change
])
def test_balances_refuse_wrong_values(world: World, wrong: str, failed: list[str]) -> None:
    _write_balances(world)
    _write_stock(world)
    first = world.read_truth()["answer"][BALANCES][0]["Current Stock"]
    value = {"cent": float(Decimal(first) + Decimal("0.01")), "thousands": f"{Decimal(first) + 1000:,}",
             "unit": f"{first} m", "empty": ""}[wrong]
    _call(world, "google_sheet_update_cells", spreadsheet_id=_book(world), sheet=INVENTORY_SHEET, range="C2",
          data=[[value]])
    assert _failed(world) == failed


def test_current_stock_cleared_and_written_again_passes(world: World) -> None:
    """A cell is its place: emptied, then written with the right value, it is no other change."""
    rows = len(world.read_truth()["answer"][BALANCES]) + 1
    _call(world, "google_sheet_clear_range", spreadsheet_id=_book(world), sheet=INVENTORY_SHEET, range=f"C2:C{rows}")
    _write_balances(world)
    _write_stock(world)
    assert _failed(world) == []


@pytest.mark.parametrize(("tool", "args"), [
    ("google_sheet_update_cells", {"sheet": INVENTORY_SHEET, "range": "E2", "data": [[999]]}),
    ("google_sheet_update_cells", {"sheet": INVENTORY_SHEET, "range": "A40", "data": [["RM999"]]}),
    ("google_sheet_update_cells", {"sheet": "BOM", "range": "E2", "data": [[1.5]]}),
    ("google_sheet_create_sheet", {"title": "Log"}),
    ("google_sheet_rename_sheet", {"sheet": "BOM", "new_name": "Bill of Materials"}),
    ("google_sheet_add_rows", {"sheet": INVENTORY_SHEET, "count": 1}),
], ids=["min_stock", "new_row", "unit_quantity", "new_tab", "renamed_tab", "added_rows"])
def test_any_other_sheet_change_fails_no_side_effects(world: World, tool: str, args: dict[str, Any]) -> None:
    _write_balances(world)
    _write_stock(world)
    key = "spreadsheet" if tool == "google_sheet_rename_sheet" else "spreadsheet_id"
    _call(world, tool, **{key: _book(world), **args})
    assert _failed(world) == ["no_side_effects"]


@pytest.mark.parametrize(("sheet", "cell", "edit"), [
    (INVENTORY_SHEET, "A2", lambda v: f"{v} "),  # the material ID (balances reads it spaced, the sheet keeps it)
    (INVENTORY_SHEET, "B2", lambda v: f"  {v} "),
    (INVENTORY_SHEET, "D2", str.upper),
    (INVENTORY_SHEET, "F2", str.upper),
    (INVENTORY_SHEET, "C1", lambda v: f"{v} "),  # the Current Stock header is no material row
    (BOM_SHEET, "A2", lambda v: f" {v}"),
    (BOM_SHEET, "B2", str.lower),
    (BOM_SHEET, "F2", str.upper),
], ids=["material_id", "material_name", "unit", "supplier", "header", "bom_sku", "bom_name", "bom_unit"])
def test_a_padded_or_recased_cell_fails_no_side_effects(world: World, sheet: str, cell: str,
                                                        edit: Callable[[str], str]) -> None:
    """Every cell but a material's Current Stock is compared exactly, as stored."""
    _write_balances(world)
    _write_stock(world)
    [[value]] = _call(world, "google_sheet_get_sheet_data", spreadsheet_id=_book(world), sheet=sheet,
                      range=cell)["valueRanges"][0]["values"]
    assert edit(value) != value
    _call(world, "google_sheet_update_cells", spreadsheet_id=_book(world), sheet=sheet, range=cell,
          data=[[edit(value)]])
    assert _failed(world) == ["no_side_effects"]


def test_a_new_spreadsheet_fails_no_side_effects(world: World) -> None:
    _write_balances(world)
    _write_stock(world)
    _call(world, "google_sheet_create_spreadsheet", title="inventory scratch")
    assert _failed(world) == ["no_side_effects"]


def test_wrong_stock_fails_woo_stock(world: World) -> None:
    _write_balances(world)
    _write_stock(world, shift=1)
    assert _failed(world) == ["woo_stock"]


def test_unmanaged_stock_fails_woo_stock_and_no_side_effects(world: World) -> None:
    _write_balances(world)
    _write_stock(world)
    entry = world.read_truth()["answer"][STOCK][0]
    _call(world, "woocommerce_woo_products_update", productId=entry["id"], productData={"manage_stock": False})
    assert _failed(world) == ["woo_stock", "no_side_effects"]


def _other_product(world: World) -> dict[str, Any]:
    made = {e["id"] for e in world.read_truth()["answer"][STOCK]}
    items = _call(world, "woocommerce_woo_products_list", perPage=100)["items"]
    found: dict[str, Any] = next(p for p in items if p["id"] not in made)
    return found


def _paid_order(world: World) -> int:
    return int(_call(world, "woocommerce_woo_orders_list", status=[PAID])["items"][0]["id"])


@pytest.mark.parametrize("change", ["other_stock", "price", "name", "sku", "status", "note", "meta"])
def test_any_other_store_change_fails_no_side_effects(world: World, change: str) -> None:
    """A product without a BOM keeps its stock; a BOM product, every field but its stock."""
    _write_balances(world)
    _write_stock(world)
    made = world.read_truth()["answer"][STOCK][0]["id"]
    if change == "other_stock":
        other = _other_product(world)
        _call(world, "woocommerce_woo_products_update", productId=other["id"],
              productData={"stock_quantity": (other["stock_quantity"] or 0) + 1, "manage_stock": True})
    elif change in ("price", "name", "sku"):
        field = {"price": "regular_price", "name": "name", "sku": "sku"}[change]
        _call(world, "woocommerce_woo_products_update", productId=made,
              productData={field: {"price": "1.00", "name": "Renamed", "sku": "RENAMED_1"}[change]})
    elif change == "status":
        _call(world, "woocommerce_woo_orders_update", orderId=_paid_order(world), orderData={"status": "completed"})
    elif change == "note":
        _call(world, "woocommerce_woo_orders_notes_create", orderId=_paid_order(world), note="materials deducted")
    else:
        _call(world, "woocommerce_woo_products_update", productId=made,
              productData={"meta_data": [{"key": "synced", "value": "yes"}]})
    assert _failed(world) == ["no_side_effects"]


def test_oracle_passes_and_noop_fails(blank: World, tmp_path: Path) -> None:
    assert asyncio.run(play_script(TASK, world_copy(blank, tmp_path / "a"), "oracle")).passed
    assert asyncio.run(play_script(TASK, world_copy(blank, tmp_path / "b"), "noop")).failed_names() == [
        "balances", "woo_stock"]


def test_rounding_the_producible_quantities_fails_woo_stock(blank: World, tmp_path: Path) -> None:
    verdict = asyncio.run(play_script(TASK, world_copy(blank, tmp_path / "w"), "mutant:rounds_quantities"))
    assert verdict.failed_names() == ["woo_stock"]


def test_the_truth_follows_from_the_sheet_and_the_paid_orders(blank: World) -> None:
    rows = _inventory(blank)
    bom_rows = _call(blank, "google_sheet_get_sheet_data", spreadsheet_id=_book(blank),
                     sheet="BOM")["valueRanges"][0]["values"]
    orders = _call(blank, "woocommerce_woo_orders_list", status=[PAID], perPage=100)["items"]
    assert len(orders) > TRAP_PAGE
    after = deduct({r[0]: decimal(r[2]) for r in rows[1:]}, bom_of(bom_rows),
                   [(i["sku"], i["quantity"]) for o in orders for i in o["line_items"]])
    answer = blank.read_truth()["answer"]
    assert {e["Material ID"]: Decimal(e["Current Stock"]) for e in answer[BALANCES]} == after
    assert any(isinstance(r[2], str) for r in rows[1:]) and any(not isinstance(r[2], str) for r in rows[1:])
