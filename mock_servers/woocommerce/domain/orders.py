"""Orders: the `Order` projection, listing in SQL, and writes with WooCommerce's side effects
(line items priced from their product, totals computed, coupons counted, stock taken once on
processing/completed/on-hold and given back once on cancelled, paid and completed dates)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from decimal import Decimal
from typing import Any, NamedTuple

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, not_found
from mock_servers.woocommerce.domain import kept, pricing, products, settings
from mock_servers.woocommerce.domain.base import (
    ZERO,
    Store,
    drop_meta,
    dumps,
    loads_each,
    meta_of,
    money,
    parse_money,
    parse_site_time,
    set_meta,
    site_local,
    site_pair,
)

STATUSES = ("pending", "processing", "on-hold", "completed", "cancelled", "refunded", "failed")
TAKES_STOCK = ("processing", "completed", "on-hold")
PAID = ("processing", "completed")
ADDRESS_KEYS = ("first_name", "last_name", "company", "address_1", "address_2", "city", "state", "postcode",
                "country", "email", "phone")


class Order(NamedTuple):
    id: int
    status: str
    currency: str
    date_created: str
    date_modified: str
    date_paid: str | None
    date_completed: str | None
    customer_id: int
    billing: str
    shipping: str
    payment_method: str
    payment_method_title: str
    coupon_codes: str
    discount_total: str
    shipping_total: str
    total_tax: str
    total: str
    customer_note: str
    stock_reduced: int


COLUMNS = sql.columns(Order, "o")


def address(stored: str | dict[str, Any]) -> dict[str, str]:
    given = json.loads(stored) if isinstance(stored, str) else stored
    return {k: str(given.get(k) or "") for k in ADDRESS_KEYS}


def row(store: Store, oid: int) -> Order:
    found = sql.first(store.session, Order, f"SELECT {COLUMNS} FROM woo_order o WHERE o.id = ?", (oid,))
    if found is None:
        raise not_found(f"order {oid} not found", hint="use woo_orders_list to find order ids")
    return found


def views(store: Store, found: Sequence[Order]) -> list[dict[str, Any]]:
    """The `Order` projection of each row; items, refunds and meta loaded per page."""
    ids = [o.id for o in found]
    lines: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    ships: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    refunds: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    marks = sql.marks(len(ids))
    if ids:
        for iid, oid, kind, name, pid, vid, sku, qty, price, subtotal, total, method in sql.run(
                store.session, "SELECT id, order_id, kind, name, product_id, variation_id, sku, quantity, price, "
                f"subtotal, total, method_id FROM woo_order_item WHERE order_id IN ({marks}) ORDER BY id", ids):
            if kind == "line":
                lines[oid].append({"id": iid, "name": name, "product_id": pid, "variation_id": vid, "sku": sku,
                                   "quantity": qty, "price": money(price), "subtotal": money(subtotal),
                                   "total": money(total)})
            else:
                ships[oid].append({"id": iid, "method_id": method, "method_title": name, "total": money(total)})
        for rid, oid, reason, amount in sql.run(
                store.session, f"SELECT id, order_id, reason, amount FROM woo_refund WHERE order_id IN ({marks}) "
                "ORDER BY id", ids):
            refunds[oid].append({"id": rid, "reason": reason, "total": money(-Decimal(amount))})
    meta = meta_of(store.session, "order", ids)
    stored = loads_each([text for o in found for text in (o.billing, o.shipping)])
    out = []
    for o, billing, shipping in zip(found, stored[::2], stored[1::2]):
        created, created_gmt = site_pair(o.date_created, store.zone)
        out.append({
            "id": o.id, "number": str(o.id), "status": o.status, "currency": o.currency, "date_created": created,
            "date_created_gmt": created_gmt, "date_modified": site_local(o.date_modified, store.zone),
            "date_paid": site_local(o.date_paid, store.zone),
            "date_completed": site_local(o.date_completed, store.zone),
            "customer_id": o.customer_id, "billing": address(billing), "shipping": address(shipping),
            "payment_method": o.payment_method, "payment_method_title": o.payment_method_title,
            "line_items": lines[o.id], "shipping_lines": ships[o.id], "discount_total": money(o.discount_total),
            "shipping_total": money(o.shipping_total), "total_tax": money(o.total_tax), "total": money(o.total),
            "refunds": refunds[o.id], "customer_note": o.customer_note, "meta_data": meta[o.id]})
    return out


def get(store: Store, oid: int) -> dict[str, Any]:
    return views(store, [row(store, oid)])[0]


def built(store: Store, ids: Sequence[int]) -> list[dict[str, Any]]:
    """The views of the orders `ids`, in id order."""
    return views(store, sql.rows(store.session, Order, f"SELECT {COLUMNS} FROM woo_order o WHERE o.id IN "
                                 f"({sql.marks(len(ids))}) ORDER BY o.id", ids))


KEPT = "SELECT id FROM woo_order"  # no order's view follows the clock


ORDERBY = {"date": "o.date_created {d}, o.id {d}", "id": "o.id {d}", "include": "o.id {d}",
           "title": "o.date_created {d}, o.id {d}", "slug": "o.id {d}"}


def listing(store: Store, f: dict[str, Any], page: int, per_page: int) -> tuple[list[dict[str, Any]], int]:
    where: list[str] = []
    params: list[Any] = []
    if f.get("status"):
        statuses = list(dict.fromkeys(f["status"]))
        where.append(f"o.status IN ({sql.marks(len(statuses))})")
        params += statuses
    else:
        where.append("o.status != 'trash'")
    if f.get("customer") is not None:
        where.append("o.customer_id = ?")
        params.append(f["customer"])
    if f.get("product") is not None:
        where.append("EXISTS (SELECT 1 FROM woo_order_item i WHERE i.order_id = o.id AND i.kind = 'line' "
                     "AND i.product_id = ?)")
        params.append(f["product"])
    for key, op in (("dateAfter", ">"), ("dateBefore", "<")):
        if f.get(key):
            where.append(f"o.date_created {op} ?")
            params.append(parse_site_time(key, f[key], store.zone).strftime("%Y-%m-%dT%H:%M:%SZ"))
    order = ORDERBY[f["orderby"]].format(d=f["order"].upper())
    return kept.page(store, "order", "woo_order o", f"WHERE {' AND '.join(where)}", order, params, page, per_page,
                     built)


# ---- writes ----------------------------------------------------------------------------------

def _customer(store: Store, cid: int) -> dict[str, str] | None:
    """The customer's (billing, shipping) JSON, None for a guest (0); NOT_FOUND if missing."""
    if not cid:
        return None
    found = sql.run(store.session, "SELECT billing, shipping FROM woo_customer WHERE id = ?", (cid,)).fetchone()
    if found is None:
        raise not_found(f"customer {cid} not found", hint="use woo_customers_list, or 0 for a guest order")
    return {"billing": found[0], "shipping": found[1]}


