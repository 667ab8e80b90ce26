"""nhl_b2b_analysis: the season keeps its guarantees at every size; back-to-back sets are counted
as the instruction defines them; the checker accepts the documented normalisations of a right
answer and rejects wrong ones. (Oracle, mutants and lengths at every tier: the generic
acceptance suite.)"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import date, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from envs.core.registry import get_task
from envs.nhl_b2b_analysis import CSV, FIRST_RANGE_ROWS, POSTPONED, REPORT_HEADERS, back_to_backs
from generators.nhl_b2b_analysis import title_of
from generators.nhl_b2b_analysis.schedule import EASTERN, TEAMS, Game, num_teams, problems, season
from loca.core.rng import WorldRng
from loca.core.world import World
from loca.validate import play_script
from tests.harness import task_call, world_copy

TASK = get_task("nhl_b2b_analysis")


def _season(games: int, seed: int) -> list[Game]:
    rngs = WorldRng(TASK.name, seed)
    return season([rngs.stream("season", a) for a in range(20)], games)


@pytest.mark.parametrize("games", [120, 241, 1000, 4000])
@pytest.mark.parametrize("seed", range(3))
def test_every_season_keeps_its_guarantees(games: int, seed: int) -> None:
    drawn = _season(games, seed)
    assert len(drawn) == games and problems(drawn) == []
    assert len({t for g in drawn for t in (g.visitor, g.home)}) == num_teams(games)
    assert [g.day for g in drawn] == sorted(g.day for g in drawn), "rows in date order"
    postponed = [g for g in drawn if g.status == POSTPONED]
    assert postponed and all(g.visitor_score is None and g.home_score is None for g in postponed)
    assert all(g.visitor_score != g.home_score for g in drawn if g.status != POSTPONED)
    overtime = [g for g in drawn if g.status in ("Final/OT", "Final/SO")]
    assert all(abs((g.visitor_score or 0) - (g.home_score or 0)) == 1 for g in overtime)
    replayed = [g for g in postponed if any(o.day > g.day and (o.visitor, o.home) == (g.visitor, g.home)
                                            and o.status != POSTPONED for o in drawn)]
    assert replayed, "a postponed game is played later as a new row"


@pytest.mark.slow
def test_the_largest_season_keeps_its_guarantees() -> None:
    games = TASK.spec.scale.hi
    drawn = _season(games, 1)
    assert len(drawn) == games and problems(drawn) == []
    assert {t for g in drawn for t in (g.visitor, g.home)} == set(TEAMS)
    assert all(a.day <= b.day for a, b in pairwise(drawn)), "rows in date order"
    played_last: dict[tuple[str, str], date] = {}
    for g in drawn:
        if g.status != POSTPONED:
            played_last[g.visitor, g.home] = g.day
    settled = drawn[-1].day - timedelta(days=30)  # a game postponed later may wait past the last row
    assert all(played_last.get((g.visitor, g.home), g.day) > g.day for g in drawn
               if g.status == POSTPONED and g.day < settled), "every postponed game is replayed"


def test_problems_names_each_missing_edge_case() -> None:
    def game(day: int, visitor: str, home: str, status: str = "Final") -> Game:
        when = date(2025, 1, 1) + timedelta(days=day)
        return Game(when, datetime(when.year, when.month, when.day, 19, tzinfo=EASTERN), visitor, home, 2, 1, status)

    apart = [game(3 * k, "A", "B") for k in range(4)]
    assert problems(apart) == ["no three games on three consecutive days",
                               "no postponed game next to a game of its teams", "HA equals AH for every team",
                               "the first range alone gives the right counts"]
    three = [game(0, "B", "A"), game(1, "C", "A"), game(2, "A", "D"), game(3, "B", "C", POSTPONED),
             game(4, "C", "B")]
    assert problems(three) == ["the first range alone gives the right counts"]
    assert problems([*three, game(4, "A", "C")]) == ["a team plays twice on one date",
                                                     "the first range alone gives the right counts"]


def test_seasons_follow_the_seed_and_the_size() -> None:
    assert [g.row() for g in _season(500, 3)] == [g.row() for g in _season(500, 3)]
    assert [g.row() for g in _season(500, 3)] != [g.row() for g in _season(500, 4)]
    assert num_teams(120) == 4 and num_teams(1500) == 14 and num_teams(10_000) == len(TEAMS)


def test_start_times_follow_daylight_saving() -> None:
    october = Game(date(2024, 10, 8), datetime(2024, 10, 8, 19, 0, tzinfo=EASTERN), "A", "B", 1, 2, "Final")
    december = Game(date(2024, 12, 10), datetime(2024, 12, 10, 19, 0, tzinfo=EASTERN), "A", "B", 1, 2, "Final")
    assert october.row()[1:3] == ["5:00 PM", "7:00 PM"]  # EDT is UTC-4, Regina UTC-6
    assert december.row()[1:3] == ["6:00 PM", "7:00 PM"]  # EST is UTC-5
    assert title_of([october, december]).endswith("2024-10-08 to 2024-12-10")


def test_back_to_backs_as_the_instruction_defines_them() -> None:
    d = date(2025, 1, 1)
    games = [(d, "Oilers", "Jets", "Final"),  # the Jets at home
             (d + timedelta(days=1), "Jets", "Flames", "Final"),  # away: HA
             (d + timedelta(days=2), "Kings", "Jets", "Final/OT"),  # home: AH (three in three, 2 sets)
             (d + timedelta(days=4), "Jets", "Oilers", POSTPONED),  # not played
             (d + timedelta(days=5), "Jets", "Kings", "Final"),  # three days after the last one played
             (d + timedelta(days=6), "Jets", "Oilers", "Final/SO")]  # away again: AA
    counts = back_to_backs(games)
    assert counts["Jets"] == {"HA": 1, "AH": 1, "HH": 0, "AA": 1, "Total": 3}
    assert all(counts[t]["Total"] == 0 for t in ("Oilers", "Flames", "Kings"))
    counted = back_to_backs(games, count_postponed=True)  # the postponed game makes two AA sets
    assert counted["Jets"] == {"HA": 1, "AH": 1, "HH": 0, "AA": 2, "Total": 4}


# ---------------------------------------------------------------- the checker

@pytest.fixture(scope="module")
def blank(tmp_path_factory: pytest.TempPathFactory) -> World:
    return TASK.generate(tmp_path_factory.mktemp("blank") / "w", {"num_games": 260}, 2)


@pytest.fixture
def world(blank: World, tmp_path: Path) -> World:
    return world_copy(blank, tmp_path / "w")


def _call(world: World, tool: str, **args: Any) -> Any:
    return task_call(world, TASK, tool, **args)


def _expected(world: World) -> list[list[Any]]:
    return [list(REPORT_HEADERS), *([row[h] for h in REPORT_HEADERS] for row in world.read_truth()["answer"][CSV.file])]


def _sheet(world: World, rows: list[list[Any]], title: str = "nhl_b2b_analysis") -> str:
    made = _call(world, "google_sheet_create_spreadsheet", title=title)
    _call(world, "google_sheet_update_cells", spreadsheet_id=made["spreadsheetId"], sheet="Sheet1",
          range=f"A1:F{len(rows)}", data=rows)
    return str(made["spreadsheetId"])


def _csv(world: World, text: str) -> None:
    (world.workspace / CSV.file).write_text(text, encoding="utf-8", newline="")


def _csv_of(rows: list[list[Any]], cell: Any = str) -> str:
    return "\r\n".join(",".join(cell(v) for v in row) for row in rows) + "\r\n"


def _failed(world: World) -> list[str]:
    return TASK.check(world).failed_names()


def test_noop_fails_sheet_created(world: World) -> None:
    assert "sheet_created" in asyncio.run(play_script(TASK, world, "noop")).failed_names()


def test_checker_accepts_documented_normalisations(world: World) -> None:
    rows = _expected(world)
    _sheet(world, [[f"  {r[0]} ", *(str(v) for v in r[1:])] if i else r for i, r in enumerate(rows)])
    _csv(world, "\ufeff" + _csv_of(rows, lambda v: f'"{v}"') + "\r\n\r\n")  # BOM, quotes, blank lines
    (world.workspace / "scratch.py").write_text("# counting\n")
    assert _failed(world) == []


def test_the_first_range_leaves_counts_wrong(blank: World) -> None:
    rows = task_call(blank, TASK, "google_sheet_get_sheet_data", spreadsheet_id=_schedule(blank), sheet="Schedule",
                     range=f"A1:H{FIRST_RANGE_ROWS}")["valueRanges"][0]["values"]
    games = [(date.fromisoformat(r[0]), r[3], r[5], r[7]) for r in rows[1:]]
    first = back_to_backs(games)
    expected = {r["Team"]: r for r in blank.read_truth()["answer"][CSV.file]}
    assert any(first[t]["Total"] != expected[t]["Total"] for t in first)


def _schedule(world: World) -> str:
    [book] = _call(world, "google_sheet_list_spreadsheets")["spreadsheets"]
    return str(book["id"])


def _changed(rows: list[list[Any]], change: str) -> list[list[Any]]:
    rows = [list(r) for r in rows]
    if change == "count":
        rows[1][1] = int(rows[1][1]) + 1
    elif change == "total":
        rows[2][5] = int(rows[2][5]) + 1
    elif change == "team":
        rows[1][0] = rows[1][0] + " X"
    elif change == "missing":
        del rows[1]
    elif change == "order":
        rows[1], rows[2] = rows[2], rows[1]
    elif change == "header":
        rows[0][1] = "H-A"
    return rows


@pytest.mark.parametrize("wrong", ["sheet", "csv"])
@pytest.mark.parametrize(("change", "check"), [("count", "values"), ("total", "values"), ("team", "team_set"),
                                               ("missing", "team_set"), ("order", "order"), ("header", "header")])
def test_checker_rejects_a_wrong_table_in_either_output(world: World, wrong: str, change: str, check: str) -> None:
    rows = _expected(world)
    _sheet(world, _changed(rows, change) if wrong == "sheet" else rows)
    _csv(world, _csv_of(_changed(rows, change) if wrong == "csv" else rows))
    failed = _failed(world)
    assert check in failed and "csv_equals_sheet" in failed and "no_side_effects" not in failed


def test_checker_wants_exactly_one_new_spreadsheet_with_that_title(world: World) -> None:
    rows = _expected(world)
    _csv(world, _csv_of(rows))
    _sheet(world, rows, title="NHL B2B Analysis")
    assert _failed(world)[:1] == ["sheet_created"]
    _sheet(world, rows)
    assert "sheet_created" in _failed(world)  # two new spreadsheets


def test_a_changed_schedule_fails_no_side_effects(world: World) -> None:
    rows = _expected(world)
    _sheet(world, rows)
    _csv(world, _csv_of(rows))
    assert _failed(world) == []
    _call(world, "google_sheet_update_cells", spreadsheet_id=_schedule_id(world), sheet="Schedule",
          range="J2", data=[["note"]])
    assert _failed(world) == ["no_side_effects"]


def _schedule_id(world: World) -> str:
    books = _call(world, "google_sheet_list_spreadsheets")["spreadsheets"]
    return str(next(b["id"] for b in books if b["title"].startswith("NHL Regular Season Schedule")))


def test_a_new_tab_in_the_schedule_fails_no_side_effects(world: World) -> None:
    rows = _expected(world)
    _sheet(world, rows)
    _csv(world, _csv_of(rows))
    _call(world, "google_sheet_create_sheet", spreadsheet_id=_schedule_id(world), title="Notes")
    assert _failed(world) == ["no_side_effects"]


def test_expected_table_counts_every_team_once(blank: World) -> None:
    table = blank.read_truth()["answer"][CSV.file]
    assert Counter(r["Team"] for r in table).most_common(1)[0][1] == 1
    assert [r["Team"] for r in table] == sorted(r["Team"] for r in table)
    assert all(r["Total"] == r["HA"] + r["AH"] + r["HH"] + r["AA"] for r in table)
    assert any(r["Total"] == 0 for r in table) and any(r["HA"] != r["AH"] for r in table)
