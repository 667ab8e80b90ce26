"""Checker of woocommerce_stock_alert: the Stock Alert tab as it stands (header, the low-stock
products once each with the right values, by SKU), the alerts the admin mailbox sent (only to
the purchasing manager, one per low-stock product, each filled in from the template), and nothing
else changed: no product, no Suppliers cell, no spreadsheet or tab added, renamed or removed."""

from __future__ import annotations

import re
from typing import Any

from checkers.kit import SHOWN, AgentTable, Checks, Context, cell_equal, fail_on, set_problems
from checkers.mail import SentMessage, mailbox, sent_mail
from checkers.normalize import E, S, Si
from checkers.verdict import CheckFailed
from envs.woocommerce_stock_alert import (
    ALERT_COLUMNS,
    ALERT_HEADERS,
    ALERT_TAB,
    MAIL,
    ROWS,
    SPREADSHEET,
    TASK,
)
from loca.core.world import World
from mock_servers import snapshot_ignore
from mock_servers.core import snapshot
from mock_servers.core.db import Database
from mock_servers.core.errors import ToolFailure
from mock_servers.google_sheet import domain

SKU_TOKEN = re.compile(r"(?<![\w-])[A-Z]{3}-\d{5}(?![\w-])")
PLACEHOLDER = re.compile(r"\{\s*[A-Za-z_][\w ]*\}")
SHEET_TABLES = ("gs_spreadsheet", "gs_sheet", "gs_cell")  # judged tab by tab, not by the table digests
SKU = ALERT_HEADERS.index("SKU")


def _read_alert_tab(world: World, spreadsheet_id: str) -> list[list[Any]]:
    db = Database(world.state_path, readonly=True)
    try:
        with db.read() as session:
            try:
                book = domain.find(session, spreadsheet_id)
                tab = domain.sheet(session, book, ALERT_TAB)
            except ToolFailure as exc:
                raise CheckFailed(f"the {ALERT_TAB} tab cannot be found: {exc.message}") from None
            return domain.values(session, tab, domain.read_box(tab, domain.ref_of(tab, None)))
    finally:
        db.dispose()


def alert_tab(ctx: Context) -> AgentTable:
    """The Stock Alert tab as it stands: its first row and its non-empty rows below (memoised)."""

    def read() -> AgentTable:
        values = _read_alert_tab(ctx.world, ctx.answer(SPREADSHEET))
        if not values:
            return AgentTable([], [])
        return AgentTable(values[0], [r for r in values[1:] if any(S(v) != "" for v in r)])

    table: AgentTable = ctx.memo(("alert_tab",), read)
    return table


def _records(table: AgentTable) -> list[dict[str, Any]]:
    return [{h: (r[i] if i < len(r) else None) for i, h in enumerate(ALERT_HEADERS)} for r in table.rows]


def _skus(table: AgentTable) -> list[str]:
    return [S(r[SKU]) if len(r) > SKU else "" for r in table.rows]


def header(ctx: Context) -> str:
    """The first row is the eight headers (`S`, in order), nothing after them."""
    got = [S(h) for h in alert_tab(ctx).headers]
    while got and got[-1] == "":
        got.pop()
    if got != list(ALERT_HEADERS):
        raise CheckFailed(f"{ALERT_TAB}: header row is {got}, expected {list(ALERT_HEADERS)}")
    return f"{ALERT_TAB} keeps its {len(ALERT_HEADERS)} headers"


def row_set(ctx: Context) -> str:
    """The rows' SKUs are exactly the low-stock products': none missing, no stale or other row,
    none twice."""
    want: set[tuple[str, ...]] = {(S(row["SKU"]),) for row in ctx.answer(ROWS)}
    problems = set_problems([(sku,) for sku in _skus(alert_tab(ctx))], want)
    if problems:
        raise CheckFailed(f"{ALERT_TAB}: " + "; ".join(problems))
    return f"{ALERT_TAB}: {len(want)} rows, one per low-stock product"


def row_values(ctx: Context) -> str:
    """Every cell of every row of a low-stock product is right: IDs and numbers `I`, text `S`,
    the supplier contact `E`."""
    expected = {S(row["SKU"]): row for row in ctx.answer(ROWS)}
    wrong, matched = [], 0
    for record in _records(alert_tab(ctx)):
        want = expected.get(S(record["SKU"]))
        if want is None:
            continue
        matched += 1
        wrong += [f"{want['SKU']}/{c.name}: got {record[c.name]!r}, expected {want[c.name]!r}"
                  for c in ALERT_COLUMNS if not cell_equal(c.norm, record[c.name], want[c.name])]
    if wrong:
        raise CheckFailed(f"{ALERT_TAB}: {len(wrong)} wrong cells: {'; '.join(wrong[:SHOWN])}"
                          + (" ..." if len(wrong) > SHOWN else ""))
    return f"{ALERT_TAB}: every cell of {matched} matched rows is right"


def order(ctx: Context) -> str:
    """The rows come by SKU ascending."""
    got = _skus(alert_tab(ctx))
    if got != sorted(got):
        first = next(i for i, (a, b) in enumerate(zip(got, sorted(got), strict=True)) if a != b)
        raise CheckFailed(f"{ALERT_TAB}: row {first + 2} holds SKU {got[first]}, which does not come next by SKU")
    return f"{ALERT_TAB}: rows by SKU ascending"


