"""WooCommerce tools (the 55 of docs/reference/servers.md). Each module registers its tools on the shared
`toolbox`."""

from mock_servers.woocommerce.server import admin, customers, orders, products, reports, store
from mock_servers.woocommerce.server.base import build, toolbox

__all__ = ["admin", "build", "customers", "orders", "products", "reports", "store", "toolbox"]
