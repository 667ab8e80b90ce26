"""Calibration: the scale parameters that make a world of (task, seed) hit a token target.

Each task's table is `calibration.json` in its generator's folder and ships with the package,
with the task's length model fit from it. A (target, seed) in the table is built once from its
entry; any other is built from the model's prediction and corrected at most once; the exact
search is the fallback (a table without a model, or a model that misses twice)."""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from envs.core.build import build_world
from envs.core.length_model import LengthModel, fit, fit_features
from envs.core.registry import Task
from loca.core.world import World, write_text_atomic

TABLE_FILE = "calibration.json"
TOLERANCE = 0.05
MAX_PROBES = 24
FINE_PROBE_SEEDS = 3  # seeds whose fine slope is measured when the model is fit
MODEL_BUILDS = 3  # builds guided by the length model (a prediction, then corrections) before the search


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    params: dict[str, int]
    measured: int


class Table(BaseModel):
    model_config = ConfigDict(extra="forbid")
    task: str
    task_version: int
    generator_version: str
    tolerance: float
    entries: dict[str, dict[str, Entry]]  # target tokens -> seed -> entry
    model: LengthModel | None = None


class CalibrationError(ValueError):
    pass


def table_path(task: Task) -> Path:
    return task.generator_dir / TABLE_FILE


def load_table(task: Task) -> Table | None:
    path = table_path(task)
    if not path.is_file():
        return None
    table = Table.model_validate_json(path.read_text(encoding="utf-8"))
    return table if table.generator_version == task.generator_version else None


async def measure_params(task: Task, params: dict[str, Any], seed: int, work_dir: Path) -> int:
    world = await build_world(task, work_dir / "probe", params, seed)
    assert world.meta.env_description_tokens is not None
    return world.meta.env_description_tokens


class _Prober:
    """Measures candidate params, remembering every probe (by resolved params); `known` are
    measurements already made for this seed."""

    def __init__(self, task: Task, seed: int, work_dir: Path,
                 known: dict[tuple[tuple[str, int], ...], int] | None = None) -> None:
        self.task, self.seed, self.work_dir = task, seed, work_dir
        self.seen: dict[tuple[tuple[str, int], ...], int] = dict(known or {})
        self.builds = 0

    async def __call__(self, params: dict[str, int]) -> int:
        key = params_key(self.task, params)
        if key not in self.seen:
            if self.builds >= MAX_PROBES:
                raise CalibrationError(f"no parameters found within {MAX_PROBES} probes")
            self.builds += 1
            self.seen[key] = await measure_params(self.task, params, self.seed, self.work_dir)
        return self.seen[key]


