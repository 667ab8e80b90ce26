"""Shipping zones and their methods, tax rates and classes, webhooks, and the system status
and tools."""

from __future__ import annotations

import json
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from mock_servers.core import sql
from mock_servers.core.errors import invalid, not_found
from mock_servers.woocommerce.domain import settings, terms
from mock_servers.woocommerce.domain.base import Store, dumps, page_of, parse_money, site_local

# ---- shipping --------------------------------------------------------------------------------

def zones(store: Store) -> list[dict[str, Any]]:
    return [{"id": i, "name": n, "order": o} for i, n, o in
            sql.run(store.session, 'SELECT id, name, "order" FROM woo_shipping_zone ORDER BY "order", id')]


def zone(store: Store, zid: int) -> dict[str, Any]:
    found = sql.run(store.session, 'SELECT id, name, "order" FROM woo_shipping_zone WHERE id = ?', (zid,)).fetchone()
    if found is None:
        raise not_found(f"shipping zone {zid} not found", hint="use woo_shipping_zones_list")
    return {"id": found[0], "name": found[1], "order": found[2]}


def save_zone(store: Store, zid: int | None, name: str | None, order: int | None) -> dict[str, Any]:
    if name is not None and not name.strip():
        raise invalid("name must not be empty")
    if zid is None:
        zid = sql.run(store.session, 'INSERT INTO woo_shipping_zone (name, "order") VALUES (?, ?)',
                      (name, order or 0)).lastrowid
    else:
        zone(store, zid)
        for column, value in (("name", name), ('"order"', order)):
            if value is not None:
                sql.run(store.session, f"UPDATE woo_shipping_zone SET {column} = ? WHERE id = ?", (value, zid))
    return zone(store, int(zid or 0))


METHOD_TITLES = {"flat_rate": "Flat rate", "free_shipping": "Free shipping", "local_pickup": "Local pickup"}


def _method_view(row: tuple[Any, ...]) -> dict[str, Any]:
    iid, method_id, enabled, stored = row
    given = json.loads(stored)
    return {"instance_id": iid, "method_id": method_id, "title": given["title"], "enabled": bool(enabled),
            "settings": given}


def methods(store: Store, zid: int) -> list[dict[str, Any]]:
    zone(store, zid)
    return [_method_view(r) for r in sql.run(store.session, "SELECT instance_id, method_id, enabled, settings FROM "
                                             "woo_shipping_method WHERE zone_id = ? ORDER BY instance_id", (zid,))]


def add_method(store: Store, zid: int, method_id: str, enabled: bool, given: dict[str, Any]) -> dict[str, Any]:
    zone(store, zid)
    if given.get("cost") is not None and method_id != "flat_rate":
        raise invalid(f"settings.cost applies to flat_rate only, not {method_id}")
    if given.get("min_amount") is not None and method_id != "free_shipping":
        raise invalid(f"settings.min_amount applies to free_shipping only, not {method_id}")
    cost = parse_money("settings.cost", given.get("cost"))
    minimum = parse_money("settings.min_amount", given.get("min_amount"))
    stored = {"title": (given.get("title") or "").strip() or METHOD_TITLES[method_id],
              "cost": None if cost is None else str(cost), "min_amount": None if minimum is None else str(minimum)}
    iid = sql.run(store.session, "INSERT INTO woo_shipping_method (zone_id, method_id, enabled, settings) VALUES "
                  "(?, ?, ?, ?)", (zid, method_id, int(enabled), dumps(stored))).lastrowid
    return _method_view((iid, method_id, enabled, dumps(stored)))


# ---- taxes -----------------------------------------------------------------------------------