def create(store: Store, data: dict[str, Any]) -> int:
    """A new order from OrderWrite fields; its id. Status pending unless given (set_paid:
    processing); stock and dates follow the status."""
    cid = data.get("customer_id") or 0
    known = _customer(store, cid) or {}
    status = data.get("status") or ("processing" if data.get("set_paid") else "pending")
    gateway_title = _gateway_title(store, data.get("payment_method"))
    oid = int(sql.run(store.session, "INSERT INTO woo_order (status, currency, date_created, date_modified, "
                      "customer_id, billing, shipping, payment_method, payment_method_title, customer_note) "
                      "VALUES ('pending', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      (settings.currency(store.session), store.now_z, store.now_z, cid,
                       dumps(address(data.get("billing") or known.get("billing", "{}"))),
                       dumps(address(data.get("shipping") or known.get("shipping", "{}"))),
                       data.get("payment_method") or "", data.get("payment_method_title") or gateway_title,
                       data.get("customer_note") or "")).lastrowid or 0)
    for item in data.get("line_items") or []:
        _add_line(store, oid, item)
    _set_shipping(store, oid, data.get("shipping_lines") or [])
    _set_coupons(store, oid, [c["code"] for c in data.get("coupon_lines") or []], cid)
    if data.get("meta_data"):
        set_meta(store.session, "order", oid, [(m["key"], m["value"]) for m in data["meta_data"]])
    transition(store, oid, status, paid=bool(data.get("set_paid")))
    return oid


def _gateway_title(store: Store, gid: str | None) -> str:
    if not gid:
        return ""
    return str(sql.scalar(store.session, "SELECT title FROM woo_payment_gateway WHERE id = ?", (gid,)) or "")


