"""Scripted agents of woocommerce_stock_alert: the oracle (lists every product, reads both tabs,
rewrites the Stock Alert rows, sends one alert per low-stock product) and its failure-mode
mutants, each one knob away from the oracle."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from envs.woocommerce_stock_alert import (
    ALERT,
    ALERT_HEADERS,
    ALERT_TAB,
    DEFAULT_PAGE,
    MAIL,
    PAGE,
    ROWS,
    SPREADSHEET,
    SUPPLIER_HEADERS,
    SUPPLIERS_TAB,
    TEMPLATE_FILE,
    THRESHOLD,
    Inputs,
    StockItem,
    alert_rows,
    mail_entry,
    read_everything,
)
from loca.core.outputs import fill
from loca.core.script import Mutant, Script, ScriptedAgents, ToolRequest, Tools, call, call_all

LAST_COLUMN = chr(ord("A") + len(ALERT_HEADERS) - 1)


@dataclass(frozen=True)
class Knobs:
    """How an agent deviates from the oracle (all off: the oracle)."""

    or_equal: bool = False  # M1: stock equal to the threshold counts as low
    first_page_only: bool = False  # M2: reads one product page of the default size
    appends: bool = False  # M3: keeps the rows already there (stale ones too) and appends the rest
    one_message: bool = False  # M4: one summary e-mail for all products
    unfilled: str | None = None  # M5: leaves this placeholder of the template as it is
    header: tuple[str, ...] = ALERT_HEADERS  # writes this header row
    contact_by_name: bool = False  # looks the contact up by supplier name (the first row of that name)
    by_product_id: bool = False  # sorts the rows by Product ID
    unmanaged_too: bool = False  # a product that does not manage stock counts as having none
    store_threshold: bool = False  # without stock_threshold, uses the store's low_stock_amount
    cc_admin: bool = False  # copies the admin mailbox on every alert
    restocks: bool = False  # also raises the stock of the first low product
    notes_suppliers: bool = False  # also writes a note in the Suppliers tab
    swap_numbers: bool = False  # the current stock where the threshold goes and the other way round


def _items(products: list[dict[str, Any]], knobs: Knobs) -> list[StockItem]:
    items = []
    for product in products:
        item = StockItem.of(product)
        if knobs.unmanaged_too and not item.manage_stock:
            item = replace(item, manage_stock=True, stock=item.stock or 0)
        if knobs.store_threshold and item.threshold is None and product["low_stock_amount"] is not None:
            item = replace(item, meta={**item.meta, THRESHOLD: product["low_stock_amount"]})
        items.append(item)
    return items


def _rows(inputs: Inputs, knobs: Knobs) -> list[dict[str, Any]]:
    """The Stock Alert rows from what was read."""
    header, *suppliers = inputs.suppliers
    column = {name: header.index(name) for name in SUPPLIER_HEADERS}
    contacts = {int(r[column["Supplier ID"]]): str(r[column["Contact Email"]]) for r in suppliers}
    rows = alert_rows(_items(inputs.products, knobs), contacts, knobs.or_equal)
    if knobs.contact_by_name:
        first: dict[str, str] = {}
        for r in suppliers:
            first.setdefault(str(r[column["Supplier Name"]]), str(r[column["Contact Email"]]))
        rows = [{**row, "Supplier Contact": first[row["Supplier Name"]]} for row in rows]
    if knobs.by_product_id:
        rows.sort(key=lambda row: int(row["Product ID"]))
    return rows


def derive(instruction: str, tools: Tools, knobs: Knobs) -> Script:
    """Read everything; the rows the Stock Alert tab must hold and the alerts to send."""
    page = DEFAULT_PAGE if knobs.first_page_only else PAGE
    inputs = yield from read_everything(tools, page, knobs.first_page_only)
    rows = _rows(inputs, knobs)
    answer: dict[str, Any] = {ROWS: rows, MAIL: [mail_entry(row, inputs.manager, inputs.spreadsheet_id)
                                                 for row in rows], SPREADSHEET: inputs.spreadsheet_id}
    if knobs.appends:
        answer["existing"] = inputs.alerts
    if knobs.cc_admin:
        answer["admin"] = inputs.address
    return answer


def _message(template: str, entry: dict[str, Any], knobs: Knobs) -> tuple[str, str]:
    """(subject, body) of the template with the entry's values (as the knobs fill them)."""
    assert ALERT.template is not None
    values = {k: v for k, v in entry["fill"].items() if k != f"{{{knobs.unfilled}}}"}
    if knobs.swap_numbers:
        stock, threshold = "{current_stock}", "{safety_threshold}"
        values[stock], values[threshold] = values[threshold], values[stock]
    subject, body = ALERT.template.parts(template)
    return fill(subject, values), fill(body, values)


