"""Product tools: products (list, get, create, update, delete, batch), variations, categories,
tags and reviews."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from mock_servers.core.toolkit import Call
from mock_servers.core.types import Int
from mock_servers.woocommerce.domain import products, terms
from mock_servers.woocommerce.server.base import (
    DATE_TEXT,
    MAX_BATCH,
    DateText,
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


class TermRef(Strict):
    id: Annotated[Id, Field(description="Category or tag id")]


class ImageWrite(Strict):
    src: Annotated[str, Field(min_length=1, max_length=2000, description="Image URL")]
    name: Annotated[str | None, Field(max_length=400, description="Image name")] = None
    alt: Annotated[str | None, Field(max_length=400, description="Alternative text")] = None


class ProductWrite(Strict):
    name: Annotated[str | None, Field(max_length=400, description="Product name (required on create)")] = None
    type: Annotated[Literal["simple", "variable", "grouped", "external"] | None,
                    Field(description="Product type")] = None
    status: Annotated[Literal["draft", "pending", "private", "publish"] | None, Field(description="Status")] = None
    featured: Annotated[bool | None, Field(description="Featured product")] = None
    catalog_visibility: Annotated[Literal["visible", "catalog", "search", "hidden"] | None,
                                  Field(description="Catalog visibility")] = None
    description: Annotated[Text | None, Field(description="Description (HTML allowed)")] = None
    short_description: Annotated[Text | None, Field(description="Short description")] = None
    sku: Annotated[str | None, Field(max_length=100, description="Unique SKU; \"\" removes it")] = None
    regular_price: Annotated[MoneyText | None, Field(description="Regular price, e.g. \"19.99\"")] = None
    sale_price: Annotated[MoneyText | None, Field(description="Sale price, lower than the regular price; \"\" ends "
                                                  "the sale")] = None
    date_on_sale_from: Annotated[DateText | None, Field(description=f"Sale start, {DATE_TEXT}; \"\" clears it")] = None
    date_on_sale_to: Annotated[DateText | None, Field(description=f"Sale end (a date means its end), {DATE_TEXT}; "
                                                      "\"\" clears it")] = None
    manage_stock: Annotated[bool | None, Field(description="Track stock_quantity")] = None
    stock_quantity: Annotated[Int | None, Field(ge=-1_000_000_000, le=1_000_000_000,
                                                description="Stock quantity (with manage_stock)")] = None
    stock_status: Annotated[Literal["instock", "outofstock", "onbackorder"] | None, Field(
        description="Stock status (with manage_stock it follows stock_quantity)")] = None
    low_stock_amount: Annotated[Int | None, Field(ge=0, le=1_000_000_000,
                                                  description="Low-stock threshold of this product")] = None
    categories: Annotated[list[TermRef] | None, Field(max_length=100, description="Categories (replace the "
                                                      "current ones)")] = None
    tags: Annotated[list[TermRef] | None, Field(max_length=100, description="Tags (replace the current ones)")] = None
    images: Annotated[list[ImageWrite] | None, Field(max_length=50, description="Images (replace the current "
                                                     "ones)")] = None
    meta_data: MetaList = None


class ProductUpdate(ProductWrite):
    id: Annotated[Id, Field(description="Product id")]


ProductId = Annotated[Id, Field(description="Product id")]
ProductData = Annotated[ProductWrite, Field(description="Product fields to set")]


@toolbox.tool(rw="read", core=True)
@paged
def woo_products_list(
        call: Call, perPage: PerPage = 10, page: Page = 1,
        search: Annotated[Short | None, Field(description=(
            'Words (or "quoted phrases") that must all appear in the name, SKU, description or short '
            "description"))] = None,
        status: Annotated[Literal["any", "publish", "draft", "private", "pending", "trash"], Field(
            description="Status (default any: every status but trash)")] = "any",
        category: Annotated[str | None, Field(max_length=200, description="Category id, or ids like 12,15")] = None,
        tag: Annotated[str | None, Field(max_length=200, description="Tag id, or ids like 3,4")] = None,
        sku: Annotated[str | None, Field(max_length=100, description="Exact SKU, or SKUs like A-1,B-2")] = None,
        featured: Annotated[bool | None, Field(description="Only featured (true) or not featured (false)")] = None,
        onSale: Annotated[bool | None, Field(description="Only on sale now (true) or not (false)")] = None,
        minPrice: Annotated[MoneyText | None, Field(description="Lowest current price")] = None,
        maxPrice: Annotated[MoneyText | None, Field(description="Highest current price")] = None,
        stockStatus: Annotated[Literal["instock", "outofstock", "onbackorder"] | None,
                               Field(description="Stock status")] = None,
        orderby: Annotated[Literal["date", "id", "include", "title", "slug", "price", "popularity", "rating"], Field(
            description="Sort key (popularity: total_sales; rating: average approved rating; include: id)")] = "date",
        order: Order = "desc") -> dict[str, Any]:
    """List products with filters (all in SQL). price and on_sale follow the regular and sale
    prices and the sale dates at the current time; trashed products show only with
    status=trash."""
    found = products.listing(store(call), {
        "search": search, "status": status, "category": category, "tag": tag, "sku": sku, "featured": featured,
        "onSale": onSale, "minPrice": minPrice, "maxPrice": maxPrice, "stockStatus": stockStatus,
        "orderby": orderby, "order": order}, page, perPage)
    return page_result(found, page, perPage)


@toolbox.tool(rw="read", core=True)
def woo_products_get(call: Call, productId: ProductId) -> dict[str, Any]:
    """Get one product (trashed ones included)."""
    return products.get(store(call), productId)


@toolbox.tool(rw="write")
def woo_products_create(call: Call, productData: ProductData) -> dict[str, Any]:
    """Create a product (name required; status default publish). SKUs are unique; a sale price
    must be lower than the regular price; with manage_stock, stock_status follows
    stock_quantity."""
    s = store(call)
    return products.get(s, products.create(s, fields(productData)))


@toolbox.tool(rw="write", core=True)
def woo_products_update(call: Call, productId: ProductId, productData: ProductData) -> dict[str, Any]:
    """Update a product's given fields (lists such as categories replace the current ones;
    meta_data is set by key). Rules as woo_products_create."""
    s = store(call)
    products.update(s, productId, fields(productData))
    return products.get(s, productId)


@toolbox.tool(rw="write", destructive=True)
def woo_products_delete(call: Call, productId: ProductId, force: Annotated[bool, Field(
        description="true: delete for good (with its variations); false: move to the trash")] = False,
) -> dict[str, Any]:
    """Delete a product: to the trash by default (hidden from lists unless status=trash), for
    good with force=true. Returns the product as it was (or as trashed)."""
    return products.delete(store(call), productId, force)


@toolbox.tool(rw="write", core=True, destructive=True)
def woo_products_batch_update(
        call: Call,
        create: Annotated[list[ProductWrite] | None, Field(max_length=MAX_BATCH,
                                                           description="Products to create")] = None,
        update: Annotated[list[ProductUpdate] | None, Field(max_length=MAX_BATCH,
                                                            description="Products to update (id and fields)")] = None,
        delete: Annotated[list[Id] | None, Field(max_length=MAX_BATCH,
                                                 description="Ids of products to delete for good")] = None,
) -> dict[str, Any]:
    """Create, update and delete products in one call (at most 100 items in all), all or
    nothing: if any item fails, nothing is changed and the error names the item. Deletes are
    permanent, as in the REST API's batch endpoint."""
    s = store(call)

    def made(item: ProductWrite) -> dict[str, Any]:
        return products.get(s, products.create(s, fields(item)))

    def changed(item: ProductUpdate) -> dict[str, Any]:
        data = fields(item)
        pid = data.pop("id")
        products.update(s, pid, data)
        return products.get(s, pid)

    return run_batch([("create", create or [], made), ("update", update or [], changed),
                      ("delete", delete or [], lambda pid: products.delete(s, pid, True))])


