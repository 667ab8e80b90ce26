"""WooCommerce mock server: products, orders, customers, coupons, reports, shipping, taxes,
settings, payment gateways, webhooks and system tools, as the WooCommerce REST API has them."""

from mock_servers.woocommerce import domain as domain
from mock_servers.woocommerce import models as models
from mock_servers.woocommerce.server import build, toolbox

__all__ = ["build", "domain", "models", "toolbox"]