def _add_line(store: Store, oid: int, item: dict[str, Any]) -> None:
    product = products.row(store, item["product_id"])
    if product.status == "trash":
        raise ToolFailure(Code.FAILED_PRECONDITION, f"product {product.id} is in the trash")
    name, sku, price = product.name, product.sku or "", products.current_price(product, store.now_z)
    vid = item.get("variation_id") or 0
    if vid:
        variation = products.variation(store, product.id, vid)
        options = ", ".join(str(a.get("option", "")) for a in json.loads(variation.attributes))
        name = f"{product.name} - {options}" if options else product.name
        sku = variation.sku or sku
        price = variation.sale_price or variation.regular_price
    if price is None:
        raise ToolFailure(Code.FAILED_PRECONDITION, f"product {product.id} ('{product.name}') has no price",
                          hint="set its regular_price with woo_products_update first")
    subtotal = Decimal(price) * item["quantity"]
    sql.run(store.session, "INSERT INTO woo_order_item (order_id, kind, name, product_id, variation_id, sku, quantity, "
            "price, subtotal, total) VALUES (?, 'line', ?, ?, ?, ?, ?, ?, ?, ?)",
            (oid, name, product.id, vid, sku, item["quantity"], money(price), money(subtotal), money(subtotal)))


def _set_shipping(store: Store, oid: int, lines: list[dict[str, Any]]) -> None:
    sql.run(store.session, "DELETE FROM woo_order_item WHERE order_id = ? AND kind = 'shipping'", (oid,))
    for n, line in enumerate(lines):
        total = parse_money(f"shipping_lines[{n}].total", line.get("total")) or ZERO
        sql.run(store.session, "INSERT INTO woo_order_item (order_id, kind, name, method_id, total, subtotal) "
                "VALUES (?, 'shipping', ?, ?, ?, ?)",
                (oid, line.get("method_title") or line["method_id"], line["method_id"], money(total), money(total)))


def _set_coupons(store: Store, oid: int, codes: list[str], cid: int) -> None:
    """Apply `codes` (replacing any applied before: their usage counts move) and recompute."""
    old = row(store, oid)
    before = json.loads(old.coupon_codes)
    subtotal = sum((Decimal(s) for (s,) in sql.run(
        store.session, "SELECT subtotal FROM woo_order_item WHERE order_id = ? AND kind = 'line'", (oid,))), ZERO)
    removed = [c for c in before if c not in {x.strip().lower() for x in codes}]
    for code in removed:
        sql.run(store.session, "UPDATE woo_coupon SET usage_count = max(0, usage_count - 1) WHERE code = ?", (code,))
    coupons = pricing.check_coupons(store, codes, cid, subtotal, oid)
    for c in coupons:
        if c.code not in before:
            sql.run(store.session, "UPDATE woo_coupon SET usage_count = usage_count + 1 WHERE id = ?", (c.id,))
    sql.run(store.session, "UPDATE woo_order SET coupon_codes = ? WHERE id = ?",
            (dumps([c.code for c in coupons]), oid))
    recompute(store, oid, coupons)


def recompute(store: Store, oid: int, coupons: list[pricing.Coupon] | None = None) -> None:
    """Line totals after coupons, then the order's discount, shipping, tax and grand totals."""
    order = row(store, oid)
    if coupons is None:
        coupons = [pricing.coupon(store, c) for c in json.loads(order.coupon_codes)]
    items = list(sql.run(store.session, "SELECT i.id, i.product_id, i.quantity, i.subtotal, "
                         f"coalesce({products.on_sale_sql(store.now_z)}, 0) FROM woo_order_item i LEFT JOIN "
                         "woo_product p ON p.id = i.product_id WHERE i.order_id = ? AND i.kind = 'line' ORDER BY i.id",
                         (oid,)))
    lines = [pricing.Line(pid, qty, Decimal(sub), bool(sale)) for _, pid, qty, sub, sale in items]
    discount = pricing.apply_coupons(coupons, lines)
    for (iid, *_), line in zip(items, lines):
        sql.run(store.session, "UPDATE woo_order_item SET total = ? WHERE id = ?", (money(line.total), iid))
    shipping = sum((Decimal(t) for (t,) in sql.run(
        store.session, "SELECT total FROM woo_order_item WHERE order_id = ? AND kind = 'shipping'", (oid,))), ZERO)
    goods = sum((ln.total for ln in lines), ZERO)
    where = json.loads(order.shipping) if json.loads(order.shipping).get("country") else json.loads(order.billing)
    taxed = pricing.tax(store, where, goods, shipping)
    sql.run(store.session, "UPDATE woo_order SET discount_total = ?, shipping_total = ?, total_tax = ?, total = ? "
            "WHERE id = ?", (money(discount), money(shipping), money(taxed), money(goods + shipping + taxed), oid))


