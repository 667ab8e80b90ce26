"""Scripted agents of filter_low_selling_products: the oracle (solves through the tools only) and
its failure-mode mutants, each one knob away from the oracle."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from envs.filter_low_selling_products import (
    CLEARANCE,
    EXAMPLE_ROW,
    MAIL,
    MAX_PAGE,
    MAX_SALES,
    MIN_AGE_DAYS,
    MOVED,
    NEWSLETTER,
    OUTLET,
    PLACEHOLDER,
    PRICE,
    PRODUCT,
    PROMO,
    RATIO,
    REPORT,
    SALES_KEY,
    SUBSCRIBERS_FILE,
    TEMPLATE_FILE,
    TRAP_PAGE,
    read_everything,
)
from loca.core.outputs import csv_text, fill
from loca.core.script import Mutant, Script, ScriptedAgents, ToolRequest, Tools, call, call_all, paged

NOW = re.compile(r"It is now (\S+Z) ")
BATCH = 100  # products per batch update (the tool's maximum)
MILLI = Decimal("0.001")


@dataclass(frozen=True)
class Knobs:
    """How an agent deviates from the oracle (all off: the oracle)."""

    first_page_only: bool = False  # M1: reads one product page of the default size
    lifetime_sales: bool = False  # M2: judges sales by total_sales
    min_age_days: int = MIN_AGE_DAYS  # M3: 90 (at least 90 full days)
    sort_keys: tuple[str, ...] = ("date", "ratio", "name")  # M4: ratio first
    unsubscribed_too: bool = False  # M5: mails every list entry
    unpublished_too: bool = False  # also moves drafts and private products
    keep_categories: bool = False  # adds the new category to the products' old ones
    into_clearance: bool = False  # moves them into the existing `Clearance` instead
    tidy_clearance: bool = False  # also takes every product to keep out of `Clearance`
    keep_example: bool = False  # leaves the example row in the CSV
    unquoted: bool = False  # writes the CSV by joining cells with commas
    one_message: bool = False  # one message to every subscriber at once
    keep_placeholder: bool = False  # sends the template body as it is
    subject: str | None = None  # a subject of its own instead of the template's first line
    attach_first: bool = False  # mails before writing the CSV, so the example file goes out
    mark_notified: bool = False  # records in subscriber.json who was mailed


def _now(instruction: str) -> datetime:
    found = NOW.search(instruction)
    if found is None:
        raise ValueError("the instruction names no instant")
    return datetime.fromisoformat(found.group(1).replace("Z", "+00:00"))


def _json(read: Any) -> Any:
    """A JSON file's content as read (the script protocol parses a JSON reply already)."""
    return json.loads(read) if isinstance(read, str) else read


def _sales(product: dict[str, Any], knobs: Knobs) -> int:
    if knobs.lifetime_sales:
        return int(product["total_sales"])
    return next(int(m["value"]) for m in product["meta_data"] if m["key"] == SALES_KEY)


def _to_move(product: dict[str, Any], now: datetime, knobs: Knobs) -> bool:
    created = datetime.fromisoformat(product["date_created_gmt"]).replace(tzinfo=UTC)
    published = product["status"] == "publish" or knobs.unpublished_too
    return published and (now - created) // timedelta(days=1) >= knobs.min_age_days \
        and _sales(product, knobs) < MAX_SALES


def ratio(product: dict[str, Any]) -> Decimal:
    """Promotional / original price in percent, to 3 decimals (half up)."""
    promo = Decimal(product["sale_price"] or product["regular_price"])
    return (promo * 100 / Decimal(product["regular_price"])).quantize(MILLI, ROUND_HALF_UP)


def _row(product: dict[str, Any]) -> dict[str, str]:
    return {PRODUCT: product["name"], PRICE: product["regular_price"],
            PROMO: product["sale_price"] or product["regular_price"], RATIO: f"{ratio(product)}%"}


def _sort_key(product: dict[str, Any], knobs: Knobs) -> tuple[Any, ...]:
    keys = {"date": product["date_created_gmt"], "ratio": ratio(product), "name": product["name"]}
    return tuple(keys[k] for k in knobs.sort_keys)


def derive(instruction: str, tools: Tools, knobs: Knobs) -> Script:
    """Log in, read the subscribers, the template and every product; the report rows in order,
    the subscribers to mail (by address) and the ids of the products to move."""
    size = TRAP_PAGE if knobs.first_page_only else MAX_PAGE
    subscribers, _, _, products = yield from read_everything(tools, size, knobs.first_page_only)
    now = _now(instruction)
    chosen = sorted((p for p in products if _to_move(p, now, knobs)), key=lambda p: _sort_key(p, knobs))
    listed = _json(subscribers)["subscriber_list"]
    mailed = [{"to": s["email"].strip().lower(), "fill": {PLACEHOLDER: s["name"]}} for s in listed
              if s["subscribed"] is True or knobs.unsubscribed_too]
    return {REPORT.file: [_row(p) for p in chosen], MAIL: sorted(mailed, key=lambda e: e["to"]),
            MOVED: sorted(p["id"] for p in chosen)}


def _categories(tools: Tools) -> Script:
    [found] = yield from paged(tools("woocommerce", "woo_products_categories_list"), [{}], "items", "perPage",
                               MAX_PAGE)
    return {c["name"]: c["id"] for c in found}


def _products(tools: Tools, **filters: Any) -> Script:
    [found] = yield from paged(tools("woocommerce", "woo_products_list"), [filters], "items", "perPage", MAX_PAGE)
    return found


