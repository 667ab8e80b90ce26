"""Report tools: sales, top sellers, customers, orders and products over a period, and stock."""

from __future__ import annotations

from typing import Any

from mock_servers.core.toolkit import Call
from mock_servers.woocommerce.domain import reports
from mock_servers.woocommerce.server.base import (
    DateMax,
    DateMin,
    Page,
    PeriodName,
    PerPage,
    page_result,
    paged,
    store,
    toolbox,
)

PERIOD = ("Period: week (the last 7 days, default), month (this month to date), last_month or year (this year "
          "to date), in site time; dateMin/dateMax (YYYY-MM-DD) override it. Sales count processing, on-hold and "
          "completed orders.")


def _period(call: Call, period: str | None, dateMin: str | None, dateMax: str | None) -> reports.Period:
    return reports.period(store(call), period, dateMin, dateMax)


def _with_period(fn: Any) -> Any:
    fn.__doc__ = f"{fn.__doc__}\n{PERIOD}"
    return fn


@toolbox.tool(rw="read")
@_with_period
def woo_reports_sales(call: Call, period: PeriodName = None, dateMin: DateMin = None,
                      dateMax: DateMax = None) -> dict[str, Any]:
    """Sales totals: total_sales (less refunds), net_sales (less tax and shipping), orders,
    items and the average order value."""
    return reports.sales(store(call), _period(call, period, dateMin, dateMax))


@toolbox.tool(rw="read")
@_with_period
@paged
def woo_reports_top_sellers(call: Call, period: PeriodName = None, dateMin: DateMin = None, dateMax: DateMax = None,
                            perPage: PerPage = 10, page: Page = 1) -> dict[str, Any]:
    """Best-selling products by quantity sold."""
    found = reports.top_sellers(store(call), _period(call, period, dateMin, dateMax), page, perPage)
    return page_result(found, page, perPage)


@toolbox.tool(rw="read")
@_with_period
def woo_reports_customers(call: Call, period: PeriodName = None, dateMin: DateMin = None,
                          dateMax: DateMax = None) -> dict[str, Any]:
    """Customers: registered by the period's end, new in it, their orders in it and orders per
    ordering customer."""
    return reports.customers(store(call), _period(call, period, dateMin, dateMax))


@toolbox.tool(rw="read")
@_with_period
def woo_reports_orders(call: Call, period: PeriodName = None, dateMin: DateMin = None,
                       dateMax: DateMax = None) -> dict[str, Any]:
    """Orders created in the period (every status but trash), with the count per status."""
    return reports.orders(store(call), _period(call, period, dateMin, dateMax))


@toolbox.tool(rw="read")
@_with_period
@paged
def woo_reports_products(call: Call, period: PeriodName = None, dateMin: DateMin = None, dateMax: DateMax = None,
                         perPage: PerPage = 10, page: Page = 1) -> dict[str, Any]:
    """Products sold in the period: items sold, net revenue (line totals after discounts) and
    orders, most sold first."""
    found = reports.product_sales(store(call), _period(call, period, dateMin, dateMax), page, perPage)
    return page_result(found, page, perPage)


@toolbox.tool(rw="read")
@paged
def woo_reports_stock(call: Call, perPage: PerPage = 10, page: Page = 1) -> dict[str, Any]:
    """Stock of every product (not trashed), by id."""
    return page_result(reports.stock(store(call), page, perPage), page, perPage)


@toolbox.tool(rw="read")
@paged
def woo_reports_low_stock(call: Call, perPage: PerPage = 10, page: Page = 1) -> dict[str, Any]:
    """Products whose managed stock is at or below their low_stock_amount, else the store's
    low-stock threshold (setting woocommerce_notify_low_stock_amount, default 10); lowest
    stock first."""
    return page_result(reports.low_stock(store(call), page, perPage), page, perPage)