def _mentioned(message: SentMessage, skus: set[str]) -> list[str]:
    """The store's SKUs the message's body mentions, each once."""
    return sorted({t for t in SKU_TOKEN.findall(message.text) if t in skus})


def sent_set(ctx: Context) -> str:
    """Every message went to the purchasing manager alone (To, no Cc or Bcc); one per low-stock
    product, each naming exactly one store SKU in its body, the SKUs one to one with the
    low-stock products."""
    sent, entries = sent_mail(ctx), ctx.answer(MAIL)
    manager = E(entries[0]["to"]) if entries else None
    skus = set(ctx.truth["skus"])
    astray = [f"#{m.id} to {list(m.recipients)}" for m in sent if m.sole_recipient != manager]
    vague = [f"#{m.id} names {_mentioned(m, skus) or 'no SKU'}" for m in sent if len(_mentioned(m, skus)) != 1]
    problems = [f"{what}: {items[:SHOWN]}{' ...' if len(items) > SHOWN else ''}" for what, items in
                (("not to the manager alone", astray), ("not about exactly one product", vague)) if items]
    if len(sent) != len(entries):
        problems.append(f"{len(sent)} messages sent, expected {len(entries)}")
    problems += set_problems([tuple(_mentioned(m, skus)) for m in sent if len(_mentioned(m, skus)) == 1],
                             {(e["sku"],) for e in entries})
    if problems:
        raise CheckFailed("; ".join(problems))
    return f"{len(entries)} alerts to {manager}, one per low-stock product"


def _number_in(text: str, value: Any) -> bool:
    return re.search(rf"(?<![\w.]){int(value)}(?:\.0+)?(?!\w|\.\d)", text) is not None


def _content_problems(message: SentMessage, entry: dict[str, Any], spreadsheet_id: str) -> list[str]:
    text = message.text
    problems = []
    if S(message.subject) != S(entry["subject"]):
        problems.append(f"subject {message.subject!r}, expected {entry['subject']!r}")
    if not _number_in(text, entry["current_stock"]):
        problems.append(f"no current stock {entry['current_stock']}")
    if not _number_in(text, entry["threshold"]):
        problems.append(f"no threshold {entry['threshold']}")
    if Si(entry["supplier_name"]) not in Si(text):
        problems.append(f"no supplier name {entry['supplier_name']!r}")
    if E(entry["supplier_contact"]) not in text.lower():
        problems.append(f"no supplier contact {entry['supplier_contact']}")
    if spreadsheet_id not in text:
        problems.append("no link to the spreadsheet (its id)")
    if (found := PLACEHOLDER.search(f"{message.subject}\n{text}")) is not None:
        problems.append(f"placeholder {found.group(0)} left")
    return problems


def email_content(ctx: Context) -> str:
    """Each alert about a low-stock product has that product's subject exactly (`S`) and a body
    with its SKU, current stock, threshold, supplier name and contact and the spreadsheet's id,
    and no `{...}` placeholder left."""
    entries = {e["sku"]: e for e in ctx.answer(MAIL)}
    spreadsheet_id = ctx.answer(SPREADSHEET)
    wrong, judged = [], 0
    for message in sent_mail(ctx):
        mentioned = _mentioned(message, set(entries))
        if len(mentioned) != 1:
            continue
        judged += 1
        wrong += [f"{mentioned[0]}: {p}" for p in _content_problems(message, entries[mentioned[0]], spreadsheet_id)]
    if wrong:
        raise CheckFailed(f"{len(wrong)} problems: {'; '.join(wrong[:SHOWN])}" + (" ..." if len(wrong) > SHOWN else ""))
    return f"all {judged} alerts have the product's subject and the template's values filled in"


def _sheets_now(world: World) -> dict[str, Any]:
    """The spreadsheets, tabs and (but for the Stock Alert tab) cells, as the generator froze them."""
    db = Database(world.state_path, readonly=True)
    try:
        with db.read() as session:
            return domain.layout_and_cells(session, skip_tabs=(ALERT_TAB,))
    finally:
        db.dispose()


def no_side_effects(ctx: Context) -> str:
    """Nothing changed but the Stock Alert tab's cells and the sent mail: every product and every
    other store, mail and sheet row as it was, the workspace files unchanged, no spreadsheet or
    tab added, renamed, moved or removed, the Suppliers tab cell for cell as it was."""
    before = snapshot.Snapshot.model_validate(ctx.world.read_truth("snapshot.json"))
    outside = before.model_copy(update={"tables": {k: v for k, v in before.tables.items() if k not in SHEET_TABLES}})
    problems = snapshot.changes(ctx.world, outside, snapshot_ignore(list(TASK.servers.values())),
                                exclude_files=TASK.writable_files, growable=(*TASK.growable_tables, *SHEET_TABLES))
    frozen, now = ctx.truth["frozen"], _sheets_now(ctx.world)
    for what in ("spreadsheets", "tabs"):
        if now[what] != frozen[what]:
            problems.append(f"the {what} changed: now {now[what]}, at the start {frozen[what]}")
    for tab, cells in frozen["cells"].items():
        if now["cells"].get(tab) != cells:
            problems.append(f"the cells of {tab} changed")
    fail_on(problems)
    return f"only the {ALERT_TAB} rows and the mail of {mailbox(ctx.world)} changed"


CHECKS = Checks(
    TASK,
    header=header,
    row_set=row_set,
    row_values=row_values,
    order=order,
    sent_set=sent_set,
    email_content=email_content,
    no_side_effects=no_side_effects,
)
