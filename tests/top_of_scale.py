"""Worlds at the top of a task's scale against the agent loop's tool-call limit: how many calls
the read set or the oracle makes there."""

from __future__ import annotations

import asyncio
from pathlib import Path

from envs.core.build import build_world, dispatcher, drive, tool_list
from envs.core.registry import Task
from loca.core.script import ToolReply, ToolRequest
from loca.core.world import World
from mock_servers.gateway import Gateway
from scaffolds.oracles import agents


def top_world(task: Task, params: dict[str, int], root: Path, seed: int = 0) -> World:
    """The world of (`params`, `seed`), generated and measured."""
    return asyncio.run(build_world(task, root, params, seed))


def read_set_calls(task: Task, world: World) -> int:
    """The tool calls of the task's read set on `world`."""
    gateway = Gateway(world, task.spec.servers)
    try:
        replies, _ = asyncio.run(drive(task.spec.read_set("", tool_list(gateway)), dispatcher(gateway)))
    finally:
        gateway.close()
    return len(replies)


def oracle_calls(task: Task, world: World) -> tuple[int, list[str]]:
    """The oracle's tool calls on `world`, and the checks its result fails."""
    gateway = Gateway(world, task.spec.servers)
    answer = dispatcher(gateway)
    calls = 0

    async def counted(request: ToolRequest) -> ToolReply:
        nonlocal calls
        calls += 1
        return await answer(request)

    try:
        script = agents(task.name).script("oracle")(task.spec.instruction(world), tool_list(gateway))
        asyncio.run(drive(script, counted))
    finally:
        gateway.close()
    return calls, task.check(world).failed_names()
