"""Checker of filter_low_selling_products: the store as it stands (one `Outlet/Clearance`
category holding exactly the products to move, each in it alone; every other product field and
every other product's categories as generated), the CSV in the workspace and the one attached to
each newsletter, the newsletters the admin's mailbox sent, and no other change."""

from __future__ import annotations

import csv
import io
import re
import sqlite3
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from checkers.kit import SHOWN, Checks, Context, judged, set_problems
from checkers.mail import SentMessage, message_problems, one_each, paired, recipients
from checkers.normalize import S
from checkers.side_effects import no_side_effects
from checkers.verdict import CheckFailed
from envs.filter_low_selling_products import (
    MAIL,
    MOVED,
    NEWSLETTER,
    OUTLET,
    PRICE,
    PRODUCT,
    PROMO,
    RATIO,
    REPORT,
    STORE_FILE,
    TASK,
)
from loca.core.world import World
from mock_servers.core import sql
from mock_servers.core.db import Database
from mock_servers.email import domain as mail
from mock_servers.woocommerce.domain import products as woo_products
from mock_servers.woocommerce.domain import terms
from mock_servers.woocommerce.domain.base import Store

MONEY = re.compile(r"\d+\.\d{2}")
PERCENT = re.compile(r"(\d+\.\d{3})%")
RATIO_TOLERANCE = Decimal("0.001")  # percentage points
ALL = 1_000_000


def _show(items: list[str]) -> str:
    return f"{items[:SHOWN]}{' ...' if len(items) > SHOWN else ''} ({len(items)})"


# ---------------------------------------------------------------- the store

@dataclass(frozen=True)
class StoreState:
    """Every product as the tools show it (date_modified left out), by id, and every category."""

    products: dict[int, dict[str, Any]]
    categories: list[dict[str, Any]]

    def outlets(self) -> set[int]:
        return {c["id"] for c in self.categories if S(c["name"]) == OUTLET}


def _read_store(world: World) -> StoreState:
    db = Database(world.state_path, readonly=True)
    try:
        with db.read() as session:
            store = Store(session, world.clock.at(0), world.clock.zone)
            found = sql.rows(session, woo_products.Product,
                             f"SELECT {woo_products.COLUMNS} FROM woo_product p ORDER BY p.id")
            views = woo_products.views(store, found)
            categories = terms.categories(store, None, None, False, 1, ALL)[0]
    finally:
        db.dispose()
    return StoreState({v["id"]: {k: x for k, x in v.items() if k != "date_modified"} for v in views}, categories)


def store(ctx: Context) -> StoreState:
    found: StoreState = ctx.memo(("store",), lambda: _read_store(ctx.world))
    return found


def generated(ctx: Context) -> dict[str, Any]:
    """The store as generated (`STORE_FILE` of the truth)."""
    found: dict[str, Any] = ctx.memo(("generated",), lambda: ctx.world.read_truth(STORE_FILE))
    return found


def category(ctx: Context) -> str:
    """Exactly one category is named `Outlet/Clearance` (`S`)."""
    named = [c for c in store(ctx).categories if S(c["name"]) == OUTLET]
    if len(named) != 1:
        raise CheckFailed(f"{len(named)} categories are named {OUTLET!r}, expected exactly one")
    return f"one category named {OUTLET!r} (id {named[0]['id']})"


def membership(ctx: Context) -> str:
    """The products in `Outlet/Clearance` are exactly the products to move, and each of them has
    that one category only."""
    state = store(ctx)
    outlets = state.outlets()
    if not outlets:
        raise CheckFailed(f"no category is named {OUTLET!r}, so no product is in it")
    members = [str(pid) for pid, p in state.products.items() if any(c["id"] in outlets for c in p["categories"])]
    problems = set_problems([(m,) for m in members], {(str(pid),) for pid in ctx.answer(MOVED)})
    extra = [f"{pid} ({[c['name'] for c in p['categories']]})" for pid in ctx.answer(MOVED)
             if (p := state.products.get(pid)) and str(pid) in members and len(p["categories"]) != 1]
    if extra:
        problems.append(f"in other categories too: {_show(extra)}")
    if problems:
        raise CheckFailed(f"products in {OUTLET!r}: " + "; ".join(problems))
    return f"exactly the {len(members)} products to move are in {OUTLET!r}, each in it alone"


def _shown(field: str, value: Any) -> Any:
    """A product field as compared: images by what they show, not their ids."""
    if field == "images" and isinstance(value, list):
        return [{k: v for k, v in image.items() if k != "id"} for image in value]
    return value


def products_untouched(ctx: Context) -> str:
    """Every product keeps every field (prices, dates, meta data, status, stock, tags, images,
    ...) but date_modified, and every product not to move keeps its categories; none is
    created or deleted."""
    before: dict[str, dict[str, Any]] = generated(ctx)["products"]
    now = store(ctx).products
    moved = set(ctx.answer(MOVED))
    changed, gone = [], []
    for key, old in before.items():
        pid = int(key)
        new = now.get(pid)
        if new is None:
            gone.append(key)
            continue
        fields = [f for f in old if f != "categories" and _shown(f, new.get(f)) != _shown(f, old[f])]
        if pid not in moved and new["categories"] != old["categories"]:
            fields.append("categories")
        if fields:
            changed.append(f"{pid} {old['name']!r}: {', '.join(fields)}")
    created = sorted(str(pid) for pid in now if str(pid) not in before)
    problems = [f"{what} {_show(items)}" for what, items in
                (("changed", changed), ("deleted", gone), ("created", created)) if items]
    if problems:
        raise CheckFailed("products: " + "; ".join(problems))
    return f"all {len(before)} products keep their fields, and the ones to keep their categories"


