"""The plan of a woocommerce_stock_alert world, before anything is stored: suppliers, the store's
products (low on stock, restocked, at the threshold, ignored) and the rows the Stock Alert tab
starts with. Pure: named random streams in, plan out.

Every edge case of the task is drawn from its own stream before the plain normal products (the
fine length knob), so their count never moves a supplier, a low product or a sheet row; only the
product ids (a shuffle over all products) and the listing's dates follow the whole catalogue."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from envs.woocommerce_stock_alert import (
    ALERT_HEADERS,
    DEFAULT_PAGE,
    SUPPLIER_ID,
    SUPPLIER_NAME,
    THRESHOLD,
    StockItem,
    alert_row,
    is_low,
)
from generators.common import PersonNames

NOW = datetime(2025, 1, 1, tzinfo=UTC)  # no time-relative logic: the default virtual now
OLDEST = NOW - timedelta(days=900)  # the first product's date_created
STREAMS = ("suppliers", "catalog", "stock", "edge", "sheet", "normal", "ids", "dates", "people")

# product kinds
LOW, NORMAL, AT_THRESHOLD, RESTOCKED, UNMANAGED, NO_THRESHOLD = (
    "low", "normal", "at_threshold", "restocked", "unmanaged", "no_threshold")

CATEGORIES = {
    "ELC": ("Electronics", ("USB-C Hub", "Wireless Mouse", "Bluetooth Speaker", "Power Bank", "HDMI Cable",
                            "Webcam", "Mechanical Keyboard", "Headphones", "Smart Plug", "LED Desk Lamp")),
    "HOM": ("Home & Living", ("Throw Blanket", "Scented Candle", "Wall Clock", "Storage Basket", "Photo Frame",
                              "Table Runner", "Cushion Cover", "Door Mat", "Bath Towel Set", "Ceramic Vase")),
    "KIT": ("Kitchen", ("Chef's Knife", "Cutting Board", "French Press", "Mixing Bowl Set", "Cast Iron Skillet",
                        "Spice Rack", "Measuring Cups", "Tea Kettle", "Salad Spinner", "Silicone Spatula")),
    "OFF": ("Office Supplies", ("Desk Organizer", "Gel Pen Pack", "Spiral Notebook", "Stapler", "Monitor Stand",
                                "Filing Box", "Whiteboard", "Paper Shredder", "Label Maker", "Document Tray")),
    "SPT": ("Sports & Outdoors", ("Yoga Mat", "Water Bottle", "Resistance Bands", "Camping Lantern",
                                  "Hiking Backpack", "Jump Rope", "Foam Roller", "Cycling Gloves", "Trekking Poles",
                                  "Dumbbell Pair")),
    "TOY": ("Toys & Games", ("Puzzle Set", "Building Blocks", "Plush Bear", "Board Game", "Kite",
                             "Remote Control Car", "Card Game", "Art Kit", "Marble Run", "Toy Train Set")),
    "GRD": ("Garden", ("Garden Hose", "Pruning Shears", "Plant Pot", "Watering Can", "Bird Feeder",
                       "Solar Path Light", "Seed Tray", "Garden Gloves", "Compost Bin", "Hose Nozzle")),
    "BTY": ("Beauty & Care", ("Hair Dryer", "Face Serum", "Shaving Kit", "Makeup Brush Set", "Hand Cream",
                              "Nail Care Kit", "Body Lotion", "Lip Balm Pack", "Hair Straightener", "Bath Salts")),
}
BRANDS = ("Aurora", "Birch", "Cobalt", "Driftwood", "Ember", "Fjord", "Granite", "Harbor", "Ivory", "Juniper",
          "Kestrel", "Lumen", "Maple", "Nimbus", "Orchid", "Pioneer")
STYLES = ("Classic", "Compact", "Deluxe", "Eco", "Essential", "Premium", "Pro", "Smart", "Travel", "Ultra",
          "Vintage", "Modern", "Everyday", "Heavy-Duty", "Mini", "Signature")
USES = ("for everyday use", "built to last", "for home and office", "with a two-year warranty",
        "in a gift box", "made from recycled materials", "for small spaces", "with free replacement parts")
SUPPLIER_SUFFIXES = ("Supply Co.", "Wholesale", "Trading", "Industries", "Distribution", "Components",
                     "Imports", "Manufacturing", "Partners", "Goods")
MAIL_BOXES = ("sales", "orders", "purchasing", "supply", "accounts", "wholesale")
MAIL_ENDINGS = (".com", ".net", ".co", ".biz", ".co.uk", ".io")
# Draws of a product name before giving up: a category holds 2,560 names and the largest world
# about 1,200 products per category, so a free one is found in a few draws.
NAME_TRIES = 10_000
STORES = ("Northpeak Outfitters", "Maple and Pine", "Brightside Goods", "Harbor Lane Store", "Cedar Street Shop")


@dataclass(frozen=True)
class Supplier:
    id: int
    name: str
    email: str
    phone: str

    def row(self) -> list[Any]:
        return [self.id, self.name, self.email, self.phone]


@dataclass(frozen=True)
class Product:
    """One product as planned; `id` is set once the catalogue is shuffled."""

    kind: str
    name: str
    sku: str
    category: str
    price: Decimal
    manage_stock: bool
    stock: int | None
    meta: dict[str, Any]
    description: str
    low_stock_amount: int | None = None
    created: datetime = NOW
    id: int = 0

    def item(self) -> StockItem:
        return StockItem(self.id, self.name, self.sku, self.manage_stock, self.stock, self.meta)


@dataclass(frozen=True)
class Counts:
    """How many of each role a world holds (fixed ratios of the primary count n)."""

    low: int
    normal: int
    suppliers: int
    at_threshold: int
    unmanaged: int
    no_threshold: int

    @classmethod
    def of(cls, num_low: int, num_normal: int) -> Counts:
        extra = 1 + num_low // 25
        return cls(num_low, num_normal, min(max(math.ceil(num_low / 4), 3), 40), extra, extra, extra)


def default_normal(num_low: int) -> int:
    return round(2.5 * num_low)


@dataclass
class Plan:
    store: str  # the store's name
    admin: tuple[str, str]  # (name, address)
    manager: tuple[str, str]
    suppliers: list[Supplier]  # in the Suppliers tab's order
    products: list[Product]  # by id
    sheet_rows: list[dict[str, Any]]  # the Stock Alert tab's rows at the start, by header
    stale: list[str] = field(default_factory=list)  # SKUs of the restocked products with a row
    kept: str = ""  # SKU of the low product whose row is already there

    @property
    def domain(self) -> str:
        """The store's mail domain."""
        return store_domain(self.store)

    @property
    def contacts(self) -> dict[int, str]:
        return {s.id: s.email for s in self.suppliers}

    def expected_rows(self) -> list[dict[str, Any]]:
        """The ground truth: the rows the Stock Alert tab must hold, by SKU."""
        return sorted((alert_row(p.item(), self.contacts) for p in self.products if is_low(p.item())),
                      key=lambda r: str(r["SKU"]))


