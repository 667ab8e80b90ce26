"""Shared fixtures."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

from envs.core.extra import EXTRA_TASKS_ENV
from envs.core.registry import Task, get_task
from generators.common import create_world
from loca.core.world import World, WorldMeta
from mock_servers.core.db import Database

# The toy task (tests/toy) for tests of the machinery every task shares: found by name here and in
# child processes, never listed among the shipped tasks.
os.environ[EXTRA_TASKS_ENV] = "tests.toy"
os.environ["LOCA_WORLD_CACHE_MB"] = "0"  # every test builds the worlds it checks (test_world_cache turns it on)
# Tests of everything but the sandbox still run code on a machine with no confinement at all; the
# sandbox's own tests name their modes (and CI requires them: LOCA_REQUIRE_*).
os.environ.setdefault("LOCA_ALLOW_UNCONFINED_SANDBOX", "1")
pytest_plugins = ["tests.fake_llm", "tests.fake_anthropic"]  # the fake providers and their fixtures

# Property tests draw few examples before a commit and many in CI: HYPOTHESIS_PROFILE=ci (.ci/run
# sets it). A test whose examples are costly (a world each) keeps its own smaller max_examples.
settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile("ci", max_examples=1000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture
def make_world(tmp_path: Path) -> Callable[..., tuple[World, Database]]:
    """An empty world with the tables of the given servers: `make_world(["canvas"])`."""

    def make(servers: list[str], now: str = "2025-01-15T09:00:00Z", tz: str = "UTC",
             **meta: object) -> tuple[World, Database]:
        world_meta = WorldMeta(task="test", seed=0, params={}, now=now, tz=tz,
                               generator_version="test", **meta)
        return create_world(tmp_path / "world", world_meta, servers)

    return make


@pytest.fixture(scope="session")
def any_task() -> Task:
    """The toy task (tests/toy), for tests of the machinery every task shares (they must hold
    for any task, and a tiny one keeps them quick)."""
    return get_task("toy")


def small_params(task: Task) -> dict[str, int]:
    """The parameters of the task's smallest world."""
    return {task.spec.scale.primary: task.spec.scale.lo}
