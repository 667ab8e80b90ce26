"""payable_invoice_checker: record the invoice PDFs of the workspace in a Snowflake database
without damaging what it already holds, and e-mail each purchasing manager the outstanding
invoices among them."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from loca.core.credentials import parse_credentials
from loca.core.outputs import DbRows, Rows, SentMail, sql_text
from loca.core.script import Script, ToolRequest, Tools, call, call_all
from loca.core.task import Scale, TaskSpec

if TYPE_CHECKING:
    from loca.core.world import World

DATABASE, SCHEMA = "PURCHASE_INVOICE", "PUBLIC"
INVOICES, PAYMENTS = "INVOICES", "INVOICE_PAYMENTS"
# Column name -> Snowflake type, in table order.
INVOICE_COLUMNS = {"INVOICE_ID": "VARCHAR(32)", "SUPPLIER_NAME": "VARCHAR(128)",
                   "INVOICE_AMOUNT": "NUMBER(12,2)", "PURCHASER_EMAIL": "VARCHAR(128)", "INVOICE_DATE": "DATE"}
PAYMENT_COLUMNS = {"INVOICE_ID": "VARCHAR(32)", "PAYMENT_AMOUNT": "NUMBER(12,2)", "OUTSTANDING_FLAG": "NUMBER(1,0)"}
FLAG_COLUMN = "OUTSTANDING_FLAG"
FLAG_COMMENT = "0=Paid, 1=Outstanding"
INITIAL_FLAG_COMMENT = "payment flag"
FILES = "files"
CREDENTIALS_FILE = "email_account.txt"
# An invoice ID as a message names it, in any of the five formats the suppliers use.
INVOICE_TOKEN = r"(?<![\w-])(?:INV-\d{4}-\d{5}|[A-Z]{3}-\d{6}|SI\d{7}|BILL-\d{7}|\d{6}-\d{4})(?![\w-])"
NOTICE = SentMail(subject="Process Outstanding Invoices", mentions=INVOICE_TOKEN)
MAIL = "mail"  # the answer's key: one entry {to, ids} per manager to e-mail, `ids` their outstanding invoices
# The tables' storage, and the one column comment the task sets.
PHYSICAL = {INVOICES: "sf_data_1", PAYMENTS: "sf_data_2"}
_PAYMENTS_TABLE = (f"SELECT t.id FROM sf_table t JOIN sf_schema s ON s.id = t.schema_id JOIN sf_database d "
                   f"ON d.id = s.database_id WHERE d.name = {sql_text(DATABASE)} AND s.name = {sql_text(SCHEMA)} "
                   f"AND t.name = {sql_text(PAYMENTS)}")
FLAG_COMMENT_ROW = Rows("sf_column", f"table_id = ({_PAYMENTS_TABLE}) AND name = {sql_text(FLAG_COLUMN)}",
                        ("comment",))
NEW_INVOICES, NEW_PAYMENTS = "invoices", "payments"  # the answer's keys: the rows to add
ID_PAGE = 4000  # rows of the existing-ID listing per read_query
# One read_pdf_pages call a PDF: 300 PDFs (the 256K tier has some 270) leave room within an episode's
# 500 tool calls; the existing rows (`num_existing`, about 10 tokens each) carry the longer tiers.
MAX_INVOICES = 300
TRAP_ROWS = 100  # an already recorded invoice always lies beyond this many listed rows
ID_TOKEN = re.compile(r"[A-Z0-9]+(?:-[A-Z0-9]+)*")  # an invoice ID is such a token

TOOLS: dict[str, tuple[str, ...]] = {
    "snowflake": ("list_databases", "list_schemas", "list_tables", "describe_table", "read_query",
                  "write_query"),
    "email": ("login", "get_emails", "send_email"),
    "pdf_tools": ("read_pdf_pages", "get_pdf_info", "search_pdf_content"),
    "filesystem": ("list_directory", "read_text_file"),
    "terminal": ("run_command",),
    "python_execute": ("python_execute",),
    "claim_done": ("claim_done",),
}

INSTRUCTION = f"""\
Snowflake database `{DATABASE}`, schema `{SCHEMA}`, has tables `{INVOICES}` ({", ".join(INVOICE_COLUMNS)}) \
and `{PAYMENTS}` ({", ".join(PAYMENT_COLUMNS)}). Record every invoice PDF in `{FILES}/` in both tables, \
one row per invoice in each: INVOICE_ID as printed on the invoice, SUPPLIER_NAME = the supplier's name \
as printed, INVOICE_AMOUNT = the invoice total including tax, PURCHASER_EMAIL = the buyer's e-mail \
address printed on the invoice (not the supplier's), INVOICE_DATE = the invoice date as YYYY-MM-DD; \
PAYMENT_AMOUNT = the amount the invoice says has been paid so far (a payment under review included, 0 \
when nothing was paid), OUTSTANDING_FLAG = 0 if the invoice is fully paid, else 1 (partial payments \
and payments under review are outstanding). Invoices already in the tables must not be inserted \
again; never modify or delete existing rows, and leave the tables' columns as they are. Set the \
comment of column {PAYMENTS}.{FLAG_COLUMN} to exactly `{FLAG_COMMENT}`. Then, from my mailbox \
(credentials in `{CREDENTIALS_FILE}`), send each purchasing manager (the buyer e-mail of an invoice) \
who has at least one outstanding invoice among these PDFs exactly one e-mail, addressed to them \
alone, with subject `{NOTICE.subject}` whose body lists the file names (`<INVOICE_ID>.pdf`) of all and \
only their outstanding invoices among these PDFs (already recorded ones included) and mentions no \
other invoice. E-mail nobody else. Change nothing else."""


def instruction(_world: World) -> str:
    return INSTRUCTION


def table(name: str) -> str:
    """The fully qualified name of one of the two tables."""
    return f"{DATABASE}.{SCHEMA}.{name}"


def read_ids(tools: Tools, page: int = ID_PAGE, first_page_only: bool = False) -> Script:
    """The INVOICE_IDs of INVOICES in the table's own order, `page` rows per read_query."""
    ids: list[str] = []
    while True:
        found = yield from call(tools("snowflake", "read_query"), {
            "query": f"SELECT INVOICE_ID FROM {table(INVOICES)} LIMIT {page} OFFSET {len(ids)}"})
        ids += [row["INVOICE_ID"] for row in found["data"]]
        if first_page_only or len(found["data"]) < page:
            return ids


def read_pdfs(tools: Tools) -> Script:
    """The text of every PDF in `files/`, by file name (one turn of parallel reads)."""
    listing = yield from call(tools("filesystem", "list_directory"), {"path": FILES})
    names = sorted(line.split(" ", 1)[1] for line in listing.splitlines()
                   if line.startswith("[FILE] ") and line.lower().endswith(".pdf"))
    texts = yield from call_all([ToolRequest(tools("pdf_tools", "read_pdf_pages"), {
        "pdf_file_path": f"{FILES}/{name}", "start_page": 1, "end_page": 5}) for name in names])
    return dict(zip(names, texts, strict=True))


def read_everything(tools: Tools, page: int = ID_PAGE, first_page_only: bool = False) -> Script:
    """The read set: the credentials and the login, the text of every invoice PDF, both tables'
    descriptions and the existing invoice IDs (all pages). Returns (address, password, PDF text
    by file name, existing IDs)."""
    text = yield from call(tools("filesystem", "read_text_file"), {"path": CREDENTIALS_FILE})
    address, password = parse_credentials(text)
    yield from call(tools("email", "login"), {"email": address, "password": password})
    texts = yield from read_pdfs(tools)
    for name in (INVOICES, PAYMENTS):
        yield from call(tools("snowflake", "describe_table"), {"table_name": table(name)})
    ids = yield from read_ids(tools, page, first_page_only)
    return address, password, texts, ids


def read_set(_instruction: str, tools: list[dict[str, Any]]) -> Script:
    named = Tools(tools)
    yield from read_everything(named)
    yield from call(named("email", "logout"), {})  # leave the mailbox as the agent finds it


TASK = TaskSpec(
    name="payable_invoice_checker",
    version=0,
    summary="record invoice PDFs in Snowflake and e-mail managers their outstanding invoices",
    servers={"snowflake": "snowflake", "email": "email", "pdf_tools": "pdf_tools", "filesystem": "filesystem",
             "terminal": "terminal", "python_execute": "python_execute", "claim_done": "claim_done"},
    scale=Scale(primary="num_invoices", lo=5, hi=MAX_INVOICES, fine="num_existing"),
    instruction=instruction,
    read_set=read_set,
    outputs=(NOTICE, DbRows(PHYSICAL[INVOICES], ("INVOICE_ID",)), DbRows(PHYSICAL[PAYMENTS], ("INVOICE_ID",))),
    extra_rows=(FLAG_COMMENT_ROW,),
    tools=tuple((key, tool) for key, names in TOOLS.items() for tool in names),
)
