"""Order arithmetic in Decimal: line items priced from their product, coupons checked and
applied (percent, fixed cart, fixed product), tax from the store's rates when the store
calculates taxes, and the order totals."""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, not_found
from mock_servers.woocommerce.domain import settings
from mock_servers.woocommerce.domain.base import CENT, ZERO, Store, money


@dataclass
class Line:
    """One line item being priced: its product, quantity, subtotal and (discounted) total."""

    product_id: int
    quantity: int
    subtotal: Decimal
    on_sale: bool
    total: Decimal = ZERO


@dataclass
class Coupon:
    id: int
    code: str
    amount: Decimal
    discount_type: str
    date_expires: str | None
    individual_use: bool
    product_ids: list[int]
    excluded_product_ids: list[int]
    usage_limit: int | None
    usage_limit_per_user: int | None
    usage_count: int
    limit_usage_to_x_items: int | None
    exclude_sale_items: bool
    minimum_amount: Decimal
    maximum_amount: Decimal


COUPON_SQL = ("SELECT id, code, amount, discount_type, date_expires, individual_use, product_ids, "
              "excluded_product_ids, usage_limit, usage_limit_per_user, usage_count, limit_usage_to_x_items, "
              "exclude_sale_items, minimum_amount, maximum_amount FROM woo_coupon WHERE code = ?")


def coupon(store: Store, code: str) -> Coupon:
    found = sql.run(store.session, COUPON_SQL, (code.strip().lower(),)).fetchone()
    if found is None:
        raise not_found(f"coupon '{code}' not found", hint="use woo_coupons_list to see coupon codes")
    (cid, code, amount, kind, expires, individual, pids, excluded, limit, per_user, used, x_items, no_sale,
     minimum, maximum) = found
    return Coupon(cid, code, Decimal(amount), kind, expires, bool(individual), json.loads(pids), json.loads(excluded),
                  limit, per_user, used, x_items, bool(no_sale), Decimal(minimum), Decimal(maximum))


def check_coupons(store: Store, codes: list[str], customer_id: int, subtotal: Decimal,
                  order_id: int | None = None) -> list[Coupon]:
    """The coupons of `codes`, each usable on an order of `subtotal` by `customer_id` now."""
    found = [coupon(store, c) for c in dict.fromkeys(c.strip().lower() for c in codes)]
    for c in found:
        def fail(why: str, c: Coupon = c) -> ToolFailure:
            return ToolFailure(Code.FAILED_PRECONDITION, f"coupon '{c.code}' {why}")
        if c.date_expires and c.date_expires <= store.now_z:
            raise fail("has expired")
        if c.usage_limit is not None and c.usage_count >= c.usage_limit:
            raise fail(f"has reached its usage limit ({c.usage_limit})")
        if c.usage_limit_per_user is not None and customer_id:
            used = sql.scalar(store.session, "SELECT count(*) FROM woo_order o, json_each(o.coupon_codes) j "
                              "WHERE o.customer_id = ? AND j.value = ? AND o.id IS NOT ? AND o.status NOT IN "
                              "('cancelled', 'failed', 'trash')", (customer_id, c.code, order_id))
            if used >= c.usage_limit_per_user:
                raise fail(f"was already used {used} times by customer {customer_id} "
                           f"(limit {c.usage_limit_per_user})")
        if c.minimum_amount > 0 and subtotal < c.minimum_amount:
            raise fail(f"needs an order subtotal of at least {money(c.minimum_amount)}")
        if c.maximum_amount > 0 and subtotal > c.maximum_amount:
            raise fail(f"allows an order subtotal of at most {money(c.maximum_amount)}")
        if c.individual_use and len(found) > 1:
            raise fail("is for individual use only and cannot be combined with other coupons")
    return found


def _eligible(c: Coupon, line: Line) -> bool:
    return ((not c.product_ids or line.product_id in c.product_ids) and line.product_id not in c.excluded_product_ids
            and not (c.exclude_sale_items and line.on_sale))


def apply_coupons(coupons: list[Coupon], lines: list[Line]) -> Decimal:
    """Set each line's total after the coupons (applied in order); the discount total."""
    for line in lines:
        line.total = line.subtotal
    for c in coupons:
        eligible = [ln for ln in lines if _eligible(c, ln) and ln.total > 0]
        if c.discount_type == "fixed_cart":
            base = sum((ln.total for ln in eligible), ZERO)
            left = min(c.amount, base)
            for n, ln in enumerate(eligible):
                share = left if n == len(eligible) - 1 else (c.amount * ln.total / base).quantize(CENT, ROUND_HALF_UP)
                share = min(share, ln.total, left)
                ln.total -= share
                left -= share
            continue
        units = c.limit_usage_to_x_items
        for ln in eligible:
            qty = ln.quantity if units is None else min(ln.quantity, units)
            if units is not None:
                units -= qty
            unit = ln.subtotal / ln.quantity
            cut = unit * qty * c.amount / 100 if c.discount_type == "percent" else c.amount * qty
            ln.total -= min(cut.quantize(CENT, ROUND_HALF_UP), ln.total)
    return sum((ln.subtotal - ln.total for ln in lines), ZERO)


def tax(store: Store, address: dict[str, Any], items: Decimal, shipping: Decimal) -> Decimal:
    """Tax of the standard class for `address` (country, state), when the store calculates taxes:
    per priority the first matching rate; compound rates apply on top of the others."""
    if settings.value(store.session, "general", "woocommerce_calc_taxes") != "yes":
        return ZERO
    country, state = (address.get("country") or "").upper(), (address.get("state") or "").upper()
    chosen: dict[int, tuple[Decimal, bool, bool]] = {}
    for rate, priority, compound, on_shipping in sql.run(
            store.session, "SELECT rate, priority, compound, shipping FROM woo_tax_rate WHERE tax_class = 'standard' "
            "AND country IN (?, '') AND state IN (?, '') ORDER BY priority, state = '', country = '', id",
            (country, state)):
        chosen.setdefault(priority, (Decimal(rate), bool(compound), bool(on_shipping)))
    total = ZERO
    for compound_pass in (False, True):
        for rate, compound, on_shipping in chosen.values():
            if compound == compound_pass:
                base = items + (shipping if on_shipping else ZERO) + (total if compound else ZERO)
                total += (base * rate / 100).quantize(CENT, ROUND_HALF_UP)
    return total
