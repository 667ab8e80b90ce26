"""ab_testing: the plan holds every guarantee at every size (unique names with a `_2` twin, clicks
in every arm, zero-click hours, the pooled winner apart from the loser and from the mean of
rates, both winners over seeds); the dataset, read through the tools, says what the truth says,
with the pagination trap; the checker accepts the documented normalisations of a right answer and
rejects wrong ones, one test per rule. (Oracle, mutants and lengths at every tier: the generic
acceptance suite.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from envs.ab_testing import (
    BUCKET,
    DATASET,
    INITIAL_ROWS,
    LOG,
    OVERALL,
    PAYLOAD,
    PLACEHOLDER,
    PREFIX,
    RECORD,
    TRAP_PAGE,
    WINNER,
    payload_text,
    rate_text,
)
from envs.core.registry import get_task
from generators.ab_testing import resolve_params
from generators.ab_testing.plan import (
    HOURS_BEFORE_NOW,
    MIN_GAP,
    MIN_MEAN_GAP,
    NOW,
    Plan,
    holds,
    hour_at,
    num_days,
    plan_world,
    scenario_hours,
)
from loca.core.outputs import csv_text
from loca.core.rng import WorldRng
from loca.core.world import World
from tests.harness import task_call
from tests.top_of_scale import top_world

TASK = get_task("ab_testing")
A_SEED, B_SEED = 4, 0  # seeds whose 4-scenario world A, resp. B, wins


def _plan(n: int, seed: int, extra: int = 0) -> Plan:
    return plan_world(WorldRng("ab_testing", seed), n, extra)


def _rates(plan: Plan, arm: int) -> tuple[float, float]:
    """(pooled rate, mean of the scenario rates) of an arm, in percent."""
    views, clicks = plan.pooled(arm)
    return 100 * views / clicks, sum(100 * v / c for v, c in (s.total(arm) for s in plan.scenarios)) / len(
        plan.scenarios)


@pytest.mark.parametrize("n", [3, 4, 7, 12, 27, 40, TASK.spec.scale.hi])
@pytest.mark.parametrize("seed", range(5))
def test_plan_holds_every_guarantee(n: int, seed: int) -> None:
    plan = _plan(n, seed, extra=n + 1)
    names = [s.name for s in plan.scenarios]
    assert len(set(names)) == n and names == sorted(names) == sorted(names, key=lambda x: x.replace("_", ""))
    assert [x for x in names if x.endswith("_2") and x[:-2] in names]
    assert plan.days == num_days(n) == max(2, -(-n // 3))
    hours = sorted(len(s.clicks) for s in plan.scenarios)
    assert hours[0] >= 24 * plan.days and sum(hours) == 24 * plan.days * n + n + 1
    assert all(c > 0 for s in plan.scenarios for arm in (0, 1) for c in [s.total(arm)[1]])
    assert any(0 in c for s in plan.scenarios for c in s.clicks), "zero-click arm-hours"
    assert all(0 <= v <= c for s in plan.scenarios for vs, cs in zip(s.views, s.clicks, strict=True)
               for v, c in zip(vs, cs, strict=True))
    (pooled_a, mean_a), (pooled_b, mean_b) = _rates(plan, 0), _rates(plan, 1)
    lead = pooled_b - pooled_a if plan.winner == "B" else pooled_a - pooled_b
    assert lead >= MIN_GAP and abs(mean_a - pooled_a) >= MIN_MEAN_GAP and abs(mean_b - pooled_b) >= MIN_MEAN_GAP
    assert holds(plan)


def test_both_winners_come_up_and_plans_are_deterministic() -> None:
    winners = [_plan(5, seed).winner for seed in range(20)]
    assert 5 <= winners.count("A") <= 15
    assert _plan(5, 3) == _plan(5, 3) and _plan(5, 3) != _plan(5, 4)
    assert _plan(4, A_SEED).winner == "A" and _plan(4, B_SEED).winner == "B"


def test_extra_hours_append_clicks_without_moving_earlier_ones() -> None:
    few, more = _plan(6, 2), _plan(6, 2, extra=9)
    assert [s.name for s in few.scenarios] == [s.name for s in more.scenarios]
    for a, b in zip(few.scenarios, more.scenarios, strict=True):
        assert b.clicks[:len(a.clicks)] == a.clicks and len(b.clicks) in (len(a.clicks) + 1, len(a.clicks) + 2)


def test_hourly_rows_stay_before_now_and_params_past_it_are_refused() -> None:
    hi = TASK.spec.scale.hi
    most = (HOURS_BEFORE_NOW - 24 * num_days(hi)) * hi  # extra hours filling every scenario up to now
    assert hour_at(max(scenario_hours(hi, most)) - 1) < NOW <= hour_at(HOURS_BEFORE_NOW)
    assert resolve_params({"num_scenarios": hi, "num_extra_hours": most})["num_extra_hours"] == most
    with pytest.raises(ValueError, match="hourly rows per scenario run past now"):
        resolve_params({"num_scenarios": hi, "num_extra_hours": most + 1})


@pytest.mark.slow
def test_the_largest_scale_reaches_the_longest_tier(tmp_path: Path) -> None:
    """The top of the scale measures past 2M tokens (about 2.3M), so every long tier is reachable."""
    world = top_world(TASK, {"num_scenarios": TASK.spec.scale.hi}, tmp_path / "hi", seed=1)
    assert (world.meta.env_description_tokens or 0) > 2_200_000


def test_rate_text_rounds_half_up_to_three_decimals() -> None:
    assert rate_text(1, 3) == "33.333%" and rate_text(2, 3) == "66.667%" and rate_text(1, 8) == "12.500%"
    assert rate_text(1, 16) == "6.250%" and rate_text(1, 1600) == "0.063%"  # 0.0625 rounds up
    assert json.loads(payload_text()) == PAYLOAD


# ------------------------------------------------------------------ a generated world

def _call(world: World, name: str, **args: Any) -> Any:
    return task_call(world, TASK, name, **args)


def _world(tmp_path: Path, seed: int, n: int = 4) -> World:
    return TASK.generate(tmp_path / f"w{seed}", {"num_scenarios": n}, seed)


def test_the_dataset_through_the_tools_gives_the_truth_and_the_trap(tmp_path: Path) -> None:
    world = _world(tmp_path, 1, 7)
    listed = _call(world, "google_cloud_bigquery_list_tables", dataset_id=DATASET)
    tables = [t["table_id"] for t in listed["tables"]]
    scenarios = [t for t in tables if t.startswith(PREFIX)]
    assert len(scenarios) == 7 and {"daily_summary", "experiment_config"} <= set(tables)
    first = _call(world, "google_cloud_bigquery_list_tables", dataset_id=DATASET, max_results=TRAP_PAGE)
    assert first["next_page_token"] and set(scenarios) - {t["table_id"] for t in first["tables"]}
    truth = {r["scenario"]: r for r in world.read_truth()["answer"][RECORD.file]}
    a, b = RECORD.headers[1:]
    for table in scenarios:
        out = _call(world, "google_cloud_bigquery_run_query", query=f"SELECT SUM(A_clicks) AS ac, "
                    f"SUM(A_store_views) AS av, SUM(B_clicks) AS bc, SUM(B_store_views) AS bv FROM {DATASET}.{table}")
        row = out["rows"][0]
        assert truth[table.removeprefix(PREFIX)][a] == rate_text(row["av"], row["ac"])
        assert truth[table.removeprefix(PREFIX)][b] == rate_text(row["bv"], row["bc"])
    assert list(truth)[-1] == OVERALL and list(truth)[:-1] == sorted(t.removeprefix(PREFIX) for t in scenarios)
    stale = _call(world, "google_cloud_bigquery_run_query", query=f"SELECT MAX(summary_date) AS d FROM "
                  f"{DATASET}.daily_summary")
    assert stale["rows"][0]["d"] < "2024-07-29"
    assert (world.workspace / RECORD.file).read_text() == csv_text(RECORD.headers, INITIAL_ROWS)
    assert LOG not in {entry["name"] for entry in _call(world, "google_cloud_logging_list_logs")["logs"]}


# ------------------------------------------------------------------ the checker

def _failed(world: World) -> list[str]:
    verdict = TASK.check(world)
    assert not verdict.errored, verdict
    return verdict.failed_names()


def _answer(world: World) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = world.read_truth()["answer"][RECORD.file]
    return rows


def _write(world: World, rows: list[list[str]] | None = None, text: str | None = None) -> None:
    cells = rows if rows is not None else [[r[h] for h in RECORD.headers] for r in _answer(world)]
    (world.workspace / RECORD.file).write_text(text if text is not None else csv_text(RECORD.headers, cells))


def _act(world: World) -> None:
    if world.read_truth()["answer"][WINNER] == "B":
        _call(world, "google_cloud_storage_create_bucket", bucket_name=BUCKET)
    else:
        _call(world, "google_cloud_logging_write_log", log_name=LOG, message=json.dumps(PAYLOAD))


@pytest.fixture(params=[A_SEED, B_SEED], ids=["A_wins", "B_wins"])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> World:
    return _world(tmp_path, request.param)


def test_noop_fails_and_a_right_answer_passes(world: World) -> None:
    # scenario_values and order have no scenario row to judge: no pass
    assert _failed(world) == ["scenario_rows", "scenario_values", "overall_row", "order", "winner_action"]
    _write(world)
    _act(world)
    assert _failed(world) == []


def test_checker_accepts_documented_normalisations(world: World) -> None:
    rows = [[f"  {r['scenario']} ", f" {r[RECORD.headers[1]]}", r[RECORD.headers[2]]] for r in _answer(world)]
    text = "\ufeff" + csv_text([" scenario", "A_conversion %", "B_conversion  %"], rows) + "\n\n"
    _write(world, text=text.replace("\n", "\r\n"))
    _act(world)
    (world.workspace / "scratch.py").write_text("print(1)")
    assert _failed(world) == []


def _nudge(rate: str, by: str) -> str:
    from decimal import Decimal
    return f"{Decimal(rate[:-1]) + Decimal(by)}%"


def _edited(world: World, edit: Callable[[list[list[str]]], list[list[str]]]) -> list[str]:
    _write(world, edit([[r[h] for h in RECORD.headers] for r in _answer(world)]))
    _act(world)
    return _failed(world)


def test_a_rate_within_a_thousandth_passes_and_beyond_fails(world: World) -> None:
    assert _edited(world, lambda rows: [[rows[0][0], _nudge(rows[0][1], "0.001"), rows[0][2]], *rows[1:]]) == []


@pytest.mark.parametrize("value", ["+0.002", "4 decimals", "no percent", "fraction"])
def test_wrong_scenario_rates_fail_scenario_values(tmp_path: Path, value: str) -> None:
    world = _world(tmp_path, B_SEED)

    def edit(rows: list[list[str]]) -> list[list[str]]:
        rate = rows[1][2]
        rows[1][2] = {"+0.002": _nudge(rate, "0.002"), "4 decimals": rate[:-1] + "0%", "no percent": rate[:-1],
                      "fraction": f"{float(rate[:-1]) / 100:.3f}%"}[value]
        return rows
    assert _edited(world, edit) == ["scenario_values"]


def test_wrong_pooled_rate_or_label_fails_overall_row(tmp_path: Path) -> None:
    world = _world(tmp_path, A_SEED)
    assert _edited(world, lambda rows: [*rows[:-1], [OVERALL, _nudge(rows[-1][1], "-0.002"), rows[-1][2]]]) \
        == ["overall_row"]
    world = _world(tmp_path, A_SEED)
    assert _edited(world, lambda rows: [*rows[:-1], ["overall", *rows[-1][1:]]]) == \
        ["scenario_rows", "overall_row", "order"]


def test_missing_extra_duplicated_or_placeholder_rows_fail_scenario_rows(tmp_path: Path) -> None:
    for edit in (lambda rows: rows[1:], lambda rows: [rows[0], *rows],
                 lambda rows: [[PLACEHOLDER, "", ""], *rows], lambda rows: [["daily_summary", *rows[0][1:]], *rows],
                 lambda rows: [[PREFIX + rows[0][0], *rows[0][1:]], *rows[1:]]):
        world = _world(tmp_path, B_SEED)
        assert _edited(world, edit)[0] == "scenario_rows"


def test_unsorted_rows_or_the_pooled_row_first_fail_order(tmp_path: Path) -> None:
    world = _world(tmp_path, B_SEED)
    assert _edited(world, lambda rows: [rows[1], rows[0], *rows[2:]]) == ["order"]
    world = _world(tmp_path, B_SEED)
    assert "order" in _edited(world, lambda rows: [rows[-1], *rows[:-1]])


def test_renamed_header_fails_header(tmp_path: Path) -> None:
    world = _world(tmp_path, B_SEED)
    _write(world, text=csv_text(["scenario", "A_conversion", "B_conversion"],
                                [[r[h] for h in RECORD.headers] for r in _answer(world)]))
    _act(world)
    assert _failed(world) == ["header"]


def _written(world: World, *messages: tuple[str, str]) -> list[str]:
    _write(world)
    for log, message in messages:
        _call(world, "google_cloud_logging_write_log", log_name=log, message=message)
    return _failed(world)


def test_a_wins_the_log_entry_may_be_a_json_string_or_a_full_log_name(tmp_path: Path) -> None:
    world = _world(tmp_path, A_SEED)
    assert _written(world, (f"projects/homepage-experiments/logs/{LOG}", json.dumps(json.dumps(PAYLOAD)))) == []


@pytest.mark.parametrize("messages", [
    [],
    [(LOG, json.dumps({**PAYLOAD, "winner": "B"}))],
    [(LOG, "AB_Test_Concluded: A wins, No_Change")],
    [(LOG, json.dumps(PAYLOAD)), (LOG, json.dumps(PAYLOAD))],
])
def test_a_wins_without_exactly_the_entry_fails_winner_action(tmp_path: Path, messages: list[tuple[str, str]]) -> None:
    assert _written(_world(tmp_path, A_SEED), *messages) == ["winner_action"]


def test_a_wins_with_a_bucket_or_another_log_fails_no_wrong_action(tmp_path: Path) -> None:
    world = _world(tmp_path, A_SEED)
    _call(world, "google_cloud_storage_create_bucket", bucket_name=BUCKET)
    assert _written(world, (LOG, json.dumps(PAYLOAD))) == ["no_wrong_action"]
    world = _world(tmp_path, A_SEED)
    # an entry in another log is also outside the task's writable set
    assert _written(world, (LOG, json.dumps(PAYLOAD)), ("ab_results", json.dumps(PAYLOAD))) == [
        "no_wrong_action", "no_side_effects"]


def test_b_wins_without_the_bucket_fails_winner_action_and_with_a_log_no_wrong_action(tmp_path: Path) -> None:
    world = _world(tmp_path, B_SEED)
    _call(world, "google_cloud_storage_create_bucket", bucket_name="promo-assets-for-a")
    # a bucket of another name is also outside the task's writable set
    assert _written(world) == ["winner_action", "no_wrong_action", "no_side_effects"]
    world = _world(tmp_path, B_SEED)
    _call(world, "google_cloud_storage_create_bucket", bucket_name=BUCKET)
    assert _written(world, (LOG, json.dumps({**PAYLOAD, "winner": "B"}))) == ["no_wrong_action"]


def test_changed_dataset_or_pipeline_log_fails_no_side_effects(world: World) -> None:
    _write(world)
    _act(world)
    _call(world, "google_cloud_bigquery_run_query", query=f"DELETE FROM {DATASET}.experiment_config WHERE TRUE")
    assert _failed(world) == ["no_side_effects"]
