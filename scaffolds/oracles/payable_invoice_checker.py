"""Scripted agents of payable_invoice_checker: the oracle (reads every invoice PDF, the tables'
descriptions and the existing IDs through the tools, inserts the missing rows, sets the comment
and e-mails the managers) and its failure-mode mutants, each one knob away from the oracle."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from envs.payable_invoice_checker import (
    FILES,
    FLAG_COLUMN,
    FLAG_COMMENT,
    ID_PAGE,
    INVOICE_COLUMNS,
    INVOICES,
    MAIL,
    NEW_INVOICES,
    NEW_PAYMENTS,
    NOTICE,
    PAYMENT_COLUMNS,
    PAYMENTS,
    TRAP_ROWS,
    read_everything,
    table,
)
from loca.core.script import Mutant, Script, ScriptedAgents, ToolRequest, Tools, call, call_all

MONEY = re.compile(r"(?:\$|USD )?(\d{1,3}(?:,\d{3})*\.\d{2})(?: USD)?")
ID_LINE = re.compile(r"^(?:Invoice No\.:|Invoice #|DOCUMENT NO\.|Invoice Number:|Reference:)\s*(\S+)$")
DATE_LINE = re.compile(r"^(?:Invoice Date:|Date:|ISSUED|Issue date:|Dated:)\s*(.+)$")
DATE_FORMATS = ("%Y-%m-%d", "%B %d, %Y", "%d %b %Y", "%b %d, %Y", "%Y.%m.%d")
BUYER_LABELS = ("Bill To:", "Billed to", "CUSTOMER", "Purchaser", "Invoice to")
TOTAL_LABELS = ("Total:", "Grand total", "INVOICE TOTAL", "Total incl. tax", "Total amount")
SUBTOTAL_LABELS = ("Subtotal:", "Subtotal", "NET AMOUNT", "Amount before tax", "Net total")
# Payment status by the words that state it, checked in this order.
STATUS_WORDS = (("under review", "review"), ("partially paid", "partial"), ("partial payment", "partial"),
                ("unpaid", "unpaid"), ("no payment has been received", "unpaid"), ("paid in full", "paid"))
INSERT_BATCH = 400  # rows per INSERT statement
EXTRA_COLUMN = "SOURCE_FILE"


@dataclass(frozen=True)
class Knobs:
    """How an agent deviates from the oracle (all off: the oracle)."""

    first_page_only: bool = False  # reads only the first TRAP_ROWS existing IDs
    skip_recorded: bool = True  # M1 off: inserts the PDFs already recorded again
    review_is_paid: bool = False  # M2: a payment under review counts as paid
    use_subtotal: bool = False  # M3: INVOICE_AMOUNT without tax
    old_outstanding: bool = False  # M4: also lists the managers' old outstanding rows
    set_comment: bool = True  # M5 off: leaves the column comment alone
    every_buyer: bool = False  # e-mails every buyer of a PDF, outstanding or not
    add_column: bool = False  # adds a SOURCE_FILE column to INVOICE_PAYMENTS
    supplier_email: bool = False  # takes the first e-mail address printed (the supplier's)
    invented_invoice: bool = False  # each notice also lists an invoice that does not exist
    comment_table: bool = False  # also comments the INVOICES table
    upper_emails: bool = False  # rewrites every existing PURCHASER_EMAIL in upper case
    move_pdf: bool = False  # moves the first PDF into a folder of its own when done


@dataclass(frozen=True)
class Printed:
    """What one invoice PDF says."""

    invoice_id: str
    supplier: str
    total: Decimal
    subtotal: Decimal
    buyer: str
    supplier_email: str
    issued: str
    status: str
    paid: Decimal


def _lines(text: str) -> list[str]:
    body = text.split("=== Page 1 ===", 1)[-1]
    return [line.strip() for line in body.splitlines() if line.strip()]


def _money(text: str) -> Decimal:
    found = MONEY.search(text)
    if found is None:
        raise ValueError(f"no amount in {text!r}")
    return Decimal(found.group(1).replace(",", ""))


def _after(lines: list[str], labels: Iterable[str]) -> str:
    wanted = set(labels)
    for i, line in enumerate(lines[:-1]):
        if line in wanted:
            return lines[i + 1]
    raise ValueError(f"none of {sorted(wanted)} printed")


def _match(lines: list[str], pattern: re.Pattern[str]) -> str:
    for line in lines:
        found = pattern.match(line)
        if found:
            return found.group(1).strip()
    raise ValueError(f"nothing matches {pattern.pattern}")


def _date(text: str) -> str:
    for fmt in DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            continue
    raise ValueError(f"unknown date format {text!r}")


def _buyer(lines: list[str]) -> str:
    start = next(i for i, line in enumerate(lines) if line in BUYER_LABELS)
    return next(line for line in lines[start:] if "@" in line).lower()


def _payment(lines: list[str]) -> tuple[str, Decimal]:
    for line in lines:
        lowered = line.lower()
        status = next((s for words, s in STATUS_WORDS if words in lowered), None)
        if status is None:
            continue
        if status == "unpaid":
            return status, Decimal("0.00")
        boxed = next((row for row in lines if row.startswith("Amount paid:")), None)
        return status, _money(boxed if boxed is not None else line)
    raise ValueError("no payment status printed")


def parse_invoice(text: str) -> Printed:
    """The fields of one invoice from its extracted text."""
    lines = _lines(text)
    status, paid = _payment(lines)
    return Printed(invoice_id=_match(lines, ID_LINE), supplier=lines[0], total=_money(_after(lines, TOTAL_LABELS)),
                   subtotal=_money(_after(lines, SUBTOTAL_LABELS)), buyer=_buyer(lines),
                   supplier_email=next(line for line in lines if "@" in line).lower(),
                   issued=_date(_match(lines, DATE_LINE)), status=status, paid=paid)


def _outstanding(invoice: Printed, knobs: Knobs) -> bool:
    return not (invoice.status == "paid" or (knobs.review_is_paid and invoice.status == "review"))


def _old_outstanding(tools: Tools) -> Script:
    """Manager e-mail -> the IDs of their outstanding rows already in the tables."""
    found = yield from call(tools("snowflake", "read_query"), {"query": (
        f"SELECT i.INVOICE_ID, i.PURCHASER_EMAIL FROM {table(INVOICES)} i JOIN {table(PAYMENTS)} p "
        f"ON p.INVOICE_ID = i.INVOICE_ID WHERE p.{FLAG_COLUMN} = 1")})
    out: dict[str, list[str]] = {}
    for row in found["data"]:
        out.setdefault(str(row["PURCHASER_EMAIL"]).lower(), []).append(str(row["INVOICE_ID"]))
    return out


def _mail(printed: list[Printed], knobs: Knobs, old: dict[str, list[str]]) -> list[dict[str, Any]]:
    due: dict[str, set[str]] = {}
    for invoice in printed:
        if _outstanding(invoice, knobs) or knobs.every_buyer:
            due.setdefault(invoice.buyer, set())
        if _outstanding(invoice, knobs):
            due[invoice.buyer].add(invoice.invoice_id)
    for email in due:
        due[email].update(old.get(email, []))
    return [{"to": email, "ids": sorted(ids)} for email, ids in sorted(due.items())]


def derive(instruction: str, tools: Tools, knobs: Knobs) -> Script:
    """Log in, read every PDF, the tables and the existing IDs; the rows to add and the notices."""
    page = TRAP_ROWS if knobs.first_page_only else ID_PAGE
    _, _, texts, ids = yield from read_everything(tools, page, knobs.first_page_only)
    printed = [parse_invoice(text) for _, text in sorted(texts.items())]
    known = set(ids) if knobs.skip_recorded else set()
    new = sorted((p for p in printed if p.invoice_id not in known), key=lambda p: p.invoice_id)
    old = (yield from _old_outstanding(tools)) if knobs.old_outstanding else {}
    return {
        NEW_INVOICES: [{"INVOICE_ID": p.invoice_id, "SUPPLIER_NAME": p.supplier,
                        "INVOICE_AMOUNT": f"{p.subtotal if knobs.use_subtotal else p.total:.2f}",
                        "PURCHASER_EMAIL": p.supplier_email if knobs.supplier_email else p.buyer,
                        "INVOICE_DATE": p.issued} for p in new],
        NEW_PAYMENTS: [{"INVOICE_ID": p.invoice_id, "PAYMENT_AMOUNT": f"{p.paid:.2f}",
                        "OUTSTANDING_FLAG": int(_outstanding(p, knobs))} for p in new],
        MAIL: _mail(printed, knobs, old),
    }


def _literal(value: Any) -> str:
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def _inserts(name: str, columns: list[str], entries: list[dict[str, Any]]) -> list[str]:
    statements = []
    for start in range(0, len(entries), INSERT_BATCH):
        values = ", ".join("(" + ", ".join(_literal(e[c]) for c in columns) + ")"
                           for e in entries[start:start + INSERT_BATCH])
        statements.append(f"INSERT INTO {table(name)} ({', '.join(columns)}) VALUES {values}")
    return statements


def _body(ids: list[str], knobs: Knobs) -> str:
    invented = [f"INV-1999-{int(ids[0][-4:]) % 9000 + 1000:05d}"] if knobs.invented_invoice and ids else []
    listed = "\n".join(f"- {invoice_id}.pdf" for invoice_id in [*ids, *invented])
    return (f"Hello,\n\nThe following invoices you purchased are still outstanding; please process them:\n\n"
            f"{listed}\n\nThank you,\nAccounts Payable")


def write(instruction: str, tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    """Insert the rows, set the comment, then send one notice per manager (one turn)."""
    query = tools("snowflake", "write_query")
    statements = [*_inserts(INVOICES, list(INVOICE_COLUMNS), answer[NEW_INVOICES]),
                  *_inserts(PAYMENTS, list(PAYMENT_COLUMNS), answer[NEW_PAYMENTS])]
    if knobs.set_comment:
        statements.append(f"COMMENT ON COLUMN {table(PAYMENTS)}.{FLAG_COLUMN} IS '{FLAG_COMMENT}'")
    if knobs.add_column:
        statements.append(f"ALTER TABLE {table(PAYMENTS)} ADD COLUMN {EXTRA_COLUMN} VARCHAR(64)")
    if knobs.comment_table:
        statements.append(f"COMMENT ON TABLE {table(INVOICES)} IS 'checked'")
    if knobs.upper_emails:
        statements.append(f"UPDATE {table(INVOICES)} SET PURCHASER_EMAIL = UPPER(PURCHASER_EMAIL)")
    for statement in statements:
        yield from call(query, {"query": statement})
    yield from call_all([ToolRequest(tools("email", "send_email"), {
        "to": e["to"], "subject": NOTICE.subject, "body": _body(e["ids"], knobs)}) for e in answer[MAIL]])
    if knobs.move_pdf:
        listing = yield from call(tools("filesystem", "list_directory"), {"path": FILES})
        first = next(line.split(" ", 1)[1] for line in listing.splitlines() if line.startswith("[FILE] "))
        yield from call(tools("terminal", "run_command"), {"command": f"mkdir done && mv {FILES}/{first} done/"})


AGENTS = ScriptedAgents(
    derive=derive,
    write=write,
    oracle=Knobs(),
    mutants={
        "reinserts_recorded": Mutant(Knobs(skip_recorded=False), "existing_rows"),
        "review_as_paid": Mutant(Knobs(review_is_paid=True), "payments_new"),
        "subtotal_amount": Mutant(Knobs(use_subtotal=True), "invoices_new"),
        "old_outstanding": Mutant(Knobs(old_outstanding=True), "email_content"),
        "no_comment": Mutant(Knobs(set_comment=False), "comment"),
        "first_page": Mutant(Knobs(first_page_only=True), "existing_rows"),
        "every_buyer": Mutant(Knobs(every_buyer=True), "recipients"),
        "adds_column": Mutant(Knobs(add_column=True), "schema"),
        "supplier_email": Mutant(Knobs(supplier_email=True), "invoices_new"),
        "invented_invoice": Mutant(Knobs(invented_invoice=True), "email_content"),
        "comments_table": Mutant(Knobs(comment_table=True), "no_side_effects"),
        "upper_case_emails": Mutant(Knobs(upper_emails=True), "existing_rows"),
        "moves_a_pdf": Mutant(Knobs(move_pdf=True), "no_side_effects"),
    },
    noop_must_fail="invoices_new",
)
