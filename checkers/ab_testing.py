"""Checker of ab_testing: `record.csv` (header, scenario rows, rates, the pooled row, order)
against ground truth, then the winner's action in Cloud Storage or Cloud Logging and nothing
else changed."""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from decimal import Decimal
from typing import Any

from checkers.kit import SHOWN, Checks, Context, header, judged, read_table
from checkers.normalize import S
from checkers.side_effects import no_side_effects
from checkers.verdict import CheckFailed
from envs.ab_testing import BUCKET, LOG, OVERALL, PAYLOAD, PLACEHOLDER, RECORD, TASK, WINNER
from mock_servers.core.snapshot import Snapshot

RATE = re.compile(r"-?\d+\.\d{3}%")
TOLERANCE = Decimal("0.001")  # percentage points
RATES = tuple(RECORD.headers[1:])


def _rows(ctx: Context) -> list[dict[str, Any]]:
    return read_table(ctx, RECORD).records(RECORD)


def _label(row: dict[str, Any]) -> str:
    return S(row[RECORD.key[0]])


def _expected(ctx: Context) -> dict[str, dict[str, str]]:
    return {r[RECORD.key[0]]: r for r in ctx.answer(RECORD.file)}


def _rate_ok(got: Any, want: str) -> bool:
    """`got` is a rate written as required (3 decimals, `%`) within the tolerance of `want`."""
    text = S(got)
    return RATE.fullmatch(text) is not None and abs(Decimal(text[:-1]) - Decimal(want[:-1])) <= TOLERANCE


def _wrong_rates(row: dict[str, Any], want: dict[str, str]) -> list[str]:
    return [f"{_label(row)}/{c}: got {row[c]!r}, expected {want[c]!r}" for c in RATES if not _rate_ok(row[c], want[c])]


def scenario_rows(ctx: Context) -> str:
    """The scenario rows (every row but the pooled one) name exactly the scenarios, once each;
    the placeholder row is gone."""
    got = [_label(r) for r in _rows(ctx) if _label(r) != OVERALL]
    want = set(_expected(ctx)) - {OVERALL}
    problems = [f"{what} {sorted(items)[:SHOWN]} ({len(items)})" for what, items in (
        ("missing", want - set(got)), ("extra", set(got) - want),
        ("duplicated", {k for k, n in Counter(got).items() if n > 1})) if items]
    if PLACEHOLDER in got:
        problems.append(f"the placeholder row {PLACEHOLDER!r} is still there")
    if problems:
        raise CheckFailed(f"{RECORD.file}: " + "; ".join(problems))
    return f"{RECORD.file}: one row per scenario ({len(got)})"


def scenario_values(ctx: Context) -> str:
    """Each scenario row's two rates: 3 decimals and `%`, within 0.001 pp of the truth."""
    expected = _expected(ctx)
    mine = [r for r in _rows(ctx) if _label(r) != OVERALL and _label(r) in expected]
    wrong = [w for r in mine for w in _wrong_rates(r, expected[_label(r)])]
    if wrong:
        more = " ..." if len(wrong) > SHOWN else ""
        raise CheckFailed(f"{len(wrong)} wrong rates: {'; '.join(wrong[:SHOWN])}{more}")
    judged(len(mine), len(expected) - 1, "scenario rows")
    return f"the rates of all {len(mine)} scenario rows are right"


def overall_row(ctx: Context) -> str:
    """The last row is the pooled row, labelled exactly, with both pooled rates right."""
    rows = _rows(ctx)
    if not rows or _label(rows[-1]) != OVERALL:
        raise CheckFailed(f"the last row is {_label(rows[-1]) if rows else 'missing'!r}, expected {OVERALL!r}")
    wrong = _wrong_rates(rows[-1], _expected(ctx)[OVERALL])
    if wrong:
        raise CheckFailed("; ".join(wrong))
    return "the pooled row is last and right"


