"""The plan of a filter_low_selling_products world, before anything is written: the catalogue
(categories, products with their ages, 30-day and lifetime sales, prices and statuses), the
subscriber list and the store's customers. Pure: named random streams in, plan out.

The products to move and the near misses come from their own streams; the ordinary products
(`num_normal`, the fine length knob) from another, so the fine count never moves a product that
decides the answer."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

from envs.filter_low_selling_products import CLEARANCE, MAX_SALES, MIN_AGE_DAYS, TRAP_PAGE
from generators.common import PersonNames

NOW = datetime(2025, 10, 1, tzinfo=UTC)
DAY = timedelta(days=1)
CENT, MILLI = Decimal("0.01"), Decimal("0.001")
STREAMS = ("catalog", "selected", "near", "normal", "order", "people")

# category -> (SKU prefix, the kinds of product it sells)
SECTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "Furniture": ("FUR", ("Side Table", "Bookshelf", "Bench", "Stool", "Console Table", "Nightstand",
                          "Coffee Table", "Armchair")),
    "Lighting": ("LGT", ("Table Lamp", "Floor Lamp", "Pendant Light", "Wall Sconce", "Lantern", "Desk Lamp")),
    "Kitchen": ("KIT", ("Serving Bowl", "Cutting Board", "Mug Set", "Tea Kettle", "Salad Servers", "Spice Rack")),
    "Textiles": ("TEX", ("Throw Blanket", "Cushion Cover", "Table Runner", "Area Rug", "Curtain Panel",
                         "Bath Towel")),
    "Decor": ("DEC", ("Vase", "Wall Clock", "Mirror", "Picture Frame", "Candle Holder", "Planter")),
    "Garden": ("GAR", ("Planter Box", "Watering Can", "Bird Feeder", "Garden Stool", "Hose Reel")),
    "Office": ("OFF", ("Desk Organizer", "Letter Tray", "Pen Cup", "Monitor Stand", "Bookends")),
    "Bath": ("BTH", ("Soap Dish", "Bath Mat", "Towel Rack", "Toothbrush Holder", "Laundry Hamper")),
    "Storage": ("STO", ("Storage Basket", "Shoe Rack", "Wall Shelf", "Blanket Chest", "Crate")),
}
STYLES = ("Rustic", "Modern", "Classic", "Nordic", "Vintage", "Minimal", "Coastal", "Urban", "Cozy", "Elegant",
          "Compact", "Deluxe", "Essential", "Handwoven", "Artisan", "Studio", "Heritage", "Breeze", "Summit",
          "Harbor", "Meadow", "Aspen", "Juniper", "Willow", "Cedar", "Atlas", "Luna", "Sierra", "Oslo", "Kyoto")
MATERIALS = ("Oak", "Walnut", "Bamboo", "Linen", "Cotton", "Wool", "Ceramic", "Brass", "Copper", "Marble",
             "Rattan", "Velvet", "Glass", "Stoneware", "Teak", "Jute", "Leather", "Cast Iron", "Pine", "Terracotta")
TAGS = ("bestseller", "eco-friendly", "handmade", "gift-idea", "new-season", "limited-edition")
# Draws of a free product name before numbering one: a section holds at least 3,000 names, and
# a world of 2M tokens about 2,200 products a section, so a free one is found in a few draws.
NAME_TRIES = 200
CUSTOMER_SHARE = 3  # one list entry in this many is also a store customer

# roles of the products to move
OLDEST, AGE_91, TIE_A, TIE_B, SELECTED = "oldest", "age_91", "tie_a", "tie_b", "selected"
# roles of the near misses (never moved) and of the ordinary products
AGE_90, SALES_10, LIFETIME_LOW, DRAFT, PRIVATE = "age_90", "sales_10", "lifetime_low", "draft", "private"
YOUNG, SELLER = "young", "seller"
NEAR_MISSES = (AGE_90, SALES_10, LIFETIME_LOW, DRAFT, PRIVATE)
MIN_YOUNG = TRAP_PAGE  # products younger than the near misses: the first listing page holds no product to move
MIN_NORMAL = MIN_YOUNG + 2


@dataclass(frozen=True)
class Product:
    name: str
    sku: str
    regular: Decimal
    sale: Decimal | None
    created: datetime
    sales_30: int  # the meta value
    lifetime: int  # total_sales
    status: str
    categories: tuple[str, ...]
    tags: tuple[str, ...]
    stock: int
    role: str
    kind: str  # the product noun, e.g. "Side Table"
    material: str

    @property
    def age_days(self) -> int:
        """Full days since date_created."""
        return (NOW - self.created) // DAY

    @property
    def to_move(self) -> bool:
        return self.status == "publish" and self.age_days >= MIN_AGE_DAYS and self.sales_30 < MAX_SALES

    @property
    def promo(self) -> Decimal:
        return self.regular if self.sale is None else self.sale

    @property
    def ratio(self) -> Decimal:
        """Promotional / original in percent, to 3 decimals (half up)."""
        return (self.promo * 100 / self.regular).quantize(MILLI, ROUND_HALF_UP)


@dataclass(frozen=True)
class Person:
    name: str
    email: str
    subscribed: bool | None  # None: a store customer who is not on the list
    customer: bool


@dataclass
class Plan:
    store: str
    domain: str
    admin: Person
    categories: list[str]  # the existing ones, `Clearance` included, in creation order
    products: list[Product]  # in id order
    people: list[Person] = field(default_factory=list)  # the list in file order, then outsiders

    @property
    def to_move(self) -> list[Product]:
        """The products to move, in the CSV's order."""
        return sorted((p for p in self.products if p.to_move), key=lambda p: (p.created, p.ratio, p.name))

    @property
    def subscribers(self) -> list[Person]:
        return [p for p in self.people if p.subscribed is not None]

    def default_listing(self) -> list[Product]:
        """The store's default product order: newest first, then the higher id."""
        ids = {p.sku: i for i, p in enumerate(self.products)}
        return sorted(self.products, key=lambda p: (p.created, ids[p.sku]), reverse=True)


