"""What every WooCommerce tool shares: the toolbox, the store a call works in, paging and
period parameters, and the write models (extra keys refused, naming the field)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from sqlmodel import Session

from loca.core.world import World
from mock_servers.core.errors import ToolFailure, invalid
from mock_servers.core.limits import MAX_INT
from mock_servers.core.toolkit import Call, Toolbox
from mock_servers.core.types import CellValue, Int
from mock_servers.woocommerce.domain import Store, customers, kept, orders, products
from mock_servers.woocommerce.domain.base import envelope

PER_PAGE, MAX_PER_PAGE = 10, 100
MAX_PAGE = 1_000_000_000
MAX_BATCH = 100
PAGING = (f"Paged: page (1-based) and perPage (default {PER_PAGE}, max {MAX_PER_PAGE}); the result has "
          "items, page, perPage, total and totalPages.")


def keep_views(session: Session, world: World) -> None:
    """A new world's prepare step: keep the views of its products, orders and customers."""
    store = Store(session, world.clock.at(0), world.clock.zone)
    for kind, module in (("product", products), ("order", orders), ("customer", customers)):
        kept.keep(store, kind, module.KEPT, module.built)


toolbox = Toolbox(
    "woocommerce", table_prefix="woo_", page_keys=("page", "perPage"),
    snapshot_ignore={kept.TABLE: None}, prepare=keep_views,
    snapshot_unordered=("woo_product_category", "woo_product_tag"),  # links, rewritten on a product's update
    instructions=("WooCommerce store (REST API v3): products, categories, tags, reviews, orders, refunds, "
                  "customers, coupons, reports, shipping, taxes, settings, payment gateways and webhooks. Money "
                  "is 2-decimal strings; dates are site-local (date_created) and GMT (date_created_gmt). "
                  + PAGING))
build = toolbox.build


def store(call: Call) -> Store:
    return Store(call.session, call.now, call.world.clock.zone)


def paged(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a tool that returns a page: its description then says how paging works."""
    fn.__doc__ = f"{inspect.cleandoc(fn.__doc__ or '')}\n{PAGING}"
    return fn


def page_result(found: tuple[list[Any], int], page: int, per_page: int) -> dict[str, Any]:
    return envelope(found[0], page, per_page, found[1])


Id = Annotated[Int, Field(ge=1, le=MAX_INT)]
Page = Annotated[Int, Field(ge=1, le=MAX_PAGE, description="1-based page number (default 1)")]
PerPage = Annotated[Int, Field(ge=1, le=MAX_PER_PAGE,
                               description=f"Items per page (default {PER_PAGE}, max {MAX_PER_PAGE})")]
Order = Annotated[Literal["asc", "desc"], Field(description="Sort direction")]
Text = Annotated[str, Field(max_length=10_000)]
Short = Annotated[str, Field(max_length=400)]
MoneyText = Annotated[str, Field(max_length=30, description='Amount as a decimal string, e.g. "19.99"')]
DATE_TEXT = ("ISO 8601 date YYYY-MM-DD or date-time YYYY-MM-DDTHH:MM[:SS] (T or a space), site time unless it "
             "ends in Z or an offset such as +05:30; e.g. 2025-01-15, 2025-01-15T10:00:00 or 2025-01-15T10:00:00Z")
DateText = Annotated[str, Field(max_length=40, description=DATE_TEXT)]
DateBound = Annotated[DateText, Field(min_length=1)]  # a filter: "" is no date, not "no filter"
PeriodName = Annotated[Literal["week", "month", "last_month", "year"] | None, Field(
    description="Report period (default week: the last 7 days including today); dateMin/dateMax override it")]
DateMin = Annotated[str | None, Field(min_length=1, max_length=40,
                                      description="First day of the report, exactly YYYY-MM-DD (site time)")]
DateMax = Annotated[str | None, Field(min_length=1, max_length=40,
                                      description="Last day of the report, exactly YYYY-MM-DD (site time)")]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def fields(model: BaseModel) -> dict[str, Any]:
    """The fields a caller gave (nulls left out), nested models as dicts."""
    return model.model_dump(exclude_unset=True, exclude_none=True)


class Meta(Strict):
    key: Annotated[str, Field(min_length=1, max_length=255, description="Meta key")]
    value: Annotated[CellValue, Field(description="Meta value (string, number, boolean or null)")]


def _blank_or_email(value: str | None) -> str | None:
    if value is not None and value.strip() and not customers.is_email(value):
        raise ValueError("not an e-mail address (e.g. ann@example.com); \"\" clears it")
    return value


class Address(Strict):
    first_name: Short | None = None
    last_name: Short | None = None
    company: Short | None = None
    address_1: Short | None = None
    address_2: Short | None = None
    city: Short | None = None
    state: Short | None = None
    postcode: Short | None = None
    country: Annotated[str | None, Field(max_length=2, description="ISO 3166-1 alpha-2 country code")] = None
    email: Annotated[Short | None, AfterValidator(_blank_or_email)] = None
    phone: Short | None = None


MetaList = Annotated[list[Meta] | None, Field(max_length=100, description="Meta data entries, set by key")]
AddressField = Annotated[Address | None, Field(description="Address fields to set")]


def run_batch(ops: list[tuple[str, list[Any], Callable[[Any], Any]]]) -> dict[str, list[Any]]:
    """Run each (part, items, action) of a batch in order, all or nothing: the first failing item
    fails the call (its transaction rolls back), naming the item."""
    count = sum(len(items) for _, items, _ in ops)
    if count == 0:
        raise invalid("the batch is empty; give create, update or delete items")
    if count > MAX_BATCH:
        raise invalid(f"a batch takes at most {MAX_BATCH} items in all; got {count}")
    out: dict[str, list[Any]] = {}
    for part, items, action in ops:
        out[part] = []
        for n, item in enumerate(items):
            try:
                out[part].append(action(item))
            except ToolFailure as exc:
                raise ToolFailure(exc.code, f"{part}[{n}]: {exc.message}; nothing was changed", exc.hint) from None
    return out