def update(store: Store, oid: int, data: dict[str, Any]) -> None:
    """Change an order's writable fields (not its line items); status side effects follow."""
    order = row(store, oid)
    fields: dict[str, Any] = {}
    if "customer_id" in data:
        _customer(store, data["customer_id"] or 0)
        fields["customer_id"] = data["customer_id"] or 0
    for key in ("billing", "shipping"):
        if key in data and data[key] is not None:
            fields[key] = dumps(address({**json.loads(getattr(order, key)), **data[key]}))
    for key in ("payment_method", "payment_method_title", "customer_note"):
        if key in data and data[key] is not None:
            fields[key] = data[key]
    if data.get("payment_method") and "payment_method_title" not in data:
        fields["payment_method_title"] = _gateway_title(store, data["payment_method"]) or order.payment_method_title
    fields["date_modified"] = store.now_z
    sql.run(store.session, f"UPDATE woo_order SET {', '.join(f'{k} = ?' for k in fields)} WHERE id = ?",
            (*fields.values(), oid))
    if data.get("shipping_lines") is not None:
        _set_shipping(store, oid, data["shipping_lines"])
    if data.get("coupon_lines") is not None:
        codes = [c["code"] for c in data["coupon_lines"]]
        _set_coupons(store, oid, codes, fields.get("customer_id", order.customer_id))
    elif data.get("shipping_lines") is not None:
        recompute(store, oid)
    if data.get("meta_data"):
        set_meta(store.session, "order", oid, [(m["key"], m["value"]) for m in data["meta_data"]])
    status = data.get("status") or ("processing" if data.get("set_paid") and order.status == "pending" else None)
    if status or data.get("set_paid"):
        transition(store, oid, status or order.status, paid=bool(data.get("set_paid")))


def transition(store: Store, oid: int, status: str, paid: bool = False) -> None:
    """Move an order to `status`: stock taken once on entering processing, completed or
    on-hold, given back once on cancelled; date_paid and date_completed set once."""
    order = row(store, oid)
    reduced = bool(order.stock_reduced)
    if status in TAKES_STOCK and not reduced:
        _move_stock(store, oid, -1)
        reduced = True
    elif status == "cancelled" and reduced:
        _move_stock(store, oid, +1)
        reduced = False
    date_paid = order.date_paid or (store.now_z if paid or status in PAID else None)
    date_completed = order.date_completed or (store.now_z if status == "completed" else None)
    sql.run(store.session, "UPDATE woo_order SET status = ?, stock_reduced = ?, date_paid = ?, date_completed = ?, "
            "date_modified = ? WHERE id = ?", (status, int(reduced), date_paid, date_completed, store.now_z, oid))


def _move_stock(store: Store, oid: int, sign: int) -> None:
    for pid, vid, qty in sql.run(store.session, "SELECT product_id, variation_id, quantity FROM woo_order_item "
                                 "WHERE order_id = ? AND kind = 'line' ORDER BY id", (oid,)).fetchall():
        products.change_stock(store, pid, vid, sign * qty, -sign * qty)


def delete(store: Store, oid: int, force: bool) -> dict[str, Any]:
    """Trash the order (force false) or delete it for good; its last view."""
    shown = get(store, oid)
    if force:
        drop_meta(store.session, "order", oid)
        sql.run(store.session, "DELETE FROM woo_order WHERE id = ?", (oid,))
        return shown
    if shown["status"] == "trash":
        raise ToolFailure(Code.FAILED_PRECONDITION, f"order {oid} is already in the trash",
                          hint="delete it with force=true")
    sql.run(store.session, "UPDATE woo_order SET status = 'trash', date_modified = ? WHERE id = ?", (store.now_z, oid))
    return get(store, oid)
