"""Calibration: the scale parameters that make a world of (task, seed) hit a token target.

Each task's table is `calibration.json` in its generator's folder and ships with the package; a
(target, seed) that is not in the table, or a table made for another generator version, is
calibrated on the fly."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from envs.core.build import build_world
from envs.core.registry import Task
from loca.core.world import write_text_atomic

TABLE_FILE = "calibration.json"
TOLERANCE = 0.05
MAX_PROBES = 24


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
    """Measures candidate params, remembering every probe."""

    def __init__(self, task: Task, seed: int, work_dir: Path) -> None:
        self.task, self.seed, self.work_dir = task, seed, work_dir
        self.seen: dict[tuple[tuple[str, int], ...], int] = {}

    async def __call__(self, params: dict[str, int]) -> int:
        key = tuple(sorted(params.items()))
        if key not in self.seen:
            if len(self.seen) >= MAX_PROBES:
                raise CalibrationError(f"no parameters found within {MAX_PROBES} probes")
            self.seen[key] = await measure_params(self.task, params, self.seed, self.work_dir)
        return self.seen[key]


async def calibrate_one(task: Task, target: int, seed: int, tolerance: float = TOLERANCE,
                        work_dir: Path | None = None) -> Entry:
    """Search the primary parameter (largest value whose world stays at or under the target),
    then the fine one, until the measured length is within `tolerance` of the target."""
    with tempfile.TemporaryDirectory(prefix="loca-cal-", dir=work_dir) as tmp:
        probe = _Prober(task, seed, Path(tmp))
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
        if abs(size_lo - target) <= tolerance * target or scale.fine is None:
            return _accept(task, target, best, size_lo, tolerance)
        return await _tune_fine(task, probe, best, size_lo, target, tolerance)


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
    """Parameters for (target, seed): from the shipped table, else calibrated now."""
    table = load_table(task)
    entry = table.entries.get(str(target), {}).get(str(seed)) if table else None
    if entry is None:
        entry = await calibrate_one(task, target, seed)
    return entry.params


async def calibrate(task: Task, targets: list[int], seeds: list[int],
                    tolerance: float = TOLERANCE,
                    progress: Callable[[int, int, Entry], None] | None = None) -> Table:
    """Calibrate every (target, seed), merge into the task's table and save it."""
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
    write_text_atomic(table_path(task), table.model_dump_json(indent=1) + "\n")
    return table