# ---------------------------------------------------------------- the CSV

def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def _cells(row: dict[str, str], got: list[str]) -> list[str]:
    """What is wrong with one row whose name matched: prices `^\\d+\\.\\d{2}$` equal to the
    expected ones, the ratio `^\\d+\\.\\d{3}%$` within 0.001 pp of promotional / original."""
    wrong = []
    cells = dict(zip(REPORT.headers, [S(c) for c in got] + [""] * len(REPORT.headers), strict=False))
    for column in (PRICE, PROMO):
        if not MONEY.fullmatch(cells[column]) or Decimal(cells[column]) != Decimal(row[column]):
            wrong.append(f"{column} {cells[column]!r}, expected {row[column]!r}")
    exact = Decimal(row[PROMO]) * 100 / Decimal(row[PRICE])
    ratio = PERCENT.fullmatch(cells[RATIO])
    value = _decimal(ratio.group(1)) if ratio else None
    if value is None or abs(value - exact) > RATIO_TOLERANCE:
        wrong.append(f"{RATIO} {cells[RATIO]!r}, expected {row[RATIO]!r}")
    return [f"{row[PRODUCT]!r}: {w}" for w in wrong]


def table_problems(data: bytes, expected: list[dict[str, str]]) -> list[str]:
    """What keeps a CSV (UTF-8, BOM tolerated, RFC 4180, blank lines ignored) from being the
    expected report: the header exactly, the Product Name sequence (`S`) in the expected order,
    each row's values; none: it is right."""
    try:
        rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    except (UnicodeDecodeError, csv.Error) as exc:
        return [f"not readable as UTF-8 CSV: {type(exc).__name__}"]
    rows = [r for r in rows if any(S(c) for c in r)]
    if not rows:
        return ["empty"]
    header, body = [S(c) for c in rows[0]], rows[1:]
    problems = [] if header == REPORT.headers else [f"header {header}, expected {REPORT.headers}"]
    names = [S(r[0]) for r in body]
    want = [S(row[PRODUCT]) for row in expected]
    if names != want:
        first = next((i for i, (g, w) in enumerate(zip(names, want, strict=False)) if g != w),
                     min(len(names), len(want)))
        problems.append(f"data row {first + 1} is {names[first] if first < len(names) else 'missing'!r}, expected "
                        f"{want[first] if first < len(want) else 'no row'!r} ({len(names)} rows, {len(want)} expected)")
    wide = [S(r[0]) for r in body if any(S(c) for c in r[len(REPORT.headers):])]
    if wide:
        problems.append(f"rows with more than {len(REPORT.headers)} cells: {_show(wide)}")
    by_name = {S(row[PRODUCT]): row for row in expected}
    wrong = [w for r in body if S(r[0]) in by_name for w in _cells(by_name[S(r[0])], r)]
    if wrong:
        problems.append(f"{len(wrong)} wrong values: {'; '.join(wrong[:SHOWN])}"
                        + (" ..." if len(wrong) > SHOWN else ""))
    return problems


def csv_file(ctx: Context) -> str:
    """The workspace CSV: exact header, the products to move in the required order, right prices
    and ratios."""
    path = ctx.world.workspace / REPORT.file
    if not path.is_file():
        raise CheckFailed(f"{REPORT.file} is missing from the workspace")
    problems = table_problems(path.read_bytes(), ctx.answer(REPORT.file))
    if problems:
        raise CheckFailed(f"{REPORT.file}: " + "; ".join(problems))
    return f"{REPORT.file}: the header and the {len(ctx.answer(REPORT.file))} rows in order, values right"


# ---------------------------------------------------------------- the newsletters

def recipients_once(ctx: Context) -> str:
    """Mail went to exactly the subscribed entries (`E`), one message each, addressed to them
    alone."""
    return f"{recipients(NEWSLETTER)(ctx)}; {one_each(NEWSLETTER)(ctx)}"


def _attachments(world: World, message: SentMessage) -> list[mail.Attachment]:
    """The attachments of a sent message, with their bytes, as sent."""
    conn = sqlite3.connect(f"file:{world.state_path}?mode=ro", uri=True)
    try:
        return mail.transfer_attachments(conn, message.id)
    finally:
        conn.close()


def email_content(ctx: Context) -> str:
    """Every message to a subscriber is the template filled in for them (its first line as the
    subject, the rest word for word with their name, no placeholder left) with exactly one
    attachment, named `discount_products.csv`, that is the right report."""
    expected = ctx.answer(REPORT.file)
    wrong: list[str] = []
    pairs = paired(ctx, NEWSLETTER)
    judged(len(pairs), len(ctx.answer(MAIL)), "newsletters")
    for entry, m in pairs:
        problems = message_problems(ctx, NEWSLETTER, entry, m)
        files = _attachments(ctx.world, m)
        if [f.filename for f in files] != [REPORT.file]:
            problems.append(f"attachments {[f.filename for f in files]}, expected [{REPORT.file!r}]")
        elif found := table_problems(files[0].data, expected):
            problems.append(f"the attached {REPORT.file}: {'; '.join(found)}")
        if problems:
            wrong.append(f"to {entry['to']}: {'; '.join(problems)}")
    if wrong:
        raise CheckFailed(f"{len(wrong)} problems: {_show(wrong)}")
    return f"all {len(pairs)} messages are the filled template with the right CSV"


CHECKS = Checks(
    TASK,
    category=category,
    membership=membership,
    products_untouched=products_untouched,
    csv=csv_file,
    recipients=recipients_once,
    email_content=email_content,
    no_side_effects=no_side_effects(TASK),
)