def params_key(task: Task, params: dict[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(task.resolve_params(params).items()))


async def calibrate_one(task: Task, target: int, seed: int, tolerance: float = TOLERANCE,
                        work_dir: Path | None = None) -> Entry:
    """The parameters of (target, seed) whose world measures within `tolerance` of the target:
    aimed by the task's length model when its table has one (within half the tolerance, a
    few builds), else, or when that misses, searched: the largest primary value whose world
    stays at or under the target, then the fine one (when the primary alone lands more than
    half the tolerance away)."""
    table = load_table(task)
    known: dict[tuple[tuple[str, int], ...], int] = {}
    with tempfile.TemporaryDirectory(prefix="loca-cal-", dir=work_dir) as tmp:
        async def measure(params: dict[str, int]) -> int:
            known[params_key(task, params)] = size = await measure_params(task, params, seed, Path(tmp))
            return size

        if table is not None and table.model is not None:
            aimed = await _aim(task, table, target, seed, measure, tolerance / 2)
            if aimed is not None and _within(aimed[1], target, tolerance / 2):
                return Entry(params=aimed[0], measured=aimed[1])
    entry, _ = await search(task, target, seed, tolerance, work_dir, known)
    return entry


async def _aim(task: Task, table: Table, target: int, seed: int,
               measure: Callable[[dict[str, int]], Awaitable[int]],
               tolerance: float) -> tuple[dict[str, int], int] | None:
    """Builds guided by the table's length model: the parameters its seeds landed with at a
    tabled target, else the model's prediction (moved by the seed's own sketch when the
    generator makes one), then corrections while the world misses `tolerance` and the generator
    accepts them, `MODEL_BUILDS` builds at most. The last parameters built and their size; None
    without a model."""
    model = table.model
    if model is None:
        return None
    params = _tier_params(task, table, target) or model.predict(task, target)
    features = task.length_features(params, seed) if model.features else None
    if features is not None:  # aimed with the seed's own sketch before anything is built
        params = model.correct(task, params, round(model.estimate(features)), target)
    if not _accepted(task, params):
        return None
    tried = {params_key(task, params)}
    size = await measure(params)
    for _ in range(MODEL_BUILDS - 1):
        if _within(size, target, tolerance):
            break
        corrected = model.correct(task, params, size, target)
        if not _accepted(task, corrected) or params_key(task, corrected) in tried:
            break
        params = corrected
        tried.add(params_key(task, params))
        size = await measure(params)
    return params, size


async def search(task: Task, target: int, seed: int, tolerance: float = TOLERANCE,
                 work_dir: Path | None = None,
                 known: dict[tuple[tuple[str, int], ...], int] | None = None) -> tuple[Entry, int]:
    """`calibrate_one`, also saying how many worlds it built."""
    with tempfile.TemporaryDirectory(prefix="loca-cal-", dir=work_dir) as tmp:
        probe = _Prober(task, seed, Path(tmp), known)
        scale = task.spec.scale
        lo, hi = scale.lo, scale.hi
        size_lo = await probe({scale.primary: lo})
        if size_lo > target * (1 + tolerance) and scale.fine is None:
            raise CalibrationError(f"{task.name}: {target} tokens is below the smallest world ({size_lo})")
        size_hi = None
        # bracket: the largest primary value whose size <= target, by interpolation + bisection
        while hi - lo > 1 and size_lo <= target:
            if size_hi is None:
                guess = lo + max(1, round((target - size_lo) / max(1.0, size_lo / lo)))
            else:
                guess = lo + round((target - size_lo) * (hi - lo) / max(1, size_hi - size_lo))
            mid = min(max(guess, lo + 1), hi - 1 if size_hi is not None else hi)
            size = await probe({scale.primary: mid})
            if size <= target:
                lo, size_lo = mid, size
            else:
                hi, size_hi = mid, size
        best = {scale.primary: lo}
        # with a fine knob, a primary value off by more than half the tolerance is tuned closer
        if scale.fine is None or abs(size_lo - target) <= tolerance * target / 2:
            return _accept(task, target, best, size_lo, tolerance), probe.builds
        entry = await _tune_fine(task, probe, best, size_lo, target, tolerance)
        return entry, probe.builds


async def _tune_fine(task: Task, probe: _Prober, base: dict[str, int], size: int,
                     target: int, tolerance: float) -> Entry:
    fine = task.spec.scale.fine
    assert fine is not None
    count = task.resolve_params(base)[fine]
    per_item = 100.0
    params = dict(base)
    for _ in range(MAX_PROBES):
        step = round((target - size) / per_item)
        if step == 0:
            step = 1 if target > size else -1
        new_count = max(0, count + step)
        new_size = await probe({**base, fine: new_count})
        if new_count != count:
            per_item = max(20.0, abs(new_size - size) / abs(new_count - count))
        count, size, params = new_count, new_size, {**base, fine: new_count}
        if abs(size - target) <= tolerance * target / 2:
            break
    return _accept(task, target, params, size, tolerance)


def _accept(task: Task, target: int, params: dict[str, int], size: int, tolerance: float) -> Entry:
    if abs(size - target) > tolerance * target:
        raise CalibrationError(
            f"{task.name}: closest world to {target} tokens measures {size} (params {params})")
    return Entry(params=params, measured=size)


async def params_for(task: Task, target: int, seed: int) -> dict[str, int]:
    """Parameters for (target, seed): from the shipped table, else searched now."""
    table = load_table(task)
    entry = table.entries.get(str(target), {}).get(str(seed)) if table else None
    if entry is None:
        entry = await calibrate_one(task, target, seed)
    return entry.params


async def build_to_target(task: Task, root: Path, target: int, seed: int,
                          tolerance: float = TOLERANCE) -> World:
    """The world of (target, seed) at `root`, built once from the table's entry when it has
    one, else from the parameters its other seeds have at that target or the length model's
    prediction (moved by the seed's own sketch when the generator makes one, then corrected
    while it misses the tolerance, `MODEL_BUILDS` builds at most), else by the exact search.
    `world.json` records how many builds it took."""
    table = load_table(task)
    entry = table.entries.get(str(target), {}).get(str(seed)) if table else None
    builds = 0
    tried: dict[tuple[tuple[str, int], ...], int] = {}

    async def build(params: dict[str, int]) -> tuple[World, int]:
        nonlocal builds
        builds += 1
        world = await build_world(task, root, params, seed, target, builds)
        assert world.meta.env_description_tokens is not None
        tried[params_key(task, params)] = world.meta.env_description_tokens
        return world, world.meta.env_description_tokens

    if entry is not None:
        return (await build(entry.params))[0]
    world: World | None = None

    async def measure(params: dict[str, int]) -> int:
        nonlocal world
        world, size = await build(params)
        return size

    aimed = await _aim(task, table, target, seed, measure, tolerance) if table is not None else None
    size = aimed[1] if aimed is not None else 0
    if world is not None and _within(size, target, tolerance):
        return world
    found, probes = await search(task, target, seed, tolerance, known=tried)
    builds += probes
    if world is None or params_key(task, found.params) != params_key(task, world.meta.params):
        return (await build(found.params))[0]
    world.meta.builds = builds  # the search settled on the world already built here
    world.save()
    return world


def _accepted(task: Task, params: dict[str, int]) -> bool:
    """Whether the generator makes a world of `params` (a model may ask for more fine items
    than it has, say): when not, the search takes over."""
    try:
        task.resolve_params(params)
    except ValueError:
        return False
    return True


def _tier_params(task: Task, table: Table, target: int) -> dict[str, int] | None:
    """For a target the table holds, the parameters its seeds landed with there (the median
    primary count, then the median fine count among its seeds with that count): a first guess
    closer than the model's where the length is a step function of the scale (a day more per
    three scenarios, say). None for a target the table does not hold."""
    entries = table.entries.get(str(target))
    if not entries:
        return None
    scale = task.spec.scale
    resolved = [task.resolve_params(e.params) for e in entries.values()]
    primary = statistics.median_low(p[scale.primary] for p in resolved)
    if scale.fine is None:
        return {scale.primary: primary}
    fine = statistics.median_low(p[scale.fine] for p in resolved if p[scale.primary] == primary)
    return {scale.primary: primary, scale.fine: fine}


def _within(size: int, target: int, tolerance: float) -> bool:
    return abs(size - target) <= tolerance * target


async def fit_model(task: Task, table: Table) -> LengthModel:
    """The task's length model fit from the table's entries; the fine slope (tokens per fine
    item) is read from entries of one seed and one primary count with different fine counts
    where the table holds them (a primary capped below the long tiers: their length is the fine
    knob's), else measured on the smallest target's first seeds, one extra build each. The
    estimate from length features is fit too when the generator sketches them."""
    per_fine = None
    if task.spec.scale.fine is not None:
        per_fine = _table_fine_slope(task, table) or await _fine_slope(task, table)
    entries = [(int(seed), e) for seeds in table.entries.values() for seed, e in seeds.items()]
    model = fit(task, [(e.params, e.measured) for _, e in entries], per_fine)
    sketches = [(task.length_features(e.params, seed), e.measured) for seed, e in entries]
    if all(f is not None for f, _ in sketches):
        model.features = fit_features([(f, m) for f, m in sketches if f is not None])
    return model


def _table_fine_slope(task: Task, table: Table, least: int = 1000) -> float | None:
    """Tokens per fine item from the table alone: over each seed's entries that share a primary
    count, the least-squares slope of length on the fine count, pooled; None unless some seed's
    fine counts span `least` items there."""
    scale = task.spec.scale
    assert scale.fine is not None
    groups: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for seeds in table.entries.values():
        for seed, entry in seeds.items():
            resolved = task.resolve_params(entry.params)
            groups.setdefault((seed, resolved[scale.primary]), []).append((resolved[scale.fine], entry.measured))
    spread = [g for g in groups.values() if max(f for f, _ in g) - min(f for f, _ in g) >= least]
    if not spread:
        return None
    sxy = sxx = 0.0
    for group in spread:
        mean_f = statistics.fmean(f for f, _ in group)
        mean_m = statistics.fmean(m for _, m in group)
        sxy += sum((f - mean_f) * (m - mean_m) for f, m in group)
        sxx += sum((f - mean_f) ** 2 for f, _ in group)
    return round(sxy / sxx, 2)


async def _fine_slope(task: Task, table: Table) -> float:
    fine = task.spec.scale.fine
    assert fine is not None
    smallest = table.entries[min(table.entries, key=int)]
    slopes = []
    with tempfile.TemporaryDirectory(prefix="loca-cal-") as tmp:
        for seed, entry in list(smallest.items())[:FINE_PROBE_SEEDS]:
            resolved = task.resolve_params(entry.params)
            extra = max(4, resolved[fine] // 2)
            size = await measure_params(task, {**resolved, fine: resolved[fine] + extra}, int(seed), Path(tmp))
            slopes.append((size - entry.measured) / extra)
    return round(statistics.median(slopes), 2)


async def calibrate(task: Task, targets: list[int], seeds: list[int],
                    tolerance: float = TOLERANCE,
                    progress: Callable[[int, int, Entry], None] | None = None) -> Table:
    """Calibrate every (target, seed), merge into the task's table, fit its length model and
    save it."""
    table = load_table(task) or Table(task=task.name, task_version=task.spec.version,
                                      generator_version=task.generator_version,
                                      tolerance=tolerance, entries={})
    for target in targets:
        for seed in seeds:
            entry = await calibrate_one(task, target, seed, tolerance)
            table.entries.setdefault(str(target), {})[str(seed)] = entry
            if progress:
                progress(target, seed, entry)
    table.entries = {k: dict(sorted(v.items(), key=lambda kv: int(kv[0])))
                     for k, v in sorted(table.entries.items(), key=lambda kv: int(kv[0]))}
    return await refit(task, table)


async def refit(task: Task, table: Table | None = None) -> Table:
    """Fit the length model of `table` (default: the shipped one) and save the table."""
    table = table or load_table(task)
    if table is None:
        raise CalibrationError(f"{task.name}: no calibration table for generator {task.generator_version}")
    table.model = await fit_model(task, table)
    write_text_atomic(table_path(task), table.model_dump_json(indent=1) + "\n")
    return table
