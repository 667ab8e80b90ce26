"""Table-driven WooCommerce calls: each case runs on a fresh copy of the store of
tests/woocommerce_seed.py and states the output or the error it must give. `Ids` compares the
ids of a page's items (and its total and totalPages when given), `Keys` the given keys of a
result, `Err` the error code (and a part of the message), `Digest` the SHA-256 of the whole
output (pinning its bytes: dates in the site's zone, money, meta data, key order)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from generators.common import create_world
from loca.core.world import World, WorldMeta
from mock_servers.woocommerce import toolbox
from tests.harness import world_copy
from tests.woocommerce_seed import Woo, build_store


@dataclass(frozen=True)
class Ids:
    ids: list[int]
    total: int | None = None
    pages: int | None = None
    key: str = "id"


@dataclass(frozen=True)
class Keys:
    keys: dict[str, Any]


@dataclass(frozen=True)
class Err:
    code: str
    part: str = ""


@dataclass(frozen=True)
class Digest:
    sha256: str


Case = tuple[str, str, dict[str, Any], Any]
BOOT_TERMS = {"categories": [{"id": 2, "name": "Shoes", "slug": "shoes"}],
              "tags": [{"id": 1, "name": "winter", "slug": "winter"}]}

CASES: list[Case] = [
    # products: paging edges
    ("products-default", "woo_products_list", {}, Ids([7, 6, 5, 4, 3, 2, 1], 7, 1)),
    ("products-first-page", "woo_products_list", {"perPage": 3}, Ids([7, 6, 5], 7, 3)),
    ("products-last-partial-page", "woo_products_list", {"perPage": 3, "page": 3}, Ids([1], 7, 3)),
    ("products-page-past-end", "woo_products_list", {"perPage": 3, "page": 4}, Ids([], 7, 3)),
    ("products-perpage-over-cap", "woo_products_list", {"perPage": 101}, Err("INVALID_ARGUMENT", "allowed 1..100")),
    ("products-perpage-zero", "woo_products_list", {"perPage": 0}, Err("INVALID_ARGUMENT", "perPage")),
    ("products-page-zero", "woo_products_list", {"page": 0}, Err("INVALID_ARGUMENT", "'page'")),
    ("products-page-negative", "woo_products_list", {"page": -2}, Err("INVALID_ARGUMENT", "'page'")),
    ("products-page-as-text", "woo_products_list", {"page": "2", "perPage": 6}, Ids([1], 7, 2)),
    ("products-page-fraction", "woo_products_list", {"page": 1.5}, Err("INVALID_ARGUMENT", "'page'")),
    ("products-whole-output", "woo_products_list", {"perPage": 100},
     Digest("333d061afad0f0f05891d6dd16d2df3dd4acc1bc85e35e3d1b41177fa7162fd5")),
    # products: sorting and filters
    ("products-popularity", "woo_products_list", {"orderby": "popularity", "perPage": 4}, Ids([7, 4, 2, 1])),
    ("products-price-asc", "woo_products_list", {"orderby": "price", "order": "asc"}, Ids([4, 3, 2, 6, 7, 1, 5])),
    ("products-title-asc", "woo_products_list", {"orderby": "title", "order": "asc"}, Ids([6, 1, 3, 5, 2, 7, 4])),
    ("products-rating", "woo_products_list", {"orderby": "rating", "perPage": 1}, Ids([1], 7)),
    ("products-bad-orderby", "woo_products_list", {"orderby": "popular"}, Err("INVALID_ARGUMENT", "orderby")),
    ("products-draft", "woo_products_list", {"status": "draft"}, Ids([5], 1)),
    ("products-trash-empty", "woo_products_list", {"status": "trash"}, Ids([], 0, 0)),
    ("products-category", "woo_products_list", {"category": "2"}, Ids([1])),
    ("products-categories", "woo_products_list", {"category": "2,3"}, Ids([6, 3, 2, 1])),
    ("products-category-bad", "woo_products_list", {"category": "shoes"}, Err("INVALID_ARGUMENT", "category")),
    ("products-tag", "woo_products_list", {"tag": "1"}, Ids([2, 1])),
    ("products-sku", "woo_products_list", {"sku": "HAT-1"}, Ids([3])),
    ("products-featured", "woo_products_list", {"featured": True}, Ids([7])),
    ("products-price-range", "woo_products_list", {"minPrice": "30", "maxPrice": "70"}, Ids([7, 1])),
    ("products-price-bad", "woo_products_list", {"minPrice": "cheap"}, Err("INVALID_ARGUMENT", "minPrice")),
    ("products-out-of-stock", "woo_products_list", {"stockStatus": "outofstock"}, Ids([3])),
    ("products-search", "woo_products_list", {"search": "sun"}, Ids([7])),
    ("products-search-none", "woo_products_list", {"search": "zzz"}, Ids([], 0, 0)),
    ("products-unknown-param", "woo_products_list", {"limit": 5}, Err("INVALID_ARGUMENT", "unknown parameter 'limit'")),
    # one product
    ("product-get", "woo_products_get", {"productId": 1}, Keys({
        "price": "60.00", "regular_price": "80.00", "on_sale": True, "stock_quantity": 12, "total_sales": 1,
        **BOOT_TERMS, "images": [{"id": 1, "src": "https://shop.example/boot.jpg", "name": "", "alt": ""}],
        "meta_data": [{"id": 1, "key": "origin", "value": "IT"}]})),
    ("product-get-missing", "woo_products_get", {"productId": 999}, Err("NOT_FOUND", "product 999")),
    ("product-get-zero", "woo_products_get", {"productId": 0}, Err("INVALID_ARGUMENT", "productId")),
    ("product-get-text-id", "woo_products_get", {"productId": "3"}, Keys({"name": "Hat"})),
    ("product-create", "woo_products_create", {"productData": {"name": "Cap", "regular_price": "9.5",
                                                               "categories": [{"id": 3}]}},
     Keys({"id": 8, "slug": "cap", "status": "publish", "price": "9.50", "stock_status": "instock"})),
    ("product-create-with-id", "woo_products_create", {"productData": {"name": "Cap", "id": 3}},
     Err("INVALID_ARGUMENT", "productData.id")),
    ("product-create-negative-price", "woo_products_create", {"productData": {"name": "Cap", "regular_price": "-1"}},
     Err("INVALID_ARGUMENT", "regular_price")),
    ("product-create-missing-category", "woo_products_create",
     {"productData": {"name": "Cap", "categories": [{"id": 99}]}}, Err("NOT_FOUND", "category 99")),
    ("product-create-bad-type", "woo_products_create", {"productData": {"name": "Cap", "type": "bundle"}},
     Err("INVALID_ARGUMENT", "type")),
    ("product-update-missing", "woo_products_update", {"productId": 999, "productData": {"name": "x"}},
     Err("NOT_FOUND")),
    ("product-end-sale", "woo_products_update", {"productId": 1, "productData": {"sale_price": ""}},
     Keys({"price": "80.00", "sale_price": "", "on_sale": False})),
    ("product-manage-stock", "woo_products_update", {"productId": 6, "productData": {
        "manage_stock": True, "stock_quantity": 4}}, Keys({"stock_quantity": 4, "stock_status": "instock"})),
    # variations, terms, reviews
    ("variations-second-page", "woo_products_variations_list", {"productId": 7, "perPage": 1, "page": 2},
     Ids([2], 2, 2)),
    ("variations-missing-product", "woo_products_variations_list", {"productId": 99}, Err("NOT_FOUND")),
    ("categories-children", "woo_products_categories_list", {"parent": 1}, Ids([2], 1)),
    ("categories-hide-empty", "woo_products_categories_list", {"hideEmpty": True}, Ids([3, 1, 2], 3)),
    ("category-create-blank", "woo_products_categories_create", {"categoryData": {"name": ""}},
     Err("INVALID_ARGUMENT", "categoryData.name")),
    ("category-create", "woo_products_categories_create", {"categoryData": {"name": "Boots", "parent": 2}},
     Keys({"id": 4, "slug": "boots", "parent": 2, "count": 0})),
    ("category-create-missing-parent", "woo_products_categories_create",
     {"categoryData": {"name": "Boots", "parent": 9}}, Err("NOT_FOUND", "parent category 9")),
    ("tags", "woo_products_tags_list", {}, Keys({"items": [{"id": 2, "name": "summer", "slug": "summer", "count": 1},
                                                         {"id": 1, "name": "winter", "slug": "winter", "count": 2}]})),
    ("reviews-approved", "woo_products_reviews_list", {}, Ids([2, 1], 2)),
    ("reviews-spam", "woo_products_reviews_list", {"status": "spam"}, Ids([4], 1)),
    ("reviews-bad-status", "woo_products_reviews_list", {"status": "deleted"}, Err("INVALID_ARGUMENT", "status")),
    # orders
    ("orders-default", "woo_orders_list", {}, Ids([4, 6, 3, 2, 7, 5, 1], 7, 1)),
    ("orders-whole-output", "woo_orders_list", {"perPage": 100},
     Digest("f8e4de6d59faf66bbc8273bc09e429fd45031b812abc9963f575dcf709d595be")),
    ("orders-completed", "woo_orders_list", {"status": ["completed"]}, Ids([6, 1], 2)),
    ("orders-bad-status", "woo_orders_list", {"status": ["shipped"]}, Err("INVALID_ARGUMENT", "status")),
    ("orders-of-customer", "woo_orders_list", {"customer": 1}, Ids([3, 7, 1])),
    ("orders-of-product", "woo_orders_list", {"product": 1}, Ids([2])),
    ("orders-site-days", "woo_orders_list", {"dateAfter": "2025-03-12", "dateBefore": "2025-03-14"}, Ids([6, 3])),
    ("orders-after-utc", "woo_orders_list", {"dateAfter": "2025-03-14T00:00:00Z"}, Ids([4, 6])),
    ("orders-bad-date", "woo_orders_list", {"dateAfter": "last week"}, Err("INVALID_ARGUMENT", "dateAfter")),
    ("orders-last-partial-page", "woo_orders_list", {"orderby": "id", "order": "asc", "perPage": 2, "page": 4},
     Ids([7], 7, 4)),
    ("orders-past-end", "woo_orders_list", {"perPage": 100, "page": 2}, Ids([], 7, 1)),
    ("orders-bad-orderby", "woo_orders_list", {"orderby": "total"}, Err("INVALID_ARGUMENT", "orderby")),
    ("order-get", "woo_orders_get", {"orderId": 1}, Keys({
        "total": "21.00", "shipping_total": "5.00", "discount_total": "0.00", "date_created": "2025-01-20T10:00:00",
        "date_created_gmt": "2025-01-20T15:00:00", "line_items": [
            {"id": 1, "name": "T-Shirt", "product_id": 4, "variation_id": 0, "sku": "TEE-1", "quantity": 2,
             "price": "8.00", "subtotal": "16.00", "total": "16.00"}],
        "shipping_lines": [{"id": 2, "method_id": "flat_rate", "method_title": "Flat rate", "total": "5.00"}]})),
    ("order-get-missing", "woo_orders_get", {"orderId": 99}, Err("NOT_FOUND", "order 99")),
    ("order-create-object-as-product", "woo_orders_create",
     {"orderData": {"line_items": [{"product_id": {"id": 1}, "quantity": 1}]}}, Err("INVALID_ARGUMENT", "product_id")),
    ("order-create-missing-product", "woo_orders_create",
     {"orderData": {"line_items": [{"product_id": 999, "quantity": 1}]}}, Err("NOT_FOUND", "product 999")),
    ("order-create-zero-quantity", "woo_orders_create",
     {"orderData": {"line_items": [{"product_id": 1, "quantity": 0}]}}, Err("INVALID_ARGUMENT", "quantity")),
    ("order-create-caller-price", "woo_orders_create",
     {"orderData": {"line_items": [{"product_id": 1, "quantity": 1, "price": "0"}]}}, Err("INVALID_ARGUMENT", "price")),
    ("order-create-trash-status", "woo_orders_create", {"orderData": {"status": "trash"}},
     Err("INVALID_ARGUMENT", "status")),
    ("order-create-missing-customer", "woo_orders_create", {"orderData": {"customer_id": 99}},
     Err("NOT_FOUND", "customer 99")),
    ("order-create", "woo_orders_create", {"orderData": {"customer_id": 2, "line_items": [
        {"product_id": 7, "quantity": 1}]}}, Keys({"id": 8, "status": "pending", "total": "40.00", "currency": "USD"})),
    ("order-update-line-items", "woo_orders_update", {"orderId": 4, "orderData": {"line_items": []}},
     Err("INVALID_ARGUMENT", "line_items")),
    ("order-update-total", "woo_orders_update", {"orderId": 4, "orderData": {"total": "1.00"}},
     Err("INVALID_ARGUMENT", "total")),
    ("order-complete", "woo_orders_update", {"orderId": 4, "orderData": {"status": "completed"}},
     Keys({"status": "completed", "date_paid": "2025-03-15T05:00:01", "date_completed": "2025-03-15T05:00:01"})),
    ("order-note", "woo_orders_notes_create", {"orderId": 1, "note": "Shipped"},
     Keys({"id": 1, "note": "Shipped", "customer_note": False, "author": "admin"})),
    ("order-note-missing", "woo_orders_notes_create", {"orderId": 99, "note": "x"}, Err("NOT_FOUND")),
    ("order-refund-full", "woo_orders_refunds_create", {"orderId": 1, "amount": "21"},
     Keys({"id": 1, "amount": "21.00", "refunded_payment": False})),
    ("order-refund-same-line-twice", "woo_orders_refunds_create", {"orderId": 1, "lineItems": [
        {"id": 1, "quantity": 2, "refund_total": "10"}, {"id": 1, "quantity": 1}]},
     Err("INVALID_ARGUMENT", "exceeds the 0 left")),
    ("order-refund-bad-amount", "woo_orders_refunds_create", {"orderId": 1, "amount": "lots"},
     Err("INVALID_ARGUMENT", "amount")),
    # customers
    ("customers-default", "woo_customers_list", {}, Ids([1, 2, 3], 3)),
    ("customers-whole-output", "woo_customers_list", {"perPage": 100},
     Digest("e157851ac1a48323b2aeab816bb64edbfee8f718caabd19c5105f03169abedb4")),
    ("customers-all-roles", "woo_customers_list", {"role": "all", "order": "desc"}, Ids([4, 3, 2, 1], 4)),
    ("customers-by-email", "woo_customers_list", {"email": "BOB@example.com"}, Ids([2], 1)),
    ("customers-bad-orderby", "woo_customers_list", {"orderby": "email"}, Err("INVALID_ARGUMENT", "orderby")),
    ("customer-missing", "woo_customers_get", {"customerId": 99}, Err("NOT_FOUND")),
    ("customer-without-email", "woo_customers_create", {"customerData": {"first_name": "X"}},
     Err("INVALID_ARGUMENT", "email")),
    ("customer-bad-email", "woo_customers_create", {"customerData": {"email": "nobody"}},
     Err("INVALID_ARGUMENT", "e-mail")),
    # coupons
    ("coupons", "woo_coupons_list", {}, Ids([4, 3, 2, 1], 4)),
    ("coupons-by-code", "woo_coupons_list", {"code": "SAVE10"}, Ids([1], 1)),
    ("coupon-get", "woo_coupons_get", {"couponId": 1}, Keys({"code": "save10", "amount": "10.00",
                                                            "discount_type": "percent", "usage_count": 0})),
    ("coupon-bad-amount", "woo_coupons_create", {"couponData": {"code": "NEW", "amount": "abc"}},
     Err("INVALID_ARGUMENT", "amount")),
    ("coupon-update", "woo_coupons_update", {"couponId": 2, "couponData": {"amount": "7", "date_expires": ""}},
     Keys({"amount": "7.00", "date_expires": None})),
    ("coupon-percent-over-100", "woo_coupons_update", {"couponId": 1, "couponData": {"amount": "150"}},
     Err("INVALID_ARGUMENT", "at most 100")),
    ("product-sale-date-far", "woo_products_update", {"productId": 1, "productData": {"date_on_sale_to": "0001-01-01"}},
     Err("INVALID_ARGUMENT", "out of range")),
    ("product-sale-dates-reversed", "woo_products_update", {"productId": 1, "productData": {
        "date_on_sale_to": "2025-02-01"}}, Err("INVALID_ARGUMENT", "after date_on_sale_to")),
    # reports
    ("report-far-date", "woo_reports_sales", {"dateMax": "9999-12-31"}, Err("INVALID_ARGUMENT", "out of range")),
    ("report-bad-period", "woo_reports_sales", {"period": "decade"}, Err("INVALID_ARGUMENT", "period")),
    ("report-orders-month", "woo_reports_orders", {"period": "month"}, Keys({"total_orders": 5})),
    ("report-top-past-end", "woo_reports_top_sellers", {"period": "year", "perPage": 2, "page": 3},
     Ids([], 4, 2, "product_id")),
    # shipping, taxes, settings, gateways, webhooks, system
    ("zones-empty", "woo_shipping_zones_list", {}, Keys({"items": [], "total": 0})),
    ("zone-create", "woo_shipping_zones_create", {"name": "Domestic"}, Keys({"id": 1, "name": "Domestic", "order": 0})),
    ("zone-missing", "woo_shipping_zones_get", {"zoneId": 5}, Err("NOT_FOUND")),
    ("zone-method-missing-zone", "woo_shipping_zone_methods_create", {"zoneId": 5, "methodId": "flat_rate"},
     Err("NOT_FOUND")),
    ("tax-classes", "woo_tax_classes_list", {},
     Keys({"items": [{"slug": "standard", "name": "Standard"}], "total": 1})),
    ("tax-rate-missing", "woo_tax_rates_get", {"rateId": 1}, Err("NOT_FOUND")),
    ("tax-rate-create", "woo_tax_rates_create", {"country": "de", "rate": "19", "name": "MwSt"},
     Keys({"id": 1, "country": "DE", "rate": "19.0000", "class": "standard", "shipping": True})),
    ("tax-rate-unknown-country", "woo_tax_rates_create", {"country": "XX", "rate": "5"},
     Err("INVALID_ARGUMENT", "alpha-2")),
    ("settings-bad-group", "woo_settings_get", {"groupId": "payments"}, Err("INVALID_ARGUMENT", "groupId")),
    ("settings-general", "woo_settings_get", {"groupId": "general"}, Keys({"group": "general"})),
    ("system-tool-unknown", "woo_system_tools_run", {"toolId": "format_disk"}, Err("INVALID_ARGUMENT", "toolId")),
    ("gateway-get", "woo_payment_gateways_get", {"gatewayId": "bacs"}, Keys({
        "enabled": True, "settings": {"account_name": "Shop Ltd", "sort_code": ""}})),
    ("webhooks-empty", "woo_webhooks_list", {}, Ids([], 0, 0)),
    ("webhooks-perpage-over-cap", "woo_webhooks_list", {"perPage": 200}, Err("INVALID_ARGUMENT", "perPage")),
]

# reads after a write case: (tool, arguments, expected)
AFTER: dict[str, tuple[str, dict[str, Any], Any]] = {
    "product-create": ("woo_products_categories_list", {"search": "Accessories"}, Keys({"items": [
        {"id": 3, "name": "Accessories", "slug": "accessories", "parent": 0, "description": "", "display": "default",
         "count": 4}]})),
    "order-complete": ("woo_products_get", {"productId": 7}, Keys({"stock_quantity": 7, "total_sales": 3})),
    "order-refund-full": ("woo_orders_get", {"orderId": 1}, Keys({
        "status": "refunded", "refunds": [{"id": 1, "reason": "", "total": "-21.00"}]})),
    "order-create": ("woo_customers_get", {"customerId": 2}, Keys({"orders_count": 3, "total_spent": "140.00"})),
    "zone-create": ("woo_shipping_zone_methods_create", {"zoneId": 1, "methodId": "free_shipping",
                                                         "settings": {"min_amount": "50"}},
                    Keys({"instance_id": 1, "title": "Free shipping", "enabled": True,
                          "settings": {"title": "Free shipping", "cost": None, "min_amount": "50.00"}})),
}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> World:
    def make(servers: list[str], now: str, tz: str) -> Any:
        meta = WorldMeta(task="test", seed=0, params={}, now=now, tz=tz, generator_version="test")
        return create_world(tmp_path_factory.mktemp("woo") / "world", meta, servers)

    return build_store(make).world


def check(result: tuple[str, bool], expected: Any) -> None:
    text, is_error = result
    if isinstance(expected, Err):
        assert is_error and text.startswith(f"Error [{expected.code}]: "), text
        assert expected.part in text, text
        return
    assert not is_error, text
    if isinstance(expected, Digest):
        assert hashlib.sha256(text.encode()).hexdigest() == expected.sha256, text
        return
    found = json.loads(text)
    if isinstance(expected, Ids):
        assert [item[expected.key] for item in found["items"]] == expected.ids
        assert expected.total is None or found["total"] == expected.total
        assert expected.pages is None or found["totalPages"] == expected.pages
    else:
        assert {k: found[k] for k in expected.keys} == expected.keys


@pytest.mark.parametrize(("name", "tool", "args", "expected"), CASES, ids=[c[0] for c in CASES])
def test_call(name: str, tool: str, args: dict[str, Any], expected: Any, template: World, tmp_path: Path) -> None:
    woo = Woo(toolbox, world_copy(template, tmp_path / "world"))
    check(woo.call(tool, **args), expected)
    if name in AFTER:
        after_tool, after_args, after = AFTER[name]
        check(woo.call(after_tool, **after_args), after)


def test_the_table_is_broad() -> None:
    assert len(CASES) >= 60
    assert {c[1] for c in CASES} >= {"woo_products_list", "woo_orders_list", "woo_customers_list"}
