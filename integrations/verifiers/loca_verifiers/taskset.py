"""LOCA tasks as a verifiers taskset: tasks × lengths × seeds (or, for training, an endless
stream of fresh seeds), each rollout a session of a running `loca env-server` whose tools the
model calls and whose checker gives the reward."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import verifiers.v1 as vf
from pydantic import Field

from loca_verifiers.client import EnvServer
from loca_verifiers.toolset import LocaState, LocaToolset

PENDING = "The task's instruction is given when its world is made."
"""The prompt a task carries until its session opens and the world's instruction replaces it."""


class LocaTaskConfig(vf.TaskConfig):
    server_url: str = "http://127.0.0.1:8770"
    """The environment server (`loca env-server`); its token, if any, in $LOCA_ENV_SERVER_TOKEN."""
    timeout_s: float = Field(600.0, gt=0)
    """Per request: opening a session builds its world when the world cache lacks it."""
    tool_filter: str = "all"
    """all, core or task (the task's own allow-list)."""
    naming: str = "prefixed"
    """How tools are named: prefixed (`<server>_<tool>`), dedup or bare."""


class LocaTasksetConfig(vf.TasksetConfig):
    tasks: list[str] = Field(default_factory=list)
    """Task names; every task the server has when empty."""
    lengths: list[str] = Field(default_factory=lambda: ["8k"])
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2, 3, 4])
    endless: bool = False
    """An endless stream for training instead: every task and length on seed `first_fresh_seed`,
    then the next seed, and so on (never a seed of the evaluation set unless it starts below it)."""
    first_fresh_seed: int = Field(1_000_000, ge=0)
    tools: vf.SharedToolsetConfig = vf.SharedToolsetConfig()
    task: LocaTaskConfig = LocaTaskConfig()


class LocaData(vf.TaskData):
    task: str
    length: str
    seed: int


class LocaTask(vf.Task[LocaData, LocaState, LocaTaskConfig]):
    """One episode: setup opens the session (its instruction becomes the prompt); the reward is
    the server's grade, 1.0 only when every named check passes; the session is then closed."""

    @property
    def key(self) -> str:
        return f"{self.data.task}@{self.data.length}#{self.data.seed}"

    async def setup(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        server = EnvServer(self.config.server_url, self.config.timeout_s)
        opened = await server.open(self.data.task, self.data.length, self.data.seed,
                                   tool_filter=self.config.tool_filter, naming=self.config.naming)
        state = trace.state
        state.server_url, state.timeout_s = server.url, self.config.timeout_s
        state.session_id, state.tools = opened["session_id"], opened["tools"]
        trace.info["loca_world"] = opened["world"]
        trace.task.data = trace.task.data.model_copy(update={"prompt": opened["instruction"]})

    @vf.reward(weight=1.0)
    async def loca(self, trace: vf.Trace) -> float:
        state = trace.state
        if not state.session_id:
            return 0.0
        server = EnvServer(state.server_url, state.timeout_s)
        try:
            grade = await server.grade(state.session_id)
        finally:
            await server.close(state.session_id)
        trace.info["loca_checks"] = grade["checks"]
        for check in grade["checks"]:
            trace.record_metric(f"check_{check['name']}", 1.0 if check["passed"] else 0.0)
        return float(grade["reward"])


class LocaTaskset(vf.Taskset[LocaTask, LocaTasksetConfig]):
    def __init__(self, config: LocaTasksetConfig) -> None:
        super().__init__(config)
        self.INFINITE = config.endless

    @classmethod
    def toolsets(cls, config: LocaTasksetConfig) -> list[vf.Toolset]:
        return [LocaToolset(config.tools)]

    def load(self) -> Iterator[LocaTask]:
        names = self.config.tasks or EnvServer(self.config.task.server_url).task_names()
        seeds = itertools.count(self.config.first_fresh_seed) if self.config.endless else self.config.seeds
        for seed in seeds:
            for task, length in itertools.product(names, self.config.lengths):
                data = LocaData(name=f"{task}@{length}#{seed}", task=task, length=length, seed=seed, prompt=PENDING)
                yield LocaTask(data, self.config.task)
