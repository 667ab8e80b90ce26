"""The data a woocommerce_new_welcome world is planned in: the store's customers (by kind), their
orders, the CRM rows already synced, the counts that follow from the scale, and the orders in
which the store lists orders and customers by default."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal

from envs.woocommerce_new_welcome import COMPLETED, NOW, WINDOW

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
PRICES = {sku: Decimal(price) for _, sku, price in PRODUCTS}
SHIPPING = (Decimal("0.00"), Decimal("4.99"), Decimal("9.99"))


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
        return sum((PRICES[sku] * qty for sku, qty in self.items), self.shipping)


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


def name_order(customers: tuple[Customer, ...] | list[Customer]) -> list[int]:
    """Customer indexes in the default customer listing's order (name, case-insensitive, then id)."""
    return sorted(range(len(customers)), key=lambda c: (customers[c].full_name.lower(), c))


def listing_order(orders: tuple[Order, ...] | list[Order]) -> list[int]:
    """Order indexes in the default order listing's order (newest placed first, then id)."""
    return sorted(range(len(orders)), key=lambda n: (orders[n].created, n), reverse=True)


def between(rng: random.Random, start: datetime, end: datetime) -> datetime:
    """An instant in [start, end], to the second."""
    return start + timedelta(seconds=rng.randint(0, max(0, int((end - start).total_seconds()))))


def lead(rng: random.Random, shortest: timedelta, longest: timedelta) -> timedelta:
    """A span from `shortest` to `longest`, to the second."""
    return between(rng, NOW, NOW + longest - shortest) - NOW + shortest
