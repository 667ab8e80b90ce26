"""A server runtime over a test world, with call helpers that also check no host path leaks."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loca.core.world import World
from mock_servers.core.toolkit import ServerRuntime, Toolbox

if TYPE_CHECKING:
    from envs.core.registry import Task


class ServerHarness:
    def __init__(self, toolbox: Toolbox, world: World, config: dict[str, Any] | None = None) -> None:
        self.world = world
        self.ws = world.workspace
        self.runtime = ServerRuntime(toolbox, world, config or {})

    def call(self, tool: str, **args: Any) -> tuple[str, bool]:
        outcome = asyncio.run(self.runtime.call(tool, args))
        if str(self.world.root) not in json.dumps(args):
            assert str(self.world.root) not in outcome.text  # never a host path
        return outcome.text, outcome.is_error

    def ok_text(self, tool: str, **args: Any) -> str:
        text, is_error = self.call(tool, **args)
        assert not is_error, text
        return text

    def fails(self, tool: str, code: str, **args: Any) -> str:
        text, is_error = self.call(tool, **args)
        assert is_error, text
        assert text.startswith(f"Error [{code}]: {tool}: "), text
        return text


def table_rows(state_path: object) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of a world's state, in rowid order."""
    import sqlite3

    conn = sqlite3.connect(str(state_path))
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        return {t: conn.execute(f'SELECT * FROM "{t}" ORDER BY rowid').fetchall() for t in tables}
    finally:
        conn.close()


def task_call(world: World, task: Task, tool: str, **args: Any) -> Any:
    """One call of `tool` (its exposed, prefixed name) through `task`'s gateway on `world`, which
    must succeed: the JSON it returns, decoded, else its text."""
    from mock_servers.gateway import Gateway

    gateway = Gateway(world, task.spec.servers)
    try:
        outcome = asyncio.run(gateway.call(tool, args))
    finally:
        gateway.close()
    assert not outcome.is_error, outcome.text
    try:
        return json.loads(outcome.text)
    except json.JSONDecodeError:
        return outcome.text


def world_copy(world: World, dest: Path) -> World:
    """A copy of `world` at `dest`, for a test that changes it."""
    shutil.copytree(world.root, dest)
    return World.load(dest)
