"""Scripted agents of woocommerce_new_welcome: the oracle (reads the template, the completed
orders and the customers, all pages, and the CRM table; counts each customer's completed
orders, keeps those with exactly one completed in the window, inserts their CRM rows after the
largest id and e-mails each the filled template) and its failure-mode mutants, each one knob
away from the oracle."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from envs.woocommerce_new_welcome import (
    AMOUNT,
    COMPLETED,
    CRM,
    CRM_COLUMNS,
    MAIL,
    NAME,
    NOW,
    ORDER_DATE,
    ORDER_ID,
    STORE,
    TEMPLATE_FILE,
    TODAY,
    TRAP_PAGE,
    WELCOME,
    WINDOW,
    crm_table,
    read_everything,
)
from loca.core.outputs import fill
from loca.core.script import Mutant, Script, ScriptedAgents, ToolRequest, Tools, call, call_all

INSERT_BATCH = 500  # rows per INSERT statement
Row = dict[str, Any]


@dataclass(frozen=True)
class Knobs:
    """How an agent deviates from the oracle (all off: the oracle)."""

    window_on_created: bool = False  # M1: the window applies to date_created
    window_only: bool = False  # M2: counts only the completed orders of the window
    first_page_only: bool = False  # M3: reads the first page of the default order listing only
    welcome_flags: bool = True  # M4 off: leaves welcome_email_sent and the dates empty
    reinsert_history: bool = False  # M5: inserts the CRM's rows again
    orders_count: bool = False  # trusts the customer's orders_count (every status) instead
    created_as_first_order: bool = False  # first_order_date from date_created
    mail_completion_date: bool = False  # the e-mail's order date is the completion date
    placeholder_left: bool = False  # leaves [Order Date] in the e-mail
    mail_repeat_customers: bool = False  # also welcomes repeat customers who ordered this week
    touch_pending: bool = False  # moves the pending orders of the window to processing
    full_name: bool = False  # fills [Customer Name] with the full name, not the first name


def _instant(text: str | None) -> datetime | None:
    """A WooCommerce date (site time, which is UTC here)."""
    return None if not text else datetime.fromisoformat(text).replace(tzinfo=UTC)


def _in_window(order: Row, knobs: Knobs) -> bool:
    moment = _instant(order["date_created"] if knobs.window_on_created else order["date_completed"])
    return moment is not None and moment > NOW - WINDOW


def _new_orders(orders: list[Row], customers: dict[int, Row], knobs: Knobs) -> tuple[list[Row], list[Row]]:
    """(the orders of new customers, the in-window orders of repeat customers), by customer id."""
    done: dict[int, list[Row]] = {}
    for order in orders:
        if order["status"] == COMPLETED and order["customer_id"] and \
                (not knobs.window_only or _in_window(order, knobs)):
            done.setdefault(order["customer_id"], []).append(order)
    new, repeat = [], []
    for cid, theirs in sorted(done.items()):
        once = customers[cid]["orders_count"] == 1 if knobs.orders_count else len(theirs) == 1
        if once and _in_window(theirs[0], knobs):
            new.append(theirs[0])
        elif not once:
            repeat += [o for o in theirs if _in_window(o, knobs)][:1]
    return new, repeat


def _mail(order: Row, customer: Row, store: str, knobs: Knobs) -> Row:
    day = order["date_completed"] if knobs.mail_completion_date else order["date_created"]
    name = f"{customer['first_name']} {customer['last_name']}" if knobs.full_name else customer["first_name"]
    return {"to": customer["email"], "fill": {STORE: store, NAME: name, ORDER_ID: str(order["id"]),
                                              AMOUNT: f"${order['total']}", ORDER_DATE: day[:10]}}


def derive(instruction: str, tools: Tools, knobs: Knobs) -> Script:
    """Read everything; the new customers' CRM rows, their e-mails and the subject."""
    listing: dict[str, Any] | None = {} if knobs.first_page_only else None
    size = TRAP_PAGE if knobs.first_page_only else 100
    template, orders, customers, _ = yield from read_everything(tools, listing, size, knobs.first_page_only)
    by_id = {c["id"]: c for c in customers}
    new, repeat = _new_orders(orders, by_id, knobs)
    crm = []
    for order in new:
        c = by_id[order["customer_id"]]
        day = order["date_created"] if knobs.created_as_first_order else order["date_completed"]
        crm.append({"woocommerce_id": c["id"], "email": c["email"], "first_name": c["first_name"],
                    "last_name": c["last_name"], "phone": c["billing"]["phone"], "first_order_date": day[:10]})
    store = store_name_of(instruction)
    mail = [_mail(o, by_id[o["customer_id"]], store, knobs) for o in new]
    if knobs.mail_repeat_customers:
        mail = sorted(mail + [_mail(o, by_id[o["customer_id"]], store, knobs) for o in repeat], key=lambda m: m["to"])
    return {CRM: crm, MAIL: mail}


