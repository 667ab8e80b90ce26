"""WooCommerce tables. Money is Decimal kept as text ("19.90"); instants are UTC
`YYYY-MM-DDTHH:MM:SSZ` (shown as the REST API's site-local and GMT pairs); flags are 0/1;
addresses, images of a category and settings are JSON text. Variations keep their product id
without a foreign key, as WordPress does (so orphans can exist and be cleared)."""

from __future__ import annotations

from sqlalchemy import DDL, Column, DefaultClause, ForeignKey, Index, Integer, UniqueConstraint, event, text
from sqlmodel import Field, SQLModel

AUTO = {"sqlite_autoincrement": True}


def parent(table: str, column: str = "id", *, primary: bool = False) -> Column:
    return Column(Integer, ForeignKey(f"{table}.{column}", ondelete="CASCADE"), nullable=False,
                  primary_key=primary, index=not primary)


class WooProduct(SQLModel, table=True):
    __tablename__ = "woo_product"
    __table_args__ = (Index("ix_woo_product_status_created", "status", "date_created"), AUTO)
    id: int | None = Field(default=None, primary_key=True)
    name: str
    slug: str = Field(index=True)
    type: str = "simple"
    status: str = "publish"
    featured: bool = False
    catalog_visibility: str = "visible"
    sku: str | None = Field(default=None, unique=True)
    regular_price: str | None = None
    sale_price: str | None = None
    date_on_sale_from: str | None = None
    date_on_sale_to: str | None = None
    manage_stock: bool = False
    stock_quantity: int | None = None
    stock_status: str = "instock"
    low_stock_amount: int | None = None
    total_sales: int = 0
    description: str = ""
    short_description: str = ""
    date_created: str = Field(index=True)  # the default listing reads in its order down to one page
    date_modified: str


class WooImage(SQLModel, table=True):
    __tablename__ = "woo_image"
    __table_args__ = (AUTO,)
    id: int | None = Field(default=None, primary_key=True)
    product_id: int = Field(sa_column=parent("woo_product"))
    position: int = 0
    src: str
    name: str = ""
    alt: str = ""


class WooVariation(SQLModel, table=True):
    __tablename__ = "woo_variation"
    __table_args__ = (AUTO,)
    id: int | None = Field(default=None, primary_key=True)
    product_id: int = Field(index=True)
    sku: str | None = Field(default=None, unique=True)
    regular_price: str | None = None
    sale_price: str | None = None
    manage_stock: bool = False
    stock_quantity: int | None = None
    stock_status: str = "instock"
    attributes: str = "[]"  # JSON [{name, option}]


class WooCategory(SQLModel, table=True):
    __tablename__ = "woo_category"
    __table_args__ = (UniqueConstraint("parent", "name"), AUTO)
    id: int | None = Field(default=None, primary_key=True)
    name: str
    slug: str = Field(unique=True)
    parent: int = 0
    description: str = ""
    display: str = "default"
    image: str | None = None  # the image's src
    menu_order: int = 0
    count: int = 0


class WooTag(SQLModel, table=True):
    __tablename__ = "woo_tag"
    __table_args__ = (AUTO,)
    id: int | None = Field(default=None, primary_key=True)
    name: str
    slug: str = Field(unique=True)
    count: int = 0


class WooProductCategory(SQLModel, table=True):
    __tablename__ = "woo_product_category"
    product_id: int = Field(sa_column=parent("woo_product", primary=True))
    category_id: int = Field(sa_column=Column(Integer, ForeignKey("woo_category.id", ondelete="CASCADE"),
                                              primary_key=True, index=True))


class WooProductTag(SQLModel, table=True):
    __tablename__ = "woo_product_tag"
    product_id: int = Field(sa_column=parent("woo_product", primary=True))
    tag_id: int = Field(sa_column=Column(Integer, ForeignKey("woo_tag.id", ondelete="CASCADE"),
                                         primary_key=True, index=True))


class WooReview(SQLModel, table=True):
    __tablename__ = "woo_review"
    __table_args__ = (AUTO,)
    id: int | None = Field(default=None, primary_key=True)
    product_id: int = Field(sa_column=parent("woo_product"))
    reviewer: str
    reviewer_email: str = ""
    review: str = ""
    rating: int = 5
    status: str = "approved"
    verified: bool = False
    date_created: str


class WooCustomer(SQLModel, table=True):
    __tablename__ = "woo_customer"
    __table_args__ = (AUTO,)
    id: int | None = Field(default=None, primary_key=True)
    email: str = Field(unique=True)  # kept lower-case
    first_name: str = ""
    last_name: str = ""
    username: str = Field(unique=True)
    role: str = "customer"
    password_hash: str | None = None
    billing: str = "{}"
    shipping: str = "{}"
    date_created: str = Field(index=True)
    date_modified: str