def order(ctx: Context) -> str:
    """Scenario rows ascend by name; the pooled row comes last."""
    labels = [_label(r) for r in _rows(ctx)]
    scenarios = [label for label in labels if label != OVERALL]
    if labels.count(OVERALL) != 1 or labels[-1] != OVERALL:
        raise CheckFailed(f"the pooled row is not the one last row: {labels[-3:]}")
    if scenarios != sorted(scenarios):
        first = next(i for i, (a, b) in enumerate(zip(scenarios, sorted(scenarios), strict=True)) if a != b)
        raise CheckFailed(f"scenario row {first + 2} is {scenarios[first]!r}, expected {sorted(scenarios)[first]!r}")
    judged(len(set(scenarios) & set(_expected(ctx))), len(_expected(ctx)) - 1, "scenario rows")
    return "scenario rows by name, the pooled row last"


def _new_rows(ctx: Context) -> tuple[list[str], list[tuple[str, Any, Any]]]:
    """The buckets and log entries (log, text payload, JSON payload) added since the snapshot."""
    before = Snapshot.model_validate(ctx.world.read_truth("snapshot.json")).tables

    def read() -> tuple[list[str], list[tuple[str, Any, Any]]]:
        conn = sqlite3.connect(f"file:{ctx.world.state_path}?mode=ro", uri=True)
        try:
            found = [r[0] for r in conn.execute("SELECT name FROM gcs_bucket WHERE rowid > ? ORDER BY rowid",
                                                (before["gcs_bucket"].max_rowid,))]
            entries = conn.execute("SELECT log_name, text_payload, json_payload FROM log_entry WHERE rowid > ? "
                                   "ORDER BY rowid", (before["log_entry"].max_rowid,)).fetchall()
        finally:
            conn.close()
        return found, [tuple(e) for e in entries]

    rows: tuple[list[str], list[tuple[str, Any, Any]]] = ctx.memo("new_cloud_rows", read)
    return rows


def _payload(text: Any, data: Any) -> Any:
    """An entry's payload: its JSON payload, else its text parsed as JSON; a JSON string that
    holds a JSON object counts as that object."""
    try:
        value = json.loads(data if data is not None else text or "")
        return json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return None


def winner_action(ctx: Context) -> str:
    """B wins: the bucket exists; A wins: exactly one entry in the log, with the payload."""
    new_buckets, entries = _new_rows(ctx)
    if ctx.answer(WINNER) == "B":
        if BUCKET not in new_buckets:
            raise CheckFailed(f"B wins but bucket {BUCKET} was not created")
        return f"B wins: bucket {BUCKET} created"
    ours = [_payload(text, data) for log, text, data in entries if log == LOG]
    if len(ours) != 1 or ours[0] != PAYLOAD:
        raise CheckFailed(f"A wins: expected one entry in {LOG} with payload {PAYLOAD}, found {ours[:SHOWN]}")
    return f"A wins: one entry in {LOG} with the required payload"


def no_wrong_action(ctx: Context) -> str:
    """No bucket or log entry beyond the winner's action."""
    new_buckets, entries = _new_rows(ctx)
    b_wins = ctx.answer(WINNER) == "B"
    extra_buckets = [b for b in new_buckets if not (b_wins and b == BUCKET)]
    extra_logs = sorted({log for log, _, _ in entries if b_wins or log != LOG})
    problems = [f"{what}: {items}" for what, items in (("buckets created", extra_buckets),
                                                       ("entries written to logs", extra_logs)) if items]
    if problems:
        raise CheckFailed(f"{'B' if b_wins else 'A'} wins; " + "; ".join(problems))
    return f"{'B' if b_wins else 'A'} wins; no bucket or log entry besides the winner's action"


CHECKS = Checks(
    TASK,
    header=header(RECORD),
    scenario_rows=scenario_rows,
    scenario_values=scenario_values,
    overall_row=overall_row,
    order=order,
    winner_action=winner_action,
    no_wrong_action=no_wrong_action,
    no_side_effects=no_side_effects(TASK),
)
