"""Checker of woocommerce_stock_alert: the Stock Alert tab as it stands (header, the low-stock
products once each with the right values, by SKU), the alerts the admin mailbox sent (only to
the purchasing manager, one per low-stock product told apart by its subject, each the template
filled in word for word, naming its product's SKU alone), and nothing else changed: no product,
no Suppliers cell, no spreadsheet or tab added, renamed or removed."""

from __future__ import annotations

from typing import Any

from checkers.kit import SHOWN, AgentTable, Checks, Context, cell_equal, set_problems
from checkers.mail import content, one_each
from checkers.normalize import S
from checkers.side_effects import no_side_effects
from checkers.verdict import CheckFailed
from envs.woocommerce_stock_alert import (
    ALERT,
    ALERT_COLUMNS,
    ALERT_HEADERS,
    ALERT_TAB,
    ROWS,
    SPREADSHEET,
    TASK,
)
from loca.core.world import World
from mock_servers.core.db import Database
from mock_servers.core.errors import ToolFailure
from mock_servers.google_sheet import domain

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


CHECKS = Checks(
    TASK,
    header=header,
    row_set=row_set,
    row_values=row_values,
    order=order,
    sent_set=one_each(ALERT),
    email_content=content(ALERT),
    no_side_effects=no_side_effects(TASK),
)
