"""Scripted agents of ab_testing: the oracle (lists the dataset's tables, sums each scenario table
in BigQuery, writes `record.csv` and acts on the winner) and its failure-mode mutants, each one
knob away from the oracle."""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from envs.ab_testing import (
    BUCKET,
    LIST_PAGE,
    LOG,
    OVERALL,
    PAYLOAD,
    PREFIX,
    RECORD,
    TRAP_PAGE,
    WINNER,
    list_tables,
    query_all,
    rate_text,
    table_ref,
)
from loca.core.outputs import csv_text
from loca.core.script import Mutant, Script, ScriptedAgents, Tools, call

SUMS = "SELECT SUM(A_clicks) AS a_clicks, SUM(A_store_views) AS a_views, SUM(B_clicks) AS b_clicks, " \
       "SUM(B_store_views) AS b_views FROM {table}"
STALE = "daily_summary"


@dataclass(frozen=True)
class Knobs:
    """How an agent deviates from the oracle (all off: the oracle)."""

    mean_of_rates: bool = False  # M1: the overall row averages the scenario rates
    first_page_only: bool = False  # M2: reads one short page of the table listing
    stale_too: bool = False  # M3: treats daily_summary as a scenario
    both_actions: bool = False  # M4: creates the bucket and writes the log entry
    fractions: bool = False  # M5: writes 0.732% for 73.215%
    header: tuple[str, ...] = tuple(RECORD.headers)  # the header row written
    descending: bool = False  # scenario rows by name, descending
    decimals: int = 3  # decimals of every rate
    no_action: bool = False  # neither bucket nor log entry
    inverted_action: bool = False  # the loser's action
    extra_bucket: str | None = None  # also creates this bucket
    tidy_dataset: bool = False  # deletes the stale daily_summary rows


def _text(views: int, clicks: int, knobs: Knobs) -> str:
    if knobs.fractions:
        return f"{(Decimal(views) / Decimal(clicks)).quantize(Decimal('0.001'), ROUND_HALF_UP)}%"
    if knobs.decimals != 3:
        return f"{Decimal(views) * 100 / Decimal(clicks):.{knobs.decimals}f}%"
    return rate_text(views, clicks)


def _mean_text(rows: list[dict[str, str]], column: str) -> str:
    mean = sum((Decimal(r[column][:-1]) for r in rows), Decimal(0)) / len(rows)
    return f"{mean.quantize(Decimal('0.001'), ROUND_HALF_UP)}%"


def derive(instruction: str, tools: Tools, knobs: Knobs) -> Script:
    """List the tables, sum each scenario table; the rows of record.csv and the winner."""
    page = TRAP_PAGE if knobs.first_page_only else LIST_PAGE
    tables = yield from list_tables(tools, page, knobs.first_page_only)
    chosen = [t for t in tables if t.startswith(PREFIX) or (knobs.stale_too and t == STALE)]
    sums = yield from query_all(tools, [SUMS.format(table=table_ref(t)) for t in chosen])
    a, b = RECORD.headers[1:]
    totals = {t.removeprefix(PREFIX): [int(v or 0) for v in rows[0].values()]
              for t, rows in zip(chosen, sums, strict=True)}
    rows = [{RECORD.key[0]: name, a: _text(t[1], t[0], knobs), b: _text(t[3], t[2], knobs)}
            for name, t in sorted(totals.items(), reverse=knobs.descending)]
    pooled = [sum(t[i] for t in totals.values()) for i in range(4)]
    if knobs.mean_of_rates:
        overall = {RECORD.key[0]: OVERALL, a: _mean_text(rows, a), b: _mean_text(rows, b)}
    else:
        overall = {RECORD.key[0]: OVERALL, a: _text(pooled[1], pooled[0], knobs), b: _text(pooled[3], pooled[2], knobs)}
    winner = "B" if pooled[3] * pooled[0] > pooled[1] * pooled[2] else "A"
    return {RECORD.file: [*rows, overall], WINNER: winner}


def _act(tools: Tools, winner: str) -> Script:
    if winner == "B":
        yield from call(tools("google_cloud", "storage_create_bucket"), {"bucket_name": BUCKET})
    else:
        yield from call(tools("google_cloud", "logging_write_log"), {"log_name": LOG, "message": json.dumps(PAYLOAD)})


def write(instruction: str, tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    """Replace record.csv, then act on the winner."""
    rows = [[r[h] for h in RECORD.headers] for r in answer[RECORD.file]]
    yield from call(tools("filesystem", "write_file"),
                    {"path": RECORD.file, "content": csv_text(knobs.header, rows)})
    winner = answer[WINNER]
    if knobs.both_actions:
        yield from _act(tools, "A")
        yield from _act(tools, "B")
    elif knobs.inverted_action:
        yield from _act(tools, "A" if winner == "B" else "B")
    elif not knobs.no_action:
        yield from _act(tools, winner)
    if knobs.extra_bucket:
        yield from call(tools("google_cloud", "storage_create_bucket"), {"bucket_name": knobs.extra_bucket})
    if knobs.tidy_dataset:
        yield from call(tools("google_cloud", "bigquery_run_query"),
                        {"query": f"DELETE FROM {table_ref(STALE)} WHERE TRUE"})


AGENTS = ScriptedAgents(
    derive=derive,
    write=write,
    oracle=Knobs(),
    mutants={
        "mean_of_rates": Mutant(Knobs(mean_of_rates=True), "overall_row"),
        "first_page": Mutant(Knobs(first_page_only=True), "scenario_rows"),
        "daily_summary_too": Mutant(Knobs(stale_too=True), "scenario_rows"),
        "both_actions": Mutant(Knobs(both_actions=True), "no_wrong_action"),
        "fractions": Mutant(Knobs(fractions=True), "scenario_values"),
        "header_without_percent": Mutant(Knobs(header=("scenario", "A_conversion", "B_conversion")), "header"),
        "descending": Mutant(Knobs(descending=True), "order"),
        "two_decimals": Mutant(Knobs(decimals=2), "scenario_values"),
        "no_action": Mutant(Knobs(no_action=True), "winner_action"),
        "inverted_action": Mutant(Knobs(inverted_action=True), "winner_action"),
        "extra_bucket": Mutant(Knobs(extra_bucket="ab-test-results"), "no_side_effects"),
        "tidies_dataset": Mutant(Knobs(tidy_dataset=True), "no_side_effects"),
    },
    noop_must_fail="scenario_rows",
)