@toolbox.tool(rw="read")
@paged
def woo_products_variations_list(call: Call, productId: ProductId, perPage: PerPage = 10,
                                 page: Page = 1) -> dict[str, Any]:
    """List the variations of a variable product, by id."""
    return page_result(products.variation_views(store(call), productId, page, perPage), page, perPage)


@toolbox.tool(rw="read", core=True)
@paged
def woo_products_categories_list(
        call: Call, perPage: PerPage = 10, page: Page = 1,
        search: Annotated[Short | None, Field(description="Text in the category name")] = None,
        parent: Annotated[Int | None, Field(ge=0, le=2**63 - 1, description="Only children of this category id "
                                            "(0: top level)")] = None,
        hideEmpty: Annotated[bool, Field(description="Leave out categories without published products")] = False,
) -> dict[str, Any]:
    """List product categories by name; count is the number of published products."""
    return page_result(terms.categories(store(call), search, parent, hideEmpty, page, perPage), page, perPage)


class CategoryImage(Strict):
    src: Annotated[str, Field(min_length=1, max_length=2000, description="Image URL")]


class CategoryWrite(Strict):
    name: Annotated[str, Field(min_length=1, max_length=200, description="Category name")]
    slug: Annotated[str | None, Field(max_length=200, description="Slug (default from the name)")] = None
    parent: Annotated[Int | None, Field(ge=0, le=2**63 - 1, description="Parent category id (0: top level)")] = None
    description: Annotated[Text | None, Field(description="Description")] = None
    display: Annotated[Literal["default", "products", "subcategories", "both"] | None,
                       Field(description="Archive display type")] = None
    image: Annotated[CategoryImage | None, Field(description="Category image")] = None
    menuOrder: Annotated[Int | None, Field(ge=-1_000_000, le=1_000_000, description="Menu order")] = None


@toolbox.tool(rw="write", core=True)
def woo_products_categories_create(call: Call, categoryData: Annotated[CategoryWrite, Field(
        description="The category")]) -> dict[str, Any]:
    """Create a product category. The same name under the same parent, or a taken slug, is
    ALREADY_EXISTS; a slug derived from the name gets -2, -3 ... when taken."""
    return terms.create_category(store(call), fields(categoryData))


@toolbox.tool(rw="read")
@paged
def woo_products_tags_list(
        call: Call, perPage: PerPage = 10, page: Page = 1,
        search: Annotated[Short | None, Field(description="Text in the tag name")] = None,
        hideEmpty: Annotated[bool, Field(description="Leave out tags without published products")] = False,
) -> dict[str, Any]:
    """List product tags by name; count is the number of published products."""
    return page_result(terms.tags(store(call), search, hideEmpty, page, perPage), page, perPage)


@toolbox.tool(rw="read")
@paged
def woo_products_reviews_list(
        call: Call, productId: Annotated[Id | None, Field(description="Only reviews of this product")] = None,
        perPage: PerPage = 10, page: Page = 1,
        status: Annotated[Literal["all", "hold", "approved", "spam", "trash"], Field(
            description="Review status (all: held and approved)")] = "approved") -> dict[str, Any]:
    """List product reviews, newest first."""
    return page_result(terms.reviews(store(call), productId, status, page, perPage), page, perPage)
