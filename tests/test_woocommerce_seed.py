"""The WooCommerce seed's completion dates: a completed order is completed when it was placed
unless its definition says later; only completed orders carry one, never before placement."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from mock_servers.woocommerce import toolbox
from mock_servers.woocommerce.seed import CustomerDef, OrderDef, ProductDef, StoreDef, fill
from tests.harness import ServerHarness

PLACED = datetime(2025, 3, 1, 10, 0, tzinfo=UTC)
LATER = datetime(2025, 3, 7, 16, 30, tzinfo=UTC)
PRODUCT = ProductDef("Mug", "MUG-1", "12", PLACED, stock_quantity=20)
CUSTOMER = CustomerDef("ann@example.com", "Ann", "Lee", PLACED)


def _store(make_world: Any, orders: list[OrderDef]) -> ServerHarness:
    world, db = make_world(["woocommerce"], now="2025-03-10T12:00:00Z")
    with db.write() as session:
        fill(session, StoreDef(products=[PRODUCT], customers=[CUSTOMER], orders=orders))
    db.dispose()
    return ServerHarness(toolbox, world)


def test_completion_date_defaults_to_placement_and_may_come_later(make_world: Any) -> None:
    woo = _store(make_world, [
        OrderDef("completed", PLACED, [("MUG-1", 1)], CUSTOMER.email),
        OrderDef("completed", PLACED, [("MUG-1", 2)], CUSTOMER.email, completed=LATER),
        OrderDef("processing", PLACED, [("MUG-1", 1)], CUSTOMER.email)])
    shown = {o["id"]: o for o in json.loads(woo.ok_text("woo_orders_list", orderby="id", order="asc"))["items"]}
    assert [(o["date_created"], o["date_paid"], o["date_completed"], o["date_modified"]) for o in shown.values()] == [
        ("2025-03-01T10:00:00", "2025-03-01T10:00:00", "2025-03-01T10:00:00", "2025-03-01T10:00:00"),
        ("2025-03-01T10:00:00", "2025-03-01T10:00:00", "2025-03-07T16:30:00", "2025-03-07T16:30:00"),
        ("2025-03-01T10:00:00", "2025-03-01T10:00:00", None, "2025-03-01T10:00:00")]


@pytest.mark.parametrize("order", [OrderDef("pending", PLACED, [("MUG-1", 1)], completed=LATER),
                                   OrderDef("completed", LATER, [("MUG-1", 1)], completed=PLACED)])
def test_impossible_completion_dates_are_refused(make_world: Any, order: OrderDef) -> None:
    with pytest.raises(ValueError):
        _store(make_world, [order])
