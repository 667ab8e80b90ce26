"""The orders of a woocommerce_new_welcome world, drafted per kind of customer (customers are
indexes into blocks of their kind until the plan numbers them): new customers' single completed
orders with the window's near misses, once customers' older ones, repeat customers' histories
(some completed in the window, enough for the pagination trap) and the orders placed in the
window and not completed."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from envs.woocommerce_new_welcome import COMPLETED, NOW, TRAP_PAGE
from generators.woocommerce_new_welcome.model import (
    CANCELLED,
    DAY,
    HOUR,
    NEW,
    ONCE,
    PRODUCTS,
    REPEAT,
    SHIPPING,
    START,
    Counts,
    Order,
    between,
    half_up,
    lead,
)
from loca.core.rng import WorldRng

EXTRA_STATUS = ((COMPLETED, 0.8), ("cancelled", 0.1), ("refunded", 0.1))  # a repeat customer's later orders
SKUS = tuple(sku for _, sku, _ in PRODUCTS)
RECENT_REPEAT_SHARE = 0.15  # repeat customers whose latest order was completed in the window


class _Orders:
    """The order drafts of one world, their line items and shipping drawn from one stream."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.made: list[Order] = []

    def add(self, customer: int, status: str, created: datetime, completed: datetime | None = None) -> None:
        self.made.append(Order(customer, status, created, completed, _items(self.rng), self.rng.choice(SHIPPING)))

    def completed(self, customer: int, completed: datetime, shortest: timedelta, longest: timedelta) -> None:
        """A completed order, placed between `shortest` and `longest` before its completion."""
        self.add(customer, COMPLETED, completed - lead(self.rng, shortest, longest), completed)


def _items(rng: random.Random) -> tuple[tuple[str, int], ...]:
    skus = rng.sample(SKUS, rng.choices((1, 2, 3), (0.5, 0.35, 0.15))[0])
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
        made.completed(c, between(rng, START + 2 * HOUR, NOW - HOUR), timedelta(minutes=30), 36 * HOUR)


def _once_orders(made: _Orders, rng: random.Random, b: Blocks) -> None:
    """One completed order per once customer, completed before the window: 7 d 1 h ago, then
    older ones."""
    made.completed(b.once, START - HOUR, HOUR, 2 * DAY)
    for c in range(b.once + 1, b.repeat):
        made.completed(c, between(rng, NOW - 150 * DAY, START - DAY), HOUR, 4 * DAY)


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
        placed = between(rng, NOW - 720 * DAY, NOW - 90 * DAY)
        for n in range(per[k] - recent[k]):
            status = COMPLETED if n < 2 else rng.choices(statuses, weights)[0]
            done = placed + lead(rng, HOUR, 4 * DAY)
            made.add(b.repeat + k, status, placed, done if status == COMPLETED else None)
            placed = min(done + lead(rng, DAY, 60 * DAY), NOW - 20 * DAY)
        for _ in range(recent[k]):
            made.completed(b.repeat + k, between(rng, START + 2 * HOUR, NOW - HOUR), HOUR, DAY)
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
        made.add(customer, status, between(rng, START + HOUR, NOW - timedelta(minutes=30)))


def draft_orders(rngs: WorldRng, c: Counts) -> tuple[Blocks, list[Order], list[int]]:
    """Where each kind's customers start, every order (customers as block indexes) and the
    repeat customers with an order in the window."""
    b = _blocks(c)
    made = _Orders(rngs.stream("items"))
    timing = rngs.stream("timing")
    _new_orders(made, timing, b)
    _once_orders(made, timing, b)
    recent = _repeat_orders(made, rngs.stream("repeat"), b, c)
    _incomplete_orders(made, rngs.stream("incomplete"), b, c)
    return b, made.made, recent
