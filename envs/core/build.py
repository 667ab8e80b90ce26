"""Building a world: generate it, measure its environment description length (the cl100k_base
tokens of the task's read set, read through the same servers an agent uses) and record it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from envs.core.registry import Task
from loca.core.script import Script, ScriptFn, ToolReply, ToolRequest
from loca.core.tokens import encoding
from loca.core.world import World
from mock_servers.gateway import Gateway

Dispatch = Callable[[ToolRequest], Awaitable[ToolReply]]


async def drive(script: Script, call: Dispatch) -> tuple[list[ToolReply], Any]:
    """Run a script straight against a dispatcher (no model in between): every reply in order,
    and the script's return value."""
    replies: list[ToolReply] = []
    try:
        step = next(script)
        while True:
            if isinstance(step, str):
                step = script.send([])
                continue
            requests = step if isinstance(step, list) else [step]
            turn = [await call(r) for r in requests]
            replies.extend(turn)
            step = script.send(turn)
    except StopIteration as stop:
        return replies, stop.value


def dispatcher(gateway: Gateway, errors_raise: bool = False) -> Dispatch:
    """Tool calls of a script answered by `gateway`; with `errors_raise`, an error result is an
    exception (for scripts that must never fail, such as a read set)."""

    async def call(request: ToolRequest) -> ToolReply:
        outcome = await gateway.call(request.name, dict(request.arguments))  # type: ignore[arg-type]
        if errors_raise and outcome.is_error:
            raise RuntimeError(f"{request.name} failed: {outcome.text}")
        return ToolReply(outcome.text, outcome.is_error)

    return call


def tool_list(gateway: Gateway) -> list[dict[str, str]]:
    """The tool list a script needs (exposed names)."""
    return [{"name": s.name} for s in gateway.specs]


async def measure(gateway: Gateway, read_set: ScriptFn) -> int:
    """Sum of the token counts of the read set's outputs (each output is one message the agent
    reads). A read-set call that fails is a generator bug and raises."""
    replies, _ = await drive(read_set("", tool_list(gateway)), dispatcher(gateway, errors_raise=True))
    return sum(len(ids) for ids in encoding().encode_ordinary_batch([r.text for r in replies]))


async def build_world(task: Task, root: Path, params: dict[str, Any], seed: int,
                      target: int | None = None, builds: int = 1) -> World:
    """Generate the world of (task, params, seed) at `root`, measure its environment
    description length and record it in `world.json`, with `builds`: how many worlds were
    built to land this one (this one included)."""
    world = task.generate(root, params, seed, target)
    world.meta.builds = builds
    gateway = Gateway(world, task.spec.servers, config={"audit": False})  # the log is the agent's
    try:
        world.meta.env_description_tokens = await measure(gateway, task.spec.read_set)
    finally:
        gateway.close()
    world.save()
    return world
