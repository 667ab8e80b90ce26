"""excel_market_research: map raw market series onto an internal category (weights, mn/bn USD)
and report year-over-year growth rates in the sheet layout of a format workbook."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from loca.core.outputs import Column, TableFile
from loca.core.script import Script, Tools, call
from loca.core.task import Scale, TaskSpec

if TYPE_CHECKING:
    from loca.core.world import World

DATA_FILE = "Market_Data.xlsx"
RAW_SHEET, METHOD_SHEET = "RawData", "Methodology"
FORMAT_FILE = "Market_Data_Format.xlsx"
SPECIFIC_FILE = "task_specific.md"
YEAR, TOTAL, TARGET_COLUMN = "Year", "Total", "Growth Rate %"
UNITS = {"mn USD": 1.0, "bn USD": 1000.0}  # unit in a RawData header -> factor to mn USD
HEADER = re.compile(r"(?P<name>.+?) \((?P<unit>mn USD|bn USD)\)")
# An answer: the sheet `GrowthRate` of `growth_rate.xlsx`, header and rows (year, growth values
# in percent); the header depends on the world, so the checker reads it from the answer.
REPORT = TableFile(file="growth_rate.xlsx", sheet="GrowthRate", columns=(Column(YEAR, "I"),), key=(YEAR,))
HEADER_KEY, ROWS_KEY = "header", "rows"
# The default page of read_data_from_excel (cells): a sheet longer than one such page holds a
# ground-truth year (RawData) and the target row (Methodology) beyond it.
DEFAULT_PAGE_CELLS = 5000
MAX_PAGE_CELLS = 20000
TASK_LINE = re.compile(r"Target internal category: \*\*(?P<target>[^*]+)\*\*")
RANGE_LINE = re.compile(r"Year range: (?P<start>\d{4})-(?P<end>\d{4})")

TOOLS: dict[str, tuple[str, ...]] = {
    "excel": ("get_workbook_metadata", "read_data_from_excel", "create_workbook", "rename_worksheet",
              "create_worksheet", "write_data_to_excel"),
    "filesystem": ("list_directory", "read_text_file"),
    "terminal": ("run_command",),
    "python_execute": ("python_execute",),
    "claim_done": ("claim_done",),
}

INSTRUCTION = """\
`{data}` has sheet `{raw}` (column `Year`, then one column per raw category with its unit in the \
header, `(mn USD)` or `(bn USD)`) and sheet `{method}` (first row = raw categories, first column = \
internal categories, cells = weights). `{specific}` names the target internal category and a year \
range start-end. Create `{file}` with one sheet `{sheet}` whose header row equals the header of \
`{format}`: `Year`, `<raw category> %` for every raw category in {raw} column order, \
`{target}`. Write one row per year from start+1 to end, ascending, years as integers (ignore \
non-year rows such as totals; do not copy the format file's placeholder rows). `<raw category> %` \
is the year-over-year growth of that raw series; `{target}` is the year-over-year growth of the \
target category, whose yearly value is the sum over raw categories of weight x raw value converted \
to mn USD (1 bn = 1000 mn). Write growth values in percent (4.25 means 4.25 %) as numbers with at \
least 2 decimals, stored as values, not formulas. Change nothing else."""


def instruction(_world: World) -> str:
    return INSTRUCTION.format(data=DATA_FILE, raw=RAW_SHEET, method=METHOD_SHEET, specific=SPECIFIC_FILE,
                              file=REPORT.file, sheet=REPORT.sheet, format=FORMAT_FILE, target=TARGET_COLUMN)


def specific_text(target: str, start: int, end: int) -> str:
    """The content of `task_specific.md`."""
    return (f"# Market research request\n\nTarget internal category: **{target}**\n\n"
            f"Year range: {start}-{end}\n\nReport the growth rates for this category as described "
            f"in the methodology workbook.\n")


def parse_specific(text: str) -> tuple[str, int, int]:
    """(target category, start year, end year) from `task_specific.md`."""
    target, span = TASK_LINE.search(text), RANGE_LINE.search(text)
    if target is None or span is None:
        raise ValueError(f"{SPECIFIC_FILE} names no target category and year range")
    return target["target"].strip(), int(span["start"]), int(span["end"])


def growth(now: float, before: float) -> float:
    """Year-over-year growth in percent."""
    return (now / before - 1.0) * 100.0


def growth_rows(years: Sequence[int], series: Sequence[Sequence[float]], factors: Sequence[float],
                weights: Sequence[float], start: int, end: int) -> list[list[float | int]]:
    """The report rows for years start+1..end: the year, each raw series' growth, the target's
    growth. `series[j][i]` is raw category j in `years[i]`; `factors[j]` converts it to mn USD."""
    at = {year: i for i, year in enumerate(years)}

    def target(i: int) -> float:
        return sum(w * s[i] * f for w, s, f in zip(weights, series, factors, strict=True))

    rows: list[list[float | int]] = []
    for year in range(start + 1, end + 1):
        i, h = at[year], at[year - 1]
        rows.append([year, *(growth(s[i], s[h]) for s in series), growth(target(i), target(h))])
    return rows


def read_sheet(tools: Tools, filepath: str, sheet: str, max_cells: int = MAX_PAGE_CELLS,
               first_page_only: bool = False) -> Script:
    """Every row of a sheet, page by page (`next_start_cell`)."""
    rows: list[list[Any]] = []
    start = "A1"
    while True:
        page = yield from call(tools("excel", "read_data_from_excel"), {
            "filepath": filepath, "sheet_name": sheet, "start_cell": start, "max_cells": max_cells})
        rows += page["values"]
        if not page["has_more"] or first_page_only:
            return rows
        start = page["next_start_cell"]


def read_everything(tools: Tools) -> Script:
    """The read set: the task file, both data sheets and the format header. Returns (task text,
    RawData rows, Methodology rows, format rows)."""
    text = yield from call(tools("filesystem", "read_text_file"), {"path": SPECIFIC_FILE})
    raw = yield from read_sheet(tools, DATA_FILE, RAW_SHEET)
    method = yield from read_sheet(tools, DATA_FILE, METHOD_SHEET)
    meta = yield from call(tools("excel", "get_workbook_metadata"), {"filepath": FORMAT_FILE})
    form = yield from read_sheet(tools, FORMAT_FILE, meta["sheets"][0]["name"])
    return text, raw, method, form


def read_set(_instruction: str, tools: list[dict[str, Any]]) -> Script:
    yield from read_everything(Tools(tools))


TASK = TaskSpec(
    name="excel_market_research",
    version=0,
    summary="growth rates of raw market series and a weighted, unit-converted internal category",
    servers={key: key for key in TOOLS},
    scale=Scale(primary="num_raw_categories", lo=6, hi=1360, fine="num_internal"),
    instruction=instruction,
    read_set=read_set,
    outputs=(REPORT,),
    tools=tuple((key, tool) for key, names in TOOLS.items() for tool in names),
)
