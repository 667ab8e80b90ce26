"""The long tiers in the slow tier: on every task, the world of 1m seed 0 measures within 5% of
its target, the oracle passes in the agent loop and the no-op agent fails (the mutants are
covered up to 256k by the acceptance matrix; the full long matrix is
`loca validate all --lengths long --seeds 0-4`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from envs.core.registry import Task
from envs.core.reuse import obtain_world
from loca.core.lengths import parse_length
from loca.validate import play_in_loop, play_script

pytestmark = pytest.mark.slow
TARGET = parse_length("1m")


def test_oracle_passes_and_noop_fails_at_1m(task: Task, tmp_path: Path) -> None:
    world, _ = asyncio.run(obtain_world(task, tmp_path / "base", TARGET, 0))
    measured = world.meta.env_description_tokens
    assert measured is not None and abs(measured - TARGET) <= 0.05 * TARGET, measured
    verdict, why = asyncio.run(play_in_loop(task, TARGET, 0, tmp_path / "loop"))
    assert why is None and verdict is not None and verdict.passed, why or verdict
    noop = asyncio.run(play_script(task, world, "noop"))
    assert not noop.passed and not noop.errored
