"""Checker validation: on every (length, seed) the oracle must pass, and the no-op agent and every
failure-mode mutant must fail the check it targets. Each world is generated and measured once;
the other scripts run straight against the servers (no agent loop), each on its own copy of it.
Then the generic agents (`loca.adversary`, made from the task's spec) play: every generic mutant
must fail (its named check, or any), every allowed variant must pass; one with nothing to change
in a world is reported there as not applicable.

The oracle plays in the agent loop itself, with the loop's default settings as `loca run` uses
them (turn and tool-call limits, the context budget with hard truncation): it must solve every
world there, or it proves nothing about what an agent can do. The first request (system prompt,
tools, task message) must fit the default input budget (see docs/concepts/context.md). Before any world is built,
the declarations are checked: every check of the task's checker has a mutant aimed at it (the
no-op agent counts), and every mutant aims at a declared check."""

from __future__ import annotations

import asyncio
import multiprocessing
import shutil
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from checkers.verdict import Verdict
from envs.core.build import dispatcher, drive, tool_list
from envs.core.registry import Task
from envs.core.reuse import obtain_world
from loca.adversary import ANY, Generic, NotApplicable, Rewrite, generic_agents
from loca.adversary.base import Once, rewritten, then_claim
from loca.core.script import Tools
from loca.core.tokens import count_tokens, schema_tokens
from loca.core.world import World
from mock_servers.gateway import Gateway
from scaffolds.config import AgentConfig
from scaffolds.oracles import agents
from scaffolds.prompts import get_prompt


@dataclass(frozen=True)
class Outcome:
    agent: str
    length: int
    seed: int
    measured: int  # the world's environment description length
    failed: tuple[str, ...]
    expected: str | None  # the check the agent must fail (`ANY`: some check); None: it must pass
    errored: bool = False  # a check crashed (a checker bug, whatever the agent did)
    over_limits: str | None = None  # the oracle needs more than the agent loop's limits allow
    not_applicable: str | None = None  # why a generic agent has nothing to change in this world

    @property
    def ok(self) -> bool:
        """As expected: no check crashed, and the agent passed or failed as it must."""
        if self.errored:
            return False
        if self.not_applicable is not None:
            return True
        if self.expected is None:
            return not self.failed
        if self.expected == ANY:
            return bool(self.failed)
        return self.expected in self.failed


ORACLE = "oracle"
VALIDATOR = "validator"  # the read-only recomputation of ground truth, listed as an agent
INITIAL = "initial_request"  # the first request's size, listed as an agent: it must fit BUDGET
OVER_LIMITS = "within_limits"  # listed as failed when the oracle does not finish in the agent loop
LOOP = AgentConfig()  # the agent loop's defaults, as `loca run` plays: the oracle must solve every world in them
BUDGET = LOOP.context.budget(LOOP.sampling.max_output_tokens).input_budget
"""B of the default context settings (see docs/concepts/context.md): the first request must fit before any turn."""


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


async def play_script(task: Task, world: World, agent: str, generic: Generic | None = None,
                      rewrite: Rewrite | None = None) -> Verdict:
    """Run one scripted agent straight against the servers of `world` (its tool calls passed
    through `rewrite`, and `generic.then`'s calls made before it claims done, when given); the
    verdict on the world it leaves."""
    gateway = Gateway(world, task.spec.servers)
    try:
        tools = tool_list(gateway)
        script = agents(task.name).script(agent)(task.spec.instruction(world), tools)
        if rewrite is not None:
            script = rewritten(script, rewrite)
        if generic is not None and generic.then is not None:
            named = Tools(tools)
            script = then_claim(script, generic.then(task, named), named(*task.spec.terminal_tool))
        await drive(script, dispatcher(gateway))
    finally:
        gateway.close()
    return task.check(world)


async def play_generic(task: Task, generic: Generic, base: Path, finished: Path, folder: Path) -> Verdict:
    """A generic agent on its own copy: the oracle's finished world altered (`after`), or the
    oracle played again on the built world with its calls rewritten (`during`). Raises
    `NotApplicable` when the world offers the agent nothing to change."""
    if generic.after is not None:
        world = _fresh_copy(finished, folder)
        generic.after(task, world)
        return task.check(world)
    world = _fresh_copy(base, folder)
    rewrite = generic.during(task, world) if generic.during is not None else None
    verdict = await play_script(task, world, ORACLE, generic, rewrite)
    if isinstance(rewrite, Once) and not rewrite.done:
        raise NotApplicable("the oracle made no call this agent rewrites")
    return verdict


async def generic_outcomes(task: Task, base: Path, tmp: Path, length: int, seed: int,
                           measured: int) -> list[Outcome]:
    """The rows of every generic agent of the task on the world built at `base`."""
    finished = tmp / "finished"
    await play_script(task, _fresh_copy(base, finished), ORACLE)
    rows = []
    for generic in generic_agents(task):
        try:
            verdict = await play_generic(task, generic, base, finished, tmp / "play")
        except NotApplicable as why:
            rows.append(Outcome(generic.agent, length, seed, measured, (), generic.must_fail, not_applicable=str(why)))
            continue
        rows.append(Outcome(generic.agent, length, seed, measured, tuple(verdict.failed_names()), generic.must_fail,
                            verdict.errored))
    return rows


