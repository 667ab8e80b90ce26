"""The gymnasium environment every task shares: reset builds a world of the requested length and
serves it; a step is one tool call; the terminal tool grades the world."""

from __future__ import annotations

import asyncio
import copy
import gc
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
from gymnasium import spaces
from sqlalchemy.orm import configure_mappers

from checkers.verdict import Verdict
from envs.core.api import FINAL
from envs.core.errors import EnvSetupError
from envs.core.registry import Task, get_task
from envs.core.reuse import obtain_world
from loca.core.lengths import parse_length
from loca.core.tokens import remembered_schema_tokens
from loca.core.world import World
from mock_servers import load_toolbox
from mock_servers.gateway import Gateway, Naming, ToolFilter, ToolSpec, exposed_name
from mock_servers.listing import listings

_WARM: set[str] = set()  # tasks whose one-time work this process has done


class AnyText(spaces.Text):
    """Observations are tool outputs and instructions: any string."""

    def __init__(self) -> None:
        super().__init__(max_length=10_000_000)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str)


class ToolCallSpace(gym.Space[dict[str, Any]]):
    """Actions are tool calls `{"id", "name", "arguments"}`. Membership checks the name against the
    exposed tools; sampling draws a read-only tool that needs no arguments."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(shape=None, dtype=None, seed=seed)
        self.specs: list[ToolSpec] = []

    def bind(self, specs: list[ToolSpec]) -> None:
        self.specs = specs

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> dict[str, Any]:
        choices = [s for s in self.specs if s.read_only and not s.parameters.get("required")]
        if not choices:
            raise RuntimeError("no tools to sample from: call reset first")
        spec = choices[int(self.np_random.integers(len(choices)))]
        return {"id": "sampled", "name": spec.name, "arguments": {}}

    def contains(self, x: Any) -> bool:
        return (isinstance(x, dict) and isinstance(x.get("name"), str)
                and (x["name"] == FINAL or any(s.name == x["name"] for s in self.specs)))


def warm_up(task: Task) -> float:
    """The one-time work of a process for `task`: the ORM's mapper configuration and the
    listings of the task's tools. The first reset does it; a worker may call it when it starts
    instead. Seconds it took (0.0 once done). The tokenizer is loaded when a reset first
    measures a world (a reset from the world cache needs none).

    What is loaded by then (modules, schemas, mappers: some 190,000 objects) lives as long as
    the process, so it is frozen out of the garbage collector's reach: a full collection that
    walked it took about 0.12 s, and fell on whichever reset or tool call came next."""
    if task.name in _WARM:
        return 0.0
    started = time.perf_counter()
    toolboxes = [load_toolbox(server) for server in task.spec.servers.values()]
    task.generator  # noqa: B018  (its models join the ORM registry before it is configured)
    configure_mappers()
    for toolbox in toolboxes:
        listings(toolbox)
    gc.freeze()
    _WARM.add(task.name)
    return time.perf_counter() - started


class LocaEnv(gym.Env[str, dict[str, Any]]):
    """Any registered task (`task`, its name). Constructing is cheap; `reset` generates,
    measures and serves the world. `tool_filter`: `all` tools of the task's servers, the `core`
    (P1) ones, or the `task`'s own allow-list.

    Options of `reset`: `length` ("32k" or a token count; default the constructor's),
    `episode_dir` (where the world lives; default a temporary directory removed on close),
    `params` (explicit scale parameters instead of the calibrated ones)."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, task: str, length: str | int = "8k", naming: Naming = "prefixed",
                 tool_filter: ToolFilter = "all", render_mode: None = None) -> None:
        self.task = get_task(task)
        self.length = parse_length(length)
        self.naming: Naming = naming
        self.tool_filter: ToolFilter = tool_filter
        self.observation_space = AnyText()
        self.action_space = ToolCallSpace()
        self.render_mode = render_mode
        self.world: World | None = None
        self.gateway: Gateway | None = None
        self._tmp: Path | None = None
        self._done = False
        self._loop: asyncio.AbstractEventLoop | None = None

    # ------------------------------------------------------------------ async API
    async def areset(self, *, seed: int | None = None,
                     options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(0, 2**31 - 1))
        options = dict(options or {})
        target = parse_length(options.pop("length", self.length))
        episode_dir = options.pop("episode_dir", None)
        explicit = options.pop("params", None)
        if options:
            raise ValueError(f"unknown reset options: {sorted(options)}")
        await self.aclose()
        started = time.perf_counter()
        try:
            warm_up_s = warm_up(self.task)
            root = Path(episode_dir) if episode_dir else self._temp_root()
            world, source = await obtain_world(self.task, root, target, seed, explicit)
            gateway = Gateway(world, self.task.spec.servers, self.naming, self.tool_filter,
                              self.task.spec.tools)
        except Exception as exc:
            raise EnvSetupError(f"{self.task.name}: reset failed: {exc}") from exc
        self.world, self.gateway, self._done = world, gateway, False
        self.action_space.bind(gateway.specs)  # type: ignore[attr-defined]
        terminal = exposed_name(*self.task.spec.terminal_tool, self.naming)
        if gateway.spec(terminal) is None:
            raise EnvSetupError(f"{self.task.name}: terminal tool {terminal} is not exposed")
        tools = [{"name": s.name, "description": s.description,
                  "parameters": copy.deepcopy(s.parameters)} for s in gateway.specs]
        info = {
            "task": self.task.name,
            "task_version": self.task.spec.version,
            "seed": seed,
            "params": dict(world.meta.params),
            "target_tokens": target,
            "env_description_tokens": world.meta.env_description_tokens,
            "builds": world.meta.builds,
            "world_cache": source,
            "world_hash": world.meta.content_hash,
            "world_dir": str(world.root),
            "terminal_tool": terminal,
            "tools": tools,
            "tool_count": len(tools),
            "tools_tokens": remembered_schema_tokens(tools),
            "read_only": {s.name: s.read_only for s in gateway.specs},
            "name_map": {s.name: [s.server, s.tool] for s in gateway.specs},
            "timings": {"reset_s": time.perf_counter() - started, "warm_up_s": warm_up_s},
        }
        return self.task.spec.instruction(world), info

    async def astep(self, action: dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.gateway is None or self.world is None:
            raise RuntimeError("call reset before step")
        if self._done:
            raise RuntimeError("the episode has terminated: call reset")
        name = action.get("name")
        call_id = action.get("id")
        if name == FINAL:
            return self._finish("", call_id)
        arguments = action.get("arguments", {})
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                text = f"Error [INVALID_ARGUMENT]: {name}: arguments are not valid JSON ({exc.msg})"
                return text, 0.0, False, False, {"call_id": call_id, "is_error": True}
        outcome = await self.gateway.call(str(name), arguments)
        info = {"call_id": call_id, "is_error": outcome.is_error,
                "server": self.gateway.routes.get(str(name), (None, None))[0]}
        if name == exposed_name(*self.task.spec.terminal_tool, self.naming) and not outcome.is_error:
            return self._finish(outcome.text, call_id, info)
        return outcome.text, 0.0, False, False, info

    def _finish(self, text: str, call_id: Any,
                extra: dict[str, Any] | None = None) -> tuple[str, float, bool, bool, dict[str, Any]]:
        verdict = self.evaluate()
        self._done = True
        info = {"call_id": call_id, "is_error": False, **(extra or {}), "verdict": verdict.to_dict()}
        return text, 1.0 if verdict.passed else 0.0, True, False, info

    def evaluate(self) -> Verdict:
        """Grade the world as it stands, without ending the episode."""
        if self.world is None:
            raise RuntimeError("call reset before evaluate")
        return self.task.check(self.world)

    async def aclose(self) -> None:
        if self.gateway is not None:
            self.gateway.close()
            self.gateway = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def _temp_root(self) -> Path:
        self._tmp = Path(tempfile.mkdtemp(prefix=f"loca-{self.task.name}-"))
        return self._tmp / "world"

    # ------------------------------------------------------------------ sync API
    def _run(self, coro: Any) -> Any:
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coro)

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        return self._run(self.areset(seed=seed, options=options))

    def step(self, action: dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        return self._run(self.astep(action))

    def close(self) -> None:
        self._run(self.aclose())
        if self._loop is not None and not self._loop.is_closed():
            self._loop.close()
        self._loop = None
        super().close()
