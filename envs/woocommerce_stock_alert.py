"""woocommerce_stock_alert: reconcile a stock-alert sheet with the store's inventory and send the
purchasing manager one templated alert per low-stock product."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loca.core.credentials import parse_credentials
from loca.core.outputs import Column, DbRows, MailTemplate, Rows, SentMail, sql_text
from loca.core.script import Script, ToolRequest, Tools, call, call_all, paged
from loca.core.task import Scale, TaskSpec

if TYPE_CHECKING:
    from loca.core.world import World

BOOK_TITLE = "WooCommerce Stock Alert"
ALERT_TAB, SUPPLIERS_TAB = "Stock Alert", "Suppliers"
ALERT_COLUMNS = (Column("Product ID", "I"), Column("Product Name"), Column("SKU"), Column("Current Stock", "I"),
                 Column("Safety Threshold", "I"), Column("Supplier Name"), Column("Supplier ID", "I"),
                 Column("Supplier Contact", "E"))
ALERT_HEADERS = tuple(c.name for c in ALERT_COLUMNS)
SUPPLIER_HEADERS = ("Supplier ID", "Supplier Name", "Contact Email", "Phone")
THRESHOLD, SUPPLIER_NAME, SUPPLIER_ID = "stock_threshold", "supplier_name", "supplier_id"  # product meta keys
TEMPLATE_FILE = "stock_alert_email_template.md"
MANAGER_FILE = "purchasing_manager_email.txt"
CREDENTIALS_FILE = "admin_credentials.txt"
SUBJECT = "[Stock Alert] {product_name} Stock Below Safety Threshold"
LINK = "https://docs.google.com/spreadsheets/d/{spreadsheet_id}/edit"
SKU_TOKEN = r"(?<![\w-])[A-Z]{3}-\d{5}(?![\w-])"  # a SKU as a message names it
# One message per low-stock product, made from the template: the text after `**Subject:**` is the
# subject, the text after the `**Body:**` line the body; the answer fills its placeholders.
ALERT = SentMail(template=MailTemplate(TEMPLATE_FILE, placeholder=r"\{[a-z_]+\}", subject=r"\*\*Subject:\*\*\s*(.+)",
                                       body=r"\*\*Body:\*\*"), mentions=SKU_TOKEN)
_BOOK = f"SELECT pk FROM gs_spreadsheet WHERE title = {sql_text(BOOK_TITLE)}"
_ALERT_TAB = f"SELECT pk FROM gs_sheet WHERE spreadsheet = ({_BOOK}) AND title = {sql_text(ALERT_TAB)}"
SHEET_CELLS = DbRows("gs_cell", ("sheet", "row", "col"), where=f"sheet = ({_ALERT_TAB})", columns=None,
                     values=("value",))
ROWS, MAIL, SPREADSHEET = "rows", "mail", "spreadsheet_id"  # the answer's keys
# The oracle lists products PAGE at a time; the default listing (newest first, DEFAULT_PAGE a
# page) always has more than one page and a low-stock product beyond its first.
PAGE, DEFAULT_PAGE = 100, 10

TOOLS: dict[str, tuple[str, ...]] = {
    "woocommerce": ("woo_products_list", "woo_products_get"),
    "google_sheet": ("list_spreadsheets", "list_sheets", "get_sheet_data", "update_cells", "clear_range"),
    "email": ("login", "send_email"),
    "filesystem": ("list_directory", "read_text_file", "write_file"),
    "python_execute": ("python_execute",),
    "claim_done": ("claim_done",),
}

INSTRUCTION = f"""\
A WooCommerce product is low on stock when its `stock_quantity` is strictly below the number in its \
`{THRESHOLD}` metadata; products that do not manage stock (`manage_stock` false) or have no \
`{THRESHOLD}` metadata are ignored. In the Google Sheet `{BOOK_TITLE}`, tab `{ALERT_TAB}`, keep the \
header row ({", ".join(ALERT_HEADERS)}) and make the rows below it list exactly the products that \
are low on stock now, one row each, sorted by SKU ascending: delete the rows of products that are \
no longer low and leave no other rows. Product ID, Product Name, SKU and Current Stock \
(`stock_quantity`) come from the store, Safety Threshold is `{THRESHOLD}`, Supplier Name and \
Supplier ID are the product's `{SUPPLIER_NAME}` and `{SUPPLIER_ID}` metadata, and Supplier Contact \
is the Contact Email of that Supplier ID in tab `{SUPPLIERS_TAB}` (supplier names are not unique). \
Then, from the admin mailbox (credentials in `{CREDENTIALS_FILE}`), send one e-mail per low-stock \
product to the purchasing manager (the address in `{MANAGER_FILE}`), addressed to the manager \
alone, made from `{TEMPLATE_FILE}`: subject exactly \
`{SUBJECT.format(product_name="<Product Name>")}` and, as the body, the template's text after its \
`**Body:**` line word for word (add nothing, leave nothing out) with every placeholder filled in with \
that product's values. The sheet's link is `{LINK.format(spreadsheet_id="<spreadsheet id>")}`, where the \
spreadsheet id is the `id` the Google Sheet tools give for `{BOOK_TITLE}`. Do not change any \
product or the `{SUPPLIERS_TAB}` tab. Change nothing else."""


def instruction(_world: World) -> str:
    return INSTRUCTION


@dataclass(frozen=True)
class StockItem:
    """What decides whether a product is low and what its alert row holds."""

    id: int
    name: str
    sku: str
    manage_stock: bool
    stock: int | None
    meta: Mapping[str, Any]

    @classmethod
    def of(cls, product: Mapping[str, Any]) -> StockItem:
        """From a `Product` as the store lists it."""
        return cls(int(product["id"]), str(product["name"]), str(product["sku"]), bool(product["manage_stock"]),
                   product["stock_quantity"], {m["key"]: m["value"] for m in product["meta_data"]})

    @property
    def threshold(self) -> int | None:
        value = self.meta.get(THRESHOLD)
        return None if value in (None, "") else int(value)


def is_low(item: StockItem, or_equal: bool = False) -> bool:
    """Low on stock as the instruction defines it (`or_equal`: at the threshold counts too)."""
    threshold = item.threshold
    if not item.manage_stock or item.stock is None or threshold is None:
        return False
    return item.stock <= threshold if or_equal else item.stock < threshold


def alert_row(item: StockItem, contacts: Mapping[int, str]) -> dict[str, Any]:
    """The Stock Alert row of a low-stock product, by header."""
    supplier = int(item.meta[SUPPLIER_ID])
    return dict(zip(ALERT_HEADERS, (item.id, item.name, item.sku, item.stock, item.threshold,
                                    str(item.meta[SUPPLIER_NAME]), supplier, contacts[supplier]), strict=True))


def alert_rows(items: Iterable[StockItem], contacts: Mapping[int, str], or_equal: bool = False) -> list[dict[str, Any]]:
    """The rows the Stock Alert tab must hold: every low-stock product, by SKU."""
    return sorted((alert_row(i, contacts) for i in items if is_low(i, or_equal)), key=lambda r: str(r["SKU"]))


def mail_entry(row: Mapping[str, Any], manager: str, spreadsheet_id: str) -> dict[str, Any]:
    """The alert expected for one row of the Stock Alert tab: the template's values, the SKU it
    names."""
    values = {"product_name": row["Product Name"], "sku": row["SKU"], "current_stock": row["Current Stock"],
              "safety_threshold": row["Safety Threshold"], "supplier_name": row["Supplier Name"],
              "supplier_contact": row["Supplier Contact"], "sheet_link": LINK.format(spreadsheet_id=spreadsheet_id)}
    return {"to": manager, "fill": {f"{{{key}}}": str(value) for key, value in values.items()}, "ids": [row["SKU"]]}


@dataclass(frozen=True)
class Inputs:
    """Everything the read set gathers."""

    template: str
    manager: str
    address: str
    password: str
    spreadsheet_id: str
    suppliers: list[list[Any]]  # the Suppliers tab, header first
    alerts: list[list[Any]]  # the Stock Alert tab, header first
    products: list[dict[str, Any]]


def read_tab(tools: Tools, spreadsheet_id: str, tab: str) -> Script:
    """Every row of one tab of the alert spreadsheet (header first)."""
    found = yield from call(tools("google_sheet", "get_sheet_data"), {"spreadsheet_id": spreadsheet_id, "sheet": tab})
    values: list[list[Any]] = found["valueRanges"][0]["values"]
    return values


def read_everything(tools: Tools, page: int = PAGE, first_page_only: bool = False) -> Script:
    """The read set: the three workspace files, the login, both tabs of the alert spreadsheet
    and every product (all pages of `page`, or only the first)."""
    template, manager, credentials = yield from call_all([
        ToolRequest(tools("filesystem", "read_text_file"), {"path": name})
        for name in (TEMPLATE_FILE, MANAGER_FILE, CREDENTIALS_FILE)])
    address, password = parse_credentials(credentials)
    yield from call(tools("email", "login"), {"email": address, "password": password})
    books = yield from call(tools("google_sheet", "list_spreadsheets"), {})
    [book] = [b["id"] for b in books["spreadsheets"] if b["title"] == BOOK_TITLE]
    suppliers = yield from read_tab(tools, book, SUPPLIERS_TAB)
    alerts = yield from read_tab(tools, book, ALERT_TAB)
    [products] = yield from paged(tools("woocommerce", "woo_products_list"), [{}], "items", "perPage", page,
                                  first_page_only)
    return Inputs(template, manager.strip(), address, password, book, suppliers, alerts, products)


def read_set(_instruction: str, tools: list[dict[str, Any]]) -> Script:
    named = Tools(tools)
    yield from read_everything(named)
    yield from call(named("email", "logout"), {})  # leave the mailbox as the agent finds it


TASK = TaskSpec(
    name="woocommerce_stock_alert",
    version=0,
    summary="rewrite the stock-alert sheet from store inventory and mail one alert per low-stock product",
    servers={key: key for key in TOOLS},
    # Each low product costs the agent a mail, so low products stop at the 256K tier's count (the
    # agent loop allows 500 calls); the longer tiers grow by normal products (`num_normal`), one
    # listing page per hundred.
    scale=Scale(primary="num_low", lo=3, hi=283, fine="num_normal"),
    instruction=instruction,
    read_set=read_set,
    outputs=(ALERT, SHEET_CELLS),
    # Every write stamps the spreadsheet; rows written past the tab's grid grow it.
    extra_rows=(Rows("gs_spreadsheet", f"pk = ({_BOOK})", ("modified",)),
                Rows("gs_sheet", f"pk = ({_ALERT_TAB})", ("row_count", "column_count"))),
    tools=tuple((key, tool) for key, names in TOOLS.items() for tool in names),
)
