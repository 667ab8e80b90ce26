"""The world of update_material_inventory as plain data: raw materials, the bill of materials,
store products (BOM and others), customers, orders with their lines, and the stock balances
before and after the paid orders. Ground truth is built here from the balances *after* the
orders (drawn first, the stock before them following), the other way round from how an agent
(and the oracle) computes it.

Every guarantee of the spec is built in by construction and checked by `problems`."""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

from envs.update_material_inventory import CENT, OTHER_STATUSES, PAID, TRAP_PAGE, Bom, producible

NOW = datetime(2025, 5, 20, 8, 0, tzinfo=UTC)
ORDER_DAYS = 30  # orders were placed over the last month
ATTEMPTS = 20  # worlds drawn (each from its own streams) until one holds every guarantee

# (name, unit, supplier group); pieces and pairs are counted (whole quantities), the rest measured
MATERIALS = (
    ("Oak Plank", "m", "timber"), ("Pine Board", "m", "timber"), ("Walnut Veneer", "m2", "timber"),
    ("Birch Plywood Sheet", "m2", "timber"), ("MDF Panel", "m2", "timber"), ("Steel Tube", "m", "metal"),
    ("Aluminium Profile", "m", "metal"), ("Wood Screw", "pcs", "hardware"), ("Hex Bolt M8", "pcs", "hardware"),
    ("Brass Hinge", "pcs", "hardware"), ("Drawer Slide", "pair", "hardware"), ("Wood Glue", "L", "finish"),
    ("Clear Varnish", "L", "finish"), ("White Paint", "L", "finish"), ("Foam Padding", "kg", "textile"),
    ("Upholstery Fabric", "m2", "textile"), ("Leather Hide", "m2", "textile"), ("Tempered Glass Panel", "m2", "glass"),
    ("Cabinet Handle", "pcs", "hardware"), ("Felt Pad", "pcs", "hardware"), ("Rubber Foot", "pcs", "hardware"),
    ("Wood Dowel", "pcs", "timber"), ("Sanding Sheet", "pcs", "finish"), ("Wax Polish", "kg", "finish"),
    ("Linen Thread", "m", "textile"), ("Cane Webbing", "m2", "textile"), ("Rattan Strip", "m", "timber"),
    ("Cork Sheet", "m2", "timber"), ("Powder Coating", "kg", "finish"), ("Shelf Bracket", "pcs", "metal"),
    ("Caster Wheel", "pcs", "hardware"), ("Mirror Glass", "m2", "glass"), ("Jute Webbing", "m", "textile"),
    ("Pocket Spring", "pcs", "metal"), ("Wood Stain", "L", "finish"), ("Edge Banding", "m", "timber"),
)
COUNTED = ("pcs", "pair")
SUPPLIERS = {
    "timber": ("Northwood Timber Co.", "Baltic Plywood Ltd"), "metal": ("Meridian Metals", "Atlas Industrial Parts"),
    "hardware": ("FixRight Fasteners", "Harbor Hardware Supply"), "finish": ("Coastline Coatings",
                                                                            "Greenleaf Adhesives"),
    "textile": ("Softline Textiles", "Weavers Guild Supply"), "glass": ("ClearView Glass", "Lumen Glassworks"),
}
# (SKU type, noun, category); the furniture is made in house (it may have a BOM), the rest resold
FURNITURE = (
    ("CHAIR", "Dining Chair", "Seating"), ("STOOL", "Bar Stool", "Seating"), ("BENCH", "Bench", "Seating"),
    ("SOFA", "Sofa", "Seating"), ("ARMCHAIR", "Armchair", "Seating"), ("TABLE", "Dining Table", "Tables"),
    ("DESK", "Writing Desk", "Tables"), ("SIDETABLE", "Side Table", "Tables"),
    ("SHELF", "Wall Shelf", "Storage"), ("CABINET", "Cabinet", "Storage"), ("BOOKCASE", "Bookcase", "Storage"),
    ("DRESSER", "Dresser", "Bedroom"), ("BED", "Bed Frame", "Bedroom"), ("NIGHTSTAND", "Nightstand", "Bedroom"),
    ("WARDROBE", "Wardrobe", "Bedroom"),
)
RESOLD = (
    ("LAMP", "Table Lamp", "Lighting"), ("RUG", "Area Rug", "Textiles"), ("CUSHION", "Cushion", "Textiles"),
    ("VASE", "Vase", "Decor"), ("CANDLE", "Candle Set", "Decor"), ("THROW", "Throw Blanket", "Textiles"),
    ("PLANTER", "Planter", "Decor"), ("CLOCK", "Wall Clock", "Decor"), ("MIRROR", "Round Mirror", "Decor"),
    ("BASKET", "Storage Basket", "Storage"),
)
STYLES = ("Oak", "Walnut", "Nordic", "Classic", "Loft", "Rustic", "Modern", "Coastal", "Heritage", "Urban",
          "Alpine", "Harbor", "Willow", "Cedar", "Studio", "Luna", "Aspen", "Brook", "Maple", "Orchard")
