"""Scripted agents of excel_market_research: the oracle (solves through the tools only) and its
failure-mode mutants, each one knob away from the oracle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from envs.excel_market_research import (
    FORMAT_FILE,
    HEADER,
    HEADER_KEY,
    REPORT,
    ROWS_KEY,
    UNITS,
    YEAR,
    growth_rows,
    parse_specific,
    read_everything,
)
from loca.core.script import Mutant, Script, ScriptedAgents, Tools, call


@dataclass(frozen=True)
class Knobs:
    """How an agent deviates from the oracle (all off: the oracle)."""

    ignore_units: bool = False  # M1: bn and mn values added as they stand
    first_internal: bool = False  # M2: the first internal category instead of the target
    from_start_year: bool = False  # M3: a row for the start year too
    fractions: bool = False  # M4: 0.0425 for 4.25 %
    formulas: bool = False  # M5: growth cells as formulas (no cached values)
    cached_formulas: bool = False  # growth cells as formulas that carry their values cached
    units_in_header: bool = False  # keeps `(mn USD)` in the `<raw category> %` headers
    fill_format_file: bool = False  # also writes the rows into the format workbook


def _years(raw: list[list[Any]]) -> list[list[Any]]:
    """The RawData rows whose Year is an integer (the Total row and blanks left out)."""
    return [r for r in raw[1:] if r and isinstance(r[0], int) and not isinstance(r[0], bool)]


def derive(instruction: str, tools: Tools, knobs: Knobs) -> Script:
    """Read everything; the report (header and rows) as the answer of `growth_rate.xlsx`."""
    text, raw, method, form = yield from read_everything(tools)
    target, start, end = parse_specific(text)
    heads = [HEADER.fullmatch(str(h)) for h in raw[0][1:]]
    if not all(heads):
        raise ValueError(f"RawData headers without a unit: {raw[0]}")
    names = [h["name"] for h in heads if h]
    factors = [1.0 if knobs.ignore_units else UNITS[h["unit"]] for h in heads if h]
    data = _years(raw)
    years = [r[0] for r in data]
    series = [[r[j + 1] for r in data] for j in range(len(names))]
    by_name = {str(row[0]): row for row in method[1:] if row and row[0] is not None}
    row = method[1] if knobs.first_internal else by_name[target]
    column = {str(name): j for j, name in enumerate(method[0]) if j > 0}
    weights = [row[column[name]] or 0.0 for name in names]
    rows = growth_rows(years, series, factors, weights, start - 1 if knobs.from_start_year else start, end)
    if knobs.fractions:
        rows = [[r[0], *(v / 100 for v in r[1:])] for r in rows]
    header = [str(h) for h in form[0]]
    if knobs.units_in_header:
        header = [YEAR, *(f"{h} %" for h in raw[0][1:]), header[-1]]
    return {REPORT.file: {HEADER_KEY: header, ROWS_KEY: rows}}


def _formula_rows(rows: list[list[Any]]) -> list[list[Any]]:
    """Growth cells as formulas (a file no spreadsheet program has calculated caches no value)."""
    return [[row[0], *(f"=ROUND({v!r},6)" for v in row[1:])] for row in rows]


WRITE_CELLS = 2000  # cells per write call

# Turns every number cell below the header into a formula with that number cached, as a
# spreadsheet program saves it (run by python_execute in the workspace).
CACHE_FORMULAS = """\
import re, zipfile
path, sheet = {file!r}, "xl/worksheets/sheet1.xml"
with zipfile.ZipFile(path) as z:
    parts = {{name: z.read(name) for name in z.namelist()}}
def cached(m):
    if int(m.group(2)) < 2:
        return m.group(0)
    return f'<c r="{{m.group(1)}}{{m.group(2)}}"{{m.group(3)}}><f>ROUND({{m.group(4)}},6)</f><v>{{m.group(4)}}</v></c>'
parts[sheet] = re.sub(r'<c r="([A-Z]+)(\\d+)"([^>]*?)><v>([^<]*)</v></c>', cached, parts[sheet].decode()).encode()
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
    for name, data in parts.items():
        z.writestr(name, data)
print("done")
"""


def write(instruction: str, tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    """Create the workbook, name its sheet, write header and rows in blocks of at most
    `WRITE_CELLS` cells (a model's message that the agent loop's input budget can hold)."""
    report = answer[REPORT.file]
    header, rows = report[HEADER_KEY], report[ROWS_KEY]
    yield from call(tools("excel", "create_workbook"), {"filepath": REPORT.file})
    yield from call(tools("excel", "rename_worksheet"),
                    {"filepath": REPORT.file, "old_name": "Sheet1", "new_name": REPORT.sheet})
    lines = [header, *(_formula_rows(rows) if knobs.formulas else rows)]
    step = max(1, WRITE_CELLS // len(header))
    for first in range(0, len(lines), step):
        yield from call(tools("excel", "write_data_to_excel"), {
            "filepath": REPORT.file, "sheet_name": REPORT.sheet, "data": lines[first:first + step],
            "start_cell": f"A{first + 1}"})
    if knobs.cached_formulas:
        yield from call(tools("python_execute", "python_execute"), {"code": CACHE_FORMULAS.format(file=REPORT.file)})
    if knobs.fill_format_file:
        yield from call(tools("excel", "write_data_to_excel"), {
            "filepath": FORMAT_FILE, "sheet_name": REPORT.sheet, "data": rows, "start_cell": "A2"})


AGENTS = ScriptedAgents(
    derive=derive,
    write=write,
    oracle=Knobs(),
    mutants={
        "ignore_units": Mutant(Knobs(ignore_units=True), "target_growth"),
        "first_internal": Mutant(Knobs(first_internal=True), "target_growth"),
        "from_start_year": Mutant(Knobs(from_start_year=True), "years"),
        "fractions": Mutant(Knobs(fractions=True), "raw_growth"),
        "formulas_only": Mutant(Knobs(formulas=True), "stored_values"),
        "cached_formulas": Mutant(Knobs(cached_formulas=True), "stored_values"),
        "units_in_header": Mutant(Knobs(units_in_header=True), "header"),
        "fills_format_file": Mutant(Knobs(fill_format_file=True), "no_side_effects"),
    },
    noop_must_fail="file",
)
