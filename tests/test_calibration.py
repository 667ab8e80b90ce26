"""Calibration hits arbitrary targets within tolerance and uses the shipped table when it can.
(The table's coverage of every tier and seed: the generic acceptance suite.)"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest

from envs.core import calibration
from envs.core.calibration import CalibrationError, calibrate_one, load_table, params_for
from envs.core.registry import Task


def test_arbitrary_target_within_tolerance(any_task: Task) -> None:
    entry = asyncio.run(calibrate_one(any_task, 11_500, seed=17))
    assert abs(entry.measured - 11_500) <= 0.05 * 11_500
    assert entry.params[any_task.spec.scale.primary] >= any_task.spec.scale.lo
    measured = asyncio.run(calibration.measure_params(any_task, entry.params, 17, Path(tempfile.mkdtemp())))
    assert measured == entry.measured  # the same params rebuild the same world


def test_a_fine_knob_tunes_a_primary_value_off_by_more_than_half_the_tolerance(any_task: Task) -> None:
    """A target 4% above the smallest world: the primary alone lands within the tolerance but
    not within half of it, so the fine count is tuned until it does."""
    if any_task.spec.scale.fine is None:
        pytest.skip("the task has no fine knob")
    scale = any_task.spec.scale
    smallest = asyncio.run(calibration.measure_params(any_task, {scale.primary: scale.lo}, 3, Path(tempfile.mkdtemp())))
    target = round(smallest * 1.04)
    entry = asyncio.run(calibrate_one(any_task, target, seed=3))
    assert abs(entry.measured - target) <= 0.025 * target


def test_target_below_the_smallest_world_is_an_error(any_task: Task) -> None:
    with pytest.raises(CalibrationError, match="smallest world|closest world"):
        asyncio.run(calibrate_one(any_task, 600, seed=0))


def test_table_entries_are_used_without_searching(any_task: Task, monkeypatch: pytest.MonkeyPatch) -> None:
    async def no_search(*args: object, **kwargs: object) -> None:
        raise AssertionError("searched although the table has the entry")

    monkeypatch.setattr(calibration, "calibrate_one", no_search)
    table = load_table(any_task)
    assert table is not None
    params = asyncio.run(params_for(any_task, 64_000, 2))
    assert params == table.entries["64000"]["2"].params


def test_with_a_length_model_calibration_aims_instead_of_searching(any_task: Task,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """An unseen (target, seed) is calibrated from the model's prediction and its corrections,
    a few builds, to within half the tolerance; the search is not needed."""
    table = load_table(any_task)
    assert table is not None and table.model is not None
    builds = []
    measure = calibration.measure_params

    async def counted(*args: object, **kwargs: object) -> int:
        builds.append(args[1])
        return await measure(*args, **kwargs)  # type: ignore[arg-type]

    async def no_search(*args: object, **kwargs: object) -> None:
        raise AssertionError("searched although the model aimed within the tolerance")

    monkeypatch.setattr(calibration, "measure_params", counted)
    monkeypatch.setattr(calibration, "search", no_search)
    entry = asyncio.run(calibrate_one(any_task, 21_000, seed=23))
    assert abs(entry.measured - 21_000) <= 0.025 * 21_000
    assert 1 <= len(builds) <= calibration.MODEL_BUILDS


def test_parameters_the_generator_refuses_hand_over_to_the_search(any_task: Task,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A model asking for more than the generator makes (past its scale) builds nothing of it:
    the search calibrates instead."""
    from envs.core.length_model import LengthModel

    scale = any_task.spec.scale
    with pytest.raises(ValueError):
        any_task.resolve_params({scale.primary: scale.hi + 1})
    monkeypatch.setattr(LengthModel, "predict", lambda self, task, target: {scale.primary: scale.hi + 1})
    entry = asyncio.run(calibrate_one(any_task, 21_000, seed=23))
    assert abs(entry.measured - 21_000) <= 0.05 * 21_000


def test_the_fine_slope_is_read_from_entries_a_capped_primary_shares(any_task: Task) -> None:
    """Long tiers at one primary count differ only in their fine count: their lengths give the
    tokens per fine item directly (pooled over seeds); a table without such a spread gives none."""
    from envs.core.calibration import Entry, Table, _table_fine_slope

    scale = any_task.spec.scale
    assert scale.fine is not None

    def entry(fine: int, measured: int) -> Entry:
        return Entry(params={scale.primary: scale.lo, scale.fine: fine}, measured=measured)

    table = Table(task=any_task.name, task_version=0, generator_version="x", tolerance=0.05, entries={
        "512000": {"0": entry(1_000, 500_000), "1": entry(1_100, 510_000)},
        "2000000": {"0": entry(11_000, 2_000_000), "1": entry(11_100, 2_010_000)}})
    assert _table_fine_slope(any_task, table) == 150.0
    del table.entries["2000000"]
    assert _table_fine_slope(any_task, table) is None
