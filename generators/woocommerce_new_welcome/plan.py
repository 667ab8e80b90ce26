"""The plan of a woocommerce_new_welcome world, as plain data: the store's customers and their
orders, and the CRM rows already synced. Pure: named random streams in, plan out.

Customers come in kinds: new (exactly one completed order, completed within the last 7 days;
some also hold orders of other statuses), once (one completed order, completed before the
window), repeat (two or more completed orders), cancelled (only cancelled orders) and idle (no
order). Guarantees, at every size: a new customer completed 6 d 23 h ago and one created 9 d ago
but completed 3 d ago; a once customer completed 7 d 1 h ago; a repeat customer with one old
completed order and one completed in the window; a new customer with a pending order; a
customer with only cancelled orders; repeat customers in the CRM, and one with an order in the
window who is not; a new customer's order beyond the first page of the default order listing
and a new customer beyond the first page of the default customer listing. Orders and customers
are numbered in time order, as a store numbers them."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from decimal import Decimal

from faker import Faker

from envs.woocommerce_new_welcome import COMPLETED, NOW, TRAP_PAGE, WINDOW
from generators.common import PersonNames, seeded_faker
from loca.core.rng import WorldRng

START = NOW - WINDOW
NEW, ONCE, REPEAT, CANCELLED, IDLE = "new", "once", "repeat", "cancelled", "idle"
HOUR, DAY = timedelta(hours=1), timedelta(days=1)
PRODUCTS = (("Ceramic Pour-Over Set", "KIT-POUR", "38.00"), ("Stoneware Mug", "MUG-STONE", "14.50"),
            ("Linen Apron", "APR-LIN", "29.00"), ("Cast Iron Skillet 10in", "PAN-CI10", "44.95"),
            ("Bamboo Cutting Board", "BRD-BAM", "22.00"), ("Chef Knife 8in", "KNF-CHEF8", "89.00"),
            ("Glass Storage Jars (3)", "JAR-GL3", "24.75"), ("Cotton Tea Towels (4)", "TWL-CT4", "18.00"),
            ("Olive Wood Spoon Set", "SPN-OLV", "27.50"), ("Enamel Dutch Oven", "POT-DUTCH", "129.00"),
            ("French Press 1L", "PRS-FR1", "34.00"), ("Loose Leaf Tea Sampler", "TEA-SMP", "19.95"),
            ("Hand-thrown Bowl", "BWL-HT", "32.00"), ("Copper Measuring Cups", "CUP-CPR", "36.50"),
            ("Salt Cellar", "SLT-CEL", "16.00"), ("Knife Sharpener", "SHP-WET", "49.00"),
            ("Silicone Baking Mat", "MAT-SIL", "12.99"), ("Herb Scissors", "SCS-HRB", "15.25"),
            ("Espresso Cups (2)", "CUP-ESP2", "21.00"), ("Walnut Serving Tray", "TRY-WAL", "58.00"))
SHIPPING = (Decimal("0.00"), Decimal("4.99"), Decimal("9.99"))
EMAIL_DOMAINS = ("gmail.com", "yahoo.com", "outlook.com", "icloud.com", "hotmail.com", "proton.me", "aol.com")
PHONE_FORMATS = ("({a}) {b}-{c}", "{a}-{b}-{c}", "{a}.{b}.{c}", "+1 {a} {b} {c}")
EXTRA_STATUS = ((COMPLETED, 0.8), ("cancelled", 0.1), ("refunded", 0.1))  # a repeat customer's later orders
RECENT_REPEAT_SHARE = 0.15  # repeat customers whose latest order was completed in the window
IN_CRM_SHARE = 0.75  # once customers synced to the CRM
WELCOMED_SHARE = 0.85  # CRM rows whose welcome e-mail was sent


@dataclass(frozen=True)
class Customer:
    first: str
    last: str
    email: str
    phone: str
    street: str
    city: str
    state: str
    postcode: str
    kind: str
    created: datetime

    @property
    def full_name(self) -> str:
        return f"{self.first} {self.last}"


@dataclass(frozen=True)
class Order:
    customer: int  # index into Plan.customers (the WooCommerce id less one)
    status: str
    created: datetime
    completed: datetime | None
    items: tuple[tuple[str, int], ...]  # (SKU, quantity)
    shipping: Decimal

    @property
    def total(self) -> Decimal:
        prices = {sku: Decimal(price) for _, sku, price in PRODUCTS}
        return sum((prices[sku] * qty for sku, qty in self.items), self.shipping)


@dataclass(frozen=True)
class CrmRow:
    id: int
    customer: int  # index into Plan.customers
    first_order: date
    welcomed: date | None  # welcome_email_date; None: never sent
    synced: date


@dataclass(frozen=True)
class Plan:
    store_name: str
    domain: str
    customers: tuple[Customer, ...]  # by WooCommerce id (index + 1)
    orders: tuple[Order, ...]  # by order id (index + 1)
    crm: tuple[CrmRow, ...]  # by id
    subject: int  # which template subject

    def completed_by_customer(self) -> dict[int, list[int]]:
        """Customer index -> the indexes of their completed orders."""
        out: dict[int, list[int]] = {}
        for n, order in enumerate(self.orders):
            if order.status == COMPLETED:
                out.setdefault(order.customer, []).append(n)
        return out

    def new_customers(self) -> list[tuple[int, int]]:
        """(customer index, order index) of every new customer, by customer: exactly one
        completed order, completed after the window's start."""
        return [(c, orders[0]) for c, orders in sorted(self.completed_by_customer().items())
                if len(orders) == 1 and (done := self.orders[orders[0]].completed) is not None and done > START]


