"""A small WooCommerce store for the server tests, filled through `mock_servers.woocommerce.seed`: seven
products (a sale in force, an expired sale, a draft, unmanaged stock), three customers and a
shop manager, seven orders in every stock-relevant status (one placed late in the evening
site time, the next day in UTC), coupons, reviews, settings and two payment gateways. The
site's zone is America/New_York; now is 2025-03-15T09:00:00Z (05:00 there)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from mock_servers import prepare_world
from mock_servers.woocommerce import toolbox
from mock_servers.woocommerce.seed import (
    CategoryDef,
    CouponDef,
    CustomerDef,
    OrderDef,
    ProductDef,
    ReviewDef,
    StoreDef,
    VariationDef,
    fill,
)
from tests.harness import ServerHarness

NOW = "2025-03-15T09:00:00Z"
ZONE = "America/New_York"
PASSWORD = "hunter2-secret"


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


JAN = at("2025-01-02T10:00:00")
STORE = StoreDef(
    categories=[CategoryDef("Clothing"), CategoryDef("Shoes", parent="Clothing"), CategoryDef("Accessories")],
    products=[
        ProductDef("Boot", "BOOT-1", "80", JAN, sale_price="60", sale_from=at("2025-03-01T00:00:00"),
                   sale_to=at("2025-03-31T23:59:59"), stock_quantity=12, categories=["Shoes"], tags=["winter"],
                   meta={"origin": "IT"}, images=["https://shop.example/boot.jpg"]),
        ProductDef("Scarf", "SCARF-1", "20", JAN, stock_quantity=3, low_stock_amount=5, categories=["Accessories"],
                   tags=["winter"]),
        ProductDef("Hat", "HAT-1", "15", JAN, stock_quantity=0, categories=["Accessories"]),
        ProductDef("T-Shirt", "TEE-1", "10", JAN, sale_price="8", sale_to=at("2025-02-01T00:00:00"),
                   stock_quantity=50, categories=["Clothing"], tags=["summer"]),
        ProductDef("Jacket", "JACKET-1", "120", JAN, status="draft", stock_quantity=4, categories=["Clothing"]),
        ProductDef("Belt", "BELT-1", "25", JAN, manage_stock=False, stock_status="onbackorder",
                   categories=["Accessories"]),
        ProductDef("Sunglasses", "SUN-1", "40", JAN, stock_quantity=8, featured=True, type="variable"),
    ],
    variations=[VariationDef("SUN-1", "SUN-1-BLK", "40", {"Colour": "Black"}, stock_quantity=5),
                VariationDef("SUN-1", "SUN-1-RED", "42", {"Colour": "Red"})],
    customers=[
        CustomerDef("ann@example.com", "Ann", "Lee", at("2025-01-05T12:00:00"), password=PASSWORD,
                    billing={"first_name": "Ann", "last_name": "Lee", "city": "New York", "state": "NY",
                             "country": "US", "email": "ann@example.com"}),
        CustomerDef("bob@example.com", "Bob", "Stone", at("2025-02-10T12:00:00"),
                    billing={"first_name": "Bob", "city": "Berlin", "country": "DE"}),
        CustomerDef("cara@example.com", "Cara", "Diaz", at("2025-03-12T12:00:00")),
        CustomerDef("max@example.com", "Max", "Admin", at("2025-01-01T08:00:00"), role="shop_manager"),
    ],
    orders=[
        OrderDef("completed", at("2025-01-20T15:00:00"), [("TEE-1", 2)], "ann@example.com", shipping_total="5"),
        OrderDef("processing", at("2025-03-10T14:00:00"), [("BOOT-1", 1)], "bob@example.com"),
        OrderDef("on-hold", at("2025-03-12T16:00:00"), [("SCARF-1", 2)], "ann@example.com"),
        OrderDef("pending", at("2025-03-14T12:00:00"), [("SUN-1", 1)], "cara@example.com"),
        OrderDef("cancelled", at("2025-02-20T12:00:00"), [("TEE-1", 1)]),
        OrderDef("completed", at("2025-03-14T03:00:00"), [("SUN-1", 2)], "bob@example.com"),
        OrderDef("failed", at("2025-03-01T12:00:00"), [("BELT-1", 1)], "ann@example.com"),
    ],
    coupons=[CouponDef("SAVE10", "10", JAN, discount_type="percent"),
             CouponDef("OLD5", "5", JAN, expires=at("2025-02-01T00:00:00")),
             CouponDef("ONCE", "3", JAN, usage_limit=1, usage_count=1),
             CouponDef("BIG", "15", JAN, minimum_amount="100")],
    reviews=[ReviewDef("BOOT-1", "Ann", 5, at("2025-03-11T10:00:00"), "Warm"),
             ReviewDef("BOOT-1", "Bob", 3, at("2025-03-12T10:00:00"), "Tight"),
             ReviewDef("SCARF-1", "Cara", 4, at("2025-03-13T10:00:00"), status="hold"),
             ReviewDef("SUN-1", "Spam Bot", 1, at("2025-03-13T11:00:00"), status="spam")],
    settings={("products", "woocommerce_notify_low_stock_amount"): "5"},
    gateways=[("bacs", "Direct bank transfer", True, {"account_name": "Shop Ltd", "sort_code": ""}),
              ("cod", "Cash on delivery", False, {"instructions": "Pay on delivery"})],
)


class Woo(ServerHarness):
    def ok(self, tool: str, **args: Any) -> Any:
        return json.loads(self.ok_text(tool, **args))


def build_store(make_world: Any, config: dict[str, Any] | None = None) -> Woo:
    """The store above in a fresh world, prepared as a generated world is (its views kept)."""
    world, db = make_world(["woocommerce"], now=NOW, tz=ZONE)
    with db.write() as session:
        fill(session, STORE, salt="test")
    db.dispose()
    prepare_world(world, ["woocommerce"])
    return Woo(toolbox, world, config)