ALPHA_2 = (  # ISO 3166-1 alpha-2 country codes, two letters each
    "ADAEAFAGAIALAMAOAQARASATAUAWAXAZBABBBDBEBFBGBHBIBJBLBMBNBOBQBRBSBTBVBWBYBZCACCCDCFCGCHCICKCLCMCNCOCR"
    "CUCVCWCXCYCZDEDJDKDMDODZECEEEGEHERESETFIFJFKFMFOFRGAGBGDGEGFGGGHGIGLGMGNGPGQGRGSGTGUGWGYHKHMHNHRHTHU"
    "IDIEILIMINIOIQIRISITJEJMJOJPKEKGKHKIKMKNKPKRKWKYKZLALBLCLILKLRLSLTLULVLYMAMCMDMEMFMGMHMKMLMMMNMOMPMQ"
    "MRMSMTMUMVMWMXMYMZNANCNENFNGNINLNONPNRNUNZOMPAPEPFPGPHPKPLPMPNPRPSPTPWPYQARERORSRURWSASBSCSDSESGSHSI"
    "SJSKSLSMSNSOSRSSSTSVSXSYSZTCTDTFTGTHTJTKTLTMTNTOTRTTTVTWTZUAUGUMUSUYUZVAVCVEVGVIVNVUWFWSYEYTZAZMZW")
COUNTRIES = frozenset(ALPHA_2[i:i + 2] for i in range(0, len(ALPHA_2), 2))

class Rate(NamedTuple):
    id: int
    country: str
    state: str
    rate: str
    name: str
    priority: int
    compound: int
    shipping: int
    tax_class: str


RATE_COLUMNS = ", ".join(Rate._fields)


def rate_view(r: Rate) -> dict[str, Any]:
    return {"id": r.id, "country": r.country, "state": r.state, "rate": r.rate, "name": r.name,
            "priority": r.priority, "compound": bool(r.compound), "shipping": bool(r.shipping), "class": r.tax_class}


def rates(store: Store, tax_class: str | None, page: int, per_page: int) -> tuple[list[dict[str, Any]], int]:
    if tax_class is not None:
        known = [c["slug"] for c in classes(store)]
        if tax_class not in known:
            raise invalid(f"taxClass '{tax_class}' is not a tax class slug; classes: {', '.join(known)}")
    where, params = ("WHERE tax_class = ?", [tax_class]) if tax_class else ("", [])
    found, total = page_of(store.session, Rate, RATE_COLUMNS, f"FROM woo_tax_rate {where}", "priority, id", params,
                           page, per_page)
    return [rate_view(r) for r in found], total


def rate(store: Store, rid: int) -> dict[str, Any]:
    found = sql.first(store.session, Rate, f"SELECT {RATE_COLUMNS} FROM woo_tax_rate WHERE id = ?", (rid,))
    if found is None:
        raise not_found(f"tax rate {rid} not found", hint="use woo_tax_rates_list")
    return rate_view(found)


def classes(store: Store) -> list[dict[str, str]]:
    """Standard (built in) first, then the store's own classes."""
    return [{"slug": "standard", "name": "Standard"}] + [
        {"slug": s, "name": n} for s, n in sql.run(store.session, "SELECT slug, name FROM woo_tax_class "
                                                   "WHERE slug != 'standard' ORDER BY name, slug")]


def add_rate(store: Store, data: dict[str, Any]) -> dict[str, Any]:
    country = data["country"].strip().upper()
    if country not in COUNTRIES:
        raise invalid(f"country '{data['country']}' is not an ISO 3166-1 alpha-2 code, e.g. US or DE")
    percent = parse_money("rate", data["rate"], allow_empty=False)
    if percent is None or percent > 100:
        raise invalid(f"rate '{data['rate']}' must be a percentage from 0 to 100")
    known = [c["slug"] for c in classes(store)]
    if data["class"] not in known:
        raise not_found(f"tax class '{data['class']}' does not exist; classes: {', '.join(known)}")
    rid = sql.run(store.session, "INSERT INTO woo_tax_rate (country, state, rate, name, priority, compound, shipping, "
                  "tax_class) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                  (country, (data.get("state") or "").strip().upper(), f"{percent:.4f}", data.get("name") or "",
                   data["priority"], int(data["compound"]), int(data["shipping"]), data["class"])).lastrowid
    return rate(store, int(rid or 0))


# ---- webhooks --------------------------------------------------------------------------------

class Hook(NamedTuple):
    id: int
    name: str
    topic: str
    delivery_url: str
    status: str
    date_created: str
    has_secret: int


