"""Customers: the `Customer` projection (order count and spending from their orders, in SQL),
unique e-mails and usernames, passwords kept only as salted PBKDF2 hashes."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.woocommerce.domain import kept
from mock_servers.woocommerce.domain.base import (
    Store,
    dumps,
    like,
    loads_each,
    meta_of,
    money,
    set_meta,
    site_pair,
)
from mock_servers.woocommerce.domain.orders import address

HASH_ROUNDS = 1000
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def password_hash(password: str, salt: str) -> str:
    """`pbkdf2_sha256$<rounds>$<salt>$<hex digest>`; the salt comes from the caller (the
    world's seed and the customer), so worlds stay reproducible."""
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), HASH_ROUNDS).hex()
    return f"pbkdf2_sha256${HASH_ROUNDS}${salt}${digest}"


class Customer(NamedTuple):
    id: int
    email: str
    first_name: str
    last_name: str
    username: str
    role: str
    date_created: str
    billing: str
    shipping: str
    orders_count: int
    total_spent: float | str | None
    paid: int


SPENT = ("(SELECT coalesce(sum(CAST(o.total AS REAL)), 0) - coalesce((SELECT sum(CAST(r.amount AS REAL)) FROM "
         "woo_refund r JOIN woo_order o2 ON o2.id = r.order_id WHERE o2.customer_id = c.id AND o2.status IN "
         "('processing', 'completed')), 0) FROM woo_order o WHERE o.customer_id = c.id AND o.status IN "
         "('processing', 'completed'))")
COLUMNS = ("c.id, c.email, c.first_name, c.last_name, c.username, c.role, c.date_created, c.billing, c.shipping, "
           "(SELECT count(*) FROM woo_order o WHERE o.customer_id = c.id AND o.status != 'trash'), "
           f"{SPENT}, EXISTS (SELECT 1 FROM woo_order o WHERE o.customer_id = c.id AND o.date_paid IS NOT NULL "
           "AND o.status != 'trash')")


def views(store: Store, found: Sequence[Customer]) -> list[dict[str, Any]]:
    meta = meta_of(store.session, "customer", [c.id for c in found])
    stored = loads_each([text for c in found for text in (c.billing, c.shipping)])
    out = []
    for c, billing, shipping in zip(found, stored[::2], stored[1::2]):
        created, created_gmt = site_pair(c.date_created, store.zone)
        out.append({"id": c.id, "email": c.email, "first_name": c.first_name, "last_name": c.last_name,
                    "username": c.username, "role": c.role, "date_created": created, "date_created_gmt": created_gmt,
                    "billing": address(billing), "shipping": address(shipping),
                    "is_paying_customer": bool(c.paid), "orders_count": c.orders_count,
                    "total_spent": money(str(round(float(c.total_spent or 0), 2))), "meta_data": meta[c.id]})
    return out


def get(store: Store, cid: int) -> dict[str, Any]:
    found = sql.first(store.session, Customer, f"SELECT {COLUMNS} FROM woo_customer c WHERE c.id = ?", (cid,))
    if found is None:
        raise not_found(f"customer {cid} not found", hint="use woo_customers_list to find customer ids")
    return views(store, [found])[0]


def built(store: Store, ids: Sequence[int]) -> list[dict[str, Any]]:
    """The views of the customers `ids`, in id order."""
    return views(store, sql.rows(store.session, Customer, f"SELECT {COLUMNS} FROM woo_customer c WHERE c.id IN "
                                 f"({sql.marks(len(ids))}) ORDER BY c.id", ids))


KEPT = "SELECT id FROM woo_customer"  # no customer's view follows the clock


ORDERBY = {"id": "c.id {d}", "include": "c.id {d}", "registered_date": "c.date_created {d}, c.id {d}",
           "name": "(c.first_name || ' ' || c.last_name) COLLATE NOCASE {d}, c.id {d}"}


