"""Checker of excel_market_research: the GrowthRate sheet of `growth_rate.xlsx` (as stored: a
formula without a cached value is empty) against ground truth, plus no side effects."""

from __future__ import annotations

import io
from decimal import Decimal
from typing import Any

from openpyxl import load_workbook

from checkers.kit import SHOWN, AgentTable, Checks, Context, read_table
from checkers.normalize import I, N, S
from checkers.side_effects import no_side_effects
from checkers.verdict import CheckFailed
from envs.excel_market_research import HEADER_KEY, REPORT, ROWS_KEY, TASK

TOLERANCE = Decimal("0.006")  # percentage points


def _truth(ctx: Context) -> tuple[list[str], list[list[Any]]]:
    answer = ctx.answer(REPORT.file)
    return answer[HEADER_KEY], answer[ROWS_KEY]


def _table(ctx: Context) -> AgentTable:
    return read_table(ctx, REPORT)


def _failed(what: str, wrong: list[str]) -> CheckFailed:
    more = f" ... ({len(wrong)})" if len(wrong) > SHOWN else ""
    return CheckFailed(f"{what}: {'; '.join(wrong[:SHOWN])}{more}")


def file(ctx: Context) -> str:
    """The workbook opens and its first sheet is `GrowthRate`."""
    path = ctx.world.workspace / REPORT.file
    if not path.is_file():
        raise CheckFailed(f"{REPORT.file} is missing from the workspace")
    try:
        wb = load_workbook(io.BytesIO(path.read_bytes()), read_only=True)
    except Exception as exc:
        raise CheckFailed(f"{REPORT.file} cannot be opened as a workbook: {type(exc).__name__}") from None
    names = wb.sheetnames
    wb.close()
    if not names or names[0] != REPORT.sheet:
        raise CheckFailed(f"the first sheet of {REPORT.file} is {names[:1]}, expected {REPORT.sheet!r}")
    return f"{REPORT.file} opens; its first sheet is {REPORT.sheet}"


def header(ctx: Context) -> str:
    """The header row equals the format workbook's header (`S`, in order), nothing after it."""
    want, _ = _truth(ctx)
    got = [S(h) for h in _table(ctx).headers]
    while got and got[-1] == "":
        got.pop()
    if got != want:
        first = next((i for i, (g, w) in enumerate(zip(got, want, strict=False)) if g != w),
                     min(len(got), len(want)))
        raise CheckFailed(f"header cell {first + 1} is {got[first] if first < len(got) else 'missing'!r}, "
                          f"expected {want[first] if first < len(want) else 'nothing'!r}")
    return f"the {len(want)} header cells match the format workbook"


def years(ctx: Context) -> str:
    """The data rows' years are exactly start+1..end, integral, ascending; no other rows."""
    _, rows = _truth(ctx)
    want = [row[0] for row in rows]
    got = [I(row[0]) if row else None for row in _table(ctx).rows]
    if got != want:
        raise CheckFailed(f"years of the data rows are {_span(got)}, expected {want[0]}..{want[-1]} "
                          f"({len(want)} rows)")
    return f"one row per year {want[0]}..{want[-1]}, ascending"


def _span(years: list[int | None]) -> str:
    shown = years if len(years) <= 2 * SHOWN else [*years[:SHOWN], "...", *years[-SHOWN:]]
    return f"{shown} ({len(years)} rows)"


def _growth_cells(ctx: Context, columns: range | list[int], what: str) -> str:
    """Each expected year's row holds, in `columns`, numbers within TOLERANCE of ground truth."""
    _, rows = _truth(ctx)
    by_year: dict[int, list[Any]] = {}
    for row in _table(ctx).rows:
        year = I(row[0]) if row else None
        if year is not None:
            by_year.setdefault(year, row)
    wrong = []
    for want in rows:
        got = by_year.get(want[0])
        if got is None:
            wrong.append(f"no row for {want[0]}")
            continue
        for j in columns:
            cell = got[j] if j < len(got) else None
            value = N(S(cell).removesuffix("%")) if isinstance(cell, str) else N(cell)
            if value is None or abs(value - Decimal(str(want[j]))) > TOLERANCE:
                wrong.append(f"{want[0]} column {j + 1}: got {cell!r}, expected {want[j]:.4f}")
    if wrong:
        raise _failed(f"{len(wrong)} {what} cells off by more than {TOLERANCE}", wrong)
    return f"every {what} cell of {len(rows)} years within {TOLERANCE} of the truth"


def raw_growth(ctx: Context) -> str:
    """Every `<raw category> %` cell within ±0.006 of the raw series' growth."""
    header_cells, _ = _truth(ctx)
    return _growth_cells(ctx, range(1, len(header_cells) - 1), "raw growth")


def target_growth(ctx: Context) -> str:
    """Every `Growth Rate %` cell within ±0.006 of the target category's growth."""
    header_cells, _ = _truth(ctx)
    return _growth_cells(ctx, [len(header_cells) - 1], "target growth")


def _formulas(ctx: Context) -> list[str]:
    """The cells of the report's sheet below the header that hold a formula (cached value or
    not), as `A1` references."""
    path = ctx.world.workspace / REPORT.file
    wb = load_workbook(io.BytesIO(path.read_bytes()), read_only=True)
    try:
        ws = wb[REPORT.sheet] if REPORT.sheet in wb.sheetnames else wb.worksheets[0]
        return [cell.coordinate for row in ws.iter_rows(min_row=2) for cell in row
                if getattr(cell, "data_type", None) == "f"]
    finally:
        wb.close()


def stored_values(ctx: Context) -> str:
    """Every growth cell of every data row is a number stored as a value: no text, no formula
    (with or without a cached value)."""
    header_cells, _ = _truth(ctx)
    wrong = []
    for row in _table(ctx).rows:
        for j in range(1, len(header_cells)):
            cell = row[j] if j < len(row) else None
            if isinstance(cell, bool) or not isinstance(cell, (int, float)):
                wrong.append(f"row {row[0]!r} column {j + 1}: {cell!r}")
    if wrong:
        raise _failed(f"{len(wrong)} growth cells are not stored numbers", wrong)
    if formulas := _formulas(ctx):
        raise _failed(f"{len(formulas)} cells hold formulas, not values", formulas)
    return "every growth cell is a number stored as a value"


CHECKS = Checks(
    TASK,
    file=file,
    header=header,
    years=years,
    raw_growth=raw_growth,
    target_growth=target_growth,
    stored_values=stored_values,
    no_side_effects=no_side_effects(TASK),
)
