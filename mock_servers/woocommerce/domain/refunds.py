"""Order refunds (bounded by the refundable remainder; a full refund makes the order
refunded) and order notes."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.woocommerce.domain import orders
from mock_servers.woocommerce.domain.base import ZERO, Store, dumps, money, parse_money, site_local


def refunded(store: Store, oid: int) -> Decimal:
    return sum((Decimal(a) for (a,) in sql.run(store.session, "SELECT amount FROM woo_refund WHERE order_id = ?",
                                               (oid,))), ZERO)


def _refunded_items(store: Store, oid: int) -> dict[int, tuple[int, Decimal]]:
    """Per line item id: quantity and total already refunded."""
    done: dict[int, tuple[int, Decimal]] = {}
    for (items,) in sql.run(store.session, "SELECT line_items FROM woo_refund WHERE order_id = ?", (oid,)):
        for item in json.loads(items):
            qty, total = done.get(item["id"], (0, ZERO))
            done[item["id"]] = (qty + item["quantity"], total + Decimal(item["refund_total"]))
    return done


def _lines(store: Store, oid: int, given: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Decimal]:
    """The refund's line items, checked against what each line has left; their amount."""
    own = {r[0]: r for r in sql.run(store.session, "SELECT id, name, quantity, total FROM woo_order_item "
                                    "WHERE order_id = ? AND kind = 'line'", (oid,))}
    done = _refunded_items(store, oid)
    out, amount = [], ZERO
    for n, item in enumerate(given):
        found = own.get(item["id"])
        if found is None:
            raise not_found(f"lineItems[{n}]: line item {item['id']} is not in order {oid}",
                            hint="line item ids are in the order's line_items")
        iid, name, quantity, total = found
        qty_done, total_done = done.get(iid, (0, ZERO))
        qty = item.get("quantity") or 0
        if qty > quantity - qty_done:
            raise invalid(f"lineItems[{n}]: quantity {qty} exceeds the {quantity - qty_done} left to refund")
        line_total = parse_money(f"lineItems[{n}].refund_total", item.get("refund_total")) or ZERO
        line_tax = parse_money(f"lineItems[{n}].refund_tax", item.get("refund_tax")) or ZERO
        if line_total > Decimal(total) - total_done:
            raise invalid(f"lineItems[{n}]: refund_total {money(line_total)} exceeds the "
                          f"{money(Decimal(total) - total_done)} left on line item {iid}")
        done[iid] = (qty_done + qty, total_done + line_total)  # the same line twice counts twice
        out.append({"id": iid, "name": name, "quantity": qty, "refund_total": money(line_total),
                    "refund_tax": money(line_tax)})
        amount += line_total + line_tax
    return out, amount


def create(store: Store, oid: int, amount: str | None, reason: str, refund_payment: bool,
           line_items: list[dict[str, Any]]) -> dict[str, Any]:
    """Refund part or all of an order; a refund that leaves nothing makes it refunded."""
    order = orders.row(store, oid)
    if order.status == "trash":
        raise ToolFailure(Code.FAILED_PRECONDITION, f"order {oid} is in the trash")
    lines, from_lines = _lines(store, oid, line_items)
    value = parse_money("amount", amount)
    if value is None:
        value = from_lines
    if value <= 0:
        raise invalid("a refund needs a positive amount, or lineItems with refund_total")
    left = Decimal(order.total) - refunded(store, oid)
    if value > left:
        raise invalid(f"amount {money(value)} exceeds the refundable remainder {money(left)} of order {oid}")
    if refund_payment and not (order.date_paid and order.payment_method):
        raise ToolFailure(Code.FAILED_PRECONDITION, f"order {oid} has no captured payment to refund",
                          hint="use refundPayment=false to record a manual refund")
    rid = sql.run(store.session, "INSERT INTO woo_refund (order_id, amount, reason, refunded_payment, line_items, "
                  "date_created) VALUES (?, ?, ?, ?, ?, ?)",
                  (oid, money(value), reason, int(refund_payment), dumps(lines), store.now_z)).lastrowid
    if value == left:
        orders.transition(store, oid, "refunded")
    else:
        sql.run(store.session, "UPDATE woo_order SET date_modified = ? WHERE id = ?", (store.now_z, oid))
    return {"id": rid, "amount": money(value), "reason": reason, "line_items": lines,
            "refunded_payment": refund_payment, "date_created": site_local(store.now_z, store.zone)}


def add_note(store: Store, oid: int, note: str, customer_note: bool) -> dict[str, Any]:
    orders.row(store, oid)
    if not note.strip():
        raise invalid("note must not be empty")
    nid = sql.run(store.session, "INSERT INTO woo_order_note (order_id, note, customer_note, author, date_created) "
                  "VALUES (?, ?, ?, 'admin', ?)", (oid, note, int(customer_note), store.now_z)).lastrowid
    return {"id": nid, "note": note, "customer_note": customer_note, "author": "admin",
            "date_created": site_local(store.now_z, store.zone)}
