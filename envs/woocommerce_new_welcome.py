"""woocommerce_new_welcome: find the store's first-time customers of the last week from the order
history, add them to the CRM table in BigQuery and send each a welcome e-mail made from the
workspace template."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from loca.core.clock import iso_z
from loca.core.credentials import parse_credentials
from loca.core.outputs import DbRows, MailTemplate, Rows, SentMail, sql_text
from loca.core.script import Script, Tools, call, paged, paged_by_offset
from loca.core.task import Scale, TaskSpec

if TYPE_CHECKING:
    from loca.core.world import World

NOW = datetime(2025, 3, 10, 12, 0, tzinfo=UTC)
WINDOW = timedelta(days=7)
TODAY = NOW.date().isoformat()
DATASET, TABLE = "woocommerce_crm", "customers"
# Column name -> BigQuery type, in table order.
CRM_COLUMNS = {"id": "INT64", "woocommerce_id": "INT64", "email": "STRING", "first_name": "STRING",
               "last_name": "STRING", "phone": "STRING", "first_order_date": "DATE", "welcome_email_sent": "BOOL",
               "welcome_email_date": "DATE", "sync_date": "DATE"}
CRM_PHYSICAL = "bq_data_1"  # the CRM table's storage: the only BigQuery table of the world
CATALOG = "SELECT physical FROM bq_table ORDER BY id"  # the storage of every BigQuery table
TEMPLATE_FILE = "welcome_email_template.md"
CREDENTIALS_FILE = "admin_credentials.txt"
STORE, NAME, ORDER_ID, AMOUNT, ORDER_DATE = ("[Store Name]", "[Customer Name]", "[Order ID]", "[Order Amount]",
                                             "[Order Date]")
COUPON = "WELCOME10"
COMPLETED = "completed"
# One e-mail per new customer: the template's first line `Subject: ...` gives the subject, the
# rest the body; the answer fills its placeholders per customer.
WELCOME = SentMail(template=MailTemplate(TEMPLATE_FILE, placeholder=r"\[[A-Z][A-Za-z ]*\]", subject=r"Subject:\s*(.+)"))
CRM, MAIL = "crm", "mail"  # the answer's keys: the new rows, the e-mails (`to`, `fill`)
# The pagination trap: a new customer's order lies beyond the first page of the default order
# listing (this many orders, newest first), and one of them beyond the first page of customers.
TRAP_PAGE = 10
LIST_PAGE = 100  # the largest page of the WooCommerce listings
ROWS_PAGE = 5000

TOOLS: dict[str, tuple[str, ...]] = {
    "woocommerce": ("woo_orders_list", "woo_orders_get", "woo_customers_list", "woo_customers_get",
                    "woo_orders_update"),
    "google_cloud": ("bigquery_list_datasets", "bigquery_list_tables", "bigquery_get_table_info",
                     "bigquery_run_query"),
    "email": ("login", "get_emails", "send_email"),
    "filesystem": ("list_directory", "read_text_file", "write_file"),
    "python_execute": ("python_execute",),
    "claim_done": ("claim_done",),
}

INSTRUCTION = """\
Now is {now}. A new customer is a WooCommerce customer who has exactly one order with status \
`completed` in total, and whose completed order's `date_completed` is within the last 7 days (after \
{start}); orders with any other status do not count. The store's dates are in UTC. For each new \
customer: (1) insert one row into the BigQuery table `{dataset}.{table}` with id = the next unused \
integer (continuing from the table's largest id), woocommerce_id = their WooCommerce customer id, \
email, first_name, last_name and phone (their billing phone) copied from WooCommerce, \
first_order_date = the completion date of that order (YYYY-MM-DD), welcome_email_sent = true, and \
welcome_email_date = sync_date = today ({today}); (2) send them one welcome e-mail, addressed to \
them alone, from the admin mailbox (credentials in `{credentials}`), made from `{template}`: the text \
after `Subject:` on its first line is the subject and the rest of the file, word for word, is the \
body (add nothing, leave nothing out), with `{store}` replaced by `{store_name}` in both, `{name}` by \
the customer's first name, `{order_id}` by the order's ID, `{amount}` by the order's total as `$` \
and 2 decimals (e.g. `$84.50`) and `{order_date}` by the order's `date_created` as YYYY-MM-DD; leave \
no placeholder in brackets. Do not modify or delete existing CRM rows and do not e-mail anyone else. \
Change nothing else."""


def store_name(world: World) -> str:
    return str(world.meta.accounts["woocommerce"]["store_name"])


def instruction(world: World) -> str:
    return INSTRUCTION.format(now=iso_z(NOW), start=iso_z(NOW - WINDOW), dataset=DATASET, table=TABLE,
                              today=TODAY, credentials=CREDENTIALS_FILE, template=TEMPLATE_FILE, store=STORE,
                              store_name=store_name(world), name=NAME, order_id=ORDER_ID, amount=AMOUNT,
                              order_date=ORDER_DATE)


def crm_table() -> str:
    return f"`{DATASET}.{TABLE}`"


def read_orders(tools: Tools, args: dict[str, Any], size: int = LIST_PAGE, first_page_only: bool = False) -> Script:
    """The orders of one listing (all pages, or the first only)."""
    [orders] = yield from paged(tools("woocommerce", "woo_orders_list"), [args], "items", "perPage", size,
                                first_page_only)
    return orders


def read_everything(tools: Tools, orders: dict[str, Any] | None = None, size: int = LIST_PAGE,
                    first_page_only: bool = False) -> Script:
    """The read set: the template and the credentials, the login, the completed orders and the
    customers (all pages), the CRM table's schema and rows. `orders`: the listing's arguments
    (default: completed orders). Returns (template text, orders, customers, CRM rows)."""
    template = yield from call(tools("filesystem", "read_text_file"), {"path": TEMPLATE_FILE})
    text = yield from call(tools("filesystem", "read_text_file"), {"path": CREDENTIALS_FILE})
    address, password = parse_credentials(text)
    yield from call(tools("email", "login"), {"email": address, "password": password})
    listed = yield from read_orders(tools, {"status": [COMPLETED]} if orders is None else orders, size,
                                    first_page_only)
    [customers] = yield from paged(tools("woocommerce", "woo_customers_list"), [{}], "items", "perPage", LIST_PAGE)
    yield from call(tools("google_cloud", "bigquery_get_table_info"), {"dataset_id": DATASET, "table_id": TABLE})
    [rows] = yield from paged_by_offset(tools("google_cloud", "bigquery_run_query"),
                                        [{"query": f"SELECT * FROM {crm_table()} ORDER BY id"}], "rows",
                                        "max_results", ROWS_PAGE)
    return str(template), listed, customers, rows


def read_set(_instruction: str, tools: list[dict[str, Any]]) -> Script:
    named = Tools(tools)
    yield from read_everything(named)
    yield from call(named("email", "logout"), {})  # leave the mailbox as the agent finds it


TASK = TaskSpec(
    name="woocommerce_new_welcome",
    version=0,
    summary="add last week's first-time WooCommerce customers to the BigQuery CRM and send each a welcome e-mail",
    servers={key: key for key in TOOLS},
    # Each new customer (one order in six) costs the agent a mail, so orders stop at the 256K
    # tier's count (the agent loop allows 500 calls); the longer tiers grow by idle customers
    # (`num_idle_customers`), one listing page per hundred.
    scale=Scale(primary="total_orders", lo=15, hi=524, fine="num_idle_customers"),
    instruction=instruction,
    read_set=read_set,
    outputs=(WELCOME, DbRows(CRM_PHYSICAL, ("woocommerce_id",))),
    extra_rows=(Rows("bq_table", f"physical = {sql_text(CRM_PHYSICAL)}", ("modified",)),),  # inserts touch it
    tools=tuple((key, tool) for key, names in TOOLS.items() for tool in names),
)