@dataclass(frozen=True)
class Counts:
    new: int
    out_of_window: int  # completed orders of once customers
    incomplete: int  # orders placed in the window and not completed
    repeat_orders: int  # the rest, all of repeat customers
    idle: int

    @property
    def repeat_customers(self) -> int:
        return max(2, self.repeat_orders // 3)


def half_up(value: float) -> int:
    return math.floor(value + 0.5)


def counts(total_orders: int, idle: int) -> Counts:
    new = max(5, half_up(total_orders / 6))
    side = max(2, half_up(total_orders / 40))
    rest = total_orders - new - 2 * side
    if rest < 4:
        raise ValueError(f"{total_orders} orders leave too few for two repeat customers")
    return Counts(new, side, side, rest, idle)


def default_idle(total_orders: int) -> int:
    return half_up(total_orders / 20)



def _between(rng: random.Random, start: datetime, end: datetime) -> datetime:
    """An instant in [start, end], to the second."""
    return start + timedelta(seconds=rng.randint(0, max(0, int((end - start).total_seconds()))))


def _lead(rng: random.Random, shortest: timedelta, longest: timedelta) -> timedelta:
    """A span from `shortest` to `longest`, to the second."""
    return _between(rng, NOW, NOW + longest - shortest) - NOW + shortest


class _Orders:
    """Order drafts of one world, made with one stream; customers are indexes into the kind
    blocks of `_people` until the plan numbers them."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.made: list[Order] = []

    def add(self, customer: int, status: str, created: datetime, completed: datetime | None = None) -> None:
        self.made.append(Order(customer, status, created, completed, _items(self.rng), self.rng.choice(SHIPPING)))

    def completed(self, customer: int, completed: datetime, shortest: timedelta, longest: timedelta) -> None:
        """A completed order, placed between `shortest` and `longest` before its completion."""
        self.add(customer, COMPLETED, completed - _lead(self.rng, shortest, longest), completed)


def _items(rng: random.Random) -> tuple[tuple[str, int], ...]:
    skus = rng.sample([sku for _, sku, _ in PRODUCTS], rng.choices((1, 2, 3), (0.5, 0.35, 0.15))[0])
    return tuple((sku, rng.choice((1, 1, 1, 2))) for sku in skus)


@dataclass(frozen=True)
class Blocks:
    """Where each kind's customers start in the list of customers before numbering."""

    new: int
    once: int
    repeat: int
    cancelled: int
    idle: int
    end: int


# Incomplete orders placed in the window after the first two: (status, kind of customer), in turn;
# a `cancelled` customer is a new one with only that order.
INCOMPLETE_CYCLE = (("processing", ONCE), ("on-hold", NEW), ("cancelled", CANCELLED), ("processing", REPEAT),
                    ("failed", NEW))


def _blocks(c: Counts) -> Blocks:
    cancelled = 1 + sum(INCOMPLETE_CYCLE[k % len(INCOMPLETE_CYCLE)][1] == CANCELLED for k in range(c.incomplete - 2))
    starts = [0]
    for size in (c.new, c.out_of_window, c.repeat_customers, cancelled, c.idle):
        starts.append(starts[-1] + size)
    return Blocks(*starts)


def _new_orders(made: _Orders, rng: random.Random, b: Blocks) -> None:
    """One completed order per new customer: the 6 d 23 h near miss, the one placed 9 d ago and
    completed 3 d ago, then completions spread over the window (placed at most 36 h before)."""
    made.completed(b.new, START + HOUR, 2 * HOUR, 20 * HOUR)
    placed = NOW - 9 * DAY + timedelta(minutes=rng.randint(0, 90))
    made.add(b.new + 1, COMPLETED, placed, NOW - 3 * DAY + timedelta(minutes=rng.randint(-60, 60)))
    for c in range(b.new + 2, b.once):
        made.completed(c, _between(rng, START + 2 * HOUR, NOW - HOUR), timedelta(minutes=30), 36 * HOUR)


def _once_orders(made: _Orders, rng: random.Random, b: Blocks) -> None:
    """One completed order per once customer, completed before the window: 7 d 1 h ago, then
    older ones."""
    made.completed(b.once, START - HOUR, HOUR, 2 * DAY)
    for c in range(b.once + 1, b.repeat):
        made.completed(c, _between(rng, NOW - 150 * DAY, START - DAY), HOUR, 4 * DAY)


def _recent_counts(rng: random.Random, per: list[int], wanted: int) -> list[int]:
    """How many of each repeat customer's orders were completed in the window: the first has
    one; `wanted` more go to the others (each keeps an older completed order)."""
    recent = [1] + [0] * (len(per) - 1)
    others = list(range(1, len(per)))
    rng.shuffle(others)
    left = wanted
    while left:
        room = [k for k in others if recent[k] < per[k] - 1]
        if not room:
            raise ValueError("too few repeat orders for the orders wanted in the window")
        for k in room[:left]:
            recent[k] += 1
            left -= 1
    return recent


def _repeat_orders(made: _Orders, rng: random.Random, b: Blocks, c: Counts) -> list[int]:
    """Every repeat customer's orders: the first has one old completed order and one completed
    in the window; the others at least two, the rest of the orders spread over them, older ones
    completed (a few later ones cancelled or refunded) and enough completed in the window for the
    pagination trap. Returns the customers with an order in the window."""
    customers = c.repeat_customers
    per = [2] * customers
    for _ in range(c.repeat_orders - 2 * customers):
        per[rng.randrange(1, customers)] += 1
    wanted = max(1, TRAP_PAGE - c.new - c.incomplete, half_up(RECENT_REPEAT_SHARE * customers))
    recent = _recent_counts(rng, per, wanted)
    statuses, weights = [s for s, _ in EXTRA_STATUS], [w for _, w in EXTRA_STATUS]
    for k in range(customers):
        placed = _between(rng, NOW - 720 * DAY, NOW - 90 * DAY)
        for n in range(per[k] - recent[k]):
            status = COMPLETED if n < 2 else rng.choices(statuses, weights)[0]
            done = placed + _lead(rng, HOUR, 4 * DAY)
            made.add(b.repeat + k, status, placed, done if status == COMPLETED else None)
            placed = min(done + _lead(rng, DAY, 60 * DAY), NOW - 20 * DAY)
        for _ in range(recent[k]):
            made.completed(b.repeat + k, _between(rng, START + 2 * HOUR, NOW - HOUR), HOUR, DAY)
    return [b.repeat + k for k in range(customers) if recent[k]]


def _incomplete_orders(made: _Orders, rng: random.Random, b: Blocks, c: Counts) -> None:
    """Orders placed in the window and not completed: a new customer's pending order, a first
    cancelled-only customer's order, then `INCOMPLETE_CYCLE` in turn."""
    pool = {NEW: range(b.new, b.once), ONCE: range(b.once, b.repeat), REPEAT: range(b.repeat, b.cancelled)}
    cancelled = iter(range(b.cancelled, b.idle))
    plan = [("pending", b.new + 2), ("cancelled", next(cancelled))]
    for k in range(c.incomplete - 2):
        status, kind = INCOMPLETE_CYCLE[k % len(INCOMPLETE_CYCLE)]
        plan.append((status, next(cancelled) if kind == CANCELLED else rng.choice(pool[kind])))
    for status, customer in plan:
        made.add(customer, status, _between(rng, START + HOUR, NOW - timedelta(minutes=30)))


def _identities(names: PersonNames, rng: random.Random, places: list[tuple[str, str, str, str]],
                count: int) -> list[tuple[str, str, str, str, tuple[str, str, str, str]]]:
    """(first, last, e-mail, phone, address) of `count` people; e-mails and full names unique."""
    out: list[tuple[str, str, str, str, tuple[str, str, str, str]]] = []
    emails: set[str] = set()
    full: set[str] = set()
    while len(out) < count:
        first, last = names.first(), names.last()
        number = rng.randint(1, 99)
        local = rng.choice((f"{first}.{last}", f"{first}{last}", f"{first[0]}{last}", f"{first}.{last}{number}"))
        email = f"{local}@{rng.choice(EMAIL_DOMAINS)}".lower().replace(" ", "").replace("'", "")
        name = f"{first} {last}"
        if email in emails or name.lower() in full or not (name + email).isascii():
            continue
        emails.add(email)
        full.add(name.lower())
        phone = rng.choice(PHONE_FORMATS).format(a=rng.randint(201, 989), b=555, c=f"{rng.randint(100, 199):04d}")
        out.append((first, last, email, phone, rng.choice(places)))
    return out


def _customer_created(orders: list[Order], rng: random.Random, count: int) -> list[datetime]:
    """When each customer registered: before their first order, or any time for the idle."""
    first: dict[int, datetime] = {}
    for o in orders:
        first[o.customer] = min(o.created, first.get(o.customer, o.created))
    return [first[c] - _lead(rng, HOUR, 60 * DAY) if c in first else NOW - _lead(rng, DAY, 700 * DAY)
            for c in range(count)]


def _numbered(customers: list[Customer], orders: list[Order]) -> tuple[list[Customer], list[Order], dict[int, int]]:
    """Customers by registration and orders by placement, as the store numbers them, and each
    customer's new index by its old one."""
    order = sorted(range(len(customers)), key=lambda c: (customers[c].created, c))
    index = {old: new for new, old in enumerate(order)}
    placed = sorted(range(len(orders)), key=lambda n: (orders[n].created, n))
    return ([customers[c] for c in order],
            [replace(orders[n], customer=index[orders[n].customer]) for n in placed], index)


def name_order(customers: tuple[Customer, ...] | list[Customer]) -> list[int]:
    """Customer indexes in the default customer listing's order (name, case-insensitive, then id)."""
    return sorted(range(len(customers)), key=lambda c: (customers[c].full_name.lower(), c))


def _name_trap(customers: list[Customer]) -> list[Customer]:
    """A new customer beyond the first page of the default customer listing when it has more
    than one: if none is, the last-listed customer and the last-listed new customer swap
    identities."""
    listed = name_order(customers)
    if len(listed) <= TRAP_PAGE or any(customers[c].kind == NEW for c in listed[TRAP_PAGE:]):
        return customers
    new = next(c for c in reversed(listed) if customers[c].kind == NEW)
    last = listed[-1]
    a, b = customers[new], customers[last]
    out = list(customers)
    out[new] = replace(b, kind=a.kind, created=a.created)
    out[last] = replace(a, kind=b.kind, created=b.created)
    return out


def _crm(rng: random.Random, customers: list[Customer], orders: list[Order], unsynced: int) -> list[CrmRow]:
    """The rows synced before: every repeat customer but `unsynced`, and most once customers
    (not the one completed 7 d 1 h ago), numbered by first order."""
    first_done: dict[int, datetime] = {}
    for o in orders:
        if o.completed is not None:
            first_done[o.customer] = min(o.completed, first_done.get(o.customer, o.completed))
    chosen = [c for c, person in enumerate(customers) if
              (person.kind == REPEAT and c != unsynced) or
              (person.kind == ONCE and first_done[c] < START - DAY and rng.random() < IN_CRM_SHARE)]
    drafts = []
    for c in chosen:
        first = first_done[c].date()
        synced = first + timedelta(days=rng.randint(0, 2))
        drafts.append((first, synced, c, synced if rng.random() < WELCOMED_SHARE else None))
    drafts.sort(key=lambda d: (d[0], d[1], d[2]))
    return [CrmRow(n, c, first, welcomed, synced) for n, (first, synced, c, welcomed) in enumerate(drafts, start=1)]


STORE_WORDS = (("Copper", "Juniper", "Saltbox", "Harbor", "Maple Lane", "Blue Kettle", "Fernwood", "Tidewater",
                "Oak & Ember", "Little Pine"),
               ("Kitchen Co.", "Home Goods", "Pantry", "Cookware", "Table & Hearth", "Mercantile"))
SUBJECTS = ("Welcome to [Store Name]! Thanks for your first order",
            "Welcome to the [Store Name] family",
            "Thank you for your first order at [Store Name]")
PLACES = 40  # addresses are drawn from a pool this large (Faker is slow per draw)


def _places(fake: Faker) -> list[tuple[str, str, str, str]]:
    return [(fake.street_name(), fake.city(), fake.state_abbr(), fake.postcode()) for _ in range(PLACES)]


def _store(rng: random.Random) -> tuple[str, str]:
    """The store's name and its e-mail domain."""
    name = f"{rng.choice(STORE_WORDS[0])} {rng.choice(STORE_WORDS[1])}"
    slug = "".join(ch for ch in name.lower() if ch.isalnum())
    return name, f"{slug}.com"


def _orders(rngs: WorldRng, b: Blocks, c: Counts) -> tuple[list[Order], list[int]]:
    """Every order (customers as block indexes) and the repeat customers with an order in the
    window."""
    made = _Orders(rngs.stream("items"))
    timing = rngs.stream("timing")
    _new_orders(made, timing, b)
    _once_orders(made, timing, b)
    recent = _repeat_orders(made, rngs.stream("repeat"), b, c)
    _incomplete_orders(made, rngs.stream("incomplete"), b, c)
    return made.made, recent


def plan_world(rngs: WorldRng, total_orders: int, idle: int) -> Plan:
    c = counts(total_orders, idle)
    b = _blocks(c)
    orders, recent = _orders(rngs, b, c)
    if len(orders) != total_orders:
        raise AssertionError(f"planned {len(orders)} orders, not {total_orders}")
    kinds = [kind for kind, start, end in ((NEW, b.new, b.once), (ONCE, b.once, b.repeat),
                                            (REPEAT, b.repeat, b.cancelled), (CANCELLED, b.cancelled, b.idle),
                                            (IDLE, b.idle, b.end)) for _ in range(start, end)]
    names = PersonNames(seeded_faker(rngs.stream("faker")), rngs.stream("names"))
    places = _places(seeded_faker(rngs.stream("faker_places")))
    found = _identities(names, rngs.stream("identities"), places, b.end)
    created = _customer_created(orders, rngs.stream("registered"), b.end)
    drafts = [Customer(first, last, email, phone, *place, kind=kind, created=when)
              for (first, last, email, phone, place), kind, when in zip(found, kinds, created, strict=True)]
    unsynced = rngs.stream("crm").choice([r for r in recent if r != b.repeat])
    customers, numbered, index = _numbered(drafts, orders)
    customers = _name_trap(customers)
    crm = _crm(rngs.stream("crm_rows"), customers, numbered, index[unsynced])
    store_name, domain = _store(rngs.stream("store"))
    plan = Plan(store_name, domain, tuple(customers), tuple(numbered), tuple(crm),
                rngs.stream("template").randrange(len(SUBJECTS)))
    broken = edge_cases(plan)
    if broken:
        raise AssertionError(f"the plan of {total_orders} orders breaks: {broken}")
    return plan


def listing_order(orders: tuple[Order, ...] | list[Order]) -> list[int]:
    """Order indexes in the default order listing's order (newest placed first, then id)."""
    return sorted(range(len(orders)), key=lambda n: (orders[n].created, n), reverse=True)


def edge_cases(plan: Plan) -> list[str]:
    """The guarantees of the module's docstring that `plan` breaks (none: it keeps them all)."""
    kinds = [c.kind for c in plan.customers]
    new = plan.new_customers()
    done = plan.completed_by_customer()
    by_customer: dict[int, list[Order]] = {}
    for order in plan.orders:
        by_customer.setdefault(order.customer, []).append(order)
    completions = [plan.orders[n].completed for orders in done.values() for n in orders]
    synced = {row.customer for row in plan.crm}
    listed = listing_order(plan.orders)
    broken = {
        "new customers are those of kind new": [c for c, _ in new] == [c for c, k in enumerate(kinds) if k == NEW],
        "completed 6 d 23 h ago": START + HOUR in completions,
        "once completed 7 d 1 h ago": START - HOUR in completions,
        "placed 9 d ago, completed 3 d ago": any(
            o.created <= NOW - 9 * DAY + 2 * HOUR and abs(o.completed - (NOW - 3 * DAY)) <= HOUR
            for c, n in new if (o := plan.orders[n]).completed is not None),
        "no other completion within 2 h of the window's start": all(
            abs(when - START) >= 2 * HOUR for when in completions if when is not None
            and when not in (START + HOUR, START - HOUR)),
        "an old completed order and one in the window": any(
            k == REPEAT and len(done[c]) == 2 and sum((plan.orders[n].completed or NOW) > START for n in done[c]) == 1
            for c, k in enumerate(kinds)),
        "a new customer with a pending order": any(
            any(o.status == "pending" for o in by_customer[c]) for c, _ in new),
        "only cancelled orders": any(
            k == CANCELLED and by_customer[c] and all(o.status == "cancelled" for o in by_customer[c])
            for c, k in enumerate(kinds)),
        "repeat customers in the CRM": any(kinds[c] == REPEAT for c in synced),
        "a repeat customer of the window not in the CRM": any(
            k == REPEAT and c not in synced and any((plan.orders[n].completed or NOW) > START for n in done[c])
            for c, k in enumerate(kinds)),
        "no new customer in the CRM": not synced & {c for c, _ in new},
        "a new customer's order beyond the first order page": any(
            plan.orders[n].customer in {c for c, _ in new} and plan.orders[n].status == COMPLETED
            for n in listed[TRAP_PAGE:]),
        "a new customer beyond the first customer page": len(kinds) <= TRAP_PAGE or any(
            kinds[c] == NEW for c in name_order(plan.customers)[TRAP_PAGE:]),
        "totals under $1,000": all(o.total < 1000 for o in plan.orders),
        "customers registered before ordering": all(
            plan.customers[o.customer].created < o.created for o in plan.orders),
        "CRM ids 1..n": [row.id for row in plan.crm] == list(range(1, len(plan.crm) + 1)),
    }
    return [name for name, ok in broken.items() if not ok]
