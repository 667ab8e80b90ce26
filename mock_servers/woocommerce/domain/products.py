"""Products: the `Product` projection, filters and sorting in SQL, and writes that keep
WooCommerce's rules (price and on_sale from the regular and sale prices and sale dates,
stock_status from a managed stock_quantity, unique SKUs, trash before deletion)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any, NamedTuple

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.woocommerce.domain import kept, terms
from mock_servers.woocommerce.domain.base import (
    Store,
    drop_meta,
    like,
    meta_of,
    page_of,
    parse_money,
    parse_site_time,
    set_meta,
    shown_money,
    site_local,
    site_pair,
    slugify,
    stored_money,
    unique_slug,
)


class Product(NamedTuple):
    id: int
    name: str
    slug: str
    type: str
    status: str
    featured: int
    catalog_visibility: str
    sku: str | None
    regular_price: str | None
    sale_price: str | None
    date_on_sale_from: str | None
    date_on_sale_to: str | None
    manage_stock: int
    stock_quantity: int | None
    stock_status: str
    low_stock_amount: int | None
    total_sales: int
    description: str
    short_description: str
    date_created: str
    date_modified: str


COLUMNS = sql.columns(Product, "p")


def on_sale_sql(now_z: str, alias: str = "p") -> str:
    """Whether the sale price applies now (the sale dates bound it when set)."""
    now = sql.quoted([now_z])
    return (f"({alias}.sale_price IS NOT NULL AND ({alias}.date_on_sale_from IS NULL OR "
            f"{alias}.date_on_sale_from <= {now}) AND ({alias}.date_on_sale_to IS NULL OR "
            f"{alias}.date_on_sale_to >= {now}))")


def price_sql(now_z: str, alias: str = "p") -> str:
    """The price a customer pays now, as text (NULL when the product has no price)."""
    return f"(CASE WHEN {on_sale_sql(now_z, alias)} THEN {alias}.sale_price ELSE {alias}.regular_price END)"


def is_on_sale(p: Product, now_z: str) -> bool:
    return (p.sale_price is not None and (p.date_on_sale_from is None or p.date_on_sale_from <= now_z)
            and (p.date_on_sale_to is None or p.date_on_sale_to >= now_z))


def current_price(p: Product, now_z: str) -> str | None:
    return p.sale_price if is_on_sale(p, now_z) else p.regular_price


def views(store: Store, found: Sequence[Product]) -> list[dict[str, Any]]:
    """The `Product` projection of each row, related rows loaded per page, not per product."""
    ids = [p.id for p in found]
    cats = terms.of_products(store.session, "category", ids)
    tags = terms.of_products(store.session, "tag", ids)
    images = _images(store, ids)
    meta = meta_of(store.session, "product", ids)
    out = []
    for p in found:
        created, created_gmt = site_pair(p.date_created, store.zone)
        out.append({
            "id": p.id, "name": p.name, "slug": p.slug, "type": p.type, "status": p.status,
            "featured": bool(p.featured), "catalog_visibility": p.catalog_visibility, "sku": p.sku or "",
            "price": shown_money(current_price(p, store.now_z)), "regular_price": shown_money(p.regular_price),
            "sale_price": shown_money(p.sale_price), "on_sale": is_on_sale(p, store.now_z),
            "date_on_sale_from": site_local(p.date_on_sale_from, store.zone),
            "date_on_sale_to": site_local(p.date_on_sale_to, store.zone),
            "manage_stock": bool(p.manage_stock), "stock_quantity": p.stock_quantity,
            "stock_status": p.stock_status, "low_stock_amount": p.low_stock_amount, "total_sales": p.total_sales,
            "categories": cats[p.id], "tags": tags[p.id], "images": images[p.id], "description": p.description,
            "short_description": p.short_description, "date_created": created, "date_created_gmt": created_gmt,
            "date_modified": site_local(p.date_modified, store.zone), "meta_data": meta[p.id]})
    return out


def _images(store: Store, ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    found: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    if ids:
        for iid, pid, src, name, alt in sql.run(
                store.session, f"SELECT id, product_id, src, name, alt FROM woo_image WHERE product_id IN "
                f"({sql.marks(len(ids))}) ORDER BY position, id", ids):
            found[pid].append({"id": iid, "src": src, "name": name, "alt": alt})
    return found


def row(store: Store, pid: int) -> Product:
    found = sql.first(store.session, Product, f"SELECT {COLUMNS} FROM woo_product p WHERE p.id = ?", (pid,))
    if found is None:
        raise not_found(f"product {pid} not found", hint="use woo_products_list to find product ids")
    return found


def get(store: Store, pid: int) -> dict[str, Any]:
    return views(store, [row(store, pid)])[0]


def built(store: Store, ids: Sequence[int]) -> list[dict[str, Any]]:
    """The views of the products `ids`, in id order."""
    return views(store, sql.rows(store.session, Product, f"SELECT {COLUMNS} FROM woo_product p WHERE p.id IN "
                                 f"({sql.marks(len(ids))}) ORDER BY p.id", ids))


# the products whose view does not follow the clock: not on a dated sale
KEPT = ("SELECT id FROM woo_product WHERE sale_price IS NULL OR (date_on_sale_from IS NULL AND "
        "date_on_sale_to IS NULL)")


# ---- listing ---------------------------------------------------------------------------------

ORDERBY = {
    "date": "p.date_created {d}, p.id {d}", "id": "p.id {d}", "include": "p.id {d}",
    "title": "p.name COLLATE NOCASE {d}, p.id {d}", "slug": "p.slug {d}, p.id {d}",
    "price": "CAST({price} AS REAL) {d}, p.id {d}", "popularity": "p.total_sales {d}, p.id {d}",
    "rating": "(SELECT coalesce(avg(r.rating), 0) FROM woo_review r WHERE r.product_id = p.id "
              "AND r.status = 'approved') {d}, p.id {d}",
}


_SEARCHED = ("name", "sku", "description", "short_description")
_TERM = re.compile(r'"([^"]+)"|(\S+)')


def search_terms(text: str) -> list[str]:
    """The terms of a WordPress search: words, or "quoted phrases"; a product must hold each."""
    return [phrase or word for phrase, word in _TERM.findall(text)]


def ids_param(field: str, text: str) -> list[int]:
    """Ids from "12" or "12,15"."""
    parts = [t.strip() for t in text.split(",")]
    if not parts or not all(t.isascii() and t.isdigit() and len(t) < 19 for t in parts):
        raise invalid(f"{field} '{text}' must be an id or comma-separated ids, e.g. 12 or 12,15")
    return [int(t) for t in parts]


def listing(store: Store, f: dict[str, Any], page: int, per_page: int) -> tuple[list[dict[str, Any]], int]:
    """A page of products matching the filters `f` (the tool's parameters) and the total."""
    price = price_sql(store.now_z)
    where, params = _filters(store, f, price)
    order = ORDERBY[f["orderby"]].format(d=f["order"].upper(), price=price)
    return kept.page(store, "product", "woo_product p", f"WHERE {' AND '.join(where)}", order, params, page,
                     per_page, built)


def _filters(store: Store, f: dict[str, Any], price: str) -> tuple[list[str], list[Any]]:
    status = f.get("status") or "any"
    where: list[str] = ["p.status != 'trash'" if status == "any" else "p.status = ?"]
    params: list[Any] = [] if status == "any" else [status]
    for term in search_terms(f.get("search") or ""):
        where.append("(" + " OR ".join(f"p.{c} LIKE ? ESCAPE '\\'" for c in _SEARCHED) + ")")
        params += [like(term)] * len(_SEARCHED)
    for key, table, column in (("category", "woo_product_category", "category_id"),
                               ("tag", "woo_product_tag", "tag_id")):
        if f.get(key):
            ids = ids_param(key, f[key])
            where.append(f"EXISTS (SELECT 1 FROM {table} t WHERE t.product_id = p.id AND t.{column} IN "
                         f"({sql.marks(len(ids))}))")
            params += ids
    if f.get("sku"):
        skus = [part.strip() for part in f["sku"].split(",")]
        if not all(skus):
            raise invalid(f"sku '{f['sku']}' must be a SKU or comma-separated SKUs, e.g. A-1 or A-1,B-2")
        where.append(f"p.sku IN ({sql.marks(len(skus))})")
        params += skus
    if f.get("featured") is not None:
        where.append("p.featured = ?")
        params.append(int(f["featured"]))
    if f.get("onSale") is not None:
        where.append(on_sale_sql(store.now_z) if f["onSale"] else f"NOT {on_sale_sql(store.now_z)}")
    for key, op in (("minPrice", ">="), ("maxPrice", "<=")):
        if f.get(key) is not None:
            bound = parse_money(key, f[key], allow_empty=False)
            where.append(f"{price} IS NOT NULL AND CAST({price} AS REAL) {op} ?")
            params.append(float(bound or 0))
    if f.get("stockStatus"):
        where.append("p.stock_status = ?")
        params.append(f["stockStatus"])
    return where, params


# ---- writes ----------------------------------------------------------------------------------

SIMPLE = ("name", "type", "status", "featured", "catalog_visibility", "description", "short_description",
          "manage_stock", "stock_quantity", "stock_status", "low_stock_amount")


def create(store: Store, data: dict[str, Any]) -> int:
    """A new product from ProductWrite fields (name required); its id."""
    if not (data.get("name") or "").strip():
        raise invalid("productData.name is required and must not be empty")
    pid = int(sql.run(store.session, "INSERT INTO woo_product (name, slug, date_created, date_modified) "
                      "VALUES (?, '', ?, ?)", (data["name"], store.now_z, store.now_z)).lastrowid or 0)
    _write(store, pid, data, new=True)
    return pid


def update(store: Store, pid: int, data: dict[str, Any]) -> None:
    row(store, pid)
    _write(store, pid, data, new=False)


def _write(store: Store, pid: int, data: dict[str, Any], new: bool) -> None:
    old = row(store, pid)
    fields: dict[str, Any] = {k: data[k] for k in SIMPLE if k in data}
    if "name" in fields and not fields["name"].strip():
        raise invalid("productData.name must not be empty")
    if new:
        fields["slug"] = unique_slug(store.session, "woo_product", slugify(data["name"]), pid)
    if "sku" in data:
        fields["sku"] = _free_sku(store, data["sku"], pid)
    for key in ("regular_price", "sale_price"):
        if key in data:
            fields[key] = stored_money(f"productData.{key}", data[key])
    for key in ("date_on_sale_from", "date_on_sale_to"):
        if key in data:
            fields[key] = None if not data[key] else parse_site_time(
                f"productData.{key}", data[key], store.zone, end_of_day=key.endswith("_to")).strftime(
                "%Y-%m-%dT%H:%M:%SZ")
    merged = old._replace(**fields)
    _check_prices(merged)
    fields |= _stock(merged)
    fields["date_modified"] = store.now_z
    sql.run(store.session, f"UPDATE woo_product SET {', '.join(f'{k} = ?' for k in fields)} WHERE id = ?",
            (*fields.values(), pid))
    before = terms.ids_of(store.session, pid)
    terms.assign(store.session, pid, data.get("categories"), data.get("tags"))
    after = terms.ids_of(store.session, pid)
    terms.recount(store.session, before[0] + after[0], before[1] + after[1])
    if "images" in data:
        _set_images(store, pid, data["images"])
    if "meta_data" in data:
        set_meta(store.session, "product", pid, [(m["key"], m["value"]) for m in data["meta_data"]])


def _free_sku(store: Store, sku: str | None, pid: int) -> str | None:
    sku = (sku or "").strip() or None
    if sku is not None:
        owner = sql.scalar(store.session, "SELECT id FROM woo_product WHERE sku = ? AND id != ? UNION ALL "
                           "SELECT product_id FROM woo_variation WHERE sku = ?", (sku, pid, sku))
        if owner is not None:
            raise ToolFailure(Code.ALREADY_EXISTS, f"SKU '{sku}' is already used by product {owner}",
                              hint="SKUs are unique across products and variations")
    return sku


def _check_prices(p: Product) -> None:
    if p.sale_price is not None:
        if p.regular_price is None:
            raise invalid("sale_price needs a regular_price")
        if Decimal(p.sale_price) >= Decimal(p.regular_price):
            raise invalid(f"sale_price {p.sale_price} must be lower than regular_price {p.regular_price}")
    if p.date_on_sale_from and p.date_on_sale_to and p.date_on_sale_from > p.date_on_sale_to:
        raise invalid("date_on_sale_from is after date_on_sale_to")


def _stock(p: Product) -> dict[str, Any]:
    """With managed stock, stock_status follows stock_quantity; without, there is no quantity."""
    if p.manage_stock:
        quantity = p.stock_quantity or 0
        return {"stock_quantity": quantity, "stock_status": "instock" if quantity > 0 else "outofstock"}
    return {"stock_quantity": None}


def _set_images(store: Store, pid: int, images: list[dict[str, Any]]) -> None:
    sql.run(store.session, "DELETE FROM woo_image WHERE product_id = ?", (pid,))
    for position, image in enumerate(images):
        sql.run(store.session, "INSERT INTO woo_image (product_id, position, src, name, alt) VALUES (?, ?, ?, ?, ?)",
                (pid, position, image["src"], image.get("name") or "", image.get("alt") or ""))


def delete(store: Store, pid: int, force: bool) -> dict[str, Any]:
    """Trash the product (force false) or delete it with its variations; its last view."""
    shown = get(store, pid)
    cats = [c["id"] for c in shown["categories"]]
    tags = [t["id"] for t in shown["tags"]]
    if force:
        drop_meta(store.session, "product", pid)
        sql.run(store.session, "DELETE FROM woo_variation WHERE product_id = ?", (pid,))
        sql.run(store.session, "DELETE FROM woo_product WHERE id = ?", (pid,))
    else:
        if shown["status"] == "trash":
            raise ToolFailure(Code.FAILED_PRECONDITION, f"product {pid} is already in the trash",
                              hint="delete it with force=true")
        sql.run(store.session, "UPDATE woo_product SET status = 'trash', date_modified = ? WHERE id = ?",
                (store.now_z, pid))
        shown = get(store, pid)
    terms.recount(store.session, cats, tags)
    return shown


def change_stock(store: Store, product_id: int, variation_id: int, delta: int, sales: int) -> None:
    """Add `delta` to a managed stock (a variation's when given; stock_status follows) and
    `sales` to the product's total_sales."""
    table, key = ("woo_variation", variation_id) if variation_id else ("woo_product", product_id)
    sql.run(store.session, f"UPDATE {table} SET stock_quantity = stock_quantity + ?, stock_status = CASE "
            "WHEN stock_quantity + ? > 0 THEN 'instock' ELSE 'outofstock' END WHERE id = ? AND manage_stock = 1",
            (delta, delta, key))
    sql.run(store.session, "UPDATE woo_product SET total_sales = max(0, total_sales + ?) WHERE id = ?",
            (sales, product_id))


def variation_views(store: Store, pid: int, page: int, per_page: int) -> tuple[list[dict[str, Any]], int]:
    row(store, pid)
    found, total = page_of(store.session, Variation, VARIATION_COLUMNS, "FROM woo_variation WHERE product_id = ?",
                           "id", (pid,), page, per_page)
    return [{"id": v.id, "sku": v.sku or "", "price": shown_money(v.sale_price or v.regular_price),
             "regular_price": shown_money(v.regular_price), "sale_price": shown_money(v.sale_price),
             "stock_quantity": v.stock_quantity, "stock_status": v.stock_status,
             "attributes": json.loads(v.attributes)} for v in found], total


class Variation(NamedTuple):
    id: int
    product_id: int
    sku: str | None
    regular_price: str | None
    sale_price: str | None
    stock_quantity: int | None
    stock_status: str
    attributes: str


VARIATION_COLUMNS = "id, product_id, sku, regular_price, sale_price, stock_quantity, stock_status, attributes"


def variation(store: Store, pid: int, vid: int) -> Variation:
    found = sql.first(store.session, Variation, f"SELECT {VARIATION_COLUMNS} FROM woo_variation WHERE id = ? "
                      "AND product_id = ?", (vid, pid))
    if found is None:
        raise not_found(f"variation {vid} of product {pid} not found")
    return found