CATEGORIES = ("Seating", "Tables", "Storage", "Bedroom", "Lighting", "Textiles", "Decor")


def num_products(orders: int) -> int:
    """BOM products: clamp(2 + o/40, 2, 15)."""
    return max(2, min(15, 2 + orders // 40))


def num_materials(orders: int) -> int:
    """Raw materials: clamp(5 + o/25, 5, 30)."""
    return max(5, min(30, 5 + orders // 25))


def num_resold(orders: int) -> int:
    """Store products without a BOM: enough that the product listing always spans more than
    one default page."""
    return max(TRAP_PAGE + 1 - num_products(orders), min(25, 4 + orders // 20))


def num_distractors(orders: int) -> int:
    """Orders of other statuses: round(0.3 o), at least one of each status."""
    return max(len(OTHER_STATUSES), round(0.3 * orders))


def default_extra_lines(orders: int) -> int:
    """Lines of resold products added to paid orders (the fine knob)."""
    return orders // 4


@dataclass(frozen=True)
class Material:
    id: str
    name: str
    unit: str
    supplier: str
    min_stock: int

    @property
    def counted(self) -> bool:
        return self.unit in COUNTED


@dataclass(frozen=True)
class Product:
    sku: str
    name: str
    category: str
    price: Decimal
    created: datetime
    made: bool  # has a BOM


@dataclass(frozen=True)
class Customer:
    email: str
    first_name: str
    last_name: str
    address: dict[str, str]
    created: datetime


@dataclass
class Order:
    status: str
    created: datetime
    customer: str | None  # e-mail; None for a guest
    lines: list[tuple[str, int]] = field(default_factory=list)  # (SKU, quantity)


@dataclass
class Plan:
    materials: list[Material]  # in sheet order (by ID)
    products: list[Product]  # in store order (their ids follow it)
    bom: Bom  # in sheet order
    customers: list[Customer]
    orders: list[Order]
    before: dict[str, Decimal]  # Current Stock now
    after: dict[str, Decimal]  # the balances once the paid orders are deducted: the truth
    as_text: set[str]  # materials whose Current Stock is stored as a numeric string
    store_stock: dict[str, int]  # BOM products' stock_quantity now (stale)

    @property
    def paid(self) -> list[Order]:
        return [o for o in self.orders if o.status == PAID]

    def stock(self) -> dict[str, int]:
        """The expected stock_quantity per BOM product."""
        return producible(self.after, self.bom)


# ---------------------------------------------------------------- drawing

def _measure(rng: random.Random) -> Decimal:
    return Decimal(rng.randint(5, 450)) / 100


def _per_unit(rng: random.Random, material: Material) -> Decimal:
    return Decimal(rng.randint(1, 16)) if material.counted else _measure(rng)


def draw_materials(rng: random.Random, count: int) -> list[Material]:
    picked = rng.sample(MATERIALS, count)
    if all(unit in COUNTED for _, unit, _ in picked):  # the shared-material trap needs a measured one
        picked[0] = rng.choice([m for m in MATERIALS if m[1] not in COUNTED])
    ids = sorted(rng.sample(range(100, 1000), count))
    order = list(range(count))
    rng.shuffle(order)  # the sheet is by ID; names are not in catalogue order
    return [Material(f"RM{ids[k]}", picked[i][0], picked[i][1], rng.choice(SUPPLIERS[picked[i][2]]),
                     rng.randrange(20, 400, 10)) for k, i in enumerate(order)]


def draw_products(rng: random.Random, made: int, resold: int) -> list[Product]:
    """`made` BOM products and `resold` others, in a shuffled store order; the oldest product is
    a BOM product (last in the default listing, newest first)."""
    numbers = rng.sample(range(100, 1000), made + resold)
    names: set[str] = set()
    kinds = [(k, True) for k in rng.sample(FURNITURE * 2, made)] + [
        (rng.choice(FURNITURE) if rng.random() < 0.3 else rng.choice(RESOLD), False) for _ in range(resold)]
    ages = sorted(rng.sample(range(60, 900), made + resold), reverse=True)  # days before now
    products = []
    for n, ((kind, noun, category), has_bom) in enumerate(kinds):
        name = f"{rng.choice(STYLES)} {noun}"
        while name in names:
            name = f"{rng.choice(STYLES)} {noun}"
        names.add(name)
        low, high = (79, 1299) if has_bom or category in ("Seating", "Tables", "Bedroom") else (12, 149)
        price = Decimal(rng.randint(low, high)) + (Decimal("0.99") if rng.random() < 0.5 else Decimal(0))
        created = NOW - timedelta(days=ages[n], hours=rng.randint(0, 23), minutes=rng.randint(0, 59))
        products.append(Product(f"{kind}_{numbers[n]}", name, category, price, created, has_bom))
    rng.shuffle(products)
    return products


def draw_bom(rng: random.Random, made: list[Product], materials: list[Material]) -> Bom:
    bom: Bom = {}
    for product in made:
        chosen = rng.sample(materials, rng.randint(2, min(5, len(materials))))
        bom[product.sku] = [(m.id, _per_unit(rng, m)) for m in chosen]
    return bom


@dataclass(frozen=True)
class Trap:
    """A product limited by a measured material it shares with another product, whose balance
    after the orders is exactly `ratio` × its unit quantity, a quotient that floating-point
    division puts just under the integer."""

    sku: str
    other: str
    material: str
    per_unit: Decimal
    ratio: int


def float_trap(rng: random.Random) -> tuple[Decimal, int]:
    """(unit quantity, integer ratio) whose exact product divided in floating point falls below
    the integer."""
    while True:
        per_unit, ratio = _measure(rng), rng.randint(4, 120)
        if math.floor(float(per_unit * ratio) / float(per_unit)) < ratio:
            return per_unit, ratio


def set_trap(rng: random.Random, bom: Bom, materials: list[Material]) -> Trap:
    """Make one BOM product share a measured material with another one, with the unit quantity of
    `float_trap` (the balance is set later)."""
    sku, other = rng.sample(sorted(bom), 2)
    measured = [m.id for m in materials if not m.counted]
    material = rng.choice(measured)
    per_unit, ratio = float_trap(rng)
    for owner in (sku, other):
        lines = [(m, q) for m, q in bom[owner] if m != material]
        if len(lines) == len(bom[owner]) and len(lines) == 5:
            lines.pop(rng.randrange(5))
        quantity = per_unit if owner == sku else next((q for m, q in bom[owner] if m == material), _measure(rng))
        lines.insert(rng.randint(0, len(lines)), (material, quantity))
        bom[owner] = lines
    return Trap(sku, other, material, per_unit, ratio)


def draw_customers(rng: random.Random, count: int, names: Sequence[tuple[str, str]],
                   streets: Sequence[str], cities: Sequence[tuple[str, str, str]]) -> list[Customer]:
    out, seen = [], set()
    for first, last in names[:count]:
        email = f"{first}.{last}".lower().replace(" ", "").replace("'", "")
        n = 1
        while email + (str(n) if n > 1 else "") in seen:
            n += 1
        email += str(n) if n > 1 else ""
        seen.add(email)
        city, state, postcode = rng.choice(cities)
        street = f"{rng.randint(2, 9800)} {rng.choice(streets)}"
        phone = f"({rng.randint(201, 989)}) 555-{rng.randint(0, 9999):04d}"
        address = {"first_name": first, "last_name": last, "address_1": street, "city": city, "state": state,
                   "postcode": postcode, "country": "US", "email": f"{email}@example.com", "phone": phone}
        out.append(Customer(f"{email}@example.com", first, last, address,
                            NOW - timedelta(days=rng.randint(40, 700), minutes=rng.randint(0, 1439))))
    return out


def _quantity(rng: random.Random) -> int:
    return rng.choices((1, 2, 3, 4, 5), (60, 25, 10, 3, 2))[0]


def _lines(rng: random.Random, made: list[str], resold: list[str]) -> list[tuple[str, int]]:
    count = rng.choices((1, 2, 3, 4), (45, 30, 17, 8))[0]
    skus: list[str] = []
    while len(skus) < count:
        sku = rng.choice(made) if rng.random() < 0.8 else rng.choice(resold)
        if sku not in skus:
            skus.append(sku)
    return [(sku, _quantity(rng)) for sku in skus]


def draw_orders(rng: random.Random, paid: int, others: int, made: list[str], resold: list[str],
                customers: list[Customer]) -> list[Order]:
    """`paid` processing orders and `others` of the other statuses (each status at least once,
    each with a BOM line), placed over the last month; the edge cases forced into paid orders."""
    statuses = [PAID] * paid + list(OTHER_STATUSES) + [rng.choice(OTHER_STATUSES)
                                                        for _ in range(others - len(OTHER_STATUSES))]
    rng.shuffle(statuses)
    stamps = sorted(rng.sample(range(1800, ORDER_DAYS * 86400), len(statuses)))  # seconds before now, newest first
    orders = []
    for status, back in zip(statuses, stamps, strict=True):
        buyer = None if rng.random() < 0.1 else rng.choice(customers).email
        lines = _lines(rng, made, resold)
        if status != PAID and not any(sku in made for sku, _ in lines):
            lines.insert(0, (rng.choice(made), _quantity(rng)))
        orders.append(Order(status, NOW - timedelta(seconds=back), buyer, lines))
    paid_orders = [o for o in orders if o.status == PAID]
    oldest = paid_orders[-1]  # beyond the first page of every listing of the paid orders
    if not any(sku in made for sku, _ in oldest.lines):
        oldest.lines.insert(0, (rng.choice(made), _quantity(rng)))
    mixed, twice = rng.sample(paid_orders, 2)
    mixed.lines = [(rng.choice(made), _quantity(rng)), (rng.choice(resold), _quantity(rng))]
    sku = rng.choice(made)
    twice.lines = [(sku, _quantity(rng)), *([(rng.choice(resold), 1)] if rng.random() < 0.5 else []),
                   (sku, _quantity(rng))]
    return orders


def add_extra_lines(rng: random.Random, orders: list[Order], count: int, resold: list[str]) -> None:
    """The fine knob: `count` more lines of resold products in paid orders."""
    paid = [o for o in orders if o.status == PAID]
    for _ in range(count):
        order = rng.choice(paid)
        order.lines.insert(rng.randint(0, len(order.lines)), (rng.choice(resold), _quantity(rng)))


def consumption(bom: Bom, orders: Sequence[Order]) -> dict[str, Decimal]:
    """Per material, what the lines of `orders` use up."""
    used: dict[str, Decimal] = defaultdict(Decimal)
    for order in orders:
        for sku, quantity in order.lines:
            for material, per_unit in bom.get(sku, ()):
                used[material] += quantity * per_unit
    return dict(used)


def draw_balances(rng: random.Random, materials: list[Material], bom: Bom, trap: Trap) -> dict[str, Decimal]:
    """The balances after the orders: each material about 2-250 times its largest unit quantity;
    the trap's product exactly `ratio` units of its shared material, its other materials more."""
    largest: dict[str, Decimal] = {}
    for lines in bom.values():
        for material, per_unit in lines:
            largest[material] = max(largest.get(material, Decimal(0)), per_unit)
    after = {}
    counted = {m.id for m in materials if m.counted}
    for m in materials:
        amount = largest.get(m.id, Decimal(1)) * Decimal(rng.randint(200, 25000)) / 100
        after[m.id] = amount.quantize(Decimal(1) if m.counted else CENT, rounding=ROUND_HALF_UP)
    after[trap.material] = trap.per_unit * trap.ratio
    for material, per_unit in bom[trap.sku]:
        if material != trap.material and after[material] < (trap.ratio + 1) * per_unit:
            more = Decimal(rng.randint(0, 5000)) / 100
            after[material] = (trap.ratio + 1) * per_unit + (more.to_integral_value() if material in counted else more)
    return after


STREETS = ("Maple Avenue", "Cedar Lane", "Harbor Road", "Mill Street", "Park Drive", "Lakeview Terrace",
           "Orchard Way", "Elm Street", "Station Road", "Ridge Court", "Willow Bend", "Canal Street",
           "Sunset Boulevard", "Hillcrest Road", "Bay Street", "Foundry Lane")
CITIES = (("Portland", "OR", "97205"), ("Austin", "TX", "78701"), ("Denver", "CO", "80202"),
          ("Madison", "WI", "53703"), ("Raleigh", "NC", "27601"), ("Boise", "ID", "83702"),
          ("Savannah", "GA", "31401"), ("Burlington", "VT", "05401"), ("Tucson", "AZ", "85701"),
          ("Ann Arbor", "MI", "48104"), ("Asheville", "NC", "28801"), ("Santa Fe", "NM", "87501"),
          ("Providence", "RI", "02903"), ("Spokane", "WA", "99201"), ("Omaha", "NE", "68102"))


def plan_world(stream: Callable[[str], random.Random], orders: int, extra_lines: int,
               names: Sequence[tuple[str, str]]) -> Plan:
    """One draw of the world from `stream(name)` (named child streams): `orders` paid orders,
    `extra_lines` more lines of resold products; `names` the customers' (first, last) names."""
    rng = stream("catalog")
    materials = draw_materials(rng, num_materials(orders))
    products = draw_products(stream("products"), num_products(orders), num_resold(orders))
    made = [p for p in products if p.made]
    bom = draw_bom(rng, sorted(made, key=lambda p: p.sku), materials)
    trap = set_trap(rng, bom, materials)
    sheet_order = list(bom)
    rng.shuffle(sheet_order)
    bom = {sku: bom[sku] for sku in sheet_order}
    customers = draw_customers(stream("customers"), len(names), names, STREETS, CITIES)
    resold = sorted(p.sku for p in products if not p.made)
    drawn = draw_orders(stream("orders"), orders, num_distractors(orders), sorted(bom), resold, customers)
    add_extra_lines(stream("extra_lines"), drawn, extra_lines, resold)
    rng = stream("balances")
    after = draw_balances(rng, materials, bom, trap)
    used = consumption(bom, [o for o in drawn if o.status == PAID])
    before = {m: after[m] + used.get(m, Decimal(0)) for m in after}
    consumed = sorted(m for m in used if used[m] > 0)
    as_text = {m.id for m in materials if rng.random() < 0.35} | {rng.choice(consumed)}
    was = producible(before, bom)
    store_stock = {sku: max(0, was[sku] - rng.randint(0, 4)) for sku in bom}
    return Plan(materials, products, bom, customers, drawn, before, after, as_text, store_stock)


def problems(plan: Plan) -> list[str]:
    """The guarantees a world must hold, broken (none: the world is usable)."""
    found = []
    made = set(plan.bom)
    paid = plan.paid
    if len(paid) <= TRAP_PAGE or not any(sku in made for sku, _ in paid[-1].lines):
        found.append("no paid order with BOM lines beyond the first default page")
    if not any({sku in made for sku, _ in o.lines} == {True, False} for o in paid):
        found.append("no paid order mixing BOM and other lines")
    if not any(any(n > 1 and sku in made for sku, n in Counter(s for s, _ in o.lines).items()) for o in paid):
        found.append("no paid order with a BOM SKU on two lines")
    for status in OTHER_STATUSES:
        if not any(o.status == status and any(sku in made for sku, _ in o.lines) for o in plan.orders):
            found.append(f"no {status} order with a BOM line")
    users: dict[str, set[str]] = defaultdict(set)
    for sku, lines in plan.bom.items():
        for material, _ in lines:
            users[material].add(sku)
    ratios = {sku: {m: plan.after[m] / q for m, q in lines} for sku, lines in plan.bom.items()}
    limits = {sku: [m for m, r in rs.items() if r == min(rs.values())] for sku, rs in ratios.items()}
    if not any(len(users[m]) > 1 for ms in limits.values() for m in ms):
        found.append("no product limited by a shared material")
    if not any(min(rs.values()) % 1 >= Decimal("0.5") for rs in ratios.values()):
        found.append("no producible quantity with a fraction of .5 or more (rounding would give the floor)")
    exact = [sku for sku, rs in ratios.items() if min(rs.values()) == min(rs.values()).to_integral_value()]
    if not any(math.floor(float(plan.after[m]) / float(q)) < ratios[sku][m]
               for sku in exact for m, q in plan.bom[sku] if m in limits[sku]):
        found.append("no exact integer quotient that floating point puts below the integer")
    if any(v < 0 for v in plan.after.values()):
        found.append("a negative balance")
    if not any(plan.after[m] != plan.before[m] for m in plan.as_text):
        found.append("no numeric-text stock that the orders change")
    if not any(v != v.to_integral_value() for m, v in plan.after.items() if v != plan.before[m]):
        found.append("every changed balance is a whole number")
    if producible(plan.before, plan.bom) == plan.stock():
        found.append("the stock before the orders gives the same quantities")
    if plan.store_stock == plan.stock():
        found.append("the store already shows the right quantities")
    if len(plan.products) <= TRAP_PAGE or not min(plan.products, key=lambda p: p.created).made:
        found.append("no BOM product beyond the first default page of products")
    for what, keys in (("SKU", [p.sku for p in plan.products]), ("product name", [p.name for p in plan.products]),
                       ("material ID", [m.id for m in plan.materials])):
        if len(set(keys)) != len(keys):
            found.append(f"a {what} twice")
    return found
