"""System status and tools, settings, payment gateways and webhooks."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from mock_servers.core.toolkit import Call
from mock_servers.woocommerce.domain import settings
from mock_servers.woocommerce.domain import store as shop
from mock_servers.woocommerce.server.base import Page, PerPage, Short, Text, page_result, paged, store, toolbox

SystemTool = Literal["clear_transients", "clear_expired_transients", "clear_orphaned_variations", "add_order_indexes",
                     "recount_terms", "reset_roles", "clear_sessions", "clear_template_cache",
                     "clear_system_status_theme_info_cache"]
Group = Literal["general", "products", "tax", "shipping", "checkout", "account", "email", "integration", "advanced",
                "rest-api"]
Topic = Literal["coupon.created", "coupon.updated", "coupon.deleted", "customer.created", "customer.updated",
                "customer.deleted", "order.created", "order.updated", "order.deleted", "product.created",
                "product.updated", "product.deleted"]
HookStatus = Literal["active", "paused", "disabled"]
GatewayId = Annotated[str, Field(min_length=1, max_length=100, description="Payment gateway id, e.g. bacs")]


@toolbox.tool(rw="read")
def woo_system_status(call: Call) -> dict[str, Any]:
    """Store environment (WooCommerce version, site time zone, currency) and record counts
    (trashed products and orders left out)."""
    return shop.status(store(call))


@toolbox.tool(rw="read")
def woo_system_tools_list(call: Call) -> dict[str, Any]:
    """List the system tools woo_system_tools_run can run."""
    return {"items": shop.system_tools()}


@toolbox.tool(rw="write")
def woo_system_tools_run(call: Call,
                         toolId: Annotated[SystemTool, Field(description="System tool id")]) -> dict[str, Any]:
    """Run a system tool. recount_terms recounts the published products of every category and
    tag; clear_orphaned_variations deletes variations without a variable parent product; the
    others report that there is nothing to do in this store."""
    return shop.run_tool(store(call), toolId)


@toolbox.tool(rw="read")
def woo_settings_list(call: Call) -> dict[str, Any]:
    """List the settings groups."""
    return {"groups": settings.groups()}


@toolbox.tool(rw="read")
def woo_settings_get(call: Call, groupId: Annotated[Group, Field(description="Settings group id")]) -> dict[str, Any]:
    """Get the settings of a group: WooCommerce's defined settings (their defaults where the
    store keeps no value) and any others the store has."""
    return {"group": groupId, "settings": settings.group_settings(call.session, groupId)}


@toolbox.tool(rw="read")
def woo_payment_gateways_list(call: Call) -> dict[str, Any]:
    """List the payment gateways in checkout order."""
    return {"items": [settings.gateway_view(g) for g in settings.gateways(call.session)]}


@toolbox.tool(rw="read")
def woo_payment_gateways_get(call: Call, gatewayId: GatewayId) -> dict[str, Any]:
    """Get a payment gateway with its settings."""
    return settings.gateway_view(settings.gateway(call.session, gatewayId), with_settings=True)


@toolbox.tool(rw="write")
def woo_payment_gateways_update(
        call: Call, gatewayId: GatewayId,
        enabled: Annotated[bool | None, Field(description="Enable or disable the gateway")] = None,
        title: Annotated[Short | None, Field(description="Title shown at checkout")] = None,
        description: Annotated[Text | None, Field(description="Description shown at checkout")] = None,
        settings_: Annotated[dict[str, Annotated[str, Field(max_length=2000)]] | None, Field(
            alias="settings", max_length=50, description="Settings to change; only keys the gateway defines")] = None,
) -> dict[str, Any]:
    """Update a payment gateway; settings keys the gateway does not define are refused."""
    changes: dict[str, Any] = {k: v for k, v in (("enabled", enabled), ("title", title),
                                                 ("description", description)) if v is not None}
    if "enabled" in changes:
        changes["enabled"] = int(changes["enabled"])
    found = settings.update_gateway(call.session, gatewayId, changes, settings_)
    return settings.gateway_view(found, with_settings=True)


@toolbox.tool(rw="read")
@paged
def woo_webhooks_list(call: Call, perPage: PerPage = 10, page: Page = 1,
                      status: Annotated[HookStatus | None, Field(description="Only this status")] = None
                      ) -> dict[str, Any]:
    """List webhooks by id (secrets are never shown: has_secret says whether one is set)."""
    return page_result(shop.hooks(store(call), status, page, perPage), page, perPage)


@toolbox.tool(rw="write")
def woo_webhooks_create(
        call: Call, name: Annotated[str, Field(min_length=1, max_length=200, description="Webhook name")],
        topic: Annotated[Topic, Field(description="Event that triggers it")],
        delivery_url: Annotated[str, Field(min_length=1, max_length=2000, description="http(s) URL to deliver to")],
        status: Annotated[HookStatus, Field(description="Status")] = "active",
        secret: Annotated[str | None, Field(max_length=200, description="Secret that signs deliveries (never "
                                            "shown)")] = None) -> dict[str, Any]:
    """Create a webhook. This store has no network: deliveries are never sent."""
    return shop.add_hook(store(call), name, topic, delivery_url, status, secret)
