"""Generator of update_material_inventory: a Google Sheet `Material Inventory Management` (tabs
`BOM` and `Material_Inventory`) and a WooCommerce store whose made-in-house products have a BOM,
with paid (processing) orders to deduct and orders of every other status to leave alone.

Scale: `num_orders` (primary), the paid orders; BOM products clamp(2 + o/40, 2, 15), materials
clamp(5 + o/25, 5, 30), orders of other statuses round(0.3 o) (at least one per status) and
resold products follow from it. `num_extra_lines` (the fine knob, o/4 by default) adds lines of
resold products to paid orders: about 50 tokens each, against some 400 per order.

Every draw comes from the world's named RNG streams; Faker is seeded from them and only its name
data is used."""

from __future__ import annotations

import random
from functools import partial
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from envs.update_material_inventory import (
    BALANCES,
    BOM_HEADERS,
    BOM_SHEET,
    INVENTORY_HEADERS,
    INVENTORY_SHEET,
    SPREADSHEET,
    STOCK,
    TASK,
    cents,
)
from generators.common import PersonNames, create_world, finish_world, seeded_faker
from generators.update_material_inventory.plan import (
    ATTEMPTS,
    CATEGORIES,
    NOW,
    Plan,
    default_extra_lines,
    plan_world,
    problems,
)
from loca.core.clock import iso_z
from loca.core.rng import WorldRng
from loca.core.world import World, WorldMeta
from mock_servers.google_sheet import domain as sheets
from mock_servers.google_sheet.domain.values import CellInput
from mock_servers.woocommerce.seed import CategoryDef, CustomerDef, OrderDef, ProductDef, StoreDef, fill

VERSION = "1"


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_orders: int = Field(ge=TASK.scale.lo, le=TASK.scale.hi)
    num_extra_lines: int | None = Field(default=None, ge=0)

    def resolved(self) -> dict[str, int]:
        extra = self.num_extra_lines
        return {"num_orders": self.num_orders,
                "num_extra_lines": default_extra_lines(self.num_orders) if extra is None else extra}


def resolve_params(params: dict[str, object]) -> dict[str, int]:
    return Params.model_validate(params).resolved()


def draw(seed: int, orders: int, extra_lines: int) -> Plan:
    """The first world drawn (each attempt from its own streams) that holds every guarantee."""
    rngs = WorldRng(TASK.name, seed)
    for attempt in range(ATTEMPTS):
        people = PersonNames(seeded_faker(rngs.stream("names", attempt)), rngs.stream("people", attempt))
        names = [(people.first(), people.last()) for _ in range(max(5, min(250, orders // 2)))]
        plan = plan_world(partial(_stream, rngs, attempt), orders, extra_lines, names)
        if not problems(plan):
            return plan
    raise RuntimeError(f"no world of {orders} orders held every guarantee in {ATTEMPTS} draws")


def _stream(rngs: WorldRng, attempt: int, name: str) -> random.Random:
    return rngs.stream(name, attempt)


def _sheet_rows(plan: Plan) -> tuple[list[list[CellInput]], list[list[CellInput]]]:
    """The BOM tab and the inventory tab, header first; numeric-text stocks entered with `'`."""
    names = {m.id: m for m in plan.materials}
    product = {p.sku: p for p in plan.products}
    bom: list[list[CellInput]] = [list(BOM_HEADERS)]
    for sku, lines in plan.bom.items():
        bom += [[sku, product[sku].name, material, names[material].name, float(per_unit), names[material].unit]
                for material, per_unit in lines]
    inventory: list[list[CellInput]] = [list(INVENTORY_HEADERS)]
    for m in plan.materials:
        stock: CellInput = f"'{cents(plan.before[m.id])}" if m.id in plan.as_text else float(plan.before[m.id])
        inventory.append([m.id, m.name, stock, m.unit, m.min_stock, m.supplier])
    return bom, inventory


def _store(plan: Plan) -> StoreDef:
    products = [ProductDef(p.name, p.sku, p.price, p.created, categories=[p.category],
                           stock_quantity=plan.store_stock.get(p.sku, _resold_stock(p.sku)),
                           short_description=f"{p.name} from our {p.category.lower()} collection.",
                           images=[f"https://shop.example.com/images/{p.sku.lower()}.jpg"])
                for p in plan.products]
    customers = [CustomerDef(c.email, c.first_name, c.last_name, c.created, billing=c.address,
                             shipping={k: v for k, v in c.address.items() if k not in ("email", "phone")})
                 for c in plan.customers]
    orders = [OrderDef(o.status, o.created, o.lines, o.customer, shipping_total="0" if len(o.lines) > 2 else "25")
              for o in plan.orders]
    return StoreDef(categories=[CategoryDef(c) for c in CATEGORIES], products=products, customers=customers,
                    orders=orders)


def _resold_stock(sku: str) -> int:
    return 5 + int(sku.rsplit("_", 1)[1]) % 60


def generate(root: Path, params: dict[str, object], seed: int, target_tokens: int | None = None) -> World:
    """Build the world directory for (params, seed). Pure in its inputs: same inputs, same
    content hash."""
    p = resolve_params(params)
    plan = draw(seed, p["num_orders"], p["num_extra_lines"])
    meta = WorldMeta(task=TASK.name, seed=seed, params=p, now=iso_z(NOW), target_tokens=target_tokens,
                     generator_version=VERSION)
    world, db = create_world(root, meta, TASK.servers.values())
    bom, inventory = _sheet_rows(plan)
    with db.write() as session:
        sheets.create(session, task=TASK.name, seed=seed, title=SPREADSHEET, created="2025-01-06T09:00:00Z",
                      sheets=[sheets.SheetSpec(BOM_SHEET, bom, column_count=len(BOM_HEADERS)),
                              sheets.SheetSpec(INVENTORY_SHEET, inventory, column_count=len(INVENTORY_HEADERS))],
                      today=NOW.date())
        ids = fill(session, _store(plan), salt=str(seed)).products
    db.dispose()
    stock = plan.stock()
    answer = {BALANCES: [{"Material ID": m.id, "Current Stock": cents(plan.after[m.id])} for m in plan.materials],
              STOCK: [{"id": ids[sku], "sku": sku, "stock_quantity": stock[sku]} for sku in sorted(plan.bom)]}
    return finish_world(world, TASK, answer)
