"""The length model: an unseen (length, seed) lands within 5% of its target in about one build;
the model is fit from the shipped table; a miss is corrected once; without a model the exact
search still works; `world.json` records the builds. (The full sweep of seeds 100-119 at 8k,
64k and 256k: `bench/bench_reset.py`.)"""

from __future__ import annotations

import asyncio
import json
import statistics
from pathlib import Path

import pytest

from envs.core import calibration
from envs.core.calibration import TOLERANCE, build_to_target, load_table
from envs.core.length_model import LengthModel, fit, fit_features
from envs.core.registry import Task, tasks
from loca.core.world import World

UNSEEN_SEEDS = (100, 101, 102, 103)  # in no shipped table


def _build(task: Task, root: Path, target: int, seed: int) -> World:
    return asyncio.run(build_to_target(task, root, target, seed))


@pytest.mark.slow
def test_unseen_seeds_land_within_tolerance_in_about_one_build(tmp_path: Path) -> None:
    """Every task: four unseen seeds at 8k and one at 64k; each world within 5% of its target,
    at most two builds each (no search), 1.5 builds per world at most on average."""
    builds = []
    for task in tasks().values():
        for target, seeds in ((8_000, UNSEEN_SEEDS), (64_000, UNSEEN_SEEDS[:1])):
            for seed in seeds:
                world = _build(task, tmp_path / f"{task.name}-{target}-{seed}", target, seed)
                size = world.meta.env_description_tokens
                assert size is not None and abs(size - target) <= TOLERANCE * target, (task.name, target, seed, size)
                assert World.load(world.root).meta.builds == world.meta.builds
                assert world.meta.builds is not None and world.meta.builds <= 2, (task.name, target, seed)
                builds.append(world.meta.builds)
    assert statistics.mean(builds) <= 1.5, builds


def test_every_table_ships_a_model_that_tracks_it(task_name: str) -> None:
    task = tasks()[task_name]
    table = load_table(task)
    assert table is not None and table.model is not None, f"{task.name}: run `loca calibrate {task.name} --model-only`"
    model, scale = table.model, task.spec.scale
    assert (model.per_fine is None) == (scale.fine is None)
    assert all(model.curve(p + 1) > model.curve(p) for p in range(scale.lo, scale.hi))
    misses = [abs(model.value(task, e.params) - e.measured) / e.measured
              for seeds in table.entries.values() for e in seeds.values()]
    assert statistics.median(misses) < 0.03 and max(misses) < 0.2, misses


def test_predictions_hit_the_target_on_the_model_and_respect_the_scale(any_task: Task) -> None:
    table = load_table(any_task)
    assert table is not None and table.model is not None
    scale = any_task.spec.scale
    for target in (5_000, 8_000, 50_000, 256_000, 1_000_000):
        params = table.model.predict(any_task, target)
        resolved = any_task.resolve_params(params)  # valid parameters
        assert scale.lo <= resolved[scale.primary] <= scale.hi
        if resolved[scale.primary] not in (scale.lo, scale.hi):
            assert abs(table.model.value(any_task, params) - target) <= 0.01 * target + 200


def test_fit_recovers_a_known_model(any_task: Task) -> None:
    scale = any_task.spec.scale
    truth = LengthModel(intercept=900.0, per_primary=500.0, per_primary_sq=0.25,
                        per_fine=150.0 if scale.fine else None)
    points = []
    for primary in range(scale.lo, scale.lo + 200, 7):
        params = {scale.primary: primary}
        if scale.fine and primary % 2:
            params[scale.fine] = primary % 11
        points.append((params, round(truth.value(any_task, params))))
    fitted = fit(any_task, points, truth.per_fine)
    assert fitted.per_primary == pytest.approx(500.0, rel=0.01)
    assert fitted.per_primary_sq == pytest.approx(0.25, rel=0.05)
    assert fitted.intercept == pytest.approx(900.0, abs=30)


def test_fit_features_recovers_known_coefficients() -> None:
    points = [((float(n), float(chars)), round(40.0 + 90.0 * n + 0.3 * chars))
              for n in range(5, 400, 13) for chars in (300 * n, 420 * n + 999)]
    assert fit_features(points) == pytest.approx([40.0, 90.0, 0.3], rel=0.02, abs=2.0)


def _sketching_tasks() -> list[Task]:
    """The tasks whose generator sketches length features (their tables' models use them)."""
    return [t for t in tasks().values() if t.length_features(t.resolve_params(
        {t.spec.scale.primary: t.spec.scale.lo}), 0) is not None]


@pytest.mark.slow
def test_a_sketching_task_ships_features_that_explain_its_table() -> None:
    """The estimate from each table entry's sketch is closer to what it measured than the
    model's curve, whose misses are the seeds' own offsets."""
    assert _sketching_tasks(), "no generator sketches its worlds"
    for task in _sketching_tasks():
        table = load_table(task)
        assert table is not None and table.model is not None and table.model.features is not None, task.name
        sketch_misses, curve_misses = [], []
        for seeds in table.entries.values():
            for seed, entry in seeds.items():
                features = task.length_features(entry.params, int(seed))
                assert features is not None
                sketch_misses.append(abs(table.model.estimate(features) - entry.measured) / entry.measured)
                curve_misses.append(abs(table.model.value(task, entry.params) - entry.measured) / entry.measured)
        assert max(sketch_misses) < 0.03 and statistics.median(sketch_misses) < statistics.median(curve_misses)


