"""Scripted agents of machine_operating: the oracle (solves through the tools only) and its
failure-mode mutants, each one knob away from the oracle."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

from envs.machine_operating import BUCKET, OBJECT, PAGE, REPORT, TRAP_PAGE, read_sheet, read_window
from loca.core.script import Mutant, Script, ScriptedAgents, Tools, call

STORED = " UTC"  # BigQuery's TIMESTAMP text ends with it


@dataclass(frozen=True)
class Knobs:
    """How an agent deviates from the oracle (all off: the oracle)."""

    end_inclusive: bool = True  # M1 (off): a half-open window, 12:30:00 left out
    bounds_anomalous: bool = False  # M2: a reading equal to a bound counts
    first_page_only: bool = False  # M3: one page (of TRAP_PAGE rows) of the window query
    upload: bool = True  # M4 (off): saved locally only
    range_decimals: int = 2  # M5: 1
    stale_upload: bool = False  # uploads an earlier draft instead of the saved file
    reading_column: str = "reading"  # "value": a renamed column
    newest_first: bool = False  # rows sorted by timestamp descending
    backup_bucket: bool = False  # also uploads a copy to a bucket of its own


def derive(instruction: str, tools: Tools, knobs: Knobs) -> Script:
    """The parameter sheet, the window's distinct readings; the anomalies in report order."""
    header, *sheet = yield from read_sheet(tools)
    col = {name: i for i, name in enumerate(header)}
    ranges = {(str(r[col["machine_id"]]), str(r[col["sensor_type"]])):
              (float(r[col["min_value"]]), float(r[col["max_value"]])) for r in sheet if r and r[0] is not None}
    page = TRAP_PAGE if knobs.first_page_only else PAGE
    found = yield from read_window(tools, knobs.end_inclusive, page, knobs.first_page_only)
    rows = []
    for r in found:
        bounds = ranges.get((r["machine_id"], r["sensor_type"]))
        if bounds is None:
            continue
        low, high = bounds
        reading = float(r["reading"])
        out = reading <= low or reading >= high if knobs.bounds_anomalous else reading < low or reading > high
        if out:
            rows.append(dict(zip(REPORT.headers, (
                str(r["timestamp"]).removesuffix(STORED), r["machine_id"], r["sensor_type"], f"{reading:.2f}",
                f"{low:.{knobs.range_decimals}f} - {high:.{knobs.range_decimals}f}"), strict=True)))
    rows.sort(key=lambda e: (e["timestamp"], e["machine_id"], e["sensor_type"]))
    if knobs.newest_first:  # 11:30:00 and 12:30:00 both hold an anomaly, so this always differs
        rows.sort(key=lambda e: e["timestamp"], reverse=True)
    return {REPORT.file: rows}


def _csv(rows: list[dict[str, str]], reading_column: str) -> str:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow([reading_column if h == "reading" else h for h in REPORT.headers])
    writer.writerows([[e[h] for h in REPORT.headers] for e in rows])
    return text.getvalue()


def write(instruction: str, tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    """Save the CSV, create the bucket, upload the file."""
    rows = answer[REPORT.file]
    save = tools("filesystem", "write_file")
    upload = tools("google_cloud", "storage_upload_file")
    yield from call(save, {"path": REPORT.file, "content": _csv(rows, knobs.reading_column)})
    source = REPORT.file
    if knobs.stale_upload:  # an earlier draft, in reverse order, goes up instead
        source = "draft.csv"
        yield from call(save, {"path": source, "content": _csv(rows[::-1], knobs.reading_column)})
    if knobs.upload:
        yield from call(tools("google_cloud", "storage_create_bucket"), {"bucket_name": BUCKET})
        yield from call(upload, {"bucket_name": BUCKET, "source_file_path": source, "destination_blob_name": OBJECT})
    if knobs.backup_bucket:
        backup = f"{BUCKET}_backup"
        yield from call(tools("google_cloud", "storage_create_bucket"), {"bucket_name": backup})
        yield from call(upload, {"bucket_name": backup, "source_file_path": REPORT.file,
                                 "destination_blob_name": OBJECT})


AGENTS = ScriptedAgents(
    derive=derive,
    write=write,
    oracle=Knobs(),
    mutants={
        "half_open_window": Mutant(Knobs(end_inclusive=False), "rows"),
        "bounds_anomalous": Mutant(Knobs(bounds_anomalous=True), "rows"),
        "first_page": Mutant(Knobs(first_page_only=True), "rows"),
        "no_upload": Mutant(Knobs(upload=False), "uploaded"),
        "one_decimal_range": Mutant(Knobs(range_decimals=1), "values"),
        "stale_upload": Mutant(Knobs(stale_upload=True), "local_equals_upload"),
        "renamed_column": Mutant(Knobs(reading_column="value"), "header"),
        "newest_first": Mutant(Knobs(newest_first=True), "order"),
        "backup_bucket": Mutant(Knobs(backup_bucket=True), "no_side_effects"),
    },
    noop_must_fail="uploaded",
)
