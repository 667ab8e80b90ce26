"""WooCommerce behaviour on the small store of tests/woocommerce_seed.py: stock taken once and
given back once, prices from products, coupons, refunds, all-or-nothing batches, trash, reports
over periods of site-local days, settings, webhooks, system tools and validation errors."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from typing import Any
from zoneinfo import ZoneInfo

import fastmcp
import pytest

from mock_servers.core.db import Database
from mock_servers.woocommerce.domain import settings
from mock_servers.woocommerce.domain.base import site_pair
from tests.woocommerce_seed import PASSWORD, Woo, build_store


@pytest.fixture
def woo(make_world: Any) -> Woo:
    return build_store(make_world)


def stock(woo: Woo, pid: int) -> tuple[int, str, int]:
    p = woo.ok("woo_products_get", productId=pid)
    return p["stock_quantity"], p["stock_status"], p["total_sales"]


def order(woo: Woo, **data: Any) -> dict[str, Any]:
    found: dict[str, Any] = woo.ok("woo_orders_create", orderData=data)
    return found


def db_rows(woo: Woo, query: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(woo.world.state_path) as conn:
        return conn.execute(query).fetchall()


def test_stock_is_taken_once_and_given_back_once(woo: Woo) -> None:
    placed = order(woo, line_items=[{"product_id": 1, "quantity": 2}])
    assert placed["status"] == "pending" and stock(woo, 1) == (12, "instock", 1)
    for status, expected in [("processing", (10, "instock", 3)), ("completed", (10, "instock", 3)),
                             ("on-hold", (10, "instock", 3)), ("cancelled", (12, "instock", 1)),
                             ("cancelled", (12, "instock", 1)), ("processing", (10, "instock", 3))]:
        woo.ok("woo_orders_update", orderId=placed["id"], orderData={"status": status})
        assert stock(woo, 1) == expected, status


def test_set_paid_means_processing_and_stock_status_follows(woo: Woo) -> None:
    placed = order(woo, set_paid=True, line_items=[{"product_id": 2, "quantity": 3}])
    assert placed["status"] == "processing" and placed["date_paid"] == "2025-03-15T05:00:01"
    assert stock(woo, 2) == (0, "outofstock", 5)
    unmanaged = order(woo, status="completed", line_items=[{"product_id": 6, "quantity": 1}])
    assert unmanaged["date_completed"] is not None and stock(woo, 6) == (None, "onbackorder", 1)


def test_line_items_take_name_sku_and_current_price_from_the_product(woo: Woo) -> None:
    placed = order(woo, customer_id=1, line_items=[{"product_id": 1, "quantity": 2}, {"product_id": 4, "quantity": 1}],
                   shipping_lines=[{"method_id": "flat_rate", "method_title": "Flat", "total": "4.5"}],
                   coupon_lines=[{"code": "save10"}])
    boot, tee = placed["line_items"]
    assert (boot["name"], boot["sku"], boot["price"], boot["subtotal"], boot["total"]) == (
        "Boot", "BOOT-1", "60.00", "120.00", "108.00")
    assert (tee["price"], tee["total"]) == ("10.00", "9.00")  # its sale ended on 1 February
    assert (placed["discount_total"], placed["shipping_total"], placed["total"]) == ("13.00", "4.50", "121.50")
    assert placed["billing"]["city"] == "New York"  # the customer's address
    assert woo.ok("woo_coupons_get", couponId=1)["usage_count"] == 1
    variant = order(woo, line_items=[{"product_id": 7, "variation_id": 2, "quantity": 1}])["line_items"][0]
    assert (variant["name"], variant["sku"], variant["price"]) == ("Sunglasses - Red", "SUN-1-RED", "42.00")


def test_coupon_rules(woo: Woo) -> None:
    line = [{"product_id": 4, "quantity": 1}]
    assert "expired" in woo.fails("woo_orders_create", "FAILED_PRECONDITION",
                                  orderData={"line_items": line, "coupon_lines": [{"code": "OLD5"}]})
    assert "usage limit" in woo.fails("woo_orders_create", "FAILED_PRECONDITION",
                                      orderData={"line_items": line, "coupon_lines": [{"code": "once"}]})
    assert "at least 100.00" in woo.fails("woo_orders_create", "FAILED_PRECONDITION",
                                          orderData={"line_items": line, "coupon_lines": [{"code": "BIG"}]})
    woo.fails("woo_orders_create", "NOT_FOUND", orderData={"line_items": line, "coupon_lines": [{"code": "nope"}]})
    woo.fails("woo_coupons_create", "ALREADY_EXISTS", couponData={"code": "Save10"})
    assert db_rows(woo, "SELECT count(*) FROM woo_order") == [(7,)]  # nothing was written


def test_refunds_are_bounded_and_a_full_refund_sets_refunded(woo: Woo) -> None:
    woo.fails("woo_orders_refunds_create", "INVALID_ARGUMENT", orderId=2, amount="60.01")
    woo.fails("woo_orders_refunds_create", "INVALID_ARGUMENT", orderId=2, lineItems=[{"id": 3, "quantity": 2}],
              amount="1")
    woo.fails("woo_orders_refunds_create", "NOT_FOUND", orderId=2, lineItems=[{"id": 1, "refund_total": "1"}])
    woo.fails("woo_orders_refunds_create", "INVALID_ARGUMENT", orderId=2)
    part = woo.ok("woo_orders_refunds_create", orderId=2, reason="scratch",
                  lineItems=[{"id": 3, "quantity": 1, "refund_total": "20"}])
    assert part["amount"] == "20.00" and part["line_items"][0]["name"] == "Boot"
    assert woo.ok("woo_orders_get", orderId=2)["status"] == "processing"
    woo.fails("woo_orders_refunds_create", "INVALID_ARGUMENT", orderId=2, amount="40.01")
    woo.ok("woo_orders_refunds_create", orderId=2, amount="40", refundPayment=True)
    after = woo.ok("woo_orders_get", orderId=2)
    assert after["status"] == "refunded" and [r["total"] for r in after["refunds"]] == ["-20.00", "-40.00"]
    assert "remainder 0.00" in woo.fails("woo_orders_refunds_create", "INVALID_ARGUMENT", orderId=2, amount="1")
    woo.fails("woo_orders_refunds_create", "FAILED_PRECONDITION", orderId=4, amount="1", refundPayment=True)


def test_batches_are_all_or_nothing(woo: Woo) -> None:
    before = db_rows(woo, "SELECT * FROM woo_product ORDER BY id")
    text = woo.fails("woo_products_batch_update", "NOT_FOUND", create=[{"name": "New"}],
                     update=[{"id": 2, "regular_price": "21"}, {"id": 99, "name": "x"}], delete=[3])
    assert "update[1]" in text and "nothing was changed" in text
    assert db_rows(woo, "SELECT * FROM woo_product ORDER BY id") == before
    woo.fails("woo_products_batch_update", "INVALID_ARGUMENT", delete=list(range(1, 102)))
    woo.fails("woo_products_batch_update", "INVALID_ARGUMENT", create=[{"name": f"P{i}"} for i in range(60)],
              delete=list(range(1, 42)))
    woo.fails("woo_products_batch_update", "INVALID_ARGUMENT")
    done = woo.ok("woo_products_batch_update", create=[{"name": "New", "sku": "NEW-1"}],
                  update=[{"id": 2, "regular_price": "21"}], delete=[3])
    assert [p["sku"] for p in done["create"]] == ["NEW-1"] and done["update"][0]["price"] == "21.00"
    assert done["delete"][0]["id"] == 3
    woo.fails("woo_products_get", "NOT_FOUND", productId=3)
    woo.fails("woo_orders_batch_update", "NOT_FOUND", update=[{"id": 1, "status": "cancelled"}, {"id": 50}])
    assert stock(woo, 4) == (50, "instock", 2)  # the first update's stock return was rolled back


def test_delete_moves_to_trash_unless_forced(woo: Woo) -> None:
    trashed = woo.ok("woo_products_delete", productId=2)
    assert trashed["status"] == "trash"
    assert 2 not in [p["id"] for p in woo.ok("woo_products_list", perPage=100)["items"]]
    assert [p["id"] for p in woo.ok("woo_products_list", status="trash")["items"]] == [2]
    assert woo.ok("woo_products_categories_list", search="Accessories")["items"][0]["count"] == 2
    woo.fails("woo_products_delete", "FAILED_PRECONDITION", productId=2)
    woo.ok("woo_products_delete", productId=2, force=True)
    woo.fails("woo_products_get", "NOT_FOUND", productId=2)
    assert woo.ok("woo_orders_delete", orderId=5)["status"] == "trash"
    assert 5 not in [o["id"] for o in woo.ok("woo_orders_list", perPage=100)["items"]]
    woo.fails("woo_coupons_delete", "INVALID_ARGUMENT", couponId=1, force=False)
    assert woo.ok("woo_coupons_delete", couponId=1)["code"] == "save10"


def test_reports_follow_the_period_in_site_time(woo: Woo) -> None:
    week = woo.ok("woo_reports_sales")
    assert (week["date_min"], week["date_max"], week["total_sales"], week["total_orders"]) == (
        "2025-03-09", "2025-03-15", "180.00", 3)
    last_month = woo.ok("woo_reports_sales", period="last_month")
    assert (last_month["date_min"], last_month["total_orders"]) == ("2025-02-01", 0)
    year = woo.ok("woo_reports_sales", period="year")
    assert (year["total_sales"], year["net_sales"], year["total_items"]) == ("201.00", "196.00", 7)
    # order 6 was placed 2025-03-14T03:00Z, the evening of 13 March in New York
    day = woo.ok("woo_reports_orders", dateMin="2025-03-13", dateMax="2025-03-13")
    assert day["by_status"]["completed"] == 1 and day["total_orders"] == 1
    assert woo.ok("woo_reports_orders", dateMin="2025-03-14", dateMax="2025-03-14")["by_status"]["pending"] == 1
    woo.fails("woo_reports_sales", "INVALID_ARGUMENT", dateMin="2025-03-10", dateMax="2025-03-01")
    woo.fails("woo_reports_sales", "INVALID_ARGUMENT", dateMin="yesterday")
    top = woo.ok("woo_reports_top_sellers", period="year")
    assert top["items"][0] == {"product_id": 2, "name": "Scarf", "quantity": 2} and top["total"] == 4  # ties by id
    customers = woo.ok("woo_reports_customers", period="month")
    assert (customers["total_customers"], customers["new_customers"], customers["total_orders"]) == (3, 1, 3)
    products = woo.ok("woo_reports_products", period="month", perPage=1, page=2)
    assert products["items"][0]["product_id"] == 2 and products["totalPages"] == 3  # after sunglasses (80.00)


def test_low_stock_uses_the_product_threshold_else_the_setting(woo: Woo) -> None:
    low = woo.ok("woo_reports_low_stock")
    assert [p["id"] for p in low["items"]] == [3, 2, 5]  # scarf: 3 <= own 5; sunglasses: 8 > setting 5
    value = next(s for s in woo.ok("woo_settings_get", groupId="products")["settings"]
                 if s["id"] == "woocommerce_notify_low_stock_amount")
    assert value["value"] == "5"
    assert woo.ok("woo_reports_stock", perPage=2, page=4)["items"] == [
        {"id": 7, "name": "Sunglasses", "sku": "SUN-1", "manage_stock": True, "stock_quantity": 8,
         "stock_status": "instock"}]


def test_taxes_apply_when_the_store_calculates_them(woo: Woo) -> None:
    woo.ok("woo_tax_rates_create", country="US", state="NY", rate="8", name="NY")
    woo.ok("woo_tax_rates_create", country="US", rate="1", priority=2, compound=True, shipping=False)
    woo.fails("woo_tax_rates_create", "NOT_FOUND", country="US", rate="5", **{"class": "reduced-rate"})
    woo.fails("woo_tax_rates_create", "INVALID_ARGUMENT", country="U1", rate="5")
    untaxed = order(woo, customer_id=1, line_items=[{"product_id": 2, "quantity": 1}])
    assert untaxed["total_tax"] == "0.00"
    db = Database(woo.world.state_path)
    with db.write() as session:
        settings.put(session, "general", "woocommerce_calc_taxes", "yes")
    db.dispose()
    taxed = order(woo, customer_id=1, line_items=[{"product_id": 2, "quantity": 1}],
                  shipping_lines=[{"method_id": "flat_rate", "total": "10"}])
    # 8% of 20 + 10 shipping = 2.40; compound 1% of 20 + 1.60 item tax = 0.22 (not on shipping)
    assert (taxed["total_tax"], taxed["total"]) == ("2.62", "32.62")


def test_settings_gateways_and_webhooks(woo: Woo) -> None:
    assert len(woo.ok("woo_settings_list")["groups"]) == 10
    assert woo.ok("woo_payment_gateways_list")["items"][0]["id"] == "bacs"
    woo.fails("woo_payment_gateways_update", "INVALID_ARGUMENT", gatewayId="bacs", settings={"iban": "x"})
    changed = woo.ok("woo_payment_gateways_update", gatewayId="cod", enabled=True, settings={"instructions": "Cash"})
    assert changed["enabled"] and changed["settings"] == {"instructions": "Cash"}
    woo.fails("woo_payment_gateways_get", "NOT_FOUND", gatewayId="paypal")
    hook = woo.ok("woo_webhooks_create", name="Orders", topic="order.created",
                  delivery_url="https://hooks.example/orders", secret="s3cr3t-value")
    assert hook["has_secret"] and "s3cr3t-value" not in str(hook)
    woo.ok("woo_webhooks_create", name="Paused", topic="product.updated", delivery_url="http://h.example/p",
           status="paused")
    assert [h["name"] for h in woo.ok("woo_webhooks_list", status="paused")["items"]] == ["Paused"]
    woo.fails("woo_webhooks_create", "INVALID_ARGUMENT", name="x", topic="order.created", delivery_url="ftp://x")
    woo.fails("woo_webhooks_create", "INVALID_ARGUMENT", name="x", topic="order.paid", delivery_url="https://x.io")


def test_system_tools_do_what_they_say(woo: Woo) -> None:
    with sqlite3.connect(woo.world.state_path) as conn:
        conn.execute("UPDATE woo_category SET count = 40 WHERE id = 1")
        conn.execute("INSERT INTO woo_variation (product_id, sku, attributes) VALUES (999, 'GONE', '[]')")
    assert woo.ok("woo_system_tools_run", toolId="recount_terms")["message"] == "Terms recounted: 1 counts corrected."
    assert woo.ok("woo_products_categories_list", search="Clothing")["items"][0]["count"] == 1
    assert woo.ok("woo_system_tools_run", toolId="clear_orphaned_variations")["message"] == (
        "1 orphaned variations deleted.")
    assert "nothing to do" in woo.ok("woo_system_tools_run", toolId="clear_sessions")["message"]
    assert len(woo.ok("woo_system_tools_list")["items"]) == 9
    status = woo.ok("woo_system_status")
    assert status["environment"]["timezone"] == "America/New_York"
    assert status["database"]["counts"] == {"products": 7, "orders": 7, "customers": 4, "coupons": 4}


def test_customers_passwords_and_totals(woo: Woo) -> None:
    ann = woo.ok("woo_customers_get", customerId=1)
    assert (ann["orders_count"], ann["total_spent"], ann["is_paying_customer"]) == (3, "21.00", True)
    made = woo.ok_text("woo_customers_create", customerData={"email": "Dan@Example.com", "password": "pw-12345"})
    assert "pw-12345" not in made and "pbkdf2" not in made and '"username":"dan"' in made
    stored = db_rows(woo, "SELECT password_hash FROM woo_customer WHERE email IN ('dan@example.com', "
                          "'ann@example.com') ORDER BY id")
    assert all(h.startswith("pbkdf2_sha256$") and PASSWORD not in h for (h,) in stored)
    woo.fails("woo_customers_create", "ALREADY_EXISTS", customerData={"email": "ANN@example.com"})
    woo.fails("woo_customers_update", "ALREADY_EXISTS", customerId=2, customerData={"username": "ann"})
    woo.fails("woo_customers_create", "INVALID_ARGUMENT", customerData={"email": "ann@example.com", "role": "x"})
    updated = woo.ok("woo_customers_update", customerId=2, customerData={"billing": {"city": "Hamburg"}})
    assert updated["billing"]["city"] == "Hamburg" and updated["billing"]["country"] == "DE"
    assert [c["id"] for c in woo.ok("woo_customers_list", role="all", orderby="registered_date")["items"]] == [
        4, 1, 2, 3, 5]


def test_products_rules(woo: Woo) -> None:
    boot = woo.ok("woo_products_get", productId=1)
    assert (boot["price"], boot["on_sale"], boot["date_on_sale_from"]) == ("60.00", True, "2025-02-28T19:00:00")
    assert (boot["date_created"], boot["date_created_gmt"]) == ("2025-01-02T05:00:00", "2025-01-02T10:00:00")
    assert [p["id"] for p in woo.ok("woo_products_list", onSale=True)["items"]] == [1]
    ended = woo.ok("woo_products_update", productId=1, productData={"date_on_sale_to": "2025-03-14"})
    assert (ended["price"], ended["on_sale"]) == ("80.00", False)
    woo.fails("woo_products_update", "INVALID_ARGUMENT", productId=2, productData={"sale_price": "25"})
    woo.fails("woo_products_create", "ALREADY_EXISTS", productData={"name": "Copy", "sku": "SUN-1-BLK"})
    woo.fails("woo_products_create", "INVALID_ARGUMENT", productData={"sku": "NONAME"})
    woo.fails("woo_products_update", "INVALID_ARGUMENT", productId=1, productData={"total_sales": 5})
    out = woo.ok("woo_products_update", productId=4, productData={"stock_quantity": 0, "stock_status": "instock"})
    assert out["stock_status"] == "outofstock"
    woo.fails("woo_products_categories_create", "ALREADY_EXISTS", categoryData={"name": "Shoes", "parent": 1})
    kids = woo.ok("woo_products_categories_create", categoryData={"name": "Shoes"})
    assert kids["slug"] == "shoes-2"
    ranked = woo.ok("woo_products_list", orderby="rating", perPage=2)["items"]
    assert ranked[0]["id"] == 1
    assert [r["rating"] for r in woo.ok("woo_products_reviews_list", productId=1)["items"]] == [3, 5]
    assert woo.ok("woo_products_reviews_list", status="all")["total"] == 3


def test_the_seed_is_consistent_by_construction(woo: Woo) -> None:
    first = woo.ok("woo_orders_get", orderId=1)  # T-Shirt x2 on 20 January, while its sale price held
    assert [(i["name"], i["sku"], i["price"], i["total"]) for i in first["line_items"]] == [
        ("T-Shirt", "TEE-1", "8.00", "16.00")]
    assert (first["total"], first["date_paid"], first["billing"]["city"]) == ("21.00", "2025-01-20T10:00:00",
                                                                             "New York")
    guest = woo.ok("woo_orders_get", orderId=5)
    assert (guest["customer_id"], guest["line_items"][0]["price"], guest["date_paid"]) == (0, "10.00", None)
    # total_sales counts the orders that took stock (completed, processing, on-hold), not the others
    sales = {p["sku"]: p["total_sales"] for p in woo.ok("woo_products_list", perPage=100)["items"]}
    assert sales == {"BOOT-1": 1, "SCARF-1": 2, "HAT-1": 0, "TEE-1": 2, "JACKET-1": 0, "BELT-1": 0, "SUN-1": 2}
    assert {t["name"]: t["count"] for t in woo.ok("woo_products_tags_list")["items"]} == {"summer": 1, "winter": 2}
    # an order that took stock gives it back once when cancelled
    woo.ok("woo_orders_update", orderId=3, orderData={"status": "cancelled"})
    assert stock(woo, 2) == (5, "instock", 0)


def test_errors_are_mcp_error_results_through_the_fastmcp_client(woo: Woo) -> None:
    async def run() -> tuple[list[str], Any, Any, Any]:
        async with fastmcp.Client(woo.runtime.app) as client:
            tools = [t.name for t in await client.list_tools()]
            good = await client.call_tool("woo_orders_list", {"perPage": 2}, raise_on_error=False)
            capped = await client.call_tool("woo_orders_list", {"perPage": 500}, raise_on_error=False)
            extra = await client.call_tool("woo_products_update", {"productId": 1, "productData": {"id": 9}},
                                           raise_on_error=False)
            return tools, good, capped, extra

    tools, good, capped, extra = asyncio.run(run())
    assert len(tools) == 55 and all(t.startswith("woo_") for t in tools)
    assert not good.is_error and json.loads(good.content[0].text)["totalPages"] == 4
    assert capped.is_error and capped.content[0].text.startswith("Error [INVALID_ARGUMENT]: woo_orders_list: ")
    assert "allowed 1..100" in capped.content[0].text
    assert extra.is_error and "productData.id" in extra.content[0].text


def test_same_calls_give_the_same_bytes(make_world: Any) -> None:
    script: list[tuple[str, dict[str, Any]]] = [
        ("woo_customers_create", {"customerData": {"email": "dan@example.com", "password": "pw"}}),
        ("woo_orders_create", {"orderData": {"customer_id": 5, "set_paid": True,
                                             "line_items": [{"product_id": 7, "quantity": 1}]}}),
        ("woo_orders_refunds_create", {"orderId": 8, "amount": "10"}),
        ("woo_reports_sales", {"period": "month"}), ("woo_customers_list", {"role": "all"})]
    first = build_store(make_world)
    texts = [first.call(tool, **args)[0] for tool, args in script]
    second = build_store(make_world)  # the same world directory, rebuilt
    assert [second.call(tool, **args)[0] for tool, args in script] == texts


def test_no_read_shows_a_password_or_secret(woo: Woo) -> None:
    woo.ok("woo_webhooks_create", name="Hook", topic="order.created", delivery_url="https://h.example/x",
           secret="hook-secret-value")
    ids = {"productId": 1, "orderId": 1, "customerId": 1, "couponId": 1, "zoneId": 1, "rateId": 1,
           "gatewayId": "bacs", "groupId": "general"}
    texts = []
    for name, tdef in woo.runtime.toolbox.defs.items():
        if tdef.rw == "read":
            required = woo.runtime.tools[name].parameters["required"]
            texts.append(woo.call(name, **{k: ids[k] for k in required})[0])
    assert len(texts) == 32 and any('"email":"ann@example.com"' in t for t in texts)
    assert not any(secret in t for t in texts for secret in (PASSWORD, "pbkdf2", "hook-secret-value"))


@pytest.mark.parametrize("stored", ["2025-03-30T00:59:59Z", "2025-10-26T01:30:00Z", "2024-02-29T23:59:59Z", None])
def test_a_utc_store_shows_its_instants_as_any_zone_without_offset_does(stored: str | None) -> None:
    assert site_pair(stored, ZoneInfo("UTC")) == site_pair(stored, ZoneInfo("Etc/UTC")) == (
        (stored[:19], stored[:19]) if stored else (None, None))