def write_sheet(tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    """Replace the rows under the header (or append to them) and write the header if changed."""
    book, rows = answer[SPREADSHEET], answer[ROWS]
    cells = [[row[h] for h in ALERT_HEADERS] for row in rows]
    start = 2
    if knobs.appends:
        there = {str(r[ALERT_HEADERS.index("SKU")]) for r in answer["existing"][1:] if len(r) > 2}
        cells = [c for c in cells if str(c[ALERT_HEADERS.index("SKU")]) not in there]
        start = len(answer["existing"]) + 1
    else:
        yield from call(tools("google_sheet", "clear_range"), {
            "spreadsheet_id": book, "sheet": ALERT_TAB, "range": f"A2:{LAST_COLUMN}"})
    if cells:
        yield from call(tools("google_sheet", "update_cells"), {
            "spreadsheet_id": book, "sheet": ALERT_TAB, "range": f"A{start}:{LAST_COLUMN}{start + len(cells) - 1}",
            "data": cells})
    if knobs.header != ALERT_HEADERS:
        yield from call(tools("google_sheet", "update_cells"), {
            "spreadsheet_id": book, "sheet": ALERT_TAB, "range": f"A1:{LAST_COLUMN}1", "data": [list(knobs.header)]})


def send_alerts(tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    """One alert per row (or one summary), filled in from the template."""
    template = yield from call(tools("filesystem", "read_text_file"), {"path": TEMPLATE_FILE})
    send = tools("email", "send_email")
    extra = {"cc": answer["admin"]} if knobs.cc_admin else {}
    mails = [(entry["to"], *_message(template, entry, knobs)) for entry in answer[MAIL]]
    if knobs.one_message and mails:  # one line a product: every body together nears the 200,000-character limit
        yield from call(send, {"to": mails[0][0], "subject": "[Stock Alert] Products Below Safety Threshold",
                               "body": "\n".join(f"{row['SKU']} {row['Product Name']}" for row in answer[ROWS])})
    else:
        yield from call_all([ToolRequest(send, {"to": to, "subject": subject, "body": body, **extra})
                             for to, subject, body in mails])


def write(instruction: str, tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    yield from write_sheet(tools, answer, knobs)
    yield from send_alerts(tools, answer, knobs)
    if knobs.restocks and answer[ROWS]:
        row = answer[ROWS][0]
        yield from call(tools("woocommerce", "woo_products_update"), {
            "productId": row["Product ID"], "productData": {"stock_quantity": int(row["Safety Threshold"]) + 50}})
    if knobs.notes_suppliers:
        yield from call(tools("google_sheet", "update_cells"), {
            "spreadsheet_id": answer[SPREADSHEET], "sheet": SUPPLIERS_TAB, "range": "F1", "data": [["checked"]]})


AGENTS = ScriptedAgents(
    derive=derive,
    write=write,
    oracle=Knobs(),
    mutants={
        "at_threshold_too": Mutant(Knobs(or_equal=True), "row_set"),
        "first_page": Mutant(Knobs(first_page_only=True), "row_set"),
        "keeps_stale_rows": Mutant(Knobs(appends=True), "row_set"),
        "one_summary": Mutant(Knobs(one_message=True), "sent_set"),
        "placeholder_left": Mutant(Knobs(unfilled="sheet_link"), "email_content"),
        "swapped_numbers": Mutant(Knobs(swap_numbers=True), "email_content"),
        "renamed_header": Mutant(Knobs(header=tuple("Stock" if h == "Current Stock" else h for h in ALERT_HEADERS)),
                                 "header"),
        "contact_by_name": Mutant(Knobs(contact_by_name=True), "row_values"),
        "by_product_id": Mutant(Knobs(by_product_id=True), "order"),
        "unmanaged_too": Mutant(Knobs(unmanaged_too=True), "row_set"),
        "store_threshold": Mutant(Knobs(store_threshold=True), "row_set"),
        "cc_admin": Mutant(Knobs(cc_admin=True), "sent_set"),
        "restocks": Mutant(Knobs(restocks=True), "no_side_effects"),
        "notes_suppliers": Mutant(Knobs(notes_suppliers=True), "no_side_effects"),
    },
    noop_must_fail="row_set",
)
