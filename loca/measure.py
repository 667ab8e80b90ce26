"""Environment description length: the cl100k_base tokens of the task's read set, read
through the same servers an agent uses."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from envs.actions import Script, ToolReply, ToolRequest
from loca.tokens import encoding
from mock_servers.gateway import Gateway


async def drive(script: Script, call: Callable[[ToolRequest], Awaitable[ToolReply]]) -> list[ToolReply]:
    """Run a script straight against a dispatcher (no model in between); every reply in order."""
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
    except StopIteration:
        return replies


async def measure(gateway: Gateway, read_script: Callable[..., Script], instruction: str = "") -> int:
    """Sum of the token counts of the read set's outputs (each output is one message the agent
    reads). A read-set call that fails is a generator bug and raises."""

    async def call(request: ToolRequest) -> ToolReply:
        outcome = await gateway.call(request.name, request.arguments)
        if outcome.is_error:
            raise RuntimeError(f"read set call {request.name} failed: {outcome.text}")
        return ToolReply(outcome.text, False)

    tools = [{"name": s.name} for s in gateway.specs]
    replies = await drive(read_script(instruction, tools), call)
    return sum(len(ids) for ids in encoding().encode_ordinary_batch([r.text for r in replies]))
