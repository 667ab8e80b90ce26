"""Order tools: orders (list, get, create, update, delete, batch), notes and refunds."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from mock_servers.core.toolkit import Call
from mock_servers.core.types import Int
from mock_servers.woocommerce.domain import orders, refunds
from mock_servers.woocommerce.server.base import (
    DATE_TEXT,
    MAX_BATCH,
    AddressField,
    DateBound,
    Id,
    MetaList,
    MoneyText,
    Order,
    Page,
    PerPage,
    Short,
    Strict,
    Text,
    fields,
    page_result,
    paged,
    run_batch,
    store,
    toolbox,
)

Status = Literal["pending", "processing", "on-hold", "completed", "cancelled", "refunded", "failed"]


class LineItemWrite(Strict):
    product_id: Annotated[Id, Field(description="Product id (name, SKU and price come from the product)")]
    variation_id: Annotated[Int | None, Field(ge=0, le=2**63 - 1, description="Variation id of that product")] = None
    quantity: Annotated[Int, Field(ge=1, le=100_000, description="Quantity")]


class ShippingLineWrite(Strict):
    method_id: Annotated[str, Field(min_length=1, max_length=100, description="Shipping method id, e.g. flat_rate")]
    method_title: Annotated[Short | None, Field(description="Title shown to the customer")] = None
    total: Annotated[MoneyText | None, Field(description="Shipping cost")] = None


class CouponLineWrite(Strict):
    code: Annotated[str, Field(min_length=1, max_length=100, description="Coupon code")]


class OrderFields(Strict):
    status: Annotated[Status | None, Field(description="Order status")] = None
    customer_id: Annotated[Int | None, Field(ge=0, le=2**63 - 1, description="Customer id (0: guest)")] = None
    payment_method: Annotated[Short | None, Field(description="Payment gateway id, e.g. bacs")] = None
    payment_method_title: Annotated[Short | None, Field(description="Payment method title")] = None
    set_paid: Annotated[bool | None, Field(description="Mark paid: date_paid set, a pending order becomes "
                                           "processing")] = None
    billing: AddressField = None
    shipping: AddressField = None
    shipping_lines: Annotated[list[ShippingLineWrite] | None, Field(max_length=20, description=(
        "Shipping lines (replace the current ones)"))] = None
    coupon_lines: Annotated[list[CouponLineWrite] | None, Field(max_length=20, description=(
        "Coupons to apply (replace the current ones)"))] = None
    customer_note: Annotated[Text | None, Field(description="Note from the customer")] = None
    meta_data: MetaList = None


class OrderWrite(OrderFields):
    line_items: Annotated[list[LineItemWrite] | None, Field(max_length=200, description="Line items")] = None


class OrderUpdate(OrderFields):
    id: Annotated[Id, Field(description="Order id")]


OrderId = Annotated[Id, Field(description="Order id")]
SIDE_EFFECTS = ("Entering processing, completed or on-hold takes the line items' managed stock (once); "
                "cancelled gives it back (once).")


@toolbox.tool(rw="read", core=True)
@paged
def woo_orders_list(
        call: Call, perPage: PerPage = 10, page: Page = 1,
        status: Annotated[list[Status] | None, Field(max_length=7, description="Statuses to include (default: all "
                                                     "but trash)")] = None,
        customer: Annotated[Int | None, Field(ge=0, le=2**63 - 1, description="Customer id (0: guests)")] = None,
        product: Annotated[Id | None, Field(description="Only orders with a line item of this product")] = None,
        dateAfter: Annotated[DateBound | None, Field(description=f"Created after this instant: {DATE_TEXT}")] = None,
        dateBefore: Annotated[DateBound | None, Field(description=f"Created before this instant: {DATE_TEXT}")] = None,
        orderby: Annotated[Literal["date", "id", "include", "title", "slug"], Field(
            description="Sort key (title sorts as date, slug and include as id)")] = "date",
        order: Order = "desc") -> dict[str, Any]:
    """List orders with filters (all in SQL), newest first by default."""
    found = orders.listing(store(call), {"status": status, "customer": customer, "product": product,
                                         "dateAfter": dateAfter, "dateBefore": dateBefore, "orderby": orderby,
                                         "order": order}, page, perPage)
    return page_result(found, page, perPage)


@toolbox.tool(rw="read", core=True)
def woo_orders_get(call: Call, orderId: OrderId) -> dict[str, Any]:
    """Get one order with its line items, shipping lines and refunds."""
    return orders.get(store(call), orderId)


@toolbox.tool(rw="write")
def woo_orders_create(call: Call, orderData: Annotated[OrderWrite, Field(description="The order")]) -> dict[str, Any]:
    """Create an order (status pending unless given; set_paid makes it processing). Line items
    take name, SKU and current price from the product; totals are computed (coupons, shipping
    lines, tax when the store calculates taxes). Billing and shipping default to the
    customer's."""
    s = store(call)
    return orders.get(s, orders.create(s, fields(orderData)))


