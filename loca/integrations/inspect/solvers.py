"""Solvers of a LOCA sample. `loca_world` (the task's setup step) resets the sample's world and
puts its instruction and tools in the state; `loca_react` runs inspect's ReAct agent over the
tools, the task's completion tool as its submit tool; `loca_loop` runs the gym's own agent loop
with its context strategies, its model calls sent through inspect's provider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai.agent import AgentPrompt, AgentSubmit, as_solver, react
from inspect_ai.model import ChatMessageUser, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from checkers.verdict import Verdict
from loca.integrations.inspect.client import InspectClient, to_inspect
from loca.integrations.inspect.episodes import LiveEpisode, Outcome, SampleWorld, live_episode, open_episode
from loca.integrations.inspect.tools import tool_defs
from mock_servers.gateway import ToolFilter
from scaffolds.clients import Sampling
from scaffolds.config import AgentConfig, Limits
from scaffolds.context import choose, load_file
from scaffolds.ledger import read_trajectory
from scaffolds.loop import NUDGE_PROMPT, AgentLoop
from scaffolds.prompts import get_prompt
from scaffolds.result import EpisodeResult

SYSTEM_PROMPT = "system/react@1"


@solver
def loca_world(tool_filter: ToolFilter = "task") -> Solver:
    """Reset the sample's world (its metadata names task, length and seed): the instruction
    becomes the user message, the env's tools the state's tools."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        live = await open_episode(state.uuid, SampleWorld.model_validate(state.metadata), tool_filter)
        state.messages = [ChatMessageUser(content=live.instruction)]
        state.tools = tool_defs(live)
        state.metadata["world"] = {key: live.info[key] for key in (
            "env_description_tokens", "params", "world_hash", "world_cache", "tool_count", "tools_tokens")}
        return state

    return solve


@solver
def loca_react() -> Solver:
    """inspect's `react` agent over the sample's tools: the gym's system prompt, the task's
    completion tool as the submit tool (calling it grades the world), the gym's nudge when the
    model replies without a tool call."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        live = live_episode(state.uuid)
        tools = {tool.name: tool for tool in tool_defs(live)}
        terminal = tools.pop(live.terminal_tool)
        agent = react(
            prompt=AgentPrompt(instructions=get_prompt(SYSTEM_PROMPT).text, assistant_prompt=None),
            tools=list(tools.values()),
            submit=AgentSubmit(tool=terminal, keep_in_messages=True),
            on_continue=get_prompt(NUDGE_PROMPT).render(terminal_tool=live.terminal_tool))
        return await as_solver(agent)(state, generate)

    return solve


def agent_config(strategy: str = "react", strategy_config: str | None = None, max_turns: int = 300,
                 max_tool_calls: int = 500) -> AgentConfig:
    """The loop's settings as `loca run` makes them from `--strategy`, `--strategy-config`,
    `--max-turns` and `--max-tool-calls`."""
    choice = choose(strategy, load_file(Path(strategy_config)) if strategy_config else None)
    paper = dict(choice.agent or {})
    implied: dict[str, Any] = ({"system_prompt": paper.pop("system_prompt"), "sampling": Sampling(**paper)}
                               if paper else {})
    return AgentConfig(context=choice.context, limits=Limits(max_turns=max_turns, max_tool_calls=max_tool_calls),
                       **implied)


@solver
def loca_loop(strategy: str = "react", strategy_config: str | None = None, max_turns: int = 300,
              max_tool_calls: int = 500) -> Solver:
    """The gym's ReAct loop and context strategies (`strategy`: `react`, `compaction`,
    `clear_tool_results+compaction`, `paper+...`, as `loca run --strategy`), its model the
    sample's inspect model. Its conversation becomes the state's messages; its record, the
    sample's `loca` metadata."""
    config = agent_config(strategy, strategy_config, max_turns, max_tool_calls)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        live = live_episode(state.uuid)
        loop = AgentLoop(_PreparedEnv(live), InspectClient(get_model()), config)
        result = await loop.run(live.world.seed, {"length": live.world.length}, live.folder)
        live.outcome = _outcome(result)
        conversation = read_trajectory(Path(result.trajectory_path)).messages
        state.messages = [to_inspect(m) for m in conversation if m.parent_call_id is None]
        state.metadata["loca"] = {"terminal_state": result.terminal_state, "strategy": strategy,
                                  "metrics": result.metrics.model_dump(mode="json"),
                                  "error": result.error.message if result.error else None}
        return state

    return solve


def _outcome(result: EpisodeResult) -> Outcome:
    return Outcome(graded=result.graded, terminal_state=result.terminal_state,
                   verdict=Verdict.model_validate(result.verdict) if result.verdict else None,
                   diagnostic=Verdict.model_validate(result.diagnostic) if result.diagnostic else None)


class _PreparedEnv:
    """The sample's env as the agent loop drives it, already reset by the setup step: `areset`
    hands back that reset, and closing is left to the task's cleanup (the scorer reads the world
    after the loop)."""

    def __init__(self, live: LiveEpisode) -> None:
        self.live = live

    async def areset(self, *, seed: int | None = None,
                     options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        return self.live.instruction, self.live.info

    async def astep(self, action: dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        return await self.live.env.astep(action)

    def evaluate(self) -> Verdict:
        return self.live.env.evaluate()

    async def aclose(self) -> None:
        return None
