"""Product categories and tags (with WordPress's term counts: published products), and
product reviews."""

from __future__ import annotations

from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, not_found
from mock_servers.woocommerce.domain.base import Store, like, page_of, site_local, slugify, unique_slug

KINDS = {"category": ("woo_category", "woo_product_category", "category_id"),
         "tag": ("woo_tag", "woo_product_tag", "tag_id")}


def of_products(session: Session, kind: str, ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """The terms of each product: [{id, name, slug}] by name."""
    table, link, column = KINDS[kind]
    found: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    if ids:
        for pid, tid, name, slug in sql.run(
                session, f"SELECT l.product_id, t.id, t.name, t.slug FROM {link} l JOIN {table} t ON t.id = "
                f"l.{column} WHERE l.product_id IN ({sql.marks(len(ids))}) ORDER BY t.name, t.id", ids):
            found[pid].append({"id": tid, "name": name, "slug": slug})
    return found


def ids_of(session: Session, pid: int) -> tuple[list[int], list[int]]:
    """(category ids, tag ids) of a product."""
    return ([r[0] for r in sql.run(session, "SELECT category_id FROM woo_product_category WHERE product_id = ?",
                                   (pid,))],
            [r[0] for r in sql.run(session, "SELECT tag_id FROM woo_product_tag WHERE product_id = ?", (pid,))])


def assign(session: Session, pid: int, categories: list[dict[str, Any]] | None,
           tags: list[dict[str, Any]] | None) -> None:
    """Replace a product's categories and tags (each list given), every id checked."""
    for kind, given in (("category", categories), ("tag", tags)):
        if given is None:
            continue
        table, link, column = KINDS[kind]
        ids = list(dict.fromkeys(int(t["id"]) for t in given))
        for tid in ids:
            if sql.scalar(session, f"SELECT id FROM {table} WHERE id = ?", (tid,)) is None:
                lister = "categories" if kind == "category" else "tags"
                raise not_found(f"{kind} {tid} not found", hint=f"use woo_products_{lister}_list")
        sql.run(session, f"DELETE FROM {link} WHERE product_id = ?", (pid,))
        sql.cursor(session).executemany(f"INSERT INTO {link} (product_id, {column}) VALUES (?, ?)",
                                        [(pid, tid) for tid in ids])


def _count_sql(kind: str) -> str:
    table, link, column = KINDS[kind]
    return (f"(SELECT count(*) FROM {link} l JOIN woo_product p ON p.id = l.product_id "
            f"WHERE l.{column} = {table}.id AND p.status = 'publish')")


def recount(session: Session, categories: list[int], tags: list[int]) -> None:
    """Recount the given terms."""
    for kind, ids in (("category", categories), ("tag", tags)):
        if ids:
            ids = sorted(set(ids))
            sql.run(session, f"UPDATE {KINDS[kind][0]} SET count = {_count_sql(kind)} WHERE id IN "
                    f"({sql.marks(len(ids))})", ids)


def recount_all(session: Session) -> int:
    """Recount every term; how many counts were wrong."""
    fixed = 0
    for kind in KINDS:
        fixed += sql.run(session, f"UPDATE {KINDS[kind][0]} SET count = {_count_sql(kind)} "
                         f"WHERE count != {_count_sql(kind)}").rowcount
    return fixed


# ---- categories and tags ---------------------------------------------------------------------

class Category(NamedTuple):
    id: int
    name: str
    slug: str
    parent: int
    description: str
    display: str
    products: int  # the term's count


CATEGORY_COLUMNS = "id, name, slug, parent, description, display, count"


def category_view(c: Category) -> dict[str, Any]:
    return {"id": c.id, "name": c.name, "slug": c.slug, "parent": c.parent, "description": c.description,
            "display": c.display, "count": c.products}


def categories(store: Store, search: str | None, parent: int | None, hide_empty: bool, page: int,
               per_page: int) -> tuple[list[dict[str, Any]], int]:
    where: list[str] = ["1 = 1"]
    params: list[Any] = []
    if search:
        where.append("name LIKE ? ESCAPE '\\'")
        params.append(like(search))
    if parent is not None:
        where.append("parent = ?")
        params.append(parent)
    if hide_empty:
        where.append("count > 0")
    found, total = page_of(store.session, Category, CATEGORY_COLUMNS, f"FROM woo_category WHERE {' AND '.join(where)}",
                           "name COLLATE NOCASE, id", params, page, per_page)
    return [category_view(c) for c in found], total


def create_category(store: Store, data: dict[str, Any]) -> dict[str, Any]:
    name = data["name"].strip()
    parent = data.get("parent") or 0
    if parent and sql.scalar(store.session, "SELECT id FROM woo_category WHERE id = ?", (parent,)) is None:
        raise not_found(f"parent category {parent} not found")
    if sql.scalar(store.session, "SELECT id FROM woo_category WHERE parent = ? AND name = ?", (parent, name)):
        raise ToolFailure(Code.ALREADY_EXISTS, f"a category named '{name}' already exists under parent {parent}")
    if data.get("slug"):
        slug = slugify(data["slug"])
        if sql.scalar(store.session, "SELECT id FROM woo_category WHERE slug = ?", (slug,)):
            raise ToolFailure(Code.ALREADY_EXISTS, f"category slug '{slug}' is already used")
    else:
        slug = unique_slug(store.session, "woo_category", slugify(name))
    image = (data.get("image") or {}).get("src")
    cid = sql.run(store.session, "INSERT INTO woo_category (name, slug, parent, description, display, image, "
                  "menu_order, count) VALUES (?, ?, ?, ?, ?, ?, ?, 0)",
                  (name, slug, parent, data.get("description") or "", data.get("display") or "default", image,
                   data.get("menuOrder") or 0)).lastrowid
    found = sql.first(store.session, Category, f"SELECT {CATEGORY_COLUMNS} FROM woo_category WHERE id = ?", (cid,))
    assert found is not None
    return category_view(found)


class Tag(NamedTuple):
    id: int
    name: str
    slug: str
    products: int  # the term's count


def tags(store: Store, search: str | None, hide_empty: bool, page: int,
         per_page: int) -> tuple[list[dict[str, Any]], int]:
    where, params = ["1 = 1"], []
    if search:
        where.append("name LIKE ? ESCAPE '\\'")
        params.append(like(search))
    if hide_empty:
        where.append("count > 0")
    found, total = page_of(store.session, Tag, "id, name, slug, count", f"FROM woo_tag WHERE {' AND '.join(where)}",
                           "name COLLATE NOCASE, id", params, page, per_page)
    return [{"id": t.id, "name": t.name, "slug": t.slug, "count": t.products} for t in found], total


# ---- reviews ---------------------------------------------------------------------------------

class Review(NamedTuple):
    id: int
    product_id: int
    reviewer: str
    review: str
    rating: int
    status: str
    verified: int
    date_created: str


def reviews(store: Store, product_id: int | None, status: str, page: int,
            per_page: int) -> tuple[list[dict[str, Any]], int]:
    """Reviews newest first; status `all` is held and approved ones (not spam or trash)."""
    where: list[str] = []
    params: list[Any] = []
    if product_id is not None:
        if sql.scalar(store.session, "SELECT id FROM woo_product WHERE id = ?", (product_id,)) is None:
            raise not_found(f"product {product_id} not found")
        where.append("product_id = ?")
        params.append(product_id)
    if status == "all":
        where.append("status IN ('hold', 'approved')")
    else:
        where.append("status = ?")
        params.append(status)
    found, total = page_of(store.session, Review, ", ".join(Review._fields),
                           f"FROM woo_review WHERE {' AND '.join(where)}", "date_created DESC, id DESC", params,
                           page, per_page)
    return [{**r._asdict(), "verified": bool(r.verified), "date_created": site_local(r.date_created, store.zone)}
            for r in found], total