def _slug(name: str) -> str:
    return "".join(c for c in name.lower() if c.isalnum())


def store_domain(store: str) -> str:
    return "-".join(_slug(word) for word in store.split()) + ".com"


def draw_suppliers(rng: random.Random, names: PersonNames, count: int) -> list[Supplier]:
    """`count` suppliers with unique ids and e-mails, two of them (different ids) sharing a
    name; the Suppliers tab's order is random."""
    ids = rng.sample(range(1001, 9999), count)
    labels: list[str] = []
    while len(labels) < count - 1:
        label = f"{names.last()} {rng.choice(SUPPLIER_SUFFIXES)}"
        if label not in labels:
            labels.append(label)
    labels.append(labels[0])  # the twin: same name, another id and contact
    emails: set[str] = set()
    suppliers = []
    for sid, label in zip(ids, labels, strict=True):
        email = ""
        while not email or email in emails:
            email = f"{rng.choice(MAIL_BOXES)}@{_slug(label)}{rng.choice(MAIL_ENDINGS)}"
        emails.add(email)
        suppliers.append(Supplier(sid, label, email, f"+1-{rng.randint(201, 989)}-555-{rng.randint(1000, 9999)}"))
    rng.shuffle(suppliers)
    return suppliers


class Catalog:
    """Unique product names and SKUs, drawn from one stream."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.names: set[str] = set()
        self.numbers: set[int] = set()

    def draw(self) -> tuple[str, str, str, Decimal, str]:
        """(name, SKU, category, regular price, description) of a new product."""
        rng = self.rng
        code = rng.choice(sorted(CATEGORIES))
        category, nouns = CATEGORIES[code]
        for _ in range(NAME_TRIES):
            name = f"{rng.choice(BRANDS)} {rng.choice(STYLES)} {rng.choice(nouns)}"
            if name not in self.names:
                break
        else:
            raise ValueError(f"no unused product name left in {category}: too many products for the catalogue")
        self.names.add(name)
        number = rng.randint(10000, 99999)
        while number in self.numbers:
            number = rng.randint(10000, 99999)
        self.numbers.add(number)
        price = Decimal(rng.randint(4, 320)) + Decimal(rng.choice(("0.99", "0.49", "0.00", "0.95")))
        return name, f"{code}-{number:05d}", category, price, f"{name.split(' ', 1)[1]} {rng.choice(USES)}."


def _product(catalog: Catalog, kind: str, supplier: Supplier, threshold: int | None, stock: int | None,
             manage_stock: bool = True, low_stock_amount: int | None = None) -> Product:
    name, sku, category, price, description = catalog.draw()
    meta: dict[str, Any] = {} if threshold is None else {THRESHOLD: threshold}
    meta |= {SUPPLIER_NAME: supplier.name, SUPPLIER_ID: supplier.id}
    return Product(kind, name, sku, category, price, manage_stock, stock if manage_stock else None, meta,
                   description, low_stock_amount)


def draw_low(rng: random.Random, catalog: Catalog, suppliers: list[Supplier], count: int) -> list[Product]:
    """The low-stock products: one at threshold - 1, one at 0, the rest anywhere below; the two
    suppliers that share a name supply the last two."""
    twins = [s for s in suppliers if sum(t.name == s.name for t in suppliers) > 1]
    out = []
    for n in range(count):
        threshold = rng.randint(5, 40)
        stock = threshold - 1 if n == 0 else 0 if n == 1 else rng.randint(0, threshold - 1)
        supplier = twins[n - count + 2] if n >= count - 2 else rng.choice(suppliers)
        out.append(_product(catalog, LOW, supplier, threshold, stock))
    return out


def draw_edges(rng: random.Random, catalog: Catalog, suppliers: list[Supplier], counts: Counts,
               restocked: int) -> list[Product]:
    """The near misses: stock exactly at the threshold, restocked products (their sheet rows are
    stale), low-looking products that do not manage stock or have no threshold."""
    out = []
    for _ in range(counts.at_threshold):
        threshold = rng.randint(1, 40)
        out.append(_product(catalog, AT_THRESHOLD, rng.choice(suppliers), threshold, threshold))
    for _ in range(restocked):
        threshold = rng.randint(5, 40)
        out.append(_product(catalog, RESTOCKED, rng.choice(suppliers), threshold,
                            threshold + rng.randint(0, 3) * rng.randint(5, 60)))
    for _ in range(counts.unmanaged):
        out.append(_product(catalog, UNMANAGED, rng.choice(suppliers), rng.randint(5, 40), None, manage_stock=False))
    for _ in range(counts.no_threshold):
        out.append(_product(catalog, NO_THRESHOLD, rng.choice(suppliers), None, rng.randint(0, 4),
                            low_stock_amount=rng.randint(5, 15)))
    return out


def draw_normal(rng: random.Random, catalog: Catalog, suppliers: list[Supplier], count: int) -> list[Product]:
    """Products comfortably above their threshold."""
    out = []
    for _ in range(count):
        threshold = rng.randint(5, 40)
        out.append(_product(catalog, NORMAL, rng.choice(suppliers), threshold,
                            threshold + rng.randint(1, 250)))
    return out


def _listing(products: list[Product]) -> list[Product]:
    """The store's default product listing order: newest first, then higher id first."""
    return sorted(products, key=lambda p: (p.created, p.id), reverse=True)


