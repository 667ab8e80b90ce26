"""Coupons: unique lower-case codes, money as 2-decimal strings, expiry in site time."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.woocommerce.domain.base import (
    Store,
    dumps,
    like,
    money,
    page_of,
    parse_money,
    parse_site_time,
    site_local,
)


class Coupon(NamedTuple):
    id: int
    code: str
    amount: str
    discount_type: str
    date_expires: str | None
    individual_use: int
    product_ids: str
    excluded_product_ids: str
    usage_limit: int | None
    usage_limit_per_user: int | None
    usage_count: int
    limit_usage_to_x_items: int | None
    free_shipping: int
    exclude_sale_items: int
    minimum_amount: str
    maximum_amount: str


COLUMNS = ", ".join(Coupon._fields)
FLAGS = ("individual_use", "free_shipping", "exclude_sale_items")
MONEY = ("amount", "minimum_amount", "maximum_amount")


def view(store: Store, c: Coupon) -> dict[str, Any]:
    out = c._asdict()
    out |= {k: bool(out[k]) for k in FLAGS} | {k: money(out[k]) for k in MONEY}
    out |= {"date_expires": site_local(c.date_expires, store.zone), "product_ids": json.loads(c.product_ids),
            "excluded_product_ids": json.loads(c.excluded_product_ids)}
    return out


def row(store: Store, cid: int) -> Coupon:
    found = sql.first(store.session, Coupon, f"SELECT {COLUMNS} FROM woo_coupon WHERE id = ?", (cid,))
    if found is None:
        raise not_found(f"coupon {cid} not found", hint="use woo_coupons_list to find coupon ids")
    return found


def get(store: Store, cid: int) -> dict[str, Any]:
    return view(store, row(store, cid))


def listing(store: Store, search: str | None, code: str | None, page: int,
            per_page: int) -> tuple[list[dict[str, Any]], int]:
    where, params = ["1 = 1"], []
    if search:
        where.append("code LIKE ? ESCAPE '\\'")
        params.append(like(search.lower()))
    if code:
        where.append("code = ?")
        params.append(code.strip().lower())
    found, total = page_of(store.session, Coupon, COLUMNS, f"FROM woo_coupon WHERE {' AND '.join(where)}",
                           "id DESC", params, page, per_page)
    return [view(store, c) for c in found], total


def write(store: Store, cid: int | None, data: dict[str, Any]) -> int:
    """Create (cid None) or update a coupon from couponData; its id."""
    fields: dict[str, Any] = {}
    if "code" in data:
        code = data["code"].strip().lower()
        if not code:
            raise invalid("couponData.code must not be empty")
        if sql.scalar(store.session, "SELECT id FROM woo_coupon WHERE code = ? AND id IS NOT ?", (code, cid)):
            raise ToolFailure(Code.ALREADY_EXISTS, f"coupon code '{code}' already exists")
        fields["code"] = code
    for key in MONEY:
        if data.get(key) is not None:
            fields[key] = money(parse_money(f"couponData.{key}", data[key]) or 0)
    if "date_expires" in data:
        fields["date_expires"] = None if not data["date_expires"] else parse_site_time(
            "couponData.date_expires", data["date_expires"], store.zone).strftime("%Y-%m-%dT%H:%M:%SZ")
    for key in ("product_ids", "excluded_product_ids"):
        if data.get(key) is not None:
            ids = list(dict.fromkeys(data[key]))
            missing = [i for i in ids if sql.scalar(store.session, "SELECT id FROM woo_product WHERE id = ?", (i,))
                       is None]
            if missing:
                raise not_found(f"couponData.{key}: products {missing} not found")
            fields[key] = dumps(ids)
    for key in ("discount_type", "usage_limit", "usage_limit_per_user", "limit_usage_to_x_items", *FLAGS):
        if key in data:
            fields[key] = data[key]
    old = row(store, cid) if cid is not None else None
    kind = fields.get("discount_type", old.discount_type if old else "fixed_cart")
    if kind == "percent" and float(fields.get("amount", old.amount if old else 0)) > 100:
        raise invalid("a percent coupon's amount must be at most 100")
    if cid is None:
        fields["date_created"] = store.now_z
        return int(sql.run(store.session, f"INSERT INTO woo_coupon ({', '.join(fields)}) VALUES "
                           f"({sql.marks(len(fields))})", tuple(fields.values())).lastrowid or 0)
    if fields:
        sql.run(store.session, f"UPDATE woo_coupon SET {', '.join(f'{k} = ?' for k in fields)} WHERE id = ?",
                (*fields.values(), cid))
    return cid


def delete(store: Store, cid: int) -> dict[str, Any]:
    shown = get(store, cid)
    sql.run(store.session, "DELETE FROM woo_coupon WHERE id = ?", (cid,))
    return shown
