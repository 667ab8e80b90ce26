"""Every LOCA task as an inspect task: its samples are (length, seed) worlds, each reset afresh
by the setup step; the solver is inspect's ReAct agent over the task's tools (or the gym's own
loop, `solver="loca"`); the scorer is the task's checker."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import Solver, TaskState

from envs.core.registry import get_task
from loca.core.lengths import label, parse_lengths, parse_seeds
from loca.integrations.inspect.episodes import SampleWorld, close_episode
from loca.integrations.inspect.scorer import loca_checker
from loca.integrations.inspect.solvers import loca_loop, loca_react, loca_world
from mock_servers.gateway import ToolFilter

SolverName = Literal["react", "loca"]
SOLVERS: tuple[SolverName, ...] = ("react", "loca")
TOOL_FILTERS: tuple[ToolFilter, ...] = ("all", "core", "task")


def dataset(task: str, lengths: list[int], seeds: list[int]) -> MemoryDataset:
    """One sample per (length, seed), with id `<length>-s<seed>`; the input is the task's summary
    until the setup step replaces it with the world's instruction."""
    spec = get_task(task).spec
    return MemoryDataset(
        [Sample(id=f"{label(length)}-s{seed}", input=spec.summary,
                metadata=SampleWorld(task=task, length=length, seed=seed).model_dump())
         for length in lengths for seed in seeds],
        name=task)


def loca_task(task: str, length: str | int = "8k", seeds: str | int = "0", solver: str = "react",
              strategy: str = "react", strategy_config: str | None = None, tool_filter: str = "task",
              max_turns: int = 300, max_tool_calls: int = 500) -> Task:
    """The inspect task of LOCA task `task`. `length`: targets such as `32k` or `8k,32k`;
    `seeds`: `0-4` or `1,3,7`; `solver`: `react` (inspect's agent) or `loca` (the gym's loop, with
    `strategy` / `strategy_config` as `loca run` takes them and `max_tool_calls`); `tool_filter`:
    `task` (the task's allow-list, as `loca run --tool-filter task`), `core` or `all`;
    `max_turns`: model turns per sample."""
    spec = get_task(task).spec
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; use one of {', '.join(SOLVERS)}")
    if tool_filter not in TOOL_FILTERS:
        raise ValueError(f"unknown tool_filter {tool_filter!r}; use one of {', '.join(TOOL_FILTERS)}")
    if solver == "react" and (strategy != "react" or strategy_config):
        raise ValueError("strategy and strategy_config are settings of the gym's loop: add solver=loca")
    agent: Solver = (loca_react() if solver == "react"
                     else loca_loop(strategy, strategy_config, max_turns, max_tool_calls))
    return Task(
        dataset=dataset(task, parse_lengths(str(length)), parse_seeds(str(seeds))),
        setup=loca_world(tool_filter),
        solver=agent, scorer=loca_checker(), cleanup=_cleanup,
        turn_limit=max_turns if solver == "react" else None,
        version=spec.version, metadata={"loca_task": task, "solver": solver, "strategy": strategy})


async def _cleanup(state: TaskState) -> None:
    await close_episode(state.uuid)


def task_factory(task: str) -> Callable[..., Task]:
    """`loca_task` for one task, with the parameters `inspect eval -T` sets."""
    summary = get_task(task).spec.summary

    def factory(length: str | int = "8k", seeds: str | int = "0", solver: str = "react",
                strategy: str = "react", strategy_config: str | None = None, tool_filter: str = "task",
                max_turns: int = 300, max_tool_calls: int = 500) -> Task:
        return loca_task(task, length, seeds, solver, strategy, strategy_config, tool_filter, max_turns,
                         max_tool_calls)

    factory.__name__ = factory.__qualname__ = task
    factory.__doc__ = f"LOCA {task}: {summary}."
    return factory
