"""machine_operating: the plan holds every edge case at every size (anomalies at both ends of the
window and just outside it, readings equal to a bound, duplicates, unknown machines, a window
longer than the first-page trap); the table and workbook, read through the tools, say what the
plan says; the checker accepts the documented normalisations of a right answer and rejects wrong
ones, one test per rule. (Oracle, mutants and lengths at every tier: the generic acceptance
suite.)"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook

from envs.core.calibration import load_table
from envs.core.registry import get_task
from envs.machine_operating import (
    BUCKET,
    DATASET,
    OBJECT,
    PARAMS_FILE,
    PARAMS_HEADERS,
    PARAMS_SHEET,
    REPORT,
    TABLE,
    TRAP_PAGE,
    window_query,
)
from generators.machine_operating.plan import (
    MAX_GRID,
    NORMAL_TERMS,
    SENSORS,
    UNKNOWN_FIRST,
    Plan,
    default_unknown,
    hours,
    normals,
    plan_world,
    sensors_per_machine,
)
from loca.core.rng import WorldRng
from loca.core.world import World, content_hash
from mock_servers import snapshot_rules
from mock_servers.core import snapshot
from mock_servers.core.files import save_workbook
from mock_servers.core.snapshot import Snapshot
from tests.harness import task_call

TASK = get_task("machine_operating")
START, END = "2025-08-19 11:30:00", "2025-08-19 12:30:00"


def _plan(machines: int, seed: int, unknown: int | None = None) -> Plan:
    return plan_world(WorldRng(TASK.name, seed), machines,
                      default_unknown(machines) if unknown is None else unknown)


def _assert_every_edge_case(plan: Plan, machines: int, unknown_count: int) -> None:
    per = sensors_per_machine(machines)
    assert per == min(10, 2 + machines // 6) and len(plan.series) == machines * per
    assert len({(s.machine, s.sensor) for s in plan.series}) == len(plan.series)
    assert all(0 < s.low < s.high and s.low > 0.05 * s.span for s in plan.series)
    ranges = {(s.machine, s.sensor): s for s in plan.series}
    rows = plan.rows()
    assert len(rows) >= len(plan.series) * 12 * hours(machines)
    anomalies = plan.anomalies()
    keys = [(a[0], a[1], a[2]) for a in anomalies]
    assert len(keys) == len(set(keys)) and keys == sorted(keys)
    assert {START, END} <= {a[0] for a in anomalies}
    outside = [r for r in rows if (r[1], r[2]) in ranges and (r[3] < ranges[r[1], r[2]].low or
                                                                   r[3] > ranges[r[1], r[2]].high)]
    assert any("2025-08-19 11:29:50" <= r[0] < START for r in outside)
    assert any(END < r[0] <= "2025-08-19 12:30:09" for r in outside)
    in_window = [r for r in rows if START <= r[0] <= END]
    assert any(r[3] == ranges[r[1], r[2]].low for r in in_window if (r[1], r[2]) in ranges)
    assert any(r[3] == ranges[r[1], r[2]].high for r in in_window if (r[1], r[2]) in ranges)
    counts = Counter(rows)
    assert sum(n - 1 for n in counts.values()) >= 0.01 * len(counts)
    assert any(counts[r] > 1 for r in rows if r[0] == START and (r[1], r[2]) in ranges)
    known = {m.machine_id for m in plan.machines}
    unknown = {r for r in rows if r[1] not in known}
    assert len(unknown) == unknown_count and all(abs(r[3]) >= 5000 for r in unknown) and unknown <= set(in_window)
    assert all(int(r[1][1:]) >= UNKNOWN_FIRST for r in unknown) and all(int(m[1:]) < UNKNOWN_FIRST for m in known)
    assert len(set(in_window)) > TRAP_PAGE
    assert [r[0] for r in rows[:50]] != sorted(r[0] for r in rows[:50])  # stored shuffled


@pytest.mark.slow
@pytest.mark.parametrize("machines", [5, 6, 11, 12, 30, 55])
@pytest.mark.parametrize("seed", range(5))
def test_plan_has_every_edge_case(machines: int, seed: int) -> None:
    _assert_every_edge_case(_plan(machines, seed), machines, default_unknown(machines))


@pytest.mark.slow
@pytest.mark.parametrize(("machines", "unknown"), [(TASK.spec.scale.hi, None), (163, 37_027)])
def test_plan_has_every_edge_case_at_the_top_of_the_scale(machines: int, unknown: int | None) -> None:
    """At the largest count (about 2.3M tokens), and at a 2M world of fewer machines and many
    unknown readings (unknown machines past M999)."""
    count = default_unknown(machines) if unknown is None else unknown
    _assert_every_edge_case(_plan(machines, 1, count), machines, count)


def test_hours_cover_the_shipped_worlds_as_before_and_bound_the_grid_beyond() -> None:
    table = load_table(TASK)
    assert table is not None
    shipped = max(e.params["total_machines"] for target, seeds in table.entries.items() if int(target) <= 256_000
                  for e in seeds.values())  # the worlds of the default tiers, made before the grid was bounded
    scale = TASK.spec.scale
    grids = {}
    for m in range(scale.lo, scale.hi + 1):
        grids[m] = 12 * m * sensors_per_machine(m) * hours(m)
        assert hours(m) == max(4, m) if m <= shipped else 4 <= hours(m) < m
        assert grids[m] <= MAX_GRID
    assert grids[scale.hi] > MAX_GRID * 0.9 and scale.hi < UNKNOWN_FIRST  # machine ids stay below the unknown ones


def test_normal_draws_are_standard_and_bounded() -> None:
    draws = normals(WorldRng(TASK.name, 0), "test", (100, 1000))
    assert abs(draws.mean()) < 0.01 and abs(draws.std() - 1) < 0.01
    assert draws.min() >= -NORMAL_TERMS / 2 and draws.max() <= NORMAL_TERMS / 2
    assert (draws == normals(WorldRng(TASK.name, 0), "test", (100, 1000))).all()


@pytest.mark.parametrize("sensor", sorted(SENSORS))
def test_every_varied_range_is_ordered_and_far_enough_above_zero(sensor: str) -> None:
    _, low, high = SENSORS[sensor]
    worst_low, worst_high = low * 0.95, high * 1.05  # the widest span the 5 % variation allows
    assert low * 1.05 < high * 0.95 and worst_low > 0.05 * (worst_high - worst_low)


def test_same_seed_same_plan_and_unknown_readings_move_nothing_else() -> None:
    assert _plan(8, 3).rows() == _plan(8, 3).rows()
    assert _plan(8, 4).rows() != _plan(8, 3).rows()
    few, many = _plan(8, 3, 0), _plan(8, 3, 200)
    assert few.series == many.series and few.anomalies() == many.anomalies()
    assert len({r for r in many.rows() if r[1].startswith("M9")}) == 200


# ------------------------------------------------------------------ a generated world

@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> World:
    return TASK.generate(tmp_path_factory.mktemp("mo") / "w", {"total_machines": 12}, 2)


def _call(world: World, name: str, **args: Any) -> Any:
    return task_call(world, TASK, name, **args)


def test_table_and_workbook_read_through_the_tools_say_what_the_truth_says(built: World) -> None:
    info = _call(built, "google_cloud_bigquery_get_table_info", dataset_id=DATASET, table_id=TABLE)
    assert [f["name"] for f in info["schema"]] == ["timestamp", "machine_id", "sensor_type", "reading"]
    assert _call(built, "google_cloud_storage_list_buckets")["buckets"] == []
    rows = _call(built, "google_cloud_bigquery_run_query", query=window_query(), max_results=10000)["rows"]
    assert rows[0]["timestamp"] == f"{START} UTC" and rows[-1]["timestamp"] == f"{END} UTC"
    sheet = _call(built, "excel_read_data_from_excel", filepath=PARAMS_FILE, sheet_name=PARAMS_SHEET)["values"]
    assert tuple(sheet[0]) == PARAMS_HEADERS and len(sheet) - 1 == 12 * sensors_per_machine(12)
    ranges = {(r[0], r[2]): (r[4], r[5]) for r in sheet[1:]}
    expected = []
    for r in rows:
        low, high = ranges.get((r["machine_id"], r["sensor_type"]), (None, None))
        if low is not None and not low <= r["reading"] <= high:
            expected.append((r["timestamp"].removesuffix(" UTC"), r["machine_id"], r["sensor_type"],
                             f"{r['reading']:.2f}", f"{low:.2f} - {high:.2f}"))
    truth = built.read_truth()["answer"][REPORT.file]
    assert [tuple(e[h] for h in REPORT.headers) for e in truth] == expected
    assert {r[2] for r in sheet[1:]} <= set(SENSORS)


def test_the_table_digest_taken_from_the_plan_is_the_one_read_back(tmp_path: Path) -> None:
    made = TASK.generate(tmp_path / "w", {"total_machines": 7}, 1)
    rules = snapshot_rules(list(TASK.spec.servers.values()), TASK.spec.footprint, TASK.spec.writable_files)
    read_back = snapshot.take(made, rules)
    assert read_back == Snapshot.model_validate_json((made.truth_dir / "snapshot.json").read_text())
    assert content_hash(made) == made.meta.content_hash


# ------------------------------------------------------------------ the checker

@pytest.fixture
def world(tmp_path: Path) -> World:
    return TASK.generate(tmp_path / "w", {"total_machines": 6}, 4)


def _truth(world: World) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = world.read_truth()["answer"][REPORT.file]
    return rows


def _text(rows: list[list[str]], newline: str = "\n") -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator=newline).writerows(rows)
    return out.getvalue()


def _deliver(world: World, edit: Callable[[list[str]], list[str]] = lambda r: r,
             header: list[str] | None = None, upload: str | None = None, newline: str = "\n") -> None:
    """Save the report (each row through `edit`) and upload it (or `upload` instead)."""
    body = [edit([e[h] for h in REPORT.headers]) for e in _truth(world)]
    text = _text([header or REPORT.headers, *body], newline)
    (world.workspace / REPORT.file).write_text(text, newline="")
    (world.workspace / "upload.csv").write_text(upload if upload is not None else text, newline="")
    _call(world, "google_cloud_storage_create_bucket", bucket_name=BUCKET)
    _call(world, "google_cloud_storage_upload_file", bucket_name=BUCKET, source_file_path="upload.csv",
          destination_blob_name=OBJECT)


def _failed(world: World) -> list[str]:
    verdict = TASK.check(world)
    assert not verdict.errored, verdict
    return verdict.failed_names()


def test_right_answer_passes_with_any_newlines_and_reading_decimals(world: World) -> None:
    _deliver(world, lambda r: [*r[:3], str(float(r[3])), r[4]], newline="\r\n")
    assert _failed(world) == []


def test_upload_with_other_newlines_is_the_same_file(world: World) -> None:
    rows = [REPORT.headers, *([e[h] for h in REPORT.headers] for e in _truth(world))]
    _deliver(world, upload=_text(rows, "\r\n") + "\n")
    assert _failed(world) == []


def test_saved_but_not_uploaded_fails_uploaded(world: World) -> None:
    (world.workspace / REPORT.file).write_text(_text([REPORT.headers]))
    assert _failed(world)[:2] == ["uploaded", "local_equals_upload"]


def test_different_upload_fails_local_equals_upload(world: World) -> None:
    _deliver(world, upload="timestamp\n")
    assert _failed(world) == ["local_equals_upload"]


def test_renamed_header_fails_header(world: World) -> None:
    _deliver(world, header=[*REPORT.headers[:3], "value", REPORT.headers[4]])
    assert _failed(world) == ["header"]


@pytest.mark.parametrize("edit", [
    lambda r: [r[0].replace(" ", "T"), *r[1:]],  # ISO "T"
    lambda r: [f"{r[0]} UTC", *r[1:]],  # the stored suffix kept
])
def test_timestamps_not_in_the_stated_form_fail_rows(world: World, edit: Callable[[list[str]], list[str]]) -> None:
    _deliver(world, edit)
    assert "rows" in _failed(world)


def test_missing_extra_or_duplicate_rows_fail_rows(world: World) -> None:
    truth = _truth(world)
    first = [truth[0][h] for h in REPORT.headers]
    _deliver(world, lambda r: r if r != first else [*r[:2], "humidity", *r[3:]])
    assert "rows" in _failed(world)


@pytest.mark.parametrize("edit", [
    lambda r: [*r[:3], f"{float(r[3]) + 0.01:.2f}", r[4]],  # another reading
    lambda r: [*r[:4], r[4].replace(" - ", "-")],  # range without spaces
    lambda r: [*r[:4], " - ".join(f"{float(v):.1f}" for v in r[4].split(" - "))],  # 1 decimal
])
def test_wrong_values_fail_values(world: World, edit: Callable[[list[str]], list[str]]) -> None:
    _deliver(world, edit)
    assert _failed(world) == ["values"]


def test_other_order_fails_order(tmp_path: Path) -> None:
    made = TASK.generate(tmp_path / "w", {"total_machines": 6}, 4)
    rows = [[e[h] for h in REPORT.headers] for e in _truth(made)]
    text = _text([REPORT.headers, *reversed(rows)])
    (made.workspace / REPORT.file).write_text(text)
    _call(made, "google_cloud_storage_create_bucket", bucket_name=BUCKET)
    _call(made, "google_cloud_storage_upload_file", bucket_name=BUCKET, source_file_path=REPORT.file,
          destination_blob_name=OBJECT)
    assert _failed(made) == ["order"]


def test_other_buckets_objects_table_or_workbook_changes_fail_no_side_effects(tmp_path: Path) -> None:
    def fresh() -> World:
        made = TASK.generate(tmp_path / "w", {"total_machines": 6}, 4)
        _deliver(made)
        return made

    acts: list[Callable[[World], Any]] = [
        lambda w: _call(w, "google_cloud_storage_create_bucket", bucket_name="scratch-bucket"),
        lambda w: _call(w, "google_cloud_storage_upload_file", bucket_name=BUCKET, source_file_path=REPORT.file,
                        destination_blob_name="copy.csv"),
        lambda w: _call(w, "google_cloud_bigquery_run_query",
                        query=f"DELETE FROM {DATASET}.{TABLE} WHERE machine_id LIKE 'M9%'"),
    ]
    for act in acts:
        made = fresh()
        act(made)
        assert _failed(made) == ["no_side_effects"]
    made = fresh()
    path = made.workspace / PARAMS_FILE
    wb = load_workbook(path)
    wb[PARAMS_SHEET]["E2"] = 0
    save_workbook(wb, path, made.clock.at(0))
    assert _failed(made) == ["no_side_effects"]


def test_scratch_files_and_reads_are_no_side_effects(world: World) -> None:
    _deliver(world)
    _call(world, "google_cloud_bigquery_run_query", query=window_query(), max_results=5)
    (world.workspace / "work.py").write_text("print(1)")
    assert _failed(world) == []
