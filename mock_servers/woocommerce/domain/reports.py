"""Reports over a period of site-local days (week, month, last_month, year or dateMin..dateMax,
relative to the virtual clock), aggregated in SQL; stock reports."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, NamedTuple

from mock_servers.core import paging, sql
from mock_servers.core.errors import invalid
from mock_servers.core.times import calendar_day
from mock_servers.woocommerce.domain import settings
from mock_servers.woocommerce.domain.base import Store, day_bounds, money, page_of
from mock_servers.woocommerce.domain.orders import STATUSES

SALES = "('processing', 'on-hold', 'completed')"


@dataclass(frozen=True)
class Period:
    first: date
    last: date
    start: str  # UTC bounds [start, end) of those site-local days
    end: str

    def head(self) -> dict[str, str]:
        return {"date_min": self.first.isoformat(), "date_max": self.last.isoformat()}


def _day(field: str, text: str) -> date:
    try:
        day = calendar_day(text.strip())
    except ValueError:
        raise invalid(f"{field} '{text}' is not a date (YYYY-MM-DD)") from None
    if not 1900 <= day.year <= 9000:
        raise invalid(f"{field} '{text}' is out of range (years 1900 to 9000)")
    return day


def period(store: Store, name: str | None, date_min: str | None, date_max: str | None) -> Period:
    """The days a report covers: dateMin/dateMax when given (a missing dateMax is today, a missing
    dateMin the first day with an order), else the named period (default week: the last 7 days)."""
    today = store.now.astimezone(store.zone).date()
    if date_min or date_max:
        last = _day("dateMax", date_max) if date_max else today
        if date_min:
            first = _day("dateMin", date_min)
        else:
            earliest = sql.scalar(store.session, "SELECT min(date_created) FROM woo_order")
            first = min(last, _local_day(store, earliest)) if earliest else last
        if first > last:
            raise invalid(f"dateMin {first} is after dateMax {last}")
    elif name == "month":
        first, last = today.replace(day=1), today
    elif name == "last_month":
        last = today.replace(day=1) - timedelta(days=1)
        first = last.replace(day=1)
    elif name == "year":
        first, last = today.replace(month=1, day=1), today
    else:
        first, last = today - timedelta(days=6), today
    start, end = day_bounds(datetime.combine(first, datetime.min.time(), store.zone),
                            datetime.combine(last, datetime.min.time(), store.zone))
    return Period(first, last, start, end)


def _local_day(store: Store, stored: str) -> date:
    return datetime.fromisoformat(stored.replace("Z", "+00:00")).astimezone(store.zone).date()


def _amount(value: float | None) -> Decimal:
    return Decimal(str(round(value or 0.0, 2)))


IN_PERIOD = "o.date_created >= ? AND o.date_created < ?"


def sales(store: Store, p: Period) -> dict[str, Any]:
    count, total, tax, shipping = sql.run(
        store.session, "SELECT count(*), sum(CAST(o.total AS REAL)), sum(CAST(o.total_tax AS REAL)), "
        f"sum(CAST(o.shipping_total AS REAL)) FROM woo_order o WHERE o.status IN {SALES} AND {IN_PERIOD}",
        (p.start, p.end)).fetchone()
    refunds = sql.scalar(store.session, "SELECT sum(CAST(r.amount AS REAL)) FROM woo_refund r JOIN woo_order o ON "
                         f"o.id = r.order_id WHERE o.status IN {SALES} AND {IN_PERIOD}", (p.start, p.end))
    items = sql.scalar(store.session, "SELECT sum(i.quantity) FROM woo_order_item i JOIN woo_order o ON o.id = "
                       f"i.order_id WHERE i.kind = 'line' AND o.status IN {SALES} AND {IN_PERIOD}", (p.start, p.end))
    gross = _amount(total) - _amount(refunds)
    average = gross / count if count else Decimal(0)
    return {**p.head(), "total_sales": money(gross), "net_sales": money(gross - _amount(tax) - _amount(shipping)),
            "total_orders": count, "total_items": items or 0, "average_order_value": money(average)}


class Seller(NamedTuple):
    product_id: int
    name: str
    quantity: int
    revenue: float
    orders: int


def _sellers(store: Store, p: Period, order: str, page: int, per_page: int) -> tuple[list[Seller], int]:
    grouped = ("SELECT i.product_id, coalesce(pr.name, max(i.name)), sum(i.quantity), sum(CAST(i.total AS REAL)), "
               "count(DISTINCT i.order_id) FROM woo_order_item i JOIN woo_order o ON o.id = i.order_id LEFT JOIN "
               f"woo_product pr ON pr.id = i.product_id WHERE i.kind = 'line' AND o.status IN {SALES} AND {IN_PERIOD} "
               "GROUP BY i.product_id")
    return paging.fetch_page(store.session, Seller, f"{grouped} ORDER BY {order}", f"SELECT count(*) FROM ({grouped})",
                             (p.start, p.end), page, per_page)


def top_sellers(store: Store, p: Period, page: int, per_page: int) -> tuple[list[dict[str, Any]], int]:
    found, total = _sellers(store, p, "3 DESC, 1", page, per_page)
    return [{"product_id": s.product_id, "name": s.name, "quantity": s.quantity} for s in found], total


def product_sales(store: Store, p: Period, page: int, per_page: int) -> tuple[list[dict[str, Any]], int]:
    found, total = _sellers(store, p, "3 DESC, 4 DESC, 1", page, per_page)
    return [{"product_id": s.product_id, "name": s.name, "items_sold": s.quantity,
             "net_revenue": money(_amount(s.revenue)), "orders_count": s.orders} for s in found], total


def customers(store: Store, p: Period) -> dict[str, Any]:
    total = sql.scalar(store.session, "SELECT count(*) FROM woo_customer WHERE role = 'customer' AND date_created < ?",
                       (p.end,))
    new = sql.scalar(store.session, "SELECT count(*) FROM woo_customer WHERE role = 'customer' AND date_created >= ? "
                     "AND date_created < ?", (p.start, p.end))
    orders, buyers = sql.run(store.session, "SELECT count(*), count(DISTINCT nullif(o.customer_id, 0)) FROM "
                             f"woo_order o WHERE o.status IN {SALES} AND {IN_PERIOD}", (p.start, p.end)).fetchone()
    return {**p.head(), "total_customers": total, "new_customers": new, "total_orders": orders,
            "average_orders_per_customer": round(orders / buyers, 2) if buyers else 0}


def orders(store: Store, p: Period) -> dict[str, Any]:
    counts = dict.fromkeys(STATUSES, 0) | dict(sql.run(
        store.session, f"SELECT o.status, count(*) FROM woo_order o WHERE o.status != 'trash' AND {IN_PERIOD} "
        "GROUP BY o.status", (p.start, p.end)).fetchall())
    return {**p.head(), "total_orders": sum(counts.values()), "by_status": counts}


class Stock(NamedTuple):
    id: int
    name: str
    sku: str | None
    manage_stock: int
    stock_quantity: int | None
    stock_status: str


def _stock_views(found: list[Stock]) -> list[dict[str, Any]]:
    return [{**s._asdict(), "sku": s.sku or "", "manage_stock": bool(s.manage_stock)} for s in found]


def stock(store: Store, page: int, per_page: int) -> tuple[list[dict[str, Any]], int]:
    found, total = page_of(store.session, Stock, ", ".join(Stock._fields), "FROM woo_product WHERE status != 'trash'",
                           "id", (), page, per_page)
    return _stock_views(found), total


def low_stock(store: Store, page: int, per_page: int) -> tuple[list[dict[str, Any]], int]:
    """Products whose managed stock is at most their low_stock_amount, else the store's threshold."""
    found, total = page_of(store.session, Stock, ", ".join(Stock._fields),
                           "FROM woo_product WHERE status != 'trash' AND manage_stock = 1 AND stock_quantity <= "
                           "coalesce(low_stock_amount, ?)", "stock_quantity, id",
                           (settings.low_stock_threshold(store.session),), page, per_page)
    return _stock_views(found), total