def store_name_of(instruction: str) -> str:
    """The store's name as the instruction gives it (the text after `[Store Name]` replaced by)."""
    marker = f"`{STORE}` replaced by `"
    start = instruction.index(marker) + len(marker)
    return instruction[start:instruction.index("`", start)]


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def _rows(answer: dict[str, Any], first_id: int, knobs: Knobs) -> list[list[Any]]:
    flag, when = (True, TODAY) if knobs.welcome_flags else (None, None)
    return [[first_id + n, r["woocommerce_id"], r["email"], r["first_name"], r["last_name"], r["phone"],
             r["first_order_date"], flag, when, when] for n, r in enumerate(answer[CRM])]


def _message(template: str, entry: Row, knobs: Knobs) -> dict[str, str]:
    """The subject and body of one welcome: the template's parts with the entry's values."""
    assert WELCOME.template is not None
    subject, body = WELCOME.template.parts(template)
    values = {k: v for k, v in entry["fill"].items() if not (knobs.placeholder_left and k == ORDER_DATE)}
    return {"subject": fill(subject, values), "body": fill(body, values)}


def write(instruction: str, tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    """The CRM rows after the largest id (in batches), then one e-mail per customer (one turn)."""
    query = tools("google_cloud", "bigquery_run_query")
    top = yield from call(query, {"query": f"SELECT MAX(id) AS top FROM {crm_table()}"})
    first_id = int(top["rows"][0]["top"] or 0) + 1
    if knobs.reinsert_history:
        yield from call(query, {"query": f"INSERT INTO {crm_table()} SELECT * FROM {crm_table()}"})
    rows = _rows(answer, first_id, knobs)
    for start in range(0, len(rows), INSERT_BATCH):
        values = ", ".join("(" + ", ".join(map(_literal, row)) + ")" for row in rows[start:start + INSERT_BATCH])
        yield from call(query, {"query": f"INSERT INTO {crm_table()} ({', '.join(CRM_COLUMNS)}) VALUES {values}"})
    template = yield from call(tools("filesystem", "read_text_file"), {"path": TEMPLATE_FILE})
    yield from call_all([ToolRequest(tools("email", "send_email"), {
        "to": entry["to"], **_message(str(template), entry, knobs)}) for entry in answer[MAIL]])
    if knobs.touch_pending:
        pending = yield from call(tools("woocommerce", "woo_orders_list"), {"status": ["pending"], "perPage": 100})
        yield from call_all([ToolRequest(tools("woocommerce", "woo_orders_update"), {
            "orderId": o["id"], "orderData": {"status": "processing"}}) for o in pending["items"]])


AGENTS = ScriptedAgents(
    derive=derive,
    write=write,
    oracle=Knobs(),
    mutants={
        "window_on_created": Mutant(Knobs(window_on_created=True), "crm_new_set"),
        "ignores_older_orders": Mutant(Knobs(window_only=True), "crm_new_set"),
        "first_page": Mutant(Knobs(first_page_only=True), "crm_new_set"),
        "no_welcome_flags": Mutant(Knobs(welcome_flags=False), "crm_new_values"),
        "reinserts_history": Mutant(Knobs(reinsert_history=True), "crm_history"),
        "orders_count": Mutant(Knobs(orders_count=True), "crm_new_set"),
        "first_order_created": Mutant(Knobs(created_as_first_order=True), "crm_new_values"),
        "mail_completion_date": Mutant(Knobs(mail_completion_date=True), "email_content"),
        "placeholder_left": Mutant(Knobs(placeholder_left=True), "email_content"),
        "full_name": Mutant(Knobs(full_name=True), "email_content"),
        "welcomes_repeat_customers": Mutant(Knobs(mail_repeat_customers=True), "email_recipients"),
        "touches_pending_orders": Mutant(Knobs(touch_pending=True), "no_side_effects"),
    },
    noop_must_fail="crm_new_set",
)