HOOK_COLUMNS = "id, name, topic, delivery_url, status, date_created, secret IS NOT NULL AND secret != ''"


def hook_view(store: Store, h: Hook) -> dict[str, Any]:
    return {**h._asdict(), "date_created": site_local(h.date_created, store.zone), "has_secret": bool(h.has_secret)}


def hooks(store: Store, status: str | None, page: int, per_page: int) -> tuple[list[dict[str, Any]], int]:
    where, params = ("WHERE status = ?", [status]) if status else ("", [])
    found, total = page_of(store.session, Hook, HOOK_COLUMNS, f"FROM woo_webhook {where}", "id", params, page, per_page)
    return [hook_view(store, h) for h in found], total


def add_hook(store: Store, name: str, topic: str, url: str, status: str, secret: str | None) -> dict[str, Any]:
    if not name.strip():
        raise invalid("name must not be empty")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise invalid(f"delivery_url '{url}' is not an http(s) URL", hint="e.g. https://example.com/hooks/orders")
    hid = sql.run(store.session, "INSERT INTO woo_webhook (name, topic, delivery_url, status, secret, date_created) "
                  "VALUES (?, ?, ?, ?, ?, ?)", (name, topic, url.strip(), status, secret, store.now_z)).lastrowid
    found = sql.first(store.session, Hook, f"SELECT {HOOK_COLUMNS} FROM woo_webhook WHERE id = ?", (hid,))
    assert found is not None
    return hook_view(store, found)


# ---- system ----------------------------------------------------------------------------------

VERSION = "9.4.0"
SYSTEM_TOOLS: dict[str, tuple[str, str, str]] = {
    "clear_transients": ("WooCommerce transients", "Clear transients", "Clear the product and shop transients cache."),
    "clear_expired_transients": ("Expired transients", "Clear transients", "Clear all expired transients."),
    "clear_orphaned_variations": ("Orphaned variations", "Delete orphaned variations",
                                  "Delete all variations which have no parent product."),
    "add_order_indexes": ("Order address indexes", "Index orders", "Add indexes to the billing and shipping "
                          "addresses of orders to speed up searching."),
    "recount_terms": ("Term counts", "Recount terms", "Recount the products of every category and tag."),
    "reset_roles": ("Capabilities", "Reset capabilities", "Reset the admin, customer and shop_manager roles."),
    "clear_sessions": ("Clear customer sessions", "Clear", "Delete all customer session data (carts)."),
    "clear_template_cache": ("Clear template cache", "Clear", "Empty the template cache."),
    "clear_system_status_theme_info_cache": ("Theme info cache", "Clear", "Clear the cached theme information."),
}


def status(store: Store) -> dict[str, Any]:
    def count(table: str, where: str = "") -> int:
        return int(sql.scalar(store.session, f"SELECT count(*) FROM {table} {where}"))
    environment = {"version": VERSION, "timezone": store.zone.key, "currency": settings.currency(store.session)}
    return {"environment": environment,
            "database": {"counts": {"products": count("woo_product", "WHERE status != 'trash'"),
                                    "orders": count("woo_order", "WHERE status != 'trash'"),
                                    "customers": count("woo_customer"), "coupons": count("woo_coupon")}}}


def system_tools() -> list[dict[str, str]]:
    return [{"id": k, "name": n, "action": a, "description": d} for k, (n, a, d) in SYSTEM_TOOLS.items()]


def run_tool(store: Store, tool: str) -> dict[str, Any]:
    """Run a system tool: those with a meaning in this store do it; the rest have nothing to do."""
    if tool == "recount_terms":
        fixed = terms.recount_all(store.session)
        message = f"Terms recounted: {fixed} counts corrected."
    elif tool == "clear_orphaned_variations":
        gone = sql.run(store.session, "DELETE FROM woo_variation WHERE product_id NOT IN (SELECT id FROM woo_product "
                       "WHERE type = 'variable')").rowcount
        message = f"{gone} orphaned variations deleted."
    else:
        message = f"{SYSTEM_TOOLS[tool][0]}: nothing to do (this store keeps no such data)."
    return {"id": tool, "success": True, "message": message}
