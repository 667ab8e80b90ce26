"""Checker validation: on every (length, seed) the oracle must pass, and the no-op agent and every
failure-mode mutant must fail the check it targets. Each world is generated and measured once;
scripts run straight against the servers (no agent loop), each on its own copy of it.

The oracle must also solve every world within the agent loop's default limits (turns, tool calls,
and no turn's calls too large for the input budget the first request leaves), or it proves nothing
about what an agent can do, and the first request (system prompt, tools, task message) must fit
the default input budget (spec §3.7). Before any world is built, the declarations are checked:
every check of the task's checker has a mutant aimed at it (the no-op agent counts), and every
mutant aims at a declared check."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import shutil
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from checkers.verdict import Verdict
from envs.core.build import dispatcher, drive, tool_list
from envs.core.calibration import build_to_target
from envs.core.registry import Task
from loca.core.script import Script, ToolRequest, Tools
from loca.core.tokens import count_tokens, schema_tokens
from loca.core.world import World
from mock_servers.gateway import Gateway
from scaffolds.config import AgentConfig, Limits
from scaffolds.oracles import agents
from scaffolds.prompts import get_prompt


@dataclass(frozen=True)
class Outcome:
    agent: str
    length: int
    seed: int
    measured: int  # the world's environment description length
    failed: tuple[str, ...]
    expected: str | None  # the check the agent must fail; None for the oracle
    errored: bool = False  # a check crashed (a checker bug, whatever the agent did)
    over_limits: str | None = None  # the oracle needs more than the agent loop's limits allow

    @property
    def ok(self) -> bool:
        if self.expected is None:
            return not self.failed
        return self.expected in self.failed


VALIDATOR = "validator"  # the read-only recomputation of ground truth, listed as an agent
INITIAL = "initial_request"  # the first request's size, listed as an agent: it must fit BUDGET
OVER_LIMITS = "within_limits"  # listed as failed when the oracle needs more than LIMITS allow
LIMITS = Limits()  # the agent loop's defaults: an oracle must solve every world within them
_DEFAULTS = AgentConfig()
BUDGET = _DEFAULTS.context.budget(_DEFAULTS.sampling.max_output_tokens).input_budget
"""B of the default context settings (spec §3.7): the first request must fit before any turn."""


class DeclarationError(ValueError):
    """A task's scripted agents do not cover its checks."""


def check_declarations(task: Task) -> None:
    """Every declared check has an agent that must fail it; every such target is a check."""
    declared = set(task.checks.names)
    scripted = agents(task.name)
    targets = {must for a in scripted.names() if (must := scripted.must_fail(a)) is not None}
    uncovered, unknown = sorted(declared - targets), sorted(targets - declared)
    if uncovered or unknown:
        raise DeclarationError(f"{task.name}: checks without a mutant aimed at them {uncovered}; "
                               f"mutants aimed at undeclared checks {unknown}")


async def play_script(task: Task, world: World, agent: str) -> Verdict:
    """Run one scripted agent on `world`; the verdict on the world it leaves."""
    verdict, _ = await _play(task, world, agent)
    return verdict


async def _play(task: Task, world: World, agent: str) -> tuple[Verdict, Effort]:
    """The verdict, and what the play would cost an agent loop in turns and tool calls."""
    gateway = Gateway(world, task.spec.servers)
    effort = Effort()
    try:
        script = agents(task.name).script(agent)(task.spec.instruction(world), tool_list(gateway))
        replies, _ = await drive(effort.counted(script), dispatcher(gateway))
        effort.calls = len(replies) - 1  # the terminal call (every script's last) is exempt
    finally:
        gateway.close()
    return task.check(world), effort


@dataclass
class Effort:
    """Turns and tool calls of a scripted play, as the agent loop counts them against its limits:
    every step is a turn, every call but the terminal one counts. `largest` is the text of the
    longest turn's calls (their arguments), the model message the loop can never drop."""

    turns: int = 0
    calls: int = 0
    largest: str = ""

    def counted(self, script: Script) -> Script:
        try:
            step = next(script)
            while True:
                self.turns += 1
                requests = step if isinstance(step, list) else [step]
                text = "".join(r.arguments if isinstance(r.arguments, str) else json.dumps(r.arguments)
                               for r in requests if isinstance(r, ToolRequest))
                if len(text) > len(self.largest):
                    self.largest = text
                step = script.send((yield step))
        except StopIteration as stop:
            return stop.value

    def over(self, limits: Limits, room: int | None) -> str | None:
        """What exceeds the agent loop's default limits, if anything; `room`: the input budget
        left after the first request (None when the first request does not fit: the first
        request's own row reports that)."""
        if self.calls > limits.max_tool_calls:
            return f"{self.calls} tool calls, over the limit of {limits.max_tool_calls}"
        if self.turns > limits.max_turns:
            return f"{self.turns} turns, over the limit of {limits.max_turns}"
        if room is not None and len(self.largest) > room and (size := count_tokens(self.largest)) > room:
            return f"a turn of {size} tokens of tool calls, over the {room} the input budget leaves"
        return None


