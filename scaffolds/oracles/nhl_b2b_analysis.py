"""Scripted agents of nhl_b2b_analysis: the oracle (reads the schedule range by range, counts the
back-to-back sets, creates the spreadsheet and writes the CSV) and its failure-mode mutants."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from envs.nhl_b2b_analysis import (
    CSV,
    FIRST_RANGE_ROWS,
    OUTPUT_TITLE,
    READ_ROWS,
    REPORT_HEADERS,
    back_to_backs,
    read_schedule,
    report,
)
from loca.core.outputs import csv_text
from loca.core.script import Mutant, Script, ScriptedAgents, Tools, call


@dataclass(frozen=True)
class Knobs:
    """How an agent deviates from the oracle (all off: the oracle)."""

    first_range_only: bool = False  # M1: reads only the first range of the schedule
    count_postponed: bool = False  # M2: postponed games count as played
    swap_ha_ah: bool = False  # M3: HA and AH swapped
    omit_zero_teams: bool = False  # M4: teams without a set left out
    title: str = OUTPUT_TITLE  # M5 titles the spreadsheet "NHL B2B Analysis"
    sheet: bool = True  # writes the table to a new spreadsheet
    scratch_sheet: bool = False  # also creates a scratch spreadsheet
    total_header: str = "Total"  # the last header
    descending: bool = False  # teams sorted descending
    stale_csv: bool = False  # the CSV keeps counts of the first range while the sheet is right
    note_in_schedule: bool = False  # leaves a note in the schedule spreadsheet


def count(rows: list[list[Any]], knobs: Knobs) -> list[dict[str, Any]]:
    """The table from the schedule's rows (header first)."""
    games = [(date.fromisoformat(str(r[0])), str(r[3]), str(r[5]), str(r[7]) if len(r) > 7 else "") for r in rows[1:]]
    table = report(back_to_backs(games, knobs.count_postponed))
    if knobs.swap_ha_ah:
        table = [{**row, "HA": row["AH"], "AH": row["HA"]} for row in table]
    if knobs.omit_zero_teams:
        table = [row for row in table if row["Total"]]
    return sorted(table, key=lambda row: row["Team"], reverse=knobs.descending)


def derive(instruction: str, tools: Tools, knobs: Knobs) -> Script:
    """Read the whole schedule (or its first range) and count; the CSV's table, and with
    `stale_csv` the sheet's table apart."""
    book, rows = yield from read_schedule(tools, FIRST_RANGE_ROWS if knobs.first_range_only else READ_ROWS,
                                          knobs.first_range_only)
    answer: dict[str, Any] = {CSV.file: count(rows, knobs)}
    if knobs.stale_csv:
        answer["stale"] = count(rows[:len(rows) // 2], knobs)
    if knobs.note_in_schedule:
        answer["schedule"] = book
    return answer


def _cells(table: list[dict[str, Any]], knobs: Knobs) -> list[list[Any]]:
    headers = [*REPORT_HEADERS[:-1], knobs.total_header]
    return [headers, *([row[h] for h in REPORT_HEADERS] for row in table)]


def write(instruction: str, tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    """Create the spreadsheet, fill its first tab, write the CSV."""
    table = _cells(answer[CSV.file], knobs)
    if knobs.sheet:
        made = yield from call(tools("google_sheet", "create_spreadsheet"), {"title": knobs.title})
        tab = made["sheets"][0]["title"]
        yield from call(tools("google_sheet", "update_cells"), {
            "spreadsheet_id": made["spreadsheetId"], "sheet": tab, "range": f"A1:F{len(table)}", "data": table})
    if knobs.scratch_sheet:
        yield from call(tools("google_sheet", "create_spreadsheet"), {"title": "scratch"})
    if knobs.note_in_schedule:
        yield from call(tools("google_sheet", "update_cells"), {
            "spreadsheet_id": answer["schedule"], "sheet": "Schedule", "range": "J1:J1", "data": [["checked"]]})
    header, *rows = _cells(answer["stale"], knobs) if knobs.stale_csv else table
    yield from call(tools("filesystem", "write_file"), {"path": CSV.file, "content": csv_text(header, rows)})


AGENTS = ScriptedAgents(
    derive=derive,
    write=write,
    oracle=Knobs(),
    mutants={
        "first_range": Mutant(Knobs(first_range_only=True), "values"),
        "counts_postponed": Mutant(Knobs(count_postponed=True), "values"),
        "swaps_ha_ah": Mutant(Knobs(swap_ha_ah=True), "values"),
        "omits_zero_teams": Mutant(Knobs(omit_zero_teams=True), "team_set"),
        "title_words": Mutant(Knobs(title="NHL B2B Analysis"), "sheet_created"),
        "csv_only": Mutant(Knobs(sheet=False), "sheet_created"),
        "scratch_sheet": Mutant(Knobs(scratch_sheet=True), "sheet_created"),
        "renamed_total": Mutant(Knobs(total_header="Total B2B"), "header"),
        "descending": Mutant(Knobs(descending=True), "order"),
        "stale_csv": Mutant(Knobs(stale_csv=True), "csv_equals_sheet"),
        "note_in_schedule": Mutant(Knobs(note_in_schedule=True), "no_side_effects"),
    },
    noop_must_fail="sheet_created",
)
