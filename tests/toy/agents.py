"""Scripted agents of toy: the oracle, and mutants one knob away from it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from loca.core.outputs import csv_text
from loca.core.script import Mutant, Script, ScriptedAgents, Tools, call
from tests.toy import TOTALS, read_everything

ITEM_LINE = re.compile(r"^- (?P<item>[^:]+): (?P<count>\d+)$", re.MULTILINE)


@dataclass(frozen=True)
class Knobs:
    """How an agent deviates from the oracle (all off: the oracle)."""

    total_column: str = "total"  # "count": a renamed column
    first_total_shift: int = 0  # added to the first row's total
    drop_last: bool = False  # the last item left out
    reverse: bool = False  # rows sorted by item descending
    note_in_memory: bool = False  # adds an observation to the first tracked item


def derive(instruction: str, tools: Tools, knobs: Knobs) -> Script:
    """Every tracked item's counts summed over the notes, sorted by item."""
    tracked, notes = yield from read_everything(tools)
    totals = dict.fromkeys(tracked, 0)
    for note in notes:
        for found in ITEM_LINE.finditer(note):
            if found["item"] in totals:
                totals[found["item"]] += int(found["count"])
    rows = [{"item": item, "total": total} for item, total in totals.items()]
    rows[0]["total"] += knobs.first_total_shift
    if knobs.drop_last:
        rows.pop()
    if knobs.reverse:
        rows.reverse()
    return {TOTALS.file: rows}


def write(instruction: str, tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    rows = answer[TOTALS.file]
    header = ["item", knobs.total_column]
    text = csv_text(header, [[r["item"], r["total"]] for r in rows])
    yield from call(tools("filesystem", "write_file"), {"path": TOTALS.file, "content": text})
    if knobs.note_in_memory:
        yield from call(tools("memory", "add_observations"),
                        {"observations": [{"entityName": rows[0]["item"], "contents": ["totalled"]}]})


AGENTS = ScriptedAgents(
    derive=derive,
    write=write,
    oracle=Knobs(),
    mutants={
        "renamed_column": Mutant(Knobs(total_column="count"), "header"),
        "off_by_one": Mutant(Knobs(first_total_shift=1), "values"),
        "drop_last": Mutant(Knobs(drop_last=True), "keys"),
        "reversed": Mutant(Knobs(reverse=True), "order"),
        "note_in_memory": Mutant(Knobs(note_in_memory=True), "no_side_effects"),
    },
    noop_must_fail="header",
)
