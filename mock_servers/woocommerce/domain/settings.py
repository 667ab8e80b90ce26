"""Store settings by group (WooCommerce's own defaults where the world stores no value),
payment gateways and the values other resources read (currency, low-stock threshold)."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.errors import invalid, not_found
from mock_servers.woocommerce.domain.base import dumps

GROUPS: list[tuple[str, str, str]] = [
    ("general", "General", "Store address, selling locations and currency."),
    ("products", "Products", "Product display, measurements, inventory and reviews."),
    ("tax", "Tax", "Tax calculation and display."),
    ("shipping", "Shipping", "Shipping calculations and destinations."),
    ("checkout", "Payments", "Payment gateways and checkout options."),
    ("account", "Accounts & Privacy", "Account creation and personal data retention."),
    ("email", "Emails", "Email sender options and notifications."),
    ("integration", "Integration", "Third-party integrations."),
    ("advanced", "Advanced", "Page setup, REST API and features."),
    ("rest-api", "REST API", "REST API keys and access."),
]

# group -> [(id, label, type, default)]: the settings WooCommerce defines, with its defaults
DEFAULTS: dict[str, list[tuple[str, str, str, Any]]] = {
    "general": [("woocommerce_store_address", "Address line 1", "text", ""),
                ("woocommerce_store_city", "City", "text", ""),
                ("woocommerce_default_country", "Country / State", "select", "US:CA"),
                ("woocommerce_store_postcode", "Postcode / ZIP", "text", ""),
                ("woocommerce_currency", "Currency", "select", "USD"),
                ("woocommerce_price_num_decimals", "Number of decimals", "number", "2"),
                ("woocommerce_calc_taxes", "Enable tax rates and calculations", "checkbox", "no")],
    "products": [("woocommerce_manage_stock", "Manage stock", "checkbox", "yes"),
                 ("woocommerce_notify_low_stock_amount", "Low stock threshold", "number", "10"),
                 ("woocommerce_notify_no_stock_amount", "Out of stock threshold", "number", "0"),
                 ("woocommerce_enable_reviews", "Enable product reviews", "checkbox", "yes")],
    "tax": [("woocommerce_prices_include_tax", "Prices entered with tax", "radio", "no"),
            ("woocommerce_tax_based_on", "Calculate tax based on", "select", "shipping")],
    "shipping": [("woocommerce_ship_to_countries", "Shipping location(s)", "select", ""),
                 ("woocommerce_shipping_cost_requires_address", "Hide shipping costs until an address is "
                  "entered", "checkbox", "no")],
    "checkout": [("woocommerce_enable_guest_checkout", "Guest checkout", "checkbox", "yes")],
    "account": [("woocommerce_enable_myaccount_registration", "Allow customers to create an account",
                 "checkbox", "no")],
    "email": [("woocommerce_email_from_name", "\"From\" name", "text", ""),
              ("woocommerce_email_from_address", "\"From\" address", "email", "")],
    "integration": [],
    "advanced": [("woocommerce_api_enabled", "Enable the legacy REST API", "checkbox", "no")],
    "rest-api": [],
}


def groups() -> list[dict[str, str]]:
    return [{"id": g, "label": label, "description": text} for g, label, text in GROUPS]


def group_settings(session: Session, group: str) -> list[dict[str, Any]]:
    """The group's settings: WooCommerce's defined ones (stored value else default), then any
    others the world stores, in id order."""
    stored = {r[0]: r for r in sql.run(session, "SELECT id, label, type, value FROM woo_setting "
                                       "WHERE group_id = ? ORDER BY id", (group,))}
    out = []
    for sid, label, kind, default in DEFAULTS.get(group, []):
        row = stored.pop(sid, None)
        out.append({"id": sid, "label": label, "type": kind,
                    "value": default if row is None else json.loads(row[3])})
    out += [{"id": r[0], "label": r[1], "type": r[2], "value": json.loads(r[3])} for r in stored.values()]
    return out


def value(session: Session, group: str, sid: str) -> Any:
    found = sql.scalar(session, "SELECT value FROM woo_setting WHERE group_id = ? AND id = ?", (group, sid))
    if found is not None:
        return json.loads(found)
    return next((d for i, _, _, d in DEFAULTS.get(group, []) if i == sid), None)


def currency(session: Session) -> str:
    return str(value(session, "general", "woocommerce_currency") or "USD")


def low_stock_threshold(session: Session) -> int:
    try:
        return int(value(session, "products", "woocommerce_notify_low_stock_amount"))
    except (TypeError, ValueError):
        return 10


def put(session: Session, group: str, sid: str, new: Any, label: str = "", kind: str = "text") -> None:
    defined = {i: (lab, k) for i, lab, k, _ in DEFAULTS.get(group, [])}
    label, kind = defined.get(sid, (label, kind))
    sql.run(session, "INSERT INTO woo_setting (group_id, id, label, type, value) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(group_id, id) DO UPDATE SET value = excluded.value", (group, sid, label, kind, dumps(new)))


# ---- payment gateways ------------------------------------------------------------------------

class Gateway(NamedTuple):
    id: str
    title: str
    description: str
    enabled: int
    method_title: str
    settings: str


GATEWAY_COLUMNS = "id, title, description, enabled, method_title, settings"


def gateway_view(g: Gateway, with_settings: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"id": g.id, "title": g.title, "description": g.description,
                           "enabled": bool(g.enabled), "method_title": g.method_title}
    if with_settings:
        out["settings"] = json.loads(g.settings)
    return out


def gateways(session: Session) -> list[Gateway]:
    return sql.rows(session, Gateway, f"SELECT {GATEWAY_COLUMNS} FROM woo_payment_gateway ORDER BY position, id")


def gateway(session: Session, gid: str) -> Gateway:
    found = sql.first(session, Gateway, f"SELECT {GATEWAY_COLUMNS} FROM woo_payment_gateway WHERE id = ?", (gid,))
    if found is None:
        known = ", ".join(g.id for g in gateways(session)) or "none"
        raise not_found(f"payment gateway '{gid}' not found; gateways: {known}")
    return found


def update_gateway(session: Session, gid: str, changes: dict[str, Any], settings: dict[str, str] | None) -> Gateway:
    """Change a gateway's enabled flag, title, description and defined settings."""
    found = gateway(session, gid)
    current = json.loads(found.settings)
    if settings:
        unknown = sorted(set(settings) - set(current))
        if unknown:
            raise invalid(f"settings {', '.join(unknown)} are not defined by gateway '{gid}'; "
                          f"defined: {', '.join(current) or 'none'}")
        current.update(settings)
    fields = {**changes, "settings": dumps(current)}
    sql.run(session, f"UPDATE woo_payment_gateway SET {', '.join(f'{k} = ?' for k in fields)} WHERE id = ?",
            (*fields.values(), gid))
    return gateway(session, gid)
