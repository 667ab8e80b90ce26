"""Calibration hits arbitrary targets within tolerance and the shipped table covers the tiers."""

from __future__ import annotations

import asyncio

import pytest

from envs.canvas_arrange_exam import TASK
from loca import calibration
from loca.calibration import CalibrationError, calibrate_one, load_table, params_for
from loca.core.lengths import TIERS, parse_length


def test_arbitrary_target_within_tolerance():
    entry = asyncio.run(calibrate_one(TASK, 11_500, seed=17))
    assert abs(entry.measured - 11_500) <= 0.05 * 11_500
    assert entry.params["num_courses"] >= 3
    measured = asyncio.run(calibration.measure_params(TASK, entry.params, 17, _tmp()))
    assert measured == entry.measured  # the same params rebuild the same world


def _tmp():
    import tempfile
    from pathlib import Path

    return Path(tempfile.mkdtemp())


def test_target_below_the_smallest_world_is_an_error():
    with pytest.raises(CalibrationError, match="smallest world|closest world"):
        asyncio.run(calibrate_one(TASK, 600, seed=0))


def test_shipped_table_covers_every_tier_and_seed_within_tolerance():
    table = load_table(TASK)
    assert table is not None and table.generator_version == TASK.generator_version
    for tier in TIERS:
        target = parse_length(tier)
        for seed in range(5):
            entry = table.entries[str(target)][str(seed)]
            assert abs(entry.measured - target) <= 0.05 * target, (tier, seed, entry)


def test_table_entries_are_used_without_searching(monkeypatch):
    async def no_search(*args, **kwargs):
        raise AssertionError("searched although the table has the entry")

    monkeypatch.setattr(calibration, "calibrate_one", no_search)
    params = asyncio.run(params_for(TASK, 64_000, 2))
    assert params == load_table(TASK).entries["64000"]["2"].params
