"""Checker validation: on every (length, seed) the oracle must pass, and the no-op agent and every
failure-mode mutant must fail the check it targets. Each world is generated and measured once;
scripts run straight against the servers (no agent loop), each on its own copy of it."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from loca.calibration import params_for
from loca.core.world import World
from loca.measure import build_world, dispatcher, drive, tool_names
from loca.registry import TaskSpec
from mock_servers.gateway import Gateway
from scaffolds.oracles import expected_failures, scripts_for

ORACLE = "oracle"


@dataclass(frozen=True)
class Outcome:
    agent: str
    length: int
    seed: int
    measured: int  # the world's environment description length
    failed: tuple[str, ...]
    expected: str | None  # the check the agent must fail; None for the oracle

    @property
    def ok(self) -> bool:
        if self.expected is None:
            return not self.failed
        return self.expected in self.failed


async def play_script(task: TaskSpec, world: World, agent: str) -> tuple[str, ...]:
    """Run one scripted agent on `world`; the names of the checks it fails."""
    gateway = Gateway(world, task.servers)
    try:
        script = scripts_for(task.name)[agent](task.instruction(world), tool_names(gateway))
        await drive(script, dispatcher(gateway))
    finally:
        gateway.close()
    return tuple(task.check(world).failed_names())


async def validate(task: TaskSpec, lengths: list[int], seeds: list[int],
                   progress: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    agents = [ORACLE, *expected_failures(task.name)]
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="loca-validate-") as tmp:
        base = Path(tmp) / "base"
        for length in lengths:
            for seed in seeds:
                params = await params_for(task, length, seed)
                world = await build_world(task, base, params, seed, length)
                assert world.meta.env_description_tokens is not None
                for agent in agents:
                    copy = Path(tmp) / "play"
                    shutil.rmtree(copy, ignore_errors=True)
                    shutil.copytree(base, copy)
                    failed = await play_script(task, World.load(copy), agent)
                    outcome = Outcome(agent, length, seed, world.meta.env_description_tokens, failed,
                                      None if agent == ORACLE else expected_failures(task.name)[agent])
                    outcomes.append(outcome)
                    if progress:
                        progress(outcome)
    return outcomes


def run_validation(task: TaskSpec, lengths: list[int], seeds: list[int],
                   progress: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    return asyncio.run(validate(task, lengths, seeds, progress))