def place(ids: random.Random, dates: random.Random, products: list[Product]) -> list[Product]:
    """Shuffle the catalogue into ids (low products never in SKU order by id) and date it, with
    a low product beyond the first page of the default listing; returns the products by id."""
    order = list(products)
    ids.shuffle(order)
    low = [n for n, p in enumerate(order) if p.kind == LOW]
    if sorted(low, key=lambda n: order[n].sku) == low:  # ids would follow the SKUs: swap two
        order[low[0]], order[low[1]] = order[low[1]], order[low[0]]
    span = int((NOW - OLDEST).total_seconds()) - 86400
    dated = [replace(p, id=n, created=OLDEST + timedelta(seconds=dates.randrange(span)))
             for n, p in enumerate(order, start=1)]
    first = _listing(dated)[:DEFAULT_PAGE]
    if all(p.kind != LOW or p in first for p in dated):
        mover = dates.choice([p for p in first if p.kind == LOW])
        other = dates.choice([p for p in _listing(dated)[DEFAULT_PAGE:] if p.kind != LOW])
        dated[mover.id - 1], dated[other.id - 1] = (replace(mover, created=other.created),
                                                    replace(other, created=mover.created))
    return dated


def _row(product: Product, contacts: dict[int, str], stock: int | None = None) -> dict[str, Any]:
    row = alert_row(product.item(), contacts)
    return row if stock is None else {**row, "Current Stock": stock}