async def play_in_loop(task: Task, length: int, seed: int, folder: Path) -> tuple[Verdict | None, str | None]:
    """The oracle in the agent loop with its default settings, on the world of (length, seed)
    (from the world cache when it holds it): the verdict when it claimed done, else why not."""
    from envs.core.env import LocaEnv
    from scaffolds.clients import ScriptedClient
    from scaffolds.loop import AgentLoop

    client = ScriptedClient.from_script(agents(task.name).script("oracle"))
    result = await AgentLoop(LocaEnv(task.name), client, LOOP, context_blind=True).run(
        seed, {"length": length, "episode_dir": str(folder / "world")}, folder)
    if result.terminal_state == "claimed_done" and result.verdict is not None:
        return Verdict.model_validate(result.verdict), None
    why = result.error.message if result.error else "no terminal call"
    return None, f"{result.terminal_state}: {why}"


async def recomputes_truth(task: Task, world: World) -> bool:
    """The validator (see docs/concepts/tasks.md): the oracle's `derive`, given read-only tools (every write
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
    return (schema_tokens(tools) + count_tokens(get_prompt(LOOP.system_prompt).text)
            + count_tokens(task.spec.instruction(world)))


def _initial_outcome(length: int, seed: int, measured: int, size: int) -> Outcome:
    over = None if size <= BUDGET else (f"{size} tokens before the first turn, over the default "
                                        f"input budget of {BUDGET}")
    return Outcome(INITIAL, length, seed, measured, (INITIAL,) if over else (), None,
                   over_limits=over)


async def validate_world(task: Task, length: int, seed: int, tmp: Path, generic: bool = True) -> list[Outcome]:
    """The rows of one (length, seed): the ground truth recomputed, the first request's size,
    the oracle in the agent loop, then every other scripted agent on its own copy of the world
    (built under `tmp`, and kept in the world cache for the loop's reset), then (with
    `generic`) every generic agent."""
    scripted = agents(task.name)
    base = tmp / "base"
    world, _ = await obtain_world(task, base, length, seed)
    measured = world.meta.env_description_tokens
    assert measured is not None
    same = await recomputes_truth(task, _fresh_copy(base, tmp / "play"))
    first = initial_request_tokens(task, world)
    verdict, over = await play_in_loop(task, length, seed, tmp / "loop")
    outcomes = [Outcome(VALIDATOR, length, seed, measured, () if same else ("ground_truth",), None),
                _initial_outcome(length, seed, measured, first),
                Outcome(ORACLE, length, seed, measured, (*(verdict.failed_names() if verdict else ()),
                                                         *([OVER_LIMITS] if over else [])),
                        None, bool(verdict and verdict.errored), over)]
    for agent in scripted.names():
        if agent != ORACLE:
            verdict = await play_script(task, _fresh_copy(base, tmp / "play"), agent)
            outcomes.append(Outcome(agent, length, seed, measured, tuple(verdict.failed_names()),
                                    scripted.must_fail(agent), verdict.errored))
    if generic:
        outcomes += await generic_outcomes(task, base, tmp, length, seed, measured)
    return outcomes


Unit = tuple[str, int, int, bool]  # task, length, seed, whether the generic agents play


def _world_rows(task_name: str, length: int, seed: int, generic: bool) -> list[Outcome]:
    """One world's rows in a fresh temporary folder (the unit a worker process runs)."""
    from envs.core.registry import get_task

    with tempfile.TemporaryDirectory(prefix="loca-validate-") as tmp:
        return asyncio.run(validate_world(get_task(task_name), length, seed, Path(tmp), generic))


def _fresh_copy(base: Path, copy: Path) -> World:
    """Each play (and the ground-truth recomputation) gets its own copy of the built world."""
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(base, copy)
    return World.load(copy)


def run_validation(tasks: list[Task], lengths: list[int], seeds: list[int], processes: int = 1,
                   progress: Callable[[Outcome], None] | None = None,
                   generic: Callable[[int, int], bool] = lambda length, seed: True) -> dict[str, list[Outcome]]:
    """Every task's rows over `lengths` x `seeds`, by task, in plan order; worlds run in
    `processes` worker processes (1: in this one); the generic agents play in the worlds of
    (length, seed) that `generic` picks (by default every one). The declarations of every task
    are checked before any world is built."""
    for task in tasks:
        check_declarations(task)
    plan = [(task.name, length, seed, generic(length, seed)) for task in tasks for length in lengths for seed in seeds]
    found: dict[Unit, list[Outcome]] = {}
    if processes <= 1:
        results: Iterator[tuple[Unit, list[Outcome]]] = ((unit, _world_rows(*unit)) for unit in plan)
    else:
        results = _in_processes(plan, processes)
    for unit, rows in results:
        found[unit] = rows
        for row in rows:
            if progress:
                progress(row)
    return {task.name: [row for unit in plan if unit[0] == task.name for row in found[unit]] for task in tasks}


def _in_processes(plan: list[Unit], processes: int) -> Iterator[tuple[Unit, list[Outcome]]]:
    # Spawned, not forked: the caller may hold threads (a test process, a server) whose locks a
    # fork would copy held.
    with ProcessPoolExecutor(max_workers=processes, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_world_rows, *unit): unit for unit in plan}
        for future in as_completed(futures):
            yield futures[future], future.result()