def _update(tools: Tools, changes: list[dict[str, Any]]) -> Script:
    batch = tools("woocommerce", "woo_products_batch_update")
    yield from call_all([ToolRequest(batch, {"update": changes[i:i + BATCH]})
                         for i in range(0, len(changes), BATCH)])


def recategorise(tools: Tools, moved: list[int], knobs: Knobs) -> Script:
    """Create the category (unless it exists), then make it each product's only category."""
    existing = yield from _categories(tools)
    if knobs.into_clearance:
        target = existing[CLEARANCE]
    elif OUTLET in existing:
        target = existing[OUTLET]
    else:
        made = yield from call(tools("woocommerce", "woo_products_categories_create"),
                               {"categoryData": {"name": OUTLET}})
        target = made["id"]
    old: dict[int, list[int]] = {}
    if knobs.keep_categories:
        listed = yield from _products(tools)
        old = {p["id"]: [c["id"] for c in p["categories"]] for p in listed}
    yield from _update(tools, [
        {"id": pid, "categories": [{"id": c} for c in dict.fromkeys([*old.get(pid, []), target])]} for pid in moved])
    if knobs.tidy_clearance:
        listed = yield from _products(tools, category=str(existing[CLEARANCE]))
        kept = [p for p in listed if p["id"] not in moved]
        yield from _update(tools, [{"id": p["id"], "categories": [{"id": c["id"]} for c in p["categories"]
                                                                  if c["id"] != existing[CLEARANCE]]} for p in kept])


def _csv(rows: list[dict[str, str]], knobs: Knobs) -> str:
    cells = [[row[h] for h in REPORT.headers] for row in rows]
    if knobs.keep_example:
        cells.insert(0, list(EXAMPLE_ROW))
    if knobs.unquoted:
        return "\n".join(",".join(line) for line in [REPORT.headers, *cells]) + "\n"
    return csv_text(REPORT.headers, cells)


def send_newsletter(tools: Tools, entries: list[dict[str, Any]], knobs: Knobs) -> Script:
    """One message per subscriber: the template's first line as subject, the rest as body with
    the name filled in, the CSV attached."""
    text = yield from call(tools("filesystem", "read_text_file"), {"path": TEMPLATE_FILE})
    assert NEWSLETTER.template is not None
    first, body = NEWSLETTER.template.parts(text)
    subject = knobs.subject or first
    send = tools("email", "send_email")
    if knobs.one_message and entries:
        yield from call(send, {"to": entries[0]["to"], "bcc": ", ".join(e["to"] for e in entries[1:]),
                               "subject": subject, "body": body, "attachments": [REPORT.file]})
        return
    yield from call_all([ToolRequest(send, {
        "to": e["to"], "subject": subject,
        "body": body if knobs.keep_placeholder else fill(body, e["fill"]),
        "attachments": [REPORT.file]}) for e in entries])


def _mark_notified(tools: Tools, entries: list[dict[str, Any]]) -> Script:
    text = yield from call(tools("filesystem", "read_text_file"), {"path": SUBSCRIBERS_FILE})
    listed = _json(text)
    done = {e["to"] for e in entries}
    for s in listed["subscriber_list"]:
        s["notified"] = s["email"].strip().lower() in done
    yield from call(tools("filesystem", "write_file"), {"path": SUBSCRIBERS_FILE,
                                                         "content": json.dumps(listed, indent=2) + "\n"})


def write(instruction: str, tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    """Recategorise, write the CSV, mail it."""
    yield from recategorise(tools, answer[MOVED], knobs)
    write_csv = ToolRequest(tools("filesystem", "write_file"), {"path": REPORT.file,
                                                                "content": _csv(answer[REPORT.file], knobs)})
    if knobs.attach_first:
        yield from send_newsletter(tools, answer[MAIL], knobs)
        yield from call_all([write_csv])
    else:
        yield from call_all([write_csv])
        yield from send_newsletter(tools, answer[MAIL], knobs)
    if knobs.mark_notified:
        yield from _mark_notified(tools, answer[MAIL])


AGENTS = ScriptedAgents(
    derive=derive,
    write=write,
    oracle=Knobs(),
    mutants={
        "first_page": Mutant(Knobs(first_page_only=True), "membership"),
        "lifetime_sales": Mutant(Knobs(lifetime_sales=True), "membership"),
        "ninety_days": Mutant(Knobs(min_age_days=MIN_AGE_DAYS - 1), "membership"),
        "ratio_first": Mutant(Knobs(sort_keys=("ratio", "date", "name")), "csv"),
        "unsubscribed_too": Mutant(Knobs(unsubscribed_too=True), "recipients"),
        "unpublished_too": Mutant(Knobs(unpublished_too=True), "membership"),
        "keeps_old_categories": Mutant(Knobs(keep_categories=True), "membership"),
        "into_clearance": Mutant(Knobs(into_clearance=True), "category"),
        "tidies_clearance": Mutant(Knobs(tidy_clearance=True), "products_untouched"),
        "keeps_example": Mutant(Knobs(keep_example=True), "csv"),
        "name_before_ratio": Mutant(Knobs(sort_keys=("date", "name", "ratio")), "csv"),
        "unquoted": Mutant(Knobs(unquoted=True), "csv"),
        "one_message": Mutant(Knobs(one_message=True), "recipients"),
        "placeholder_left": Mutant(Knobs(keep_placeholder=True), "email_content"),
        "own_subject": Mutant(Knobs(subject=f"{OUTLET} deals"), "email_content"),
        "example_attached": Mutant(Knobs(attach_first=True), "email_content"),
        "marks_notified": Mutant(Knobs(mark_notified=True), "no_side_effects"),
    },
    noop_must_fail="category",
)