woo_orders_create.__doc__ = (woo_orders_create.__doc__ or "") + " " + SIDE_EFFECTS


@toolbox.tool(rw="write")
def woo_orders_update(call: Call, orderId: OrderId, orderData: Annotated[OrderFields, Field(
        description="Order fields to set (line_items cannot be changed)")]) -> dict[str, Any]:
    """Update an order's given fields; addresses are merged, shipping and coupon lines replaced
    and totals recomputed."""
    s = store(call)
    orders.update(s, orderId, fields(orderData))
    return orders.get(s, orderId)


woo_orders_update.__doc__ = (woo_orders_update.__doc__ or "") + " " + SIDE_EFFECTS


@toolbox.tool(rw="write", destructive=True)
def woo_orders_delete(call: Call, orderId: OrderId, force: Annotated[bool, Field(
        description="true: delete for good; false: move to the trash")] = False) -> dict[str, Any]:
    """Delete an order: to the trash by default (hidden from lists), for good with force=true."""
    return orders.delete(store(call), orderId, force)


@toolbox.tool(rw="write", destructive=True)
def woo_orders_batch_update(
        call: Call,
        create: Annotated[list[OrderWrite] | None, Field(max_length=MAX_BATCH, description="Orders to create")] = None,
        update: Annotated[list[OrderUpdate] | None, Field(max_length=MAX_BATCH,
                                                          description="Orders to update (id and fields)")] = None,
        delete: Annotated[list[Id] | None, Field(max_length=MAX_BATCH,
                                                 description="Ids of orders to delete for good")] = None,
) -> dict[str, Any]:
    """Create, update and delete orders in one call (at most 100 items in all), all or nothing:
    if any item fails, nothing is changed and the error names the item. Deletes are
    permanent. Side effects as woo_orders_create and woo_orders_update."""
    s = store(call)

    def changed(item: OrderUpdate) -> dict[str, Any]:
        data = fields(item)
        oid = data.pop("id")
        orders.update(s, oid, data)
        return orders.get(s, oid)

    return run_batch([("create", create or [], lambda item: orders.get(s, orders.create(s, fields(item)))),
                      ("update", update or [], changed),
                      ("delete", delete or [], lambda oid: orders.delete(s, oid, True))])


@toolbox.tool(rw="write")
def woo_orders_notes_create(call: Call, orderId: OrderId,
                            note: Annotated[str, Field(min_length=1, max_length=10_000, description="Note text")],
                            customerNote: Annotated[bool, Field(description=(
                                "true: a note to the customer; false: a private note"))] = False) -> dict[str, Any]:
    """Add a note to an order."""
    return refunds.add_note(store(call), orderId, note, customerNote)


class RefundLine(Strict):
    id: Annotated[Id, Field(description="Line item id of the order")]
    quantity: Annotated[Int | None, Field(ge=0, le=100_000, description="Quantity refunded")] = None
    refund_total: Annotated[MoneyText | None, Field(description="Amount refunded for the line")] = None
    refund_tax: Annotated[MoneyText | None, Field(description="Tax refunded for the line")] = None


@toolbox.tool(rw="write")
def woo_orders_refunds_create(
        call: Call, orderId: OrderId,
        amount: Annotated[MoneyText | None, Field(description="Amount to refund (default: the lines' refund_total "
                                                  "plus refund_tax)")] = None,
        reason: Annotated[Text, Field(description="Reason for the refund")] = "",
        refundPayment: Annotated[bool, Field(description="Refund through the payment gateway (needs a paid "
                                             "order)")] = False,
        lineItems: Annotated[list[RefundLine] | None, Field(max_length=200, description="Line items refunded")] = None,
) -> dict[str, Any]:
    """Refund an order, at most its refundable remainder (total less earlier refunds); a refund
    of the whole remainder sets the order to refunded. No payment is sent anywhere."""
    return refunds.create(store(call), orderId, amount, reason, refundPayment,
                          [line.model_dump(exclude_none=True) for line in lineItems or []])
