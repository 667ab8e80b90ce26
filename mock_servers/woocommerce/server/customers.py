"""Customer and coupon tools."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from mock_servers.core.errors import invalid
from mock_servers.core.toolkit import Call
from mock_servers.core.types import Int
from mock_servers.woocommerce.domain import coupons, customers
from mock_servers.woocommerce.server.base import (
    DATE_TEXT,
    AddressField,
    DateText,
    Id,
    MetaList,
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


class CustomerUpdate(Strict):
    email: Annotated[str | None, Field(max_length=254, description="E-mail address (unique)")] = None
    first_name: Short | None = None
    last_name: Short | None = None
    username: Annotated[str | None, Field(max_length=60, description="Login name (unique; default from the "
                                          "e-mail)")] = None
    password: Annotated[str | None, Field(max_length=200, description="Password (stored hashed, never shown)")] = None
    billing: AddressField = None
    shipping: AddressField = None
    meta_data: MetaList = None


class CustomerWrite(CustomerUpdate):
    email: Annotated[str, Field(min_length=3, max_length=254, description="E-mail address (unique)")]


CustomerId = Annotated[Id, Field(description="Customer id")]


@toolbox.tool(rw="read", core=True)
@paged
def woo_customers_list(
        call: Call, perPage: PerPage = 10, page: Page = 1,
        search: Annotated[Short | None, Field(description="Text in the e-mail, name or username")] = None,
        email: Annotated[str | None, Field(max_length=254, description="Exact e-mail address")] = None,
        role: Annotated[Literal["all", "customer", "administrator", "shop_manager"], Field(
            description="Role (default customer)")] = "customer",
        orderby: Annotated[Literal["id", "include", "name", "registered_date"], Field(
            description="Sort key (name: first and last name; include: id)")] = "name",
        order: Annotated[Literal["asc", "desc"], Field(description="Sort direction")] = "asc") -> dict[str, Any]:
    """List customers; orders_count, total_spent (processing and completed orders, less
    refunds) and is_paying_customer come from their orders."""
    found = customers.listing(store(call), {"search": search, "email": email, "role": role, "orderby": orderby,
                                            "order": order}, page, perPage)
    return page_result(found, page, perPage)


@toolbox.tool(rw="read", core=True)
def woo_customers_get(call: Call, customerId: CustomerId) -> dict[str, Any]:
    """Get one customer."""
    return customers.get(store(call), customerId)


@toolbox.tool(rw="write")
def woo_customers_create(call: Call, customerData: Annotated[CustomerWrite, Field(
        description="The customer (email required)")]) -> dict[str, Any]:
    """Create a customer (role customer). A taken e-mail or username is ALREADY_EXISTS; the
    password is stored only as a salted hash."""
    s = store(call)
    return customers.get(s, customers.write(s, None, fields(customerData), str(call.world.meta.seed)))


@toolbox.tool(rw="write")
def woo_customers_update(call: Call, customerId: CustomerId, customerData: Annotated[CustomerUpdate, Field(
        description="Customer fields to set; addresses are merged")]) -> dict[str, Any]:
    """Update a customer's given fields."""
    s = store(call)
    customers.exists(s, customerId)
    return customers.get(s, customers.write(s, customerId, fields(customerData), str(call.world.meta.seed)))


# ---- coupons ---------------------------------------------------------------------------------

IdList = Annotated[list[Id] | None, Field(max_length=1000)]


class CouponUpdate(Strict):
    code: Annotated[str | None, Field(max_length=100, description="Coupon code (unique, kept lower-case)")] = None
    discount_type: Annotated[Literal["percent", "fixed_cart", "fixed_product"] | None,
                             Field(description="Discount type")] = None
    amount: Annotated[MoneyText | None, Field(description="Discount amount (percent: 0..100)")] = None
    date_expires: Annotated[DateText | None, Field(description=f"Expiry, {DATE_TEXT}; \"\" removes it")] = None
    individual_use: Annotated[bool | None, Field(description="Cannot be combined with other coupons")] = None
    product_ids: Annotated[IdList, Field(description="Only these products")] = None
    excluded_product_ids: Annotated[IdList, Field(description="Never these products")] = None
    usage_limit: Annotated[Int | None, Field(ge=0, le=1_000_000_000, description="Uses in all")] = None
    usage_limit_per_user: Annotated[Int | None, Field(ge=0, le=1_000_000_000, description="Uses per customer")] = None
    limit_usage_to_x_items: Annotated[Int | None, Field(ge=0, le=1_000_000_000,
                                                        description="Items discounted at most")] = None
    free_shipping: Annotated[bool | None, Field(description="Grants free shipping")] = None
    exclude_sale_items: Annotated[bool | None, Field(description="Not for items on sale")] = None
    minimum_amount: Annotated[MoneyText | None, Field(description="Lowest order subtotal")] = None
    maximum_amount: Annotated[MoneyText | None, Field(description="Highest order subtotal (0: none)")] = None


class CouponWrite(CouponUpdate):
    code: Annotated[str, Field(min_length=1, max_length=100, description="Coupon code (unique)")]
    discount_type: Annotated[Literal["percent", "fixed_cart", "fixed_product"], Field(
        description="Discount type")] = "fixed_cart"


CouponId = Annotated[Id, Field(description="Coupon id")]


@toolbox.tool(rw="read")
@paged
def woo_coupons_list(call: Call, perPage: PerPage = 10, page: Page = 1,
                     search: Annotated[Short | None, Field(description="Text in the code")] = None,
                     code: Annotated[str | None, Field(max_length=100, description="Exact code")] = None,
                     ) -> dict[str, Any]:
    """List coupons, newest first."""
    return page_result(coupons.listing(store(call), search, code, page, perPage), page, perPage)


@toolbox.tool(rw="read")
def woo_coupons_get(call: Call, couponId: CouponId) -> dict[str, Any]:
    """Get one coupon."""
    return coupons.get(store(call), couponId)


@toolbox.tool(rw="write")
def woo_coupons_create(call: Call,
                       couponData: Annotated[CouponWrite, Field(description="The coupon")]) -> dict[str, Any]:
    """Create a coupon; a taken code (in any case) is ALREADY_EXISTS."""
    s = store(call)
    return coupons.get(s, coupons.write(s, None, fields(couponData)))


@toolbox.tool(rw="write")
def woo_coupons_update(call: Call, couponId: CouponId, couponData: Annotated[CouponUpdate, Field(
        description="Coupon fields to set")]) -> dict[str, Any]:
    """Update a coupon's given fields."""
    s = store(call)
    return coupons.get(s, coupons.write(s, couponId, fields(couponData)))


@toolbox.tool(rw="write", destructive=True)
def woo_coupons_delete(call: Call, couponId: CouponId, force: Annotated[bool, Field(
        description="Must be true: coupons cannot be trashed")] = True) -> dict[str, Any]:
    """Delete a coupon for good (coupons have no trash, so force=false is refused)."""
    if not force:
        raise invalid("coupons cannot be trashed; use force=true to delete")
    return coupons.delete(store(call), couponId)