class WooOrder(SQLModel, table=True):
    __tablename__ = "woo_order"
    __table_args__ = (Index("ix_woo_order_status_created", "status", "date_created"), AUTO)
    id: int | None = Field(default=None, primary_key=True)
    status: str = "pending"
    currency: str = "USD"
    date_created: str = Field(index=True)
    date_modified: str
    date_paid: str | None = None
    date_completed: str | None = None
    customer_id: int = Field(default=0, index=True)  # 0: a guest
    billing: str = "{}"
    shipping: str = "{}"
    payment_method: str = ""
    payment_method_title: str = ""
    coupon_codes: str = "[]"  # JSON list of the applied coupon codes
    discount_total: str = "0.00"
    shipping_total: str = "0.00"
    total_tax: str = "0.00"
    total: str = "0.00"
    customer_note: str = ""
    stock_reduced: bool = False  # stock (and total_sales) taken for this order, not yet given back


class WooOrderItem(SQLModel, table=True):
    """A line item (`kind` line) or a shipping line (`kind` shipping, with its method)."""

    __tablename__ = "woo_order_item"
    __table_args__ = (AUTO,)
    id: int | None = Field(default=None, primary_key=True)
    order_id: int = Field(sa_column=parent("woo_order"))
    kind: str = "line"
    name: str = ""
    product_id: int = Field(default=0, index=True)
    variation_id: int = 0
    sku: str = ""
    quantity: int = 0
    price: str = "0.00"
    subtotal: str = "0.00"
    total: str = "0.00"
    method_id: str = ""


class WooOrderNote(SQLModel, table=True):
    __tablename__ = "woo_order_note"
    __table_args__ = (AUTO,)
    id: int | None = Field(default=None, primary_key=True)
    order_id: int = Field(sa_column=parent("woo_order"))
    note: str
    customer_note: bool = False
    author: str = "admin"
    date_created: str


class WooRefund(SQLModel, table=True):
    __tablename__ = "woo_refund"
    __table_args__ = (AUTO,)
    id: int | None = Field(default=None, primary_key=True)
    order_id: int = Field(sa_column=parent("woo_order"))
    amount: str
    reason: str = ""
    refunded_payment: bool = False
    line_items: str = "[]"  # JSON [{id, name, quantity, refund_total, refund_tax}]
    date_created: str


class WooCoupon(SQLModel, table=True):
    __tablename__ = "woo_coupon"
    __table_args__ = (AUTO,)
    id: int | None = Field(default=None, primary_key=True)
    code: str = Field(unique=True)  # kept lower-case, as WooCommerce does
    amount: str = "0.00"
    discount_type: str = "fixed_cart"
    date_expires: str | None = None
    individual_use: bool = False
    product_ids: str = "[]"
    excluded_product_ids: str = "[]"
    usage_limit: int | None = None
    usage_limit_per_user: int | None = None
    usage_count: int = 0
    limit_usage_to_x_items: int | None = None
    free_shipping: bool = False
    exclude_sale_items: bool = False
    minimum_amount: str = "0.00"
    maximum_amount: str = "0.00"
    date_created: str


class WooShippingZone(SQLModel, table=True):
    __tablename__ = "woo_shipping_zone"
    __table_args__ = (AUTO,)
    id: int | None = Field(default=None, primary_key=True)
    name: str
    order: int = 0


class WooShippingMethod(SQLModel, table=True):
    __tablename__ = "woo_shipping_method"
    __table_args__ = (AUTO,)
    instance_id: int | None = Field(default=None, primary_key=True)
    zone_id: int = Field(sa_column=parent("woo_shipping_zone"))
    method_id: str
    enabled: bool = True
    settings: str = "{}"  # JSON {title, cost, min_amount}


class WooTaxClass(SQLModel, table=True):
    __tablename__ = "woo_tax_class"
    slug: str = Field(primary_key=True)
    name: str


class WooTaxRate(SQLModel, table=True):
    __tablename__ = "woo_tax_rate"
    __table_args__ = (AUTO,)
    id: int | None = Field(default=None, primary_key=True)
    country: str
    state: str = ""
    rate: str  # percent with four decimals, as the REST API shows it
    name: str = ""
    priority: int = 1
    compound: bool = False
    shipping: bool = True
    tax_class: str = Field(default="standard", index=True)


class WooSetting(SQLModel, table=True):
    __tablename__ = "woo_setting"
    group_id: str = Field(primary_key=True)
    id: str = Field(primary_key=True)
    label: str = ""
    type: str = "text"
    value: str = "null"  # JSON