def listing(store: Store, f: dict[str, Any], page: int, per_page: int) -> tuple[list[dict[str, Any]], int]:
    where, params = ["1 = 1"], []
    if f.get("search"):
        where.append("(c.email LIKE ? ESCAPE '\\' OR c.first_name LIKE ? ESCAPE '\\' OR c.last_name LIKE ? "
                     "ESCAPE '\\' OR c.username LIKE ? ESCAPE '\\' OR (c.first_name || ' ' || c.last_name) LIKE ? "
                     "ESCAPE '\\')")
        params += [like(f["search"])] * 5
    if f.get("email") is not None:
        where.append("c.email = ?")
        params.append(email_address("email", f["email"]))
    if f["role"] != "all":
        where.append("c.role = ?")
        params.append(f["role"])
    order = ORDERBY[f["orderby"]].format(d=f["order"].upper())
    return kept.page(store, "customer", "woo_customer c", f"WHERE {' AND '.join(where)}", order, params, page,
                     per_page, built)


def is_email(text: str) -> bool:
    return bool(_EMAIL.match(text.strip()))


def email_address(field: str, text: str) -> str:
    """An e-mail address as stored (trimmed, lower case), else INVALID_ARGUMENT naming the field."""
    email = text.strip().lower()
    if not is_email(email):
        raise invalid(f"{field} '{text}' is not an e-mail address", hint="e.g. ann@example.com")
    return email


def _email(store: Store, email: str, cid: int | None) -> str:
    email = email_address("customerData.email", email)
    if sql.scalar(store.session, "SELECT id FROM woo_customer WHERE email = ? AND id IS NOT ?", (email, cid)):
        raise ToolFailure(Code.ALREADY_EXISTS, f"a customer with e-mail {email} already exists")
    return email


def _username(store: Store, name: str, cid: int | None) -> str:
    name = name.strip()
    if not name:
        raise invalid("customerData.username must not be empty")
    if sql.scalar(store.session, "SELECT id FROM woo_customer WHERE username = ? AND id IS NOT ?", (name, cid)):
        raise ToolFailure(Code.ALREADY_EXISTS, f"username '{name}' is already taken")
    return name


def write(store: Store, cid: int | None, data: dict[str, Any], salt: str) -> int:
    """Create (cid None) or update a customer from customerData; its id."""
    fields: dict[str, Any] = {}
    if "email" in data:
        fields["email"] = _email(store, data["email"], cid)
    if cid is None:
        base = data.get("username") or fields["email"].split("@")[0]
        name, n = base, 1
        taken = "SELECT 1 FROM woo_customer WHERE username = ?"
        while data.get("username") is None and sql.scalar(store.session, taken, (name,)):
            n += 1
            name = f"{base}{n}"
        fields["username"] = _username(store, name, None)
    elif data.get("username") is not None:
        fields["username"] = _username(store, data["username"], cid)
    for key in ("first_name", "last_name"):
        if data.get(key) is not None:
            fields[key] = data[key]
    if cid is not None:
        found = sql.run(store.session, "SELECT billing, shipping FROM woo_customer WHERE id = ?", (cid,)).fetchone()
        old = {"billing": json.loads(found[0]), "shipping": json.loads(found[1])}
    else:
        old = {"billing": {}, "shipping": {}}
    for key in ("billing", "shipping"):
        if data.get(key) is not None:
            fields[key] = dumps(address({**old[key], **data[key]}))
    fields["date_modified"] = store.now_z
    if cid is None:
        fields["date_created"] = store.now_z
        cid = int(sql.run(store.session, f"INSERT INTO woo_customer ({', '.join(fields)}) VALUES "
                          f"({sql.marks(len(fields))})", tuple(fields.values())).lastrowid or 0)
    else:
        sql.run(store.session, f"UPDATE woo_customer SET {', '.join(f'{k} = ?' for k in fields)} WHERE id = ?",
                (*fields.values(), cid))
    if data.get("password"):
        sql.run(store.session, "UPDATE woo_customer SET password_hash = ? WHERE id = ?",
                (password_hash(data["password"], f"{salt}:{cid}:{store.now_z}"), cid))
    if data.get("meta_data"):
        set_meta(store.session, "customer", cid, [(m["key"], m["value"]) for m in data["meta_data"]])
    return cid


def exists(store: Store, cid: int) -> None:
    if sql.scalar(store.session, "SELECT id FROM woo_customer WHERE id = ?", (cid,)) is None:
        raise not_found(f"customer {cid} not found", hint="use woo_customers_list to find customer ids")
