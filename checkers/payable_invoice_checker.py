"""Checker of payable_invoice_checker: the warehouse's two tables as they stand (old rows intact,
the new invoices added once each with the right values, the flag column's comment, the columns
unchanged) and the notices the accounts-payable mailbox sent."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from checkers.kit import SHOWN, Checks, Context
from checkers.mail import content, one_each, recipients
from checkers.normalize import E, S
from checkers.side_effects import no_side_effects
from checkers.verdict import CheckFailed
from envs.payable_invoice_checker import (
    DATABASE,
    FLAG_COLUMN,
    FLAG_COMMENT,
    INVOICE_COLUMNS,
    INVOICES,
    NEW_INVOICES,
    NEW_PAYMENTS,
    NOTICE,
    PAYMENT_COLUMNS,
    PAYMENTS,
    SCHEMA,
    TASK,
    table,
)
from loca.core.world import World
from mock_servers.core import sql
from mock_servers.core.db import Database
from mock_servers.snowflake.catalog import SnowflakeCatalog
from mock_servers.sqlfront import Engine, parse

TOLERANCE = Decimal("0.005")
ALL_ROWS = 10**9
Row = dict[str, Any]


def _decimal(value: Any) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return Decimal(str(value).strip())
    except InvalidOperation:
        return None


def money_equal(got: Any, want: Any) -> bool:
    """Amounts within half a cent."""
    a, b = _decimal(got), _decimal(want)
    return a is not None and b is not None and abs(a - b) <= TOLERANCE


def flag_equal(got: Any, want: Any) -> bool:
    value = _decimal(got)
    return value is not None and value == Decimal(int(want))


def text_equal(got: Any, want: Any) -> bool:
    return got is not None and S(str(got)) == S(str(want))


def email_equal(got: Any, want: Any) -> bool:
    return got is not None and E(str(got)) == E(str(want))


def date_equal(got: Any, want: Any) -> bool:
    return got is not None and str(got).strip() == want


COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "INVOICE_ID": text_equal, "SUPPLIER_NAME": text_equal, "INVOICE_AMOUNT": money_equal,
    "PURCHASER_EMAIL": email_equal, "INVOICE_DATE": date_equal, "PAYMENT_AMOUNT": money_equal,
    "OUTSTANDING_FLAG": flag_equal}
COLUMNS = {INVOICES: list(INVOICE_COLUMNS), PAYMENTS: list(PAYMENT_COLUMNS)}
NEW_KEY = {INVOICES: NEW_INVOICES, PAYMENTS: NEW_PAYMENTS}


def _read_table(world: World, name: str) -> list[Row]:
    db = Database(world.state_path, readonly=True)
    try:
        with db.read() as session:
            catalog = SnowflakeCatalog(session, (DATABASE, SCHEMA), lambda: world.clock.at(0))
            if catalog.lookup((DATABASE, SCHEMA, name)) is None:
                raise CheckFailed(f"table {table(name)} is gone")
            engine = Engine(sql.cursor(session), catalog, lambda: world.clock.at(0), "snowflake")
            found = engine.read(parse(f"SELECT * FROM {table(name)}", "snowflake"), ALL_ROWS)
    finally:
        db.dispose()
    return [dict(zip(found.columns, row, strict=True)) for row in found.rows]


def rows(ctx: Context, name: str) -> list[Row]:
    """Every row of one table as it stands, by column name (memoised)."""
    found: list[Row] = ctx.memo(("table", name), lambda: _read_table(ctx.world, name))
    return found


def _by_id(found: list[Row]) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {}
    for row in found:
        out.setdefault(S(str(row.get("INVOICE_ID"))), []).append(row)
    return out


def _show(items: list[str]) -> str:
    return f"{items[:SHOWN]}{' ...' if len(items) > SHOWN else ''} ({len(items)})"


def exact_equal(got: Any, want: Any) -> bool:
    """The value as stored: text character for character, numbers to the last digit."""
    if isinstance(want, str) and not isinstance(got, str):
        return _decimal(got) is not None and _decimal(got) == _decimal(want)
    return got == want or (_decimal(got) is not None and _decimal(got) == _decimal(want))


def _wrong_cells(row: Row, want: dict[str, Any], exact: bool = False) -> list[str]:
    return [f"{want['INVOICE_ID']}/{col}: got {row.get(col)!r}, expected {value!r}"
            for col, value in want.items() if not (exact_equal if exact else COMPARE[col])(row.get(col), value)]


def existing_rows(ctx: Context) -> str:
    """Every row both tables held at the start is still there, exactly once, unchanged (every
    value exactly as it was: no case, space or format changed)."""
    problems = []
    for name in (INVOICES, PAYMENTS):
        found = _by_id(rows(ctx, name))
        missing, twice, changed = [], [], []
        for values in ctx.truth["existing"][name]:
            want = dict(zip(COLUMNS[name], values, strict=True))
            mine = found.get(want["INVOICE_ID"], [])
            if not mine:
                missing.append(want["INVOICE_ID"])
            elif len(mine) > 1:
                twice.append(want["INVOICE_ID"])
            elif wrong := _wrong_cells(mine[0], want, exact=True):
                changed.append(wrong[0])
        problems += [f"{name}: {what} {_show(items)}" for what, items in
                     (("missing", missing), ("more than once", twice), ("changed", changed)) if items]
    if problems:
        raise CheckFailed("; ".join(problems))
    return f"all {len(ctx.truth['existing'][INVOICES])} old rows of each table are intact, once each"


def new_rows(name: str) -> Callable[[Context], str]:
    """The rows added to `name` (those whose ID was not there before) are keyed by exactly the
    new invoice IDs, once each, with the expected values."""

    def check(ctx: Context) -> str:
        old = {values[0] for values in ctx.truth["existing"][name]}
        added = {k: v for k, v in _by_id(rows(ctx, name)).items() if k not in old}
        expected = {entry["INVOICE_ID"]: entry for entry in ctx.answer(NEW_KEY[name])}
        missing = sorted(set(expected) - set(added))
        extra = sorted(set(added) - set(expected))
        twice = sorted(k for k, found in added.items() if len(found) > 1)
        wrong = [cell for k, found in sorted(added.items()) if k in expected
                 for cell in _wrong_cells(found[0], expected[k])]
        problems = [f"{what} {_show(items)}" for what, items in
                    (("missing", missing), ("extra", extra), ("more than once", twice), ("wrong", wrong))
                    if items]
        if problems:
            raise CheckFailed(f"{name}: " + "; ".join(problems))
        return f"{name}: the {len(expected)} new invoices, once each, with the right values"

    return check


def _columns(world: World) -> dict[str, list[tuple[str, str, str | None]]]:
    db = Database(world.state_path, readonly=True)
    try:
        with db.read() as session:
            found = sql.run(session, "SELECT t.name, c.name, c.data_type, c.comment FROM sf_column c "
                                     "JOIN sf_table t ON t.id = c.table_id JOIN sf_schema s ON s.id = t.schema_id "
                                     "JOIN sf_database d ON d.id = s.database_id WHERE d.name = ? AND s.name = ? "
                                     "ORDER BY t.name, c.ordinal", (DATABASE, SCHEMA)).fetchall()
    finally:
        db.dispose()
    out: dict[str, list[tuple[str, str, str | None]]] = {}
    for table_name, column, kind, note in found:
        out.setdefault(table_name, []).append((column, kind, note))
    return out


def columns(ctx: Context) -> dict[str, list[tuple[str, str, str | None]]]:
    found: dict[str, list[tuple[str, str, str | None]]] = ctx.memo(("columns",), lambda: _columns(ctx.world))
    return found


def comment(ctx: Context) -> str:
    """The comment of INVOICE_PAYMENTS.OUTSTANDING_FLAG is the required text (`S`)."""
    found = {name: note for name, _, note in columns(ctx).get(PAYMENTS, [])}
    if FLAG_COLUMN not in found:
        raise CheckFailed(f"{PAYMENTS} has no column {FLAG_COLUMN}")
    if found[FLAG_COLUMN] is None or S(found[FLAG_COLUMN]) != FLAG_COMMENT:
        raise CheckFailed(f"comment of {PAYMENTS}.{FLAG_COLUMN} is {found[FLAG_COLUMN]!r}, "
                          f"expected {FLAG_COMMENT!r}")
    return f"{PAYMENTS}.{FLAG_COLUMN} has the comment {FLAG_COMMENT!r}"


def schema(ctx: Context) -> str:
    """Both tables keep their columns, in order, with their types."""
    found = columns(ctx)
    wrong = []
    for name, expected in ctx.truth["schema"].items():
        got = [[column, kind] for column, kind, _ in found.get(name, [])]
        if got != expected:
            wrong.append(f"{name} has {got}, expected {expected}")
    if wrong:
        raise CheckFailed("; ".join(wrong))
    return "both tables keep their columns, order and types"


def recipients_once(ctx: Context) -> str:
    """Mail went to exactly the managers with an outstanding PDF invoice, one message each,
    addressed to them alone."""
    return f"{recipients(NOTICE)(ctx)}; {one_each(NOTICE)(ctx)}"


CHECKS = Checks(
    TASK,
    existing_rows=existing_rows,
    invoices_new=new_rows(INVOICES),
    payments_new=new_rows(PAYMENTS),
    comment=comment,
    schema=schema,
    recipients=recipients_once,
    email_content=content(NOTICE),
    no_side_effects=no_side_effects(TASK),
)
