"""Checker of woocommerce_new_welcome: the CRM table as it stands (every synced row once and
unchanged; the rows added keyed by exactly the new customers, with the next ids and the right
values), the welcome e-mails the admin mailbox sent (one to each new customer alone, each the
template filled in word for word) and nothing else changed."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from checkers.kit import SHOWN, Checks, Context, judged, set_problems
from checkers.mail import content, one_each, recipients
from checkers.normalize import E, I, S, Si
from checkers.side_effects import no_side_effects
from checkers.verdict import CheckFailed
from envs.woocommerce_new_welcome import CRM, CRM_COLUMNS, DATASET, TABLE, TASK, TODAY, WELCOME
from loca.core.world import World
from mock_servers.core import sql
from mock_servers.core.db import Database
from mock_servers.google_cloud import bq_types
from mock_servers.google_cloud.bq_catalog import BigQueryCatalog
from mock_servers.sqlfront import Engine, parse

ALL_ROWS = 10**9
Row = dict[str, Any]


def _read_crm(world: World) -> list[Row]:
    project = str(world.meta.accounts["google_cloud"]["project"])
    db = Database(world.state_path, readonly=True)
    try:
        with db.read() as session:
            catalog = BigQueryCatalog(session, project, lambda: world.clock.at(0))
            if catalog.lookup((project, DATASET, TABLE)) is None:
                raise CheckFailed(f"table {DATASET}.{TABLE} is gone")
            engine = Engine(sql.cursor(session), catalog, lambda: world.clock.at(0), "bigquery", bq_types.show)
            found = engine.read(parse(f"SELECT * FROM `{DATASET}.{TABLE}`", "bigquery"), ALL_ROWS)
    finally:
        db.dispose()
    return [dict(zip(found.columns, row, strict=True)) for row in found.rows]


def crm_rows(ctx: Context) -> list[Row]:
    """Every row of the CRM table as it stands, by column name (memoised)."""
    found: list[Row] = ctx.memo(("crm",), lambda: _read_crm(ctx.world))
    return found


def _values(row: Row) -> tuple[Any, ...]:
    return tuple(row.get(column) for column in CRM_COLUMNS)


def _initial(ctx: Context) -> list[Row]:
    return [dict(zip(CRM_COLUMNS, values, strict=True)) for values in ctx.truth["existing"]]


def new_rows(ctx: Context) -> list[Row]:
    """The rows that are not an initial row (each initial row matched once, all columns equal)."""
    left = Counter(_values(row) for row in _initial(ctx))
    out = []
    for row in crm_rows(ctx):
        key = _values(row)
        if left[key]:
            left[key] -= 1
        else:
            out.append(row)
    return out


def _show(items: list[Any]) -> str:
    return f"{items[:SHOWN]}{' ...' if len(items) > SHOWN else ''} ({len(items)})"


def _key(value: Any) -> str:
    number = I(value)
    return str(number) if number is not None else repr(value)


def crm_history(ctx: Context) -> str:
    """Every row the CRM held at the start is there exactly once (by id) and unchanged in every
    column."""
    by_id: dict[str, list[Row]] = {}
    for row in crm_rows(ctx):
        by_id.setdefault(_key(row.get("id")), []).append(row)
    missing, twice, changed = [], [], []
    for want in _initial(ctx):
        mine = by_id.get(_key(want["id"]), [])
        if not mine:
            missing.append(want["id"])
        elif len(mine) > 1:
            twice.append(want["id"])
        elif _values(mine[0]) != _values(want):
            column = next(c for c in CRM_COLUMNS if mine[0].get(c) != want[c])
            changed.append(f"id {want['id']}/{column}: got {mine[0].get(column)!r}, expected {want[column]!r}")
    problems = [f"{what} {_show(items)}" for what, items in
                (("missing ids", missing), ("ids more than once", twice), ("changed", changed)) if items]
    if problems:
        raise CheckFailed("initial CRM rows: " + "; ".join(problems))
    return f"all {len(ctx.truth['existing'])} initial CRM rows are there once each, unchanged"


def crm_new_set(ctx: Context) -> str:
    """The added rows are keyed by exactly the new customers' WooCommerce ids, once each; every
    id of the table is unique and the added ones are the next unused integers."""
    added = new_rows(ctx)
    problems = set_problems([(_key(r.get("woocommerce_id")),) for r in added],
                            {(_key(e["woocommerce_id"]),) for e in ctx.answer(CRM)})
    ids = [_key(r.get("id")) for r in crm_rows(ctx)]
    repeated = sorted(i for i, n in Counter(ids).items() if n > 1)
    if repeated:
        problems.append(f"ids used more than once {_show(repeated)}")
    first = int(ctx.truth["next_id"])
    got = sorted(_key(r.get("id")) for r in added)
    want = sorted(str(first + n) for n in range(len(added)))
    if got != want:
        problems.append(f"the added ids are {_show(got)}, not the next unused ones from {first}")
    if problems:
        raise CheckFailed("added CRM rows: " + "; ".join(problems))
    return f"{len(added)} rows added, one per new customer, ids {first} on"


def _digits(value: Any) -> str:
    return re.sub(r"\D", "", "" if value is None else str(value))


def _true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and Si(value) == "true")


def _date(value: Any, want: str) -> bool:
    return value is not None and str(value).strip() == want


def _wrong(row: Row, want: Row) -> list[str]:
    checks = {"email": E(row.get("email")) == E(want["email"]),
              "first_name": S(row.get("first_name")) == S(want["first_name"]),
              "last_name": S(row.get("last_name")) == S(want["last_name"]),
              "phone": _digits(row.get("phone")) == _digits(want["phone"]) != "",
              "first_order_date": _date(row.get("first_order_date"), want["first_order_date"]),
              "welcome_email_sent": _true(row.get("welcome_email_sent")),
              "welcome_email_date": _date(row.get("welcome_email_date"), TODAY),
              "sync_date": _date(row.get("sync_date"), TODAY)}
    return [f"{want['woocommerce_id']}/{column}: got {row.get(column)!r}" for column, ok in checks.items() if not ok]


def crm_new_values(ctx: Context) -> str:
    """Each added row of a new customer: email (`E`), names (`S`), the phone's digits and the
    first order date as expected; welcome_email_sent true; welcome_email_date and sync_date today."""
    expected = {_key(e["woocommerce_id"]): e for e in ctx.answer(CRM)}
    wrong, count = [], 0
    for row in new_rows(ctx):
        want = expected.pop(_key(row.get("woocommerce_id")), None)
        if want is not None:
            count += 1
            wrong += _wrong(row, want)
    if wrong:
        more = " ..." if len(wrong) > SHOWN else ""
        raise CheckFailed(f"{len(wrong)} wrong cells: {'; '.join(wrong[:SHOWN])}{more}")
    judged(count, len(ctx.answer(CRM)), "new customers' rows")
    return f"all {count} added rows of new customers hold the right values"


def email_recipients(ctx: Context) -> str:
    """Mail went to exactly the new customers, one message each, addressed to them alone."""
    return f"{recipients(WELCOME)(ctx)}; {one_each(WELCOME)(ctx)}"


CHECKS = Checks(
    TASK,
    crm_history=crm_history,
    crm_new_set=crm_new_set,
    crm_new_values=crm_new_values,
    email_recipients=email_recipients,
    email_content=content(WELCOME),
    no_side_effects=no_side_effects(TASK),
)
