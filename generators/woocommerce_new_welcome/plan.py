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

import random
from dataclasses import replace
from datetime import datetime, timedelta

from faker import Faker

from envs.woocommerce_new_welcome import COMPLETED, NOW, TRAP_PAGE
from generators.common import PersonNames, seeded_faker
from generators.woocommerce_new_welcome.model import (
    CANCELLED,
    DAY,
    HOUR,
    IDLE,
    NEW,
    ONCE,
    REPEAT,
    START,
    CrmRow,
    Customer,
    Order,
    Plan,
    counts,
    lead,
    listing_order,
    name_order,
)
from generators.woocommerce_new_welcome.orders import draft_orders
from loca.core.rng import WorldRng

EMAIL_DOMAINS = ("gmail.com", "yahoo.com", "outlook.com", "icloud.com", "hotmail.com", "proton.me", "aol.com")
PHONE_FORMATS = ("({a}) {b}-{c}", "{a}-{b}-{c}", "{a}.{b}.{c}", "+1 {a} {b} {c}")
IN_CRM_SHARE = 0.75  # once customers synced to the CRM
WELCOMED_SHARE = 0.85  # CRM rows whose welcome e-mail was sent


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
    return [first[c] - lead(rng, HOUR, 60 * DAY) if c in first else NOW - lead(rng, DAY, 700 * DAY)
            for c in range(count)]


def _numbered(customers: list[Customer], orders: list[Order]) -> tuple[list[Customer], list[Order], dict[int, int]]:
    """Customers by registration and orders by placement, as the store numbers them, and each
    customer's new index by its old one."""
    order = sorted(range(len(customers)), key=lambda c: (customers[c].created, c))
    index = {old: new for new, old in enumerate(order)}
    placed = sorted(range(len(orders)), key=lambda n: (orders[n].created, n))
    return ([customers[c] for c in order],
            [replace(orders[n], customer=index[orders[n].customer]) for n in placed], index)


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


def plan_world(rngs: WorldRng, total_orders: int, idle: int) -> Plan:
    c = counts(total_orders, idle)
    b, orders, recent = draft_orders(rngs, c)
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