class WooPaymentGateway(SQLModel, table=True):
    __tablename__ = "woo_payment_gateway"
    id: str = Field(primary_key=True)
    title: str = ""
    description: str = ""
    enabled: bool = False
    method_title: str = ""
    position: int = 0
    settings: str = "{}"  # JSON {key: value}; the keys are the ones the gateway defines


class WooWebhook(SQLModel, table=True):
    __tablename__ = "woo_webhook"
    __table_args__ = (AUTO,)
    id: int | None = Field(default=None, primary_key=True)
    name: str
    topic: str
    delivery_url: str
    status: str = "active"
    secret: str | None = None  # signs deliveries; never shown
    date_created: str


class WooMeta(SQLModel, table=True):
    __tablename__ = "woo_meta"
    __table_args__ = (UniqueConstraint("entity", "entity_id", "key"), AUTO)
    id: int | None = Field(default=None, primary_key=True)
    entity: str  # product, order or customer
    entity_id: int
    key: str
    value: str  # JSON


class WooKept(SQLModel, table=True):
    """A product's, order's or customer's view as a read shows it: the JSON text a listing
    embeds for the item (domain/kept.py). Kept texts are exact; an item without one is built."""

    __tablename__ = "woo_kept"
    kind: str = Field(primary_key=True)  # product, order or customer
    id: int = Field(primary_key=True)
    text: str


def _drop(kind: str, ids: str) -> str:
    return f"DELETE FROM woo_kept WHERE kind = '{kind}' AND id IN ({ids}); "


def _products_of(link: str, column: str) -> str:
    return _drop("product", f"SELECT product_id FROM {link} WHERE {column} = OLD.id")


ANY, CHANGE, NAME = ("INSERT", "UPDATE", "DELETE"), ("UPDATE", "DELETE"), ("UPDATE OF name, slug", "DELETE")
# Whatever a kept view is made of drops it when it changes: a product's row, images, terms and
# their names; an order's row, items and refunds; a customer's row and the orders and refunds its
# count and spending come from; anyone's meta data. (table, events, statements on `{row}`, run
# for the OLD and the NEW row.)
_KEPT_FROM: list[tuple[str, tuple[str, ...], str]] = [
    ("woo_product", CHANGE, _drop("product", "{row}.id")),
    ("woo_image", ANY, _drop("product", "{row}.product_id")),
    ("woo_product_category", ANY, _drop("product", "{row}.product_id")),
    ("woo_product_tag", ANY, _drop("product", "{row}.product_id")),
    ("woo_category", NAME, _products_of("woo_product_category", "category_id")),
    ("woo_tag", NAME, _products_of("woo_product_tag", "tag_id")),
    ("woo_order", ANY, _drop("order", "{row}.id") + _drop("customer", "{row}.customer_id")),
    ("woo_order_item", ANY, _drop("order", "{row}.order_id")),
    ("woo_refund", ANY, _drop("order", "{row}.order_id")
     + _drop("customer", "SELECT customer_id FROM woo_order WHERE id = {row}.order_id")),
    ("woo_customer", CHANGE, _drop("customer", "{row}.id")),
    ("woo_meta", ANY, "DELETE FROM woo_kept WHERE kind = {row}.entity AND id = {row}.entity_id; "),
]
for _table, _events, _statement in _KEPT_FROM:
    for _event in _events:
        _verb = _event.split()[0]
        _rows = {"INSERT": ("NEW",), "UPDATE": ("OLD", "NEW"), "DELETE": ("OLD",)}[_verb]
        _body = "".join(dict.fromkeys(_statement.replace("{row}", r) for r in _rows))
        event.listen(SQLModel.metadata.tables[_table], "after_create",
                     DDL(f"CREATE TRIGGER {_table}_kept_{_verb.lower()} AFTER {_event} ON {_table} BEGIN {_body}END"))


def _server_defaults(*models: type[SQLModel]) -> None:
    """Give every column with a constant default the same default in SQL, so that the domain
    layer's plain INSERTs name only what they set."""
    for model in models:
        for column in model.__table__.columns:  # type: ignore[attr-defined]
            default = column.default
            if column.server_default is None and default is not None and default.is_scalar:
                value = default.arg
                literal = str(int(value)) if isinstance(value, bool) else (
                    str(value) if isinstance(value, int) else "'" + str(value).replace("'", "''") + "'")
                column.server_default = DefaultClause(text(literal))


_server_defaults(WooProduct, WooImage, WooVariation, WooCategory, WooTag, WooReview, WooCustomer, WooOrder,
                 WooOrderItem, WooOrderNote, WooRefund, WooCoupon, WooShippingZone, WooShippingMethod, WooTaxRate,
                 WooSetting, WooPaymentGateway, WooWebhook)