def default_normal(num_low: int) -> int:
    return max(MIN_NORMAL, 2 * num_low)


def subscriber_counts(num_low: int) -> tuple[int, int]:
    """(subscribed, unsubscribed): max(10, round(0.75 n)) and 15% of that (at least 1)."""
    subscribed = max(10, (3 * num_low + 2) // 4)
    return subscribed, max(1, (15 * subscribed + 50) // 100)


class _Catalog:
    """Unique names and SKUs, drawn from whichever stream a group of products uses."""

    def __init__(self, sections: list[str]) -> None:
        self.sections = sections
        self.names: set[str] = set()
        self.skus: set[str] = set()

    def name(self, rng: random.Random, section: str, suffix: str = "") -> tuple[str, str, str]:
        """(name, kind, material) not used yet (case-insensitively). When `NAME_TRIES` draws in a
        row are taken (a section nearly full), the last one is numbered: `... No. 2`, `No. 3` ..."""
        for _ in range(NAME_TRIES):
            kind, material = rng.choice(SECTIONS[section][1]), rng.choice(MATERIALS)
            style = rng.choice(STYLES)
            name = f"{style} {material} {kind}{suffix}"
            if name.casefold() not in self.names:
                self.names.add(name.casefold())
                return name, kind, material
        number = 2
        while (name := f"{style} {material} {kind} No. {number}{suffix}").casefold() in self.names:
            number += 1
        self.names.add(name.casefold())
        return name, kind, material

    def sku(self, rng: random.Random, section: str) -> str:
        while True:
            sku = f"{SECTIONS[section][0]}-{rng.randrange(10000, 100000)}"
            if sku not in self.skus:
                self.skus.add(sku)
                return sku


def _regular(rng: random.Random) -> Decimal:
    cents = rng.choice((Decimal("0"), Decimal("0.50"), Decimal("0.95"), Decimal("0.99")))
    return (Decimal(rng.randint(6, 480)) + cents).quantize(CENT)


def _sale(rng: random.Random, regular: Decimal) -> Decimal:
    """A sale price from 45% to 92% of the regular price, in cents, below it."""
    return min(regular - CENT, (regular * Decimal(rng.randint(450, 920)) / 1000).quantize(CENT, ROUND_HALF_UP))


def _at(rng: random.Random, min_days: int, max_days: int) -> datetime:
    """An instant, to the second, between `max_days` and `min_days` days before now."""
    return NOW - timedelta(seconds=rng.randint(min_days * 86400, max_days * 86400))


def _product(rng: random.Random, catalog: _Catalog, role: str, created: datetime, sales_30: int, lifetime: int,
             *, status: str = "publish", on_sale: bool = True, extra: tuple[str, ...] = (),
             suffix: str = "") -> Product:
    section = rng.choice(catalog.sections)
    name, kind, material = catalog.name(rng, section, suffix)
    regular = _regular(rng)
    categories = [section]
    if rng.random() < 0.25:
        categories.append(rng.choice(catalog.sections))
    categories += extra
    return Product(name=name, sku=catalog.sku(rng, section), regular=regular,
                   sale=_sale(rng, regular) if on_sale else None, created=created, sales_30=sales_30,
                   lifetime=lifetime, status=status, categories=tuple(dict.fromkeys(categories)),
                   tags=tuple(sorted(rng.sample(TAGS, rng.randint(0, 2)))), stock=rng.randint(1, 150), role=role,
                   kind=kind, material=material)


def _low(rng: random.Random) -> tuple[int, int]:
    """(30-day sales, lifetime sales) of a slow seller."""
    sales = rng.randint(0, MAX_SALES - 1)
    return sales, sales + rng.choice((0, rng.randint(1, 9), rng.randint(10, 400)))


def _to_move(rng: random.Random, catalog: _Catalog, n: int) -> list[Product]:
    """The n products to move: the oldest (no sale price, so ratio 100%; a double quote in its
    name), one exactly 91 days old with 9 sales in 30 days but many in its lifetime, two created
    in the same second whose name order is the reverse of their ratio order (one name with a
    comma, in `Clearance` too, the other in two categories), the rest random."""
    out = [_product(rng, catalog, OLDEST, _at(rng, 600, 700), *_low(rng), on_sale=False,
                    suffix=f' {rng.choice((12, 16, 18, 24))}"'),
           _product(rng, catalog, AGE_91, NOW - MIN_AGE_DAYS * DAY, MAX_SALES - 1, rng.randint(40, 900))]
    tied = _at(rng, 120, 590)
    while True:
        a = _product(rng, catalog, TIE_A, tied, *_low(rng), extra=(CLEARANCE,), suffix=", Set of 2")
        b = _product(rng, catalog, TIE_B, tied, *_low(rng))
        if a.ratio != b.ratio and (a.name < b.name) != (a.ratio < b.ratio):
            break
        catalog.names -= {a.name.casefold(), b.name.casefold()}
    second = next(c for c in catalog.sections if c not in b.categories)
    out += [a, replace(b, categories=(*b.categories, second))]
    taken = {p.created for p in out}
    for _ in range(n - len(out)):
        created = _at(rng, 94, 590)
        while created in taken:  # the tie stays the only one, however many products there are
            created = _at(rng, 94, 590)
        taken.add(created)
        out.append(_product(rng, catalog, SELECTED, created, *_low(rng), on_sale=rng.random() < 0.7))
    return out


def _near_misses(rng: random.Random, catalog: _Catalog) -> list[Product]:
    """Products that miss by one rule each: exactly 90 full days old; 10 sales in 30 days; many
    sales in 30 days but few in its lifetime; a draft and a private product otherwise to move."""
    return [_product(rng, catalog, AGE_90, NOW - (MIN_AGE_DAYS - 1) * DAY, *_low(rng)),
            _product(rng, catalog, SALES_10, _at(rng, 94, 590), MAX_SALES, MAX_SALES + rng.randint(0, 300)),
            _product(rng, catalog, LIFETIME_LOW, _at(rng, 94, 590), rng.randint(12, 25), rng.randint(0, MAX_SALES - 1)),
            _product(rng, catalog, DRAFT, _at(rng, 94, 590), *_low(rng), status="draft"),
            _product(rng, catalog, PRIVATE, _at(rng, 94, 590), *_low(rng), status="private")]


def _normal(rng: random.Random, catalog: _Catalog, count: int) -> list[Product]:
    """Ordinary products: young ones (at most 87 days old, any sales) and old good sellers (10
    or more sales in 30 days); the first good seller is in `Clearance` too; a few unpublished."""
    young = max(MIN_YOUNG, count * 2 // 5)
    out = []
    for i in range(count):
        status = "publish" if rng.random() < 0.94 else rng.choice(("draft", "private"))
        if i < young:
            sales = rng.randint(0, 60)
            out.append(_product(rng, catalog, YOUNG, _at(rng, 1, 87), sales, sales + rng.randint(0, 300),
                                status=status, on_sale=rng.random() < 0.5))
        else:
            sales = rng.randint(MAX_SALES, 80)
            extra = (CLEARANCE,) if i == young or rng.random() < 0.1 else ()
            out.append(_product(rng, catalog, SELLER, _at(rng, 94, 700), sales, sales + rng.randint(0, 900),
                                status="publish" if i == young else status, on_sale=rng.random() < 0.5,
                                extra=extra))
    return out


def _people(rng: random.Random, names: PersonNames, domain: str, subscribed: int, unsubscribed: int,
            outsiders: int) -> tuple[Person, list[Person]]:
    """The store admin, then the subscriber list (its unsubscribed entries spread through it) and
    the store customers who are not on it. Names and addresses are unique."""
    seen: set[str] = set()
    people: list[tuple[str, str]] = []
    while len(people) < 1 + subscribed + unsubscribed + outsiders:
        first, last = names.first(), names.last()
        name = f"{first} {last}"
        local = rng.choice((f"{first}.{last}", f"{first[0]}{last}", f"{first}{last[0]}{rng.randint(2, 99)}"))
        host = rng.choice(("gmail.com", "outlook.com", "yahoo.com", "proton.me", "icloud.com", "fastmail.com"))
        address = "".join(c for c in local.lower() if c.isalnum() or c == ".") + f"@{host}"
        if name in seen or address in seen:
            continue
        seen |= {name, address}
        people.append((name, address))
    (admin_name, _), *rest = people
    first, last = admin_name.lower().split(maxsplit=1)
    local = "".join(c for c in f"{first}.{last}" if c.isalnum() or c == ".")
    admin = Person(admin_name, f"{local}@{domain}", None, False)
    flags = [True] * subscribed + [False] * unsubscribed
    rng.shuffle(flags)
    listed = [Person(name, address, flag, rng.randrange(CUSTOMER_SHARE) == 0)
              for (name, address), flag in zip(rest, flags, strict=False)]
    if not any(p.customer and p.subscribed for p in listed):
        listed[flags.index(True)] = replace(listed[flags.index(True)], customer=True)
    out = [Person(name, address, None, True) for name, address in rest[len(flags):]]
    return admin, listed + out


def plan_world(streams: Mapping[str, random.Random], names: PersonNames, num_low: int, num_normal: int,
               store: tuple[str, str]) -> Plan:
    catalog_rng = streams["catalog"]
    sections = sorted(catalog_rng.sample(sorted(SECTIONS), catalog_rng.randint(4, 9)))
    catalog = _Catalog(sections)
    products = _to_move(streams["selected"], catalog, num_low) + _near_misses(streams["near"], catalog)
    products += _normal(streams["normal"], catalog, max(MIN_NORMAL, num_normal))
    streams["order"].shuffle(products)
    subscribed, unsubscribed = subscriber_counts(num_low)
    admin, people = _people(streams["people"], names, store[1], subscribed, unsubscribed, max(3, num_low // 8))
    categories = list(sections)
    categories.insert(streams["catalog"].randint(0, len(categories)), CLEARANCE)
    return Plan(store[0], store[1], admin, categories, products, people)


def missing_edge_cases(plan: Plan) -> list[str]:
    """The guaranteed edge cases a plan lacks (none: it holds them all)."""
    moved = plan.to_move
    by_role = {p.role: p for p in plan.products}
    first_page = {p.sku for p in plan.default_listing()[:TRAP_PAGE]}
    created = [p.created for p in moved]
    times = Counter(created)
    tied = [p for p in moved if times[p.created] > 1]
    cases = {
        "a product to move exactly 91 full days old": any(p.age_days == MIN_AGE_DAYS for p in moved),
        "a published slow seller exactly 90 full days old": by_role[AGE_90].age_days == MIN_AGE_DAYS - 1
        and by_role[AGE_90].sales_30 < MAX_SALES and by_role[AGE_90].status == "publish",
        "a product to move with 9 sales in 30 days": any(p.sales_30 == MAX_SALES - 1 for p in moved),
        "an old published product with exactly 10 sales in 30 days": not by_role[SALES_10].to_move
        and by_role[SALES_10].sales_30 == MAX_SALES and by_role[SALES_10].age_days >= MIN_AGE_DAYS,
        "a product to move with 10+ lifetime sales": any(p.lifetime >= MAX_SALES for p in moved),
        "an old product with 10+ sales in 30 days and under 10 in its lifetime": (
            by_role[LIFETIME_LOW].sales_30 >= MAX_SALES > by_role[LIFETIME_LOW].lifetime),
        "a draft and a private product otherwise to move": all(
            by_role[r].status != "publish" and by_role[r].age_days >= MIN_AGE_DAYS and by_role[r].sales_30 < MAX_SALES
            for r in (DRAFT, PRIVATE)),
        "a product to move without a sale price": any(p.sale is None for p in moved),
        "two products to move created in the same second, with distinct ratios": len(tied) >= 2
        and len({p.ratio for p in tied}) == len(tied),
        "no other date_created tie among the products to move": len(set(created)) == len(created) - len(tied) + 1,
        "ratio order differs from date order": [p.sku for p in moved] != [
            p.sku for p in sorted(moved, key=lambda p: (p.ratio, p.created, p.name))],
        "name order differs from ratio order on the tie": [p.sku for p in sorted(tied, key=lambda p: p.ratio)]
        != [p.sku for p in sorted(tied, key=lambda p: p.name)],
        "a name to move with a comma and one with a double quote": any("," in p.name for p in moved)
        and any('"' in p.name for p in moved),
        "a product to move in Clearance and one in two categories": any(CLEARANCE in p.categories for p in moved)
        and any(len(p.categories) > 1 for p in moved),
        "a product not to move in Clearance": any(CLEARANCE in p.categories and not p.to_move
                                                 for p in plan.products),
        "a product to move beyond the first page of the default listing": any(
            p.sku not in first_page for p in moved),
        "unique names and SKUs": len({p.name.casefold() for p in plan.products}) == len(plan.products)
        == len({p.sku for p in plan.products}),
        "no creation time near the 91-day line but whole days": all(
            (NOW - p.created) % DAY == timedelta(0) for p in plan.products if 88 <= p.age_days <= 93),
        "every product in stock": all(p.stock > 0 for p in plan.products),
        "an unsubscribed entry and a store customer not on the list": any(
            p.subscribed is False for p in plan.people) and any(p.subscribed is None for p in plan.people),
        "unique subscriber addresses": len({p.email for p in plan.people}) == len(plan.people),
    }
    return [case for case, held in cases.items() if not held]
