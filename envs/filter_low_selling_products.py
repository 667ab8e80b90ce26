"""filter_low_selling_products: find the store's slow movers (old enough, few recent sales), move
them into one new category, list them in a sorted CSV and mail it to the subscribers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loca.core.clock import iso_z
from loca.core.credentials import parse_credentials
from loca.core.outputs import Column, DbRows, MailTemplate, Rows, SentMail, TableFile, sql_text
from loca.core.script import Script, Tools, call, paged
from loca.core.task import Scale, TaskSpec

if TYPE_CHECKING:
    from loca.core.world import World

OUTLET = "Outlet/Clearance"  # the category to create; the products' only category afterwards
CLEARANCE = "Clearance"  # an existing category that is not it
SALES_KEY = "sales_last_30_days"  # product meta: units sold in the last 30 days
MIN_AGE_DAYS = 91  # at least this many full days since date_created
MAX_SALES = 10  # fewer than this many units in the last 30 days
PRODUCT, PRICE, PROMO, RATIO = "Product Name", "Original Price", "Promotional Price", "Discount Ratio"
REPORT = TableFile(
    file="discount_products.csv",
    columns=(Column(PRODUCT), Column(PRICE, "N"), Column(PROMO, "N"), Column(RATIO)),
    key=(PRODUCT,),
)
EXAMPLE_ROW = ("Example Product", "100.00", "72.50", "72.500%")  # the file's example row
TEMPLATE_FILE = "email_template.txt"  # first line: the subject; the rest: the body
SUBSCRIBERS_FILE = "subscriber.json"  # {"subscriber_list": [{email, name, subscribed}]}
CREDENTIALS_FILE = "admin_credentials.txt"
PLACEHOLDER = "{name}"
# One newsletter per subscriber: the template's first line is the subject, the rest the body.
NEWSLETTER = SentMail(attachment="csv", template=MailTemplate(TEMPLATE_FILE, placeholder=r"\{name\}"))
# The answer's keys besides the CSV: one entry {to, fill} per subscriber to mail, by address;
# the ids of the products that must end in the outlet category.
MAIL, MOVED = "mail", "outlet"
# Written by the agent: the product-category links of the products moved (every product's
# categories are judged by `membership` and `products_untouched`) and the new category; with
# them, a product's update stamps date_modified, the categories' product counts follow, and a
# product's images written back as they were get new ids.
LINKS = DbRows("woo_product_category", ("product_id", "category_id"), columns=None, values=("category_id",))
CATEGORIES = DbRows("woo_category", ("name",), where=f"name = {sql_text(OUTLET)}", values=("name",))
STAMPS = Rows("woo_product", columns=("date_modified",))
COUNTS = Rows("woo_category", f"name != {sql_text(OUTLET)}", ("count",))
IMAGES = Rows("woo_image", columns=("id",))
# The store as generated, frozen in the world's truth: every product as the tools show it but
# date_modified, by id.
STORE_FILE = "store.json"
# The pagination trap: a product to move always lies beyond the first page of the default
# product listing (this many products, newest first).
TRAP_PAGE = 10
MAX_PAGE = 100

TOOLS: dict[str, tuple[str, ...]] = {
    "woocommerce": ("woo_products_list", "woo_products_get", "woo_products_update", "woo_products_batch_update",
                    "woo_products_categories_list", "woo_products_categories_create"),
    "email": ("login", "send_email"),
    "filesystem": ("list_directory", "read_text_file", "write_file"),
    "python_execute": ("python_execute",),
    "claim_done": ("claim_done",),
}

INSTRUCTION = """\
It is now {now} (the store's time zone is UTC). In the WooCommerce store, find every \
published product that has been in stock for more than 90 days (at least {age} full days since its \
`date_created`) and sold fewer than {sales} units in the last 30 days (product meta `{key}`; \
`total_sales` counts lifetime sales and must not be used). Move each of them into a product category \
named exactly `{outlet}` (create it once; it must become the product's only category). Fill \
`{report}` in the workspace: keep its header row exactly, delete the example row, and write one row \
per such product: {product} = its name; {price} = its regular price; {promo} = its sale price, or the regular \
price if it has none; {ratio} = {promo} / {price} as a percentage with 3 decimals and a `%` sign \
(e.g. `72.500%`). Write prices with 2 decimals and quote values as CSV requires (RFC 4180). Sort the \
rows by `date_created` ascending, then {ratio} ascending, then {product}. Then e-mail every entry of \
`{subscribers}` whose `subscribed` is true, one e-mail each, addressed to that subscriber alone, \
made from `{template}`: its first line is the subject, and the rest of the file, word for word (add \
nothing, leave nothing out), is the body, with `{placeholder}` replaced by the subscriber's name; \
attach the CSV as `{report}`. The mail credentials are in \
`{credentials}`. Change nothing else."""


def instruction(world: World) -> str:
    return INSTRUCTION.format(
        now=iso_z(world.clock.at(0)), age=MIN_AGE_DAYS, sales=MAX_SALES, key=SALES_KEY, outlet=OUTLET,
        report=REPORT.file, product=PRODUCT, price=PRICE, promo=PROMO, ratio=RATIO, subscribers=SUBSCRIBERS_FILE,
        template=TEMPLATE_FILE, placeholder=PLACEHOLDER, credentials=CREDENTIALS_FILE)


def read_everything(tools: Tools, per_page: int = MAX_PAGE, first_page_only: bool = False) -> Script:
    """The read set: the credentials and the login, the subscriber list, the template, the CSV
    to fill, every category and every product (all pages, the default order). Returns (the
    subscriber file's text, the template's text, the categories, the products)."""
    text = yield from call(tools("filesystem", "read_text_file"), {"path": CREDENTIALS_FILE})
    address, password = parse_credentials(text)
    yield from call(tools("email", "login"), {"email": address, "password": password})
    subscribers = yield from call(tools("filesystem", "read_text_file"), {"path": SUBSCRIBERS_FILE})
    template = yield from call(tools("filesystem", "read_text_file"), {"path": TEMPLATE_FILE})
    yield from call(tools("filesystem", "read_text_file"), {"path": REPORT.file})
    [categories] = yield from paged(tools("woocommerce", "woo_products_categories_list"), [{}], "items",
                                    "perPage", MAX_PAGE)
    [products] = yield from paged(tools("woocommerce", "woo_products_list"), [{}], "items", "perPage",
                                  per_page, first_page_only)
    return subscribers, template, categories, products


def read_set(_instruction: str, tools: list[dict[str, Any]]) -> Script:
    named = Tools(tools)
    yield from read_everything(named)
    yield from call(named("email", "logout"), {})  # leave the mailbox as the agent finds it


TASK = TaskSpec(
    name="filter_low_selling_products",
    version=0,
    summary="move old slow-selling products into a new category, list them in a CSV, mail it to subscribers",
    servers={key: key for key in TOOLS},
    # Every subscriber gets a mail (three in four per product to move), so products to move stop at
    # the 256K tier's count (the agent loop allows 500 calls); the longer tiers grow by ordinary
    # products (`num_normal`), one listing page per hundred.
    scale=Scale(primary="num_low", lo=4, hi=306, fine="num_normal"),
    instruction=instruction,
    read_set=read_set,
    outputs=(REPORT, NEWSLETTER, LINKS, CATEGORIES),
    extra_rows=(STAMPS, COUNTS, IMAGES),
    tools=tuple((key, tool) for key, names in TOOLS.items() for tool in names),
)
