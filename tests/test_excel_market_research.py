"""excel_market_research: the plan holds every edge case at every size, with the pagination
trap on both data sheets; the workbooks, read through the tools, say what the plan says; the
checker accepts the documented normalisations of a right answer (rounding to 2 decimals,
percent strings for the growth checks, blank trailing rows and columns) and rejects wrong ones,
one test per rule. (Oracle, mutants and lengths at every tier: the generic acceptance suite.)"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from openpyxl import Workbook, load_workbook

from envs.core.registry import get_task
from envs.excel_market_research import (
    DATA_FILE,
    DEFAULT_PAGE_CELLS,
    FORMAT_FILE,
    HEADER_KEY,
    METHOD_SHEET,
    RAW_SHEET,
    REPORT,
    ROWS_KEY,
    SPECIFIC_FILE,
    TOTAL,
    parse_specific,
    specific_text,
)
from generators.excel_market_research.plan import (
    BN,
    INTERNAL_NAMES,
    MN,
    MORE_INTERNAL_NAMES,
    MORE_RAW_NAMES,
    RAW_NAMES,
    Plan,
    default_internal,
    num_years,
    plan_world,
    sample_names,
)
from loca.core.rng import WorldRng
from loca.core.world import World
from mock_servers.core.files import save_workbook
from tests.harness import task_call

TASK = get_task("excel_market_research")
SIZES = [6, 7, 12, 25, 40, 83, 150, 370, 600, 751]  # 751: beyond the first pool of raw names


def _plan(raw: int, seed: int, internal: int | None = None) -> Plan:
    return plan_world(WorldRng(TASK.name, seed), raw, default_internal(raw) if internal is None else internal)


def _first_page_rows(raw: int) -> int:
    return DEFAULT_PAGE_CELLS // (raw + 1)


@pytest.mark.parametrize("raw", SIZES)
@pytest.mark.parametrize("seed", range(5))
def test_plan_has_every_edge_case(raw: int, seed: int) -> None:
    _assert_edge_cases(raw, seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
def test_the_largest_plan_has_every_edge_case(seed: int) -> None:
    _assert_edge_cases(TASK.spec.scale.hi, seed)


def _assert_edge_cases(raw: int, seed: int) -> None:
    plan = _plan(raw, seed)
    assert len(plan.raws) == raw and len(plan.years) == num_years(raw) == min(60, 8 + 2 * raw)
    assert plan.years[0] == 1989 and len(plan.internal) == max(3, math.ceil(raw / 3))
    assert len({r.name for r in plan.raws}) == raw and len(set(plan.internal)) == len(plan.internal)
    assert all(v > 0 and round(v, 2) == v for r in plan.raws for v in r.values)
    assert {r.unit for r in plan.raws} == {MN, BN}
    assert all(round(w, 3) == w and (w == 0 or 0.05 <= w <= 1) for row in plan.weights for w in row)
    assert all(any(row) for row in plan.weights)
    target = plan.weights[plan.target]
    assert any(w for w, r in zip(target, plan.raws, strict=True) if r.unit == MN)
    assert any(w for w, r in zip(target, plan.raws, strict=True) if r.unit == BN)
    assert plan.years[0] < plan.start < plan.end - 1 and plan.end < plan.years[-1]
    right, ignored, first = ([r[-1] for r in rows] for rows in
                             (plan.rows(), plan.rows(ignore_units=True), plan.rows(row=0)))
    assert max(abs(a - b) for a, b in zip(right, ignored, strict=True)) >= 0.5
    assert plan.target != 0 and max(abs(a - b) for a, b in zip(right, first, strict=True)) > 0.006
    _assert_traps(plan, raw)


def _assert_traps(plan: Plan, raw: int) -> None:
    """A sheet longer than one default page holds the last report year (RawData) and the target
    row (Methodology) beyond that page, where the layout allows it."""
    page = _first_page_rows(raw)
    if len(plan.years) + 2 > page and plan.years[0] + page - 1 < plan.years[-1]:
        assert plan.end - plan.years[0] + 2 > page  # the sheet row of the end year
    if len(plan.internal) + 1 > page:
        assert plan.target + 2 > page


def test_weights_are_about_forty_percent_zero_and_units_about_a_third_bn() -> None:
    plan = _plan(370, 1)
    weights = [w for row in plan.weights for w in row]
    assert 0.35 < weights.count(0.0) / len(weights) < 0.45
    assert 0.25 < sum(r.unit == BN for r in plan.raws) / len(plan.raws) < 0.42


def test_same_seed_same_plan_and_more_internal_rows_keep_the_raw_data() -> None:
    assert _plan(40, 3) == _plan(40, 3)
    assert _plan(40, 4).raws != _plan(40, 3).raws
    few, many = _plan(40, 3), _plan(40, 3, 30)
    assert few.raws == many.raws and (few.start, few.end) == (many.start, many.end)
    assert len(many.internal) == 30 and len(many.weights) == 30


def test_name_pools_hold_the_largest_world_with_every_name_distinct() -> None:
    raws, internals = RAW_NAMES + MORE_RAW_NAMES, INTERNAL_NAMES + MORE_INTERNAL_NAMES
    assert len(set(raws)) == len(raws) and len(set(internals)) == len(internals)
    assert not set(raws) & set(internals)
    assert TASK.spec.scale.hi <= len(raws) and default_internal(TASK.spec.scale.hi) < len(internals)
    with pytest.raises(ValueError, match=f"at most {len(raws)} raw and {len(internals)} internal"):
        plan_world(WorldRng(TASK.name, 0), len(raws) + 1, 10)


def test_names_come_from_the_first_pool_while_it_suffices() -> None:
    first, more = ("a", "b", "c"), ("d", "e")
    assert sorted(sample_names(random.Random(1), first, more, 3)) == ["a", "b", "c"]
    four = sample_names(random.Random(1), first, more, 4)
    assert len(set(four)) == 4 and set(four) <= {"a", "b", "c", "d", "e"}
    with pytest.raises(ValueError, match="at most 5 names are available, 6 asked"):
        sample_names(random.Random(1), first, more, 6)
    # a world the first pool holds draws exactly what it drew before the pools grew
    assert sample_names(random.Random(7), RAW_NAMES, MORE_RAW_NAMES, 700) == random.Random(7).sample(RAW_NAMES, 700)
    grown = _plan(len(RAW_NAMES) + 1, 2, len(INTERNAL_NAMES) + 1)
    assert {r.name for r in grown.raws} & set(MORE_RAW_NAMES)
    assert set(grown.internal) & set(MORE_INTERNAL_NAMES)


def test_specific_file_round_trip() -> None:
    assert parse_specific(specific_text("Energy Core", 1995, 2020)) == ("Energy Core", 1995, 2020)
    with pytest.raises(ValueError):
        parse_specific("Year range: 1995-2020")


# ------------------------------------------------------------------ a generated world

@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> World:
    return TASK.generate(tmp_path_factory.mktemp("mr") / "w", {"num_raw_categories": 120}, 2)


def _call(world: World, name: str, **args: Any) -> Any:
    return task_call(world, TASK, name, **args)


def _read(world: World, path: str, sheet: str) -> list[list[Any]]:
    rows, start = [], "A1"
    while True:
        page = _call(world, "excel_read_data_from_excel", filepath=path, sheet_name=sheet, start_cell=start)
        rows += page["values"]
        if not page["has_more"]:
            return rows
        start = page["next_start_cell"]


def test_workbooks_read_through_the_tools_say_what_the_truth_says(built: World) -> None:
    raw = _read(built, DATA_FILE, RAW_SHEET)
    method = _read(built, DATA_FILE, METHOD_SHEET)
    header = _read(built, FORMAT_FILE, REPORT.sheet or "")
    target, start, end = parse_specific(_call(built, "filesystem_read_text_file", path=SPECIFIC_FILE))
    answer = built.read_truth()["answer"][REPORT.file]
    assert header[0] == answer[HEADER_KEY] and len(header) == 4 and header[1][0] == "YYYY"
    assert [r[0] for r in answer[ROWS_KEY]] == list(range(start + 1, end + 1))
    assert raw[-1][0] == TOTAL and [r[0] for r in raw[1:-1]] == list(range(1989, 2049))
    assert all(str(h).endswith((f"({MN})", f"({BN})")) for h in raw[0][1:])
    assert [f"{r} %" for r in method[0][1:]] == answer[HEADER_KEY][1:-1]
    assert target in [r[0] for r in method[2:]]
    assert len(method) - 1 == 40 and len(raw) > _first_page_rows(120)


# ------------------------------------------------------------------ the checker

@pytest.fixture
def world(tmp_path: Path) -> World:
    return TASK.generate(tmp_path / "w", {"num_raw_categories": 12}, 4)


def _answer(world: World) -> tuple[list[str], list[list[Any]]]:
    answer = world.read_truth()["answer"][REPORT.file]
    return answer[HEADER_KEY], answer[ROWS_KEY]


def _write(world: World, edit: Callable[[list[Any]], list[Any]] = lambda r: r,
           header: list[str] | None = None, sheets: tuple[str, ...] = ("GrowthRate",),
           extra_rows: list[list[Any]] | None = None) -> None:
    want_header, rows = _answer(world)
    wb = Workbook()
    ws = wb.active
    ws.title = sheets[0]
    for name in sheets[1:]:
        wb.create_sheet(name)
    target = wb["GrowthRate"] if "GrowthRate" in sheets else ws
    target.append(header or want_header)
    for row in rows:
        target.append(edit(list(row)))
    for row in extra_rows or []:
        target.append(row)
    save_workbook(wb, world.workspace / REPORT.file, world.clock.at(0))


def _failed(world: World) -> list[str]:
    verdict = TASK.check(world)
    assert not verdict.errored, verdict
    return verdict.failed_names()


def test_exact_answer_passes(world: World) -> None:
    _write(world)
    assert _failed(world) == []


def test_rounded_to_two_decimals_and_blank_rows_pass(world: World) -> None:
    _write(world, lambda r: [r[0], *(round(v, 2) for v in r[1:]), None, ""], extra_rows=[[None, ""], []])
    assert _failed(world) == []


def test_percent_strings_pass_the_growth_checks_but_not_stored_values(world: World) -> None:
    _write(world, lambda r: [r[0], *(f"{v:.3f}%" for v in r[1:])])
    assert _failed(world) == ["stored_values"]


def test_a_value_off_by_more_than_the_tolerance_fails(world: World) -> None:
    _write(world, lambda r: [r[0], r[1] + 0.007, *r[2:]])
    assert _failed(world) == ["raw_growth"]
    _write(world, lambda r: [*r[:-1], r[-1] - 0.007])
    assert _failed(world) == ["target_growth"]


def test_fractions_fail_raw_growth(world: World) -> None:
    _write(world, lambda r: [r[0], *(v / 100 for v in r[1:])])
    assert "raw_growth" in _failed(world)


def test_formulas_without_cached_values_fail_stored_values(world: World) -> None:
    _write(world, lambda r: [r[0], *(f"={v!r}" for v in r[1:])])
    assert "stored_values" in _failed(world)


@pytest.mark.parametrize("edit", [
    lambda h: [h[0], h[2], h[1], *h[3:]],  # raw columns swapped
    lambda h: [*h[:-1], "Growth Rate"],  # no %
    lambda h: [*h, "Note"],  # an extra header cell
])
def test_a_different_header_fails_header(world: World, edit: Callable[[list[str]], list[str]]) -> None:
    header, _ = _answer(world)
    _write(world, header=edit(list(header)))
    assert _failed(world) == ["header"]


def test_header_is_compared_after_whitespace_normalisation(world: World) -> None:
    header, _ = _answer(world)
    _write(world, header=[f"  {h.replace(' ', '  ')} " for h in header])
    assert _failed(world) == []


def test_start_year_row_or_a_total_row_fails_years(world: World) -> None:
    _, rows = _answer(world)
    _write(world, extra_rows=[["Total", *([1.0] * (len(rows[0]) - 1))]])
    assert _failed(world) == ["years"]
    _write(world, lambda r: r, extra_rows=[[rows[0][0] - 1, *rows[0][1:]]])
    assert _failed(world) == ["years"]


def test_descending_years_fail_years_only(tmp_path: Path) -> None:
    made = TASK.generate(tmp_path / "w", {"num_raw_categories": 12}, 4)
    header, rows = _answer(made)
    wb = Workbook()
    ws = wb.active
    ws.title = "GrowthRate"
    for row in [header, *reversed(rows)]:
        ws.append(row)
    save_workbook(wb, made.workspace / REPORT.file, made.clock.at(0))
    assert _failed(made) == ["years"]


def test_years_as_integral_text_or_floats_pass(world: World) -> None:
    _write(world, lambda r: [f"{r[0]}", *r[1:]])
    assert _failed(world) == []
    _write(world, lambda r: [float(r[0]), *r[1:]])
    assert _failed(world) == []


def test_growth_rate_not_the_first_sheet_fails_file(world: World) -> None:
    _write(world, sheets=("Notes", "GrowthRate"))
    assert _failed(world) == ["file"]


def test_missing_or_broken_workbook_fails_file(world: World) -> None:
    assert "file" in _failed(world)
    (world.workspace / REPORT.file).write_text("not a workbook")
    assert "file" in _failed(world)


def test_edited_inputs_fail_no_side_effects(tmp_path: Path) -> None:
    for name in (DATA_FILE, FORMAT_FILE):
        made = TASK.generate(tmp_path / "w", {"num_raw_categories": 12}, 4)
        _write(made)
        path = made.workspace / name
        wb = load_workbook(path)
        wb.worksheets[0]["A2"] = 1234
        save_workbook(wb, path, made.clock.at(0))
        assert _failed(made) == ["no_side_effects"]
    made = TASK.generate(tmp_path / "w", {"num_raw_categories": 12}, 4)
    _write(made)
    (made.workspace / SPECIFIC_FILE).write_text("edited")
    assert _failed(made) == ["no_side_effects"]


def test_scratch_files_are_no_side_effects(world: World) -> None:
    _write(world)
    (world.workspace / "growth.py").write_text("print(1)")
    assert _failed(world) == []


def test_formulas_with_cached_values_fail_stored_values(world: World) -> None:
    """A workbook saved by a spreadsheet program keeps each formula's value: read for values, it
    is right everywhere, yet the cells hold formulas, not the values the instruction asks for."""
    import asyncio

    from loca.validate import play_script

    verdict = asyncio.run(play_script(TASK, world, "mutant:cached_formulas"))
    assert verdict.failed_names() == ["stored_values"]
    cached = load_workbook(world.workspace / REPORT.file, data_only=True)[REPORT.sheet]
    stored = load_workbook(world.workspace / REPORT.file)[REPORT.sheet]
    assert isinstance(cached["B2"].value, float) and str(stored["B2"].value).startswith("=")