def sheet_rows(rng: random.Random, products: list[Product], contacts: dict[int, str]) -> tuple[
        list[dict[str, Any]], list[str], str]:
    """The Stock Alert tab at the start: a stale row per restocked product (the low stock it
    had), one row of a low product that is still right, in random order."""
    by_sku = sorted(products, key=lambda p: p.sku)  # not by id: the ids follow the whole catalogue
    stale = [p for p in by_sku if p.kind == RESTOCKED]
    rows = [_row(p, contacts, rng.randint(0, int(p.meta[THRESHOLD]) - 1)) for p in stale]
    kept = rng.choice([p for p in by_sku if p.kind == LOW])
    rows.append(_row(kept, contacts))
    rng.shuffle(rows)
    assert all(list(r) == list(ALERT_HEADERS) for r in rows)
    return rows, [p.sku for p in stale], kept.sku


def plan_world(streams: dict[str, random.Random], names: PersonNames, counts: Counts) -> Plan:
    people = streams["people"]
    store = people.choice(STORES)
    manager = names.full()
    domain = store_domain(store)
    admin = ("Store Admin", f"admin@{domain}")
    manager_address = f"{'.'.join(_slug(part) for part in manager.split())}@{domain}"
    suppliers = draw_suppliers(streams["suppliers"], names, counts.suppliers)
    catalog = Catalog(streams["catalog"])
    low = draw_low(streams["stock"], catalog, suppliers, counts.low)
    restocked = streams["sheet"].randint(1, 3)
    edges = draw_edges(streams["edge"], catalog, suppliers, counts, restocked)
    normal = draw_normal(streams["normal"], catalog, suppliers, counts.normal)
    products = place(streams["ids"], streams["dates"], [*low, *edges, *normal])
    contacts = {s.id: s.email for s in suppliers}
    rows, stale, kept = sheet_rows(streams["sheet"], products, contacts)
    return Plan(store, admin, (manager, manager_address), suppliers, products, rows, stale, kept)


def problems(plan: Plan) -> list[str]:
    """What keeps a plan from holding every guarantee of the task (none: it holds them)."""
    found = []
    products, low = plan.products, [p for p in plan.products if is_low(p.item())]
    if len({p.sku for p in products}) != len(products) or len({p.name for p in products}) != len(products):
        found.append("SKUs or names repeat")
    if [p.id for p in products] != list(range(1, len(products) + 1)):
        found.append("ids are not 1..n in order")
    if {p.sku for p in low} != {p.sku for p in products if p.kind == LOW}:
        found.append("the low products are not exactly those planned low")
    thresholds = [(p.stock, int(p.meta[THRESHOLD])) for p in low]
    if not any(s == t - 1 for s, t in thresholds) or not any(s == 0 for s, _ in thresholds):
        found.append("no low product at threshold - 1 or at 0")
    if not any(p.kind == AT_THRESHOLD and p.stock == p.meta[THRESHOLD] >= 1 for p in products):
        found.append("no product exactly at its threshold")
    if not any(p.kind == UNMANAGED for p in products) or not any(p.kind == NO_THRESHOLD for p in products):
        found.append("no unmanaged or threshold-less product")
    if not 1 <= len(plan.stale) <= 3 or not plan.kept:
        found.append("the sheet lacks stale rows or the valid row")
    ids = [s.id for s in plan.suppliers]
    names = [s.name for s in plan.suppliers]
    twins = {s.id for s in plan.suppliers if names.count(s.name) > 1}
    if len(set(ids)) != len(ids) or len(twins) != 2 or len({s.email for s in plan.suppliers}) != len(ids):
        found.append("supplier ids or contacts repeat, or not exactly two suppliers share a name")
    if not twins <= {int(p.meta[SUPPLIER_ID]) for p in low}:
        found.append("a supplier sharing its name supplies no low product")
    by_id = [p.sku for p in sorted(low, key=lambda p: p.id)]
    if by_id == sorted(by_id):
        found.append("low products in SKU order by id")
    first_page = {p.id for p in _listing(products)[:DEFAULT_PAGE]}
    if len(products) <= DEFAULT_PAGE or all(p.id in first_page for p in low):
        found.append("no low product beyond the first page of the default listing")
    return found