async def recomputes_truth(task: Task, world: World) -> bool:
    """The tasks.md §0 validator: the oracle's `derive`, given read-only tools (every write
    tool hidden), recomputes exactly the generator's ground-truth answer."""
    gateway = Gateway(world, task.spec.servers, read_only=True)
    try:
        scripted = agents(task.name)
        script = scripted.derive(task.spec.instruction(world), Tools(tool_list(gateway)), scripted.oracle)
        _, answer = await drive(script, dispatcher(gateway, errors_raise=True))
    finally:
        gateway.close()
    return bool(answer == world.read_truth()["answer"])


def initial_request_tokens(task: Task, world: World) -> int:
    """What the first request carries: the default system prompt, every tool's schema (the
    default naming) and the task message."""
    gateway = Gateway(world, task.spec.servers)
    try:
        tools = [{"name": s.name, "description": s.description, "parameters": s.parameters}
                 for s in gateway.specs]
    finally:
        gateway.close()
    return (schema_tokens(tools) + count_tokens(get_prompt(_DEFAULTS.system_prompt).text)
            + count_tokens(task.spec.instruction(world)))


def _initial_outcome(length: int, seed: int, measured: int, size: int) -> Outcome:
    over = None if size <= BUDGET else (f"{size} tokens before the first turn, over the default "
                                        f"input budget of {BUDGET}")
    return Outcome(INITIAL, length, seed, measured, (INITIAL,) if over else (), None,
                   over_limits=over)


async def validate_world(task: Task, length: int, seed: int, tmp: Path) -> list[Outcome]:
    """The rows of one (length, seed): the ground truth recomputed, the first request's size,
    then every scripted agent on its own copy of the world (built under `tmp`)."""
    scripted = agents(task.name)
    base = tmp / "base"
    world = await build_to_target(task, base, length, seed)
    measured = world.meta.env_description_tokens
    assert measured is not None
    same = await recomputes_truth(task, _fresh_copy(base, tmp / "play"))
    first = initial_request_tokens(task, world)
    outcomes = [Outcome(VALIDATOR, length, seed, measured, () if same else ("ground_truth",), None),
                _initial_outcome(length, seed, measured, first)]
    room = BUDGET - first if first <= BUDGET else None
    for agent in scripted.names():
        verdict, effort = await _play(task, _fresh_copy(base, tmp / "play"), agent)
        over = effort.over(LIMITS, room) if scripted.must_fail(agent) is None else None
        outcomes.append(Outcome(agent, length, seed, measured,
                                (*verdict.failed_names(), *([OVER_LIMITS] if over else [])),
                                scripted.must_fail(agent), verdict.errored, over))
    return outcomes


def _world_rows(task_name: str, length: int, seed: int) -> list[Outcome]:
    """One world's rows in a fresh temporary folder (the unit a worker process runs)."""
    from envs.core.registry import get_task

    with tempfile.TemporaryDirectory(prefix="loca-validate-") as tmp:
        return asyncio.run(validate_world(get_task(task_name), length, seed, Path(tmp)))


def _fresh_copy(base: Path, copy: Path) -> World:
    """Each play (and the ground-truth recomputation) gets its own copy of the built world."""
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(base, copy)
    return World.load(copy)


def run_validation(tasks: list[Task], lengths: list[int], seeds: list[int], processes: int = 1,
                   progress: Callable[[Outcome], None] | None = None) -> dict[str, list[Outcome]]:
    """Every task's rows over `lengths` x `seeds`, by task, in plan order; worlds run in
    `processes` worker processes (1: in this one). The declarations of every task are checked
    before any world is built."""
    for task in tasks:
        check_declarations(task)
    plan = [(task.name, length, seed) for task in tasks for length in lengths for seed in seeds]
    found: dict[tuple[str, int, int], list[Outcome]] = {}
    if processes <= 1:
        results: Iterator[tuple[tuple[str, int, int], list[Outcome]]] = (
            (unit, _world_rows(*unit)) for unit in plan)
    else:
        results = _in_processes(plan, processes)
    for unit, rows in results:
        found[unit] = rows
        for row in rows:
            if progress:
                progress(row)
    return {task.name: [row for unit in plan if unit[0] == task.name for row in found[unit]] for task in tasks}


def _in_processes(plan: list[tuple[str, int, int]],
                  processes: int) -> Iterator[tuple[tuple[str, int, int], list[Outcome]]]:
    # Spawned, not forked: the caller may hold threads (a test process, a server) whose locks a
    # fork would copy held.
    with ProcessPoolExecutor(max_workers=processes, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_world_rows, *unit): unit for unit in plan}
        for future in as_completed(futures):
            yield futures[future], future.result()
