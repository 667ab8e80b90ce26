"""Shipping zone and tax tools."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from mock_servers.core.toolkit import Call
from mock_servers.core.types import Int
from mock_servers.woocommerce.domain import store as shop
from mock_servers.woocommerce.server.base import (
    Id,
    MoneyText,
    Page,
    PerPage,
    Short,
    Strict,
    fields,
    page_result,
    paged,
    store,
    toolbox,
)

ZoneId = Annotated[Id, Field(description="Shipping zone id")]
ZoneOrder = Annotated[Int, Field(ge=-1_000_000, le=1_000_000, description="Sort order of the zone")]


@toolbox.tool(rw="read")
def woo_shipping_zones_list(call: Call) -> dict[str, Any]:
    """List every shipping zone, in zone order."""
    found = shop.zones(store(call))
    return {"items": found, "total": len(found)}


@toolbox.tool(rw="read")
def woo_shipping_zones_get(call: Call, zoneId: ZoneId) -> dict[str, Any]:
    """Get one shipping zone."""
    return shop.zone(store(call), zoneId)


@toolbox.tool(rw="write")
def woo_shipping_zones_create(call: Call, name: Annotated[str, Field(min_length=1, max_length=200,
                                                                     description="Zone name")],
                              order: ZoneOrder = 0) -> dict[str, Any]:
    """Create a shipping zone."""
    return shop.save_zone(store(call), None, name, order)


@toolbox.tool(rw="write")
def woo_shipping_zones_update(call: Call, zoneId: ZoneId,
                              name: Annotated[str | None, Field(max_length=200, description="New name")] = None,
                              order: Annotated[ZoneOrder | None, Field(description="New sort order")] = None
                              ) -> dict[str, Any]:
    """Rename or reorder a shipping zone."""
    return shop.save_zone(store(call), zoneId, name, order)


@toolbox.tool(rw="read")
def woo_shipping_zone_methods_list(call: Call, zoneId: ZoneId) -> dict[str, Any]:
    """List the shipping methods of a zone."""
    found = shop.methods(store(call), zoneId)
    return {"items": found, "total": len(found)}


class MethodSettings(Strict):
    title: Annotated[Short | None, Field(description="Title shown at checkout (default the method's name)")] = None
    cost: Annotated[MoneyText | None, Field(description="Cost (flat_rate only)")] = None
    min_amount: Annotated[MoneyText | None, Field(description="Minimum order amount (free_shipping only)")] = None


@toolbox.tool(rw="write")
def woo_shipping_zone_methods_create(
        call: Call, zoneId: ZoneId,
        methodId: Annotated[Literal["flat_rate", "free_shipping", "local_pickup"], Field(description="Method type")],
        enabled: Annotated[bool, Field(description="Enabled")] = True,
        settings: Annotated[MethodSettings | None, Field(description="Method settings")] = None) -> dict[str, Any]:
    """Add a shipping method to a zone."""
    return shop.add_method(store(call), zoneId, methodId, enabled, fields(settings) if settings else {})


@toolbox.tool(rw="read")
@paged
def woo_tax_rates_list(call: Call, taxClass: Annotated[str | None, Field(
        max_length=100, description="Only rates of this tax class slug, e.g. standard")] = None,
                       perPage: PerPage = 10, page: Page = 1) -> dict[str, Any]:
    """List tax rates by priority."""
    return page_result(shop.rates(store(call), taxClass, page, perPage), page, perPage)


@toolbox.tool(rw="read")
def woo_tax_rates_get(call: Call, rateId: Annotated[Id, Field(description="Tax rate id")]) -> dict[str, Any]:
    """Get one tax rate."""
    return shop.rate(store(call), rateId)


@toolbox.tool(rw="write")
def woo_tax_rates_create(
        call: Call,
        country: Annotated[str, Field(min_length=2, max_length=2, description="ISO 3166-1 alpha-2 code, e.g. US")],
        rate: Annotated[str, Field(min_length=1, max_length=20, description="Rate in percent, e.g. \"20.0000\"")],
        state: Annotated[str | None, Field(max_length=100, description="State code (empty: every state)")] = None,
        name: Annotated[Short | None, Field(description="Rate name, e.g. VAT")] = None,
        priority: Annotated[Int, Field(ge=1, le=1000, description="Priority (one rate per priority applies)")] = 1,
        compound: Annotated[bool, Field(description="Applied on top of the other taxes")] = False,
        shipping: Annotated[bool, Field(description="Also applied to shipping")] = True,
        class_: Annotated[str, Field(alias="class", min_length=1, max_length=100,
                                     description="Tax class slug (must exist; see woo_tax_classes_list)")] = "standard",
) -> dict[str, Any]:
    """Create a tax rate in an existing tax class (default standard). Per priority, the first
    rate matching an order's country and state applies; compound rates apply on top."""
    return shop.add_rate(store(call), {"country": country, "rate": rate, "state": state, "name": name,
                                       "priority": priority, "compound": compound, "shipping": shipping,
                                       "class": class_})


@toolbox.tool(rw="read")
def woo_tax_classes_list(call: Call) -> dict[str, Any]:
    """List the tax classes (standard first)."""
    found = shop.classes(store(call))
    return {"items": found, "total": len(found)}
