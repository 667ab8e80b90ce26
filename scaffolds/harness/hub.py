"""The tool hub (spec §0): one dispatcher over the env's tools and the harness tools.

It decides which tools the model sees (env tools, unless programmatic tool calling hides them,
plus the harness tools), runs a call wherever its tool lives, and counts executed calls against
`max_tool_calls`. Nested calls (made by code through `code_execution`) come back here and run
through the same path as a model's call, recorded as `tool_exec` events and ledger messages that
carry `parent_call_id` (never shown to the model).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from envs.core.errors import EnvSetupError, ToolInfraError
from loca.core.outcome import ToolOutcome
from scaffolds.accounting import message_tokens
from scaffolds.config import AgentConfig
from scaffolds.harness.base import HarnessTool
from scaffolds.harness.memory_tools import MEMORY_DIR, memory_tools
from scaffolds.harness.ptc import code_execution_tool
from scaffolds.ledger import Ledger
from scaffolds.messages import tool_message
from scaffolds.prompts import get_prompt

LIMIT_PROMPT = "limit/tool_calls@1"
LARGE_CONTENT_CHARS = 50_000
"""Tool outputs longer than this are tokenised in a worker thread."""


class ToolHub:
    """The tools of one episode. `ledger` must be set before nested calls can run."""

    def __init__(self, env: Any, env_tools: Sequence[Mapping[str, Any]], terminal_tool: str,
                 config: AgentConfig, episode_dir: Path, world_dir: str | None) -> None:
        strategies = config.context.strategies
        self.env = env
        self.terminal_tool = terminal_tool
        self.limits = config.limits
        self.ledger: Ledger | None = None
        self.executed = 0
        """Executed calls counted against `max_tool_calls` (the terminal tool is exempt)."""
        self.nested_skipped = 0
        """Nested calls refused because `max_tool_calls` was reached."""
        env_names = [t["name"] for t in env_tools]
        harness: list[HarnessTool] = []
        if strategies.memory is not None:
            harness += memory_tools(episode_dir / MEMORY_DIR, strategies.memory.naming)
        ptc = strategies.ptc
        self.count_nested = ptc is None or ptc.nested_count_toward_limit
        if ptc is not None:
            allowed = _allowed(ptc.allowed_tools, env_names, terminal_tool,
                               [t.name for t in harness])
            schemas = {t["name"]: t for t in env_tools} | {t.name: t.schema for t in harness}
            harness.append(code_execution_tool(ptc, self, [schemas[n] for n in allowed],
                                               world_dir))
        self.harness = {t.name: t for t in harness}
        clash = sorted(set(self.harness) & set(env_names))
        if clash:
            raise EnvSetupError(f"harness tool name(s) {', '.join(clash)} collide with tools "
                                "of the environment")
        direct = list(env_tools) if ptc is None or ptc.direct_tools == "all" \
            else [t for t in env_tools if t["name"] == terminal_tool]
        self.tools: list[dict[str, Any]] = [*(dict(t) for t in direct),
                                            *(t.schema for t in harness)]
        self.names = frozenset(t["name"] for t in self.tools)
        self.changed = bool(harness) or len(direct) != len(env_tools)
        """Whether the model's tool list differs from the env's."""

    async def call(self, call_id: str, name: str, arguments: Mapping[str, Any], turn: int,
                   parent: str | None = None) -> ToolOutcome:
        """Run one call (no accounting); env calls get `tool_timeout_s`."""
        tool = self.harness.get(name)
        if tool is not None:
            return await tool.handler(call_id, arguments, turn)
        action: dict[str, Any] = {"id": call_id, "name": name, "arguments": dict(arguments)}
        if parent is not None:
            action["parent_id"] = parent
        timeout = asyncio.timeout(self.limits.tool_timeout_s)
        try:
            async with timeout:
                obs, reward, terminated, _truncated, info = await self.env.astep(action)
        except TimeoutError as exc:
            if timeout.expired():
                raise ToolInfraError(f"tool {name!r} did not answer within "
                                     f"{self.limits.tool_timeout_s} s") from exc
            raise
        return ToolOutcome(obs if isinstance(obs, str) else str(obs),
                           is_error=bool(info.get("is_error")),
                           server=info.get("server"), terminated=bool(terminated),
                           reward=float(reward),
                           verdict=info.get("verdict") if terminated else None)

    async def nested(self, parent: str, call_id: str, name: str, arguments: Mapping[str, Any],
                     turn: int) -> ToolOutcome:
        """A call made by code: counted, executed, recorded with its parent."""
        if self.count_nested and self.executed >= self.limits.max_tool_calls:
            self.nested_skipped += 1
            text = get_prompt(LIMIT_PROMPT).render(limit=self.limits.max_tool_calls)
            self.record_refused(parent, call_id, name, arguments, turn, "skipped")
            return ToolOutcome(text, is_error=True)
        if self.count_nested:
            self.executed += 1
        started = time.monotonic()
        outcome = await self.call(call_id, name, arguments, turn, parent)
        latency = time.monotonic() - started
        message = tool_message(call_id, name, outcome.text, is_error=outcome.is_error,
                               parent_call_id=parent)
        tokens = await count_tokens(message)
        ledger = self._ledger()
        ledger.record("tool_exec", {
            "turn": turn, "call_id": call_id, "name": name, "status": "executed",
            "is_error": outcome.is_error, "latency_s": latency, "output_tokens": tokens,
            "server": outcome.server, "parent_call_id": parent, "arguments": dict(arguments),
        })
        ledger.append_message(message, turn=turn, tokens=tokens)
        return outcome

    def record_refused(self, parent: str, call_id: str, name: str,
                       arguments: Mapping[str, Any], turn: int, status: str) -> None:
        """A nested call the harness answered without running it."""
        self._ledger().record("tool_exec", {
            "turn": turn, "call_id": call_id, "name": name, "status": status,
            "is_error": True, "latency_s": 0.0, "parent_call_id": parent,
            "arguments": dict(arguments)})

    def _ledger(self) -> Ledger:
        if self.ledger is None:
            raise RuntimeError("the tool hub has no ledger yet")
        return self.ledger


def _allowed(configured: Sequence[str] | None, env_names: Sequence[str], terminal_tool: str,
             harness_names: Sequence[str]) -> list[str]:
    """The tools code may call: configured, else every env tool but the terminal one, plus the
    memory tools."""
    callable_ = [n for n in (*env_names, *harness_names) if n != terminal_tool]
    if configured is None:
        return callable_
    wrong = sorted(set(configured) - set(callable_))
    if wrong:
        raise EnvSetupError(f"ptc.allowed_tools names {', '.join(wrong)}, which code cannot "
                            f"call (unknown, the terminal tool or code execution itself)")
    return [n for n in callable_ if n in configured]


async def count_tokens(message: Any) -> int:
    """A message's token count; long contents are counted in a worker thread."""
    if len(message.content or "") > LARGE_CONTENT_CHARS:
        return await asyncio.to_thread(message_tokens, message)
    return message_tokens(message)
