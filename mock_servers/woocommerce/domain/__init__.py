"""The WooCommerce domain layer, shared by the tools, the seed module and the checkers. Each
module holds one resource; `Store` is the view of the store a call works in."""

from mock_servers.woocommerce.domain import (
    coupons,
    customers,
    orders,
    pricing,
    products,
    refunds,
    reports,
    settings,
    store,
    terms,
)
from mock_servers.woocommerce.domain.base import Store

__all__ = ["Store", "coupons", "customers", "orders", "pricing", "products", "refunds", "reports", "settings",
           "store", "terms"]
