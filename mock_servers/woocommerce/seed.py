"""What generators fill a WooCommerce store with, in bulk (one executemany per table) and
consistent by construction: line items take name, SKU and price (the price in force when the
order was placed) from their product; order totals are computed; orders that took stock
(processing, completed, on-hold) count in total_sales; term counts are recounted. A product's
`stock_quantity` is its stock now, after the orders given."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlmodel import Session

from loca.core.clock import iso_z
from mock_servers.core import sql
from mock_servers.woocommerce.domain import terms
from mock_servers.woocommerce.domain.base import dumps, money, slugify
from mock_servers.woocommerce.domain.customers import password_hash
from mock_servers.woocommerce.domain.orders import PAID, TAKES_STOCK, address
from mock_servers.woocommerce.domain.settings import put


@dataclass
class CategoryDef:
    name: str
    parent: str | None = None  # the parent's name (defined earlier)
    description: str = ""


@dataclass
class ProductDef:
    name: str
    sku: str | None
    regular_price: Decimal | str | None
    created: datetime
    sale_price: Decimal | str | None = None
    sale_from: datetime | None = None
    sale_to: datetime | None = None
    status: str = "publish"
    type: str = "simple"
    featured: bool = False
    manage_stock: bool = True
    stock_quantity: int | None = 0
    stock_status: str = "instock"  # used when stock is not managed
    low_stock_amount: int | None = None
    categories: Sequence[str] = ()  # category names
    tags: Sequence[str] = ()  # tag names (created as needed)
    meta: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    short_description: str = ""
    images: Sequence[str] = ()  # image URLs


@dataclass
class VariationDef:
    product: str  # the variable product's SKU
    sku: str | None
    regular_price: Decimal | str
    attributes: Mapping[str, str]  # name -> option, e.g. {"Size": "M"}
    stock_quantity: int | None = None  # managed when given


@dataclass
class CustomerDef:
    email: str
    first_name: str
    last_name: str
    created: datetime
    username: str | None = None
    role: str = "customer"
    billing: Mapping[str, str] = field(default_factory=dict)
    shipping: Mapping[str, str] = field(default_factory=dict)
    password: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class OrderDef:
    status: str
    created: datetime
    items: Sequence[tuple[str, int]]  # (product SKU, quantity)
    customer: str | None = None  # customer e-mail; None for a guest
    shipping_total: Decimal | str = "0"
    completed: datetime | None = None  # when a completed order was completed (default: when placed)
    payment_method: str = "bacs"
    payment_method_title: str = "Direct bank transfer"
    customer_note: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class CouponDef:
    code: str
    amount: Decimal | str
    created: datetime
    discount_type: str = "fixed_cart"
    expires: datetime | None = None
    usage_limit: int | None = None
    usage_count: int = 0
    minimum_amount: Decimal | str = "0"


@dataclass
class ReviewDef:
    sku: str
    reviewer: str
    rating: int
    created: datetime
    review: str = ""
    status: str = "approved"
    verified: bool = False


@dataclass
class StoreDef:
    categories: Sequence[CategoryDef] = ()
    products: Sequence[ProductDef] = ()
    variations: Sequence[VariationDef] = ()
    customers: Sequence[CustomerDef] = ()
    orders: Sequence[OrderDef] = ()
    coupons: Sequence[CouponDef] = ()
    reviews: Sequence[ReviewDef] = ()
    settings: Mapping[tuple[str, str], Any] = field(default_factory=dict)  # (group, id) -> value
    gateways: Sequence[tuple[str, str, bool, Mapping[str, str]]] = ()  # (id, title, enabled, settings)


@dataclass
class Seeded:
    """The ids given: products by SKU, customers by e-mail, orders in definition order."""

    products: dict[str, int]
    customers: dict[str, int]
    orders: list[int]


def fill(session: Session, store: StoreDef, salt: str = "0") -> Seeded:
    """Insert everything `store` defines into an empty store."""
    cur = sql.cursor(session)
    cats = _categories(cur, store.categories)
    products = _products(cur, store.products, cats)
    cur.executemany("INSERT INTO woo_variation (product_id, sku, regular_price, manage_stock, stock_quantity, "
                    "stock_status, attributes) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(products[v.product], v.sku, money(v.regular_price), int(v.stock_quantity is not None),
                      v.stock_quantity, "outofstock" if v.stock_quantity is not None and v.stock_quantity <= 0
                      else "instock", dumps([{"name": k, "option": o} for k, o in v.attributes.items()]))
                     for v in store.variations])
    customers = _customers(cur, store.customers, salt)
    orders = _orders(cur, store.orders, store.products, products, customers)
    _coupons(cur, store.coupons)
    cur.executemany("INSERT INTO woo_review (product_id, reviewer, review, rating, status, verified, date_created) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(products[r.sku], r.reviewer, r.review, r.rating, r.status, int(r.verified), iso_z(r.created))
                     for r in store.reviews])
    for (group, sid), value in store.settings.items():
        put(session, group, sid, value)
    cur.executemany("INSERT INTO woo_payment_gateway (id, title, description, enabled, method_title, position, "
                    "settings) VALUES (?, ?, '', ?, ?, ?, ?)",
                    [(gid, title, int(on), title, n, dumps(dict(conf)))
                     for n, (gid, title, on, conf) in enumerate(store.gateways)])
    terms.recount_all(session)
    return Seeded(products, customers, orders)


def _categories(cur: Any, defs: Sequence[CategoryDef]) -> dict[str, int]:
    ids: dict[str, int] = {}
    rows = []
    for n, (c, slug) in enumerate(zip(defs, _unique(slugify(c.name) for c in defs)), start=1):
        ids[c.name] = n
        rows.append((n, c.name, slug, ids[c.parent] if c.parent else 0, c.description))
    cur.executemany("INSERT INTO woo_category (id, name, slug, parent, description) VALUES (?, ?, ?, ?, ?)", rows)
    return ids


def _unique(names: Iterable[str]) -> list[str]:
    """Each name, with -2, -3 ... added where an earlier one took it."""
    seen: set[str] = set()
    out = []
    for name in names:
        chosen, n = name, 1
        while chosen in seen:
            n += 1
            chosen = f"{name}-{n}"
        seen.add(chosen)
        out.append(chosen)
    return out


def _money(value: Decimal | str | None) -> str | None:
    return None if value is None or value == "" else money(value)


def _products(cur: Any, defs: Sequence[ProductDef], cats: dict[str, int]) -> dict[str, int]:
    ids: dict[str, int] = {}
    tags: dict[str, int] = {}
    rows, links, tag_links, meta, images = [], [], [], [], []
    for pid, (p, slug) in enumerate(zip(defs, _unique(slugify(p.name) for p in defs)), start=1):
        if p.sku:
            ids[p.sku] = pid
        managed = p.manage_stock
        quantity = (p.stock_quantity or 0) if managed else None
        status = ("instock" if (quantity or 0) > 0 else "outofstock") if managed else p.stock_status
        created = iso_z(p.created)
        rows.append((pid, p.name, slug, p.type, p.status, int(p.featured), p.sku, _money(p.regular_price),
                     _money(p.sale_price), p.sale_from and iso_z(p.sale_from), p.sale_to and iso_z(p.sale_to),
                     int(managed), quantity, status, p.low_stock_amount, p.description, p.short_description, created,
                     created))
        links += [(pid, cats[c]) for c in dict.fromkeys(p.categories)]
        for t in dict.fromkeys(p.tags):
            tags.setdefault(t, len(tags) + 1)
            tag_links.append((pid, tags[t]))
        meta += [("product", pid, k, dumps(v)) for k, v in p.meta.items()]
        images += [(pid, n, src) for n, src in enumerate(p.images)]
    cur.executemany("INSERT INTO woo_tag (id, name, slug) VALUES (?, ?, ?)",
                    [(i, name, slug) for (name, i), slug in zip(tags.items(), _unique(slugify(t) for t in tags))])
    cur.executemany("INSERT INTO woo_product (id, name, slug, type, status, featured, sku, regular_price, sale_price, "
                    "date_on_sale_from, date_on_sale_to, manage_stock, stock_quantity, stock_status, low_stock_amount, "
                    f"description, short_description, date_created, date_modified) VALUES ({sql.marks(19)})", rows)
    cur.executemany("INSERT INTO woo_product_category (product_id, category_id) VALUES (?, ?)", links)
    cur.executemany("INSERT INTO woo_product_tag (product_id, tag_id) VALUES (?, ?)", tag_links)
    cur.executemany("INSERT INTO woo_meta (entity, entity_id, key, value) VALUES (?, ?, ?, ?)", meta)
    cur.executemany("INSERT INTO woo_image (product_id, position, src) VALUES (?, ?, ?)", images)
    return ids


def _customers(cur: Any, defs: Sequence[CustomerDef], salt: str) -> dict[str, int]:
    ids: dict[str, int] = {}
    rows, meta = [], []
    names = _unique(c.username or c.email.strip().lower().split("@")[0] for c in defs)
    for cid, (c, username) in enumerate(zip(defs, names), start=1):
        email = c.email.strip().lower()
        ids[email] = cid
        created = iso_z(c.created)
        secret = password_hash(c.password, f"{salt}:{cid}") if c.password else None
        rows.append((cid, email, c.first_name, c.last_name, username, c.role,
                     secret, dumps(address(dict(c.billing))), dumps(address(dict(c.shipping))), created, created))
        meta += [("customer", cid, k, dumps(v)) for k, v in c.meta.items()]
    cur.executemany("INSERT INTO woo_customer (id, email, first_name, last_name, username, role, password_hash, "
                    f"billing, shipping, date_created, date_modified) VALUES ({sql.marks(11)})", rows)
    cur.executemany("INSERT INTO woo_meta (entity, entity_id, key, value) VALUES (?, ?, ?, ?)", meta)
    return ids


def _price_at(p: ProductDef, when: datetime) -> Decimal:
    on_sale = (p.sale_price not in (None, "") and (p.sale_from is None or p.sale_from <= when)
               and (p.sale_to is None or p.sale_to >= when))
    chosen = p.sale_price if on_sale else p.regular_price
    if chosen in (None, ""):
        raise ValueError(f"product {p.sku} has no price to sell at")
    return Decimal(str(chosen))


def _orders(cur: Any, defs: Sequence[OrderDef], products: Sequence[ProductDef], ids: dict[str, int],
            customers: dict[str, int]) -> list[int]:
    by_sku = {p.sku: p for p in products if p.sku}
    rows, items, meta, sales = [], [], [], dict.fromkeys(ids.values(), 0)
    for oid, o in enumerate(defs, start=1):
        subtotal = Decimal(0)
        for sku, qty in o.items:
            product = by_sku[sku]
            price = _price_at(product, o.created)
            subtotal += price * qty
            items.append((oid, "line", product.name, ids[sku], sku, qty, money(price), money(price * qty),
                          money(price * qty), ""))
            if o.status in TAKES_STOCK:
                sales[ids[sku]] += qty
        shipping = Decimal(str(o.shipping_total))
        if shipping:
            items.append((oid, "shipping", "Flat rate", 0, "", 0, "0.00", money(shipping), money(shipping),
                          "flat_rate"))
        created = iso_z(o.created)
        done = _completed_at(o)
        cid = customers[o.customer.strip().lower()] if o.customer else 0
        rows.append((oid, o.status, created, done or created, created if o.status in PAID else None,
                     done, cid, o.payment_method, o.payment_method_title,
                     money(shipping), money(subtotal + shipping), o.customer_note, int(o.status in TAKES_STOCK)))
        meta += [("order", oid, k, dumps(v)) for k, v in o.meta.items()]
    cur.executemany("INSERT INTO woo_order (id, status, date_created, date_modified, date_paid, date_completed, "
                    "customer_id, payment_method, payment_method_title, shipping_total, total, customer_note, "
                    f"stock_reduced) VALUES ({sql.marks(13)})", rows)
    cur.executemany("INSERT INTO woo_order_item (order_id, kind, name, product_id, sku, quantity, price, subtotal, "
                    f"total, method_id) VALUES ({sql.marks(10)})", items)
    cur.executemany("UPDATE woo_product SET total_sales = ? WHERE id = ?", [(n, pid) for pid, n in sales.items() if n])
    cur.executemany("INSERT INTO woo_meta (entity, entity_id, key, value) VALUES (?, ?, ?, ?)", meta)
    cur.execute("UPDATE woo_order SET billing = (SELECT c.billing FROM woo_customer c WHERE c.id = customer_id), "
                "shipping = (SELECT c.shipping FROM woo_customer c WHERE c.id = customer_id) WHERE customer_id != 0")
    return [r[0] for r in rows]


def _completed_at(o: OrderDef) -> str | None:
    """The stored completion instant of an order: None unless it is completed."""
    if o.status != "completed":
        if o.completed is not None:
            raise ValueError(f"a {o.status} order has no completion date")
        return None
    if o.completed is not None and o.completed < o.created:
        raise ValueError("an order cannot be completed before it was placed")
    return iso_z(o.completed or o.created)


def _coupons(cur: Any, defs: Sequence[CouponDef]) -> None:
    cur.executemany("INSERT INTO woo_coupon (code, amount, discount_type, date_expires, usage_limit, usage_count, "
                    "minimum_amount, date_created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [(c.code.strip().lower(), money(c.amount), c.discount_type, c.expires and iso_z(c.expires),
                      c.usage_limit, c.usage_count, money(c.minimum_amount),
                      iso_z(c.created)) for c in defs])
