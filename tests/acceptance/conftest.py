"""The generic acceptance suite: parametrised over every registered task and every server, so a
new task or server gets all of it by registering. Nothing here names a task or a server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from envs.core.build import build_world
from envs.core.registry import Task, tasks
from loca.core.world import World
from mock_servers import SERVERS

TASK_NAMES = sorted(tasks())
SERVER_NAMES = sorted(SERVERS)


def smallest_params(task: Task) -> dict[str, int]:
    return {task.spec.scale.primary: task.spec.scale.lo}


def small_world(task: Task, root: Path, seed: int = 0) -> World:
    """The task's smallest world, generated and measured (its read set must run error-free)."""
    return asyncio.run(build_world(task, root, smallest_params(task), seed))


@pytest.fixture(params=TASK_NAMES, scope="module")
def task(request: pytest.FixtureRequest) -> Task:
    return tasks()[request.param]