@pytest.mark.slow
def test_the_sketch_aims_the_first_build_of_an_unseen_seed(tmp_path: Path) -> None:
    """At 8k, where a seed's content moves the length most, every unseen seed lands within the
    tolerance in one build."""
    for task in _sketching_tasks():
        for seed in range(100, 110):
            world = _build(task, tmp_path / f"{task.name}-{seed}", 8_000, seed)
            assert world.meta.builds == 1, (task.name, seed, world.meta.env_description_tokens)


def test_a_first_miss_is_corrected_without_the_search(any_task: Task, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    table = load_table(any_task)
    assert table is not None and table.model is not None
    # predicts lengths too big, so the first world comes out short and the fine count grows
    skewed = table.model.model_copy(update={"intercept": table.model.intercept + 2_000})
    monkeypatch.setattr(calibration, "load_table", lambda task: table.model_copy(update={"model": skewed}))
    world = _build(any_task, tmp_path / "w", 20_000, 105)  # a target the table does not hold
    assert world.meta.builds is not None and 1 < world.meta.builds <= calibration.MODEL_BUILDS
    assert abs(world.meta.env_description_tokens - 20_000) <= TOLERANCE * 20_000  # type: ignore[operator]


def test_a_miss_the_fine_count_can_absorb_is_corrected_by_one_more_build(any_task: Task, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A first world that lands short because it has too few fine items is corrected by the
    fine count alone: exactly one more build."""
    table = load_table(any_task)
    assert table is not None and table.model is not None and any_task.spec.scale.fine is not None
    fine = any_task.spec.scale.fine
    entry = any_task.resolve_params(table.entries["16000"]["0"].params)
    short = {**entry, fine: entry[fine] // 4}  # a quarter of the fine items the table's seed needs
    untabled = table.model_copy(update={"entries": {k: v for k, v in table.entries.items() if k != "16000"}})
    monkeypatch.setattr(calibration, "load_table", lambda task: untabled)
    monkeypatch.setattr(type(table.model), "predict", lambda self, task, target: short)
    world = _build(any_task, tmp_path / "w", 16_000, 0)
    assert world.meta.builds == 2
    assert world.meta.params[any_task.spec.scale.primary] == entry[any_task.spec.scale.primary]
    assert abs(world.meta.env_description_tokens - 16_000) <= TOLERANCE * 16_000  # type: ignore[operator]


@pytest.mark.slow
def test_without_a_model_the_search_builds_the_world(any_task: Task, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    table = load_table(any_task)
    assert table is not None
    monkeypatch.setattr(calibration, "load_table", lambda task: table.model_copy(update={"model": None}))
    world = _build(any_task, tmp_path / "w", 11_500, 17)
    assert world.meta.builds is not None and world.meta.builds > 2  # probes plus the world itself
    assert abs(world.meta.env_description_tokens - 11_500) <= TOLERANCE * 11_500  # type: ignore[operator]
    assert json.loads((tmp_path / "w" / "world.json").read_text())["builds"] == world.meta.builds


def test_a_table_seed_is_built_once(any_task: Task, tmp_path: Path) -> None:
    table = load_table(any_task)
    assert table is not None
    world = _build(any_task, tmp_path / "w", 8_000, 0)
    assert world.meta.builds == 1
    assert world.meta.env_description_tokens == table.entries["8000"]["0"].measured
    assert world.meta.params == any_task.resolve_params(table.entries["8000"]["0"].params)


def test_worlds_without_a_builds_record_still_load(any_task: Task, tmp_path: Path) -> None:
    world = _build(any_task, tmp_path / "w", 8_000, 0)
    meta = json.loads((world.root / "world.json").read_text())
    del meta["builds"]
    (world.root / "world.json").write_text(json.dumps(meta))
    assert World.load(world.root).meta.builds is None


@pytest.fixture(params=sorted(tasks()))
def task_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_a_tabled_target_starts_from_the_parameters_of_its_other_seeds(any_task: Task, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    table = load_table(any_task)
    assert table is not None and table.model is not None
    skewed = table.model.model_copy(update={"intercept": table.model.intercept - 20_000})  # far off
    monkeypatch.setattr(calibration, "load_table", lambda task: table.model_copy(update={"model": skewed}))
    world = _build(any_task, tmp_path / "w", 16_000, 105)
    assert world.meta.builds == 1
    resolved = [any_task.resolve_params(e.params) for e in table.entries["16000"].values()]
    assert world.meta.params[any_task.spec.scale.primary] in {p[any_task.spec.scale.primary] for p in resolved}


def test_a_growth_that_changes_regime_is_followed_through_the_tables_points(any_task: Task) -> None:
    """Steep, then flat (a schedule that stops widening): no quadratic follows both, the curve
    through the points does, and keeps rising between and beyond them."""
    scale = any_task.spec.scale
    knee = scale.lo + 63  # on a point: between points the curve is straight

    def length(p: int) -> int:
        return 2_000 + 900 * min(p, knee) + 40 * max(0, p - knee)

    points = [({scale.primary: p}, length(p)) for p in range(scale.lo, scale.lo + 400, 9)]
    fitted = fit(any_task, points, 150.0 if scale.fine else None)
    assert fitted.knots is not None
    assert all(abs(fitted.curve(p) - length(p)) <= 0.01 * length(p) for p in range(scale.lo, scale.lo + 392))
    assert fitted.curve(scale.lo + 500) > fitted.curve(scale.lo + 400) > fitted.curve(scale.lo + 399)


def test_seeds_scattered_around_one_smooth_curve_keep_the_quadratic(any_task: Task) -> None:
    scale = any_task.spec.scale
    points = [({scale.primary: p}, round((900 + 500 * p + 0.25 * p * p) * (1.1 if p % 2 else 0.9)))
              for p in range(scale.lo, scale.lo + 200, 3)]
    assert fit(any_task, points, 150.0 if scale.fine else None).knots is None
