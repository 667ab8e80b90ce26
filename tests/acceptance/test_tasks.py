"""Every registered task: light spec, gym registration, determinism across processes and time
zones, ground truth out of the tools' reach, an error-free read set, a shipped calibration table
within tolerance, and the checker validated over every tier and seed (oracle passes; ground truth
recomputed through read-only tools; no-op and every mutant fail their named check)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import pytest

from envs.core.calibration import load_table
from envs.core.registry import Task
from loca.adversary import PREFIX, generic_agents
from loca.core.lengths import LONG_TIERS, TIERS, parse_length
from loca.core.world import World, content_hash
from loca.validate import VALIDATOR, check_declarations, generic_outcomes, run_validation
from mock_servers.gateway import Gateway
from tests.acceptance.conftest import small_world, smallest_params

pytestmark = pytest.mark.slow  # the acceptance matrix: every registered task

HEAVY = ("fastmcp", "sqlmodel", "sqlalchemy", "openpyxl", "faker", "generators", "checkers",
         "mock_servers", "scaffolds")
MAX_TOOLS = 128  # OpenAI-style APIs refuse more tools than this


def test_spec_module_is_light(task: Task) -> None:
    """Listing tasks imports only their spec modules: no server, generator or checker code."""
    probe = (f"import sys, envs.{task.name}; "
             f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().replace("'", '"')) == []


def test_registered_as_a_gym_id_on_the_one_env_class(task: Task) -> None:
    import envs  # noqa: F401  (registers the ids)

    found = gym.spec(task.spec.env_id)
    assert found.entry_point == "envs.core.env:LocaEnv" and found.kwargs == {"task": task.name}


def test_declared_checks_and_mutants_cover_each_other(task: Task) -> None:
    check_declarations(task)


def test_allow_list_exists_and_fits_the_tool_limit(task: Task, tmp_path: Path) -> None:
    world = task.generate(tmp_path / "w", smallest_params(task), 0)
    gateway = Gateway(world, task.spec.servers, tool_filter="task", allow=task.spec.tools)
    try:
        assert {(s.server, s.tool) for s in gateway.specs} == set(task.spec.tools)
        assert len(gateway.specs) <= MAX_TOOLS
    finally:
        gateway.close()


_GENERATE = """
import sys
from pathlib import Path
from envs.core.registry import get_task
task = get_task(sys.argv[1])
world = task.generate(Path(sys.argv[2]), {sys.argv[3]: int(sys.argv[4])}, 3)
print(world.meta.content_hash)
"""


def _generate_elsewhere(task: Task, root: Path, tz: str) -> str:
    scale = task.spec.scale
    out = subprocess.run([sys.executable, "-c", _GENERATE, task.name, str(root), scale.primary, str(scale.lo)],
                         env={**os.environ, "TZ": tz}, check=True, capture_output=True, text=True)
    return out.stdout.strip()


def test_same_world_in_any_process_and_time_zone(task: Task, tmp_path: Path) -> None:
    east = _generate_elsewhere(task, tmp_path / "a", "Pacific/Kiritimati")
    west = _generate_elsewhere(task, tmp_path / "b", "America/Anchorage")
    here = task.generate(tmp_path / "c", smallest_params(task), 3)
    assert east == west == here.meta.content_hash == content_hash(World.load(tmp_path / "c"))
    for sub in ("workspace", "truth"):
        for path in sorted((tmp_path / "a" / sub).rglob("*")):
            if path.is_file():
                twin = tmp_path / "b" / sub / path.relative_to(tmp_path / "a" / sub)
                assert path.read_bytes() == twin.read_bytes(), path
    other = task.generate(tmp_path / "d", smallest_params(task), 4)
    assert other.meta.content_hash != here.meta.content_hash


def _attack_paths(world: World) -> list[str]:
    return ["../truth/truth.json", "/workspace/../truth/truth.json", str(world.truth_dir / "truth.json"),
            "../state.sqlite", str(world.state_path), "../truth", "truth/truth.json"]


def test_ground_truth_is_out_of_reach_of_every_tool(task: Task, tmp_path: Path) -> None:
    """Every tool with a string parameter, pointed at the truth files, never returns them."""
    world = small_world(task, tmp_path / "w")
    secret = json.dumps(world.read_truth()["answer"], ensure_ascii=False)[:60]
    gateway = Gateway(world, task.spec.servers)
    leaks = []
    try:
        for spec in gateway.specs:
            strings = [n for n, p in spec.parameters["properties"].items() if p.get("type") == "string"]
            for name in strings:
                for path in _attack_paths(world):
                    args = {n: path for n in strings} | {name: path}
                    text = asyncio.run(gateway.call(spec.name, args)).text
                    if '"answer"' in text or (len(secret) > 20 and secret in text) or "SQLite format" in text:
                        leaks.append((spec.name, name, path))
    finally:
        gateway.close()
    assert leaks == []


def test_shipped_calibration_table_covers_every_tier_within_5_percent(task: Task) -> None:
    table = load_table(task)
    assert table is not None, f"{task.name}: no calibration table for generator {task.generator_version}"
    for tier in TIERS + LONG_TIERS:
        target = parse_length(tier)
        for seed in range(5):
            entry = table.entries[str(target)][str(seed)]
            assert abs(entry.measured - target) <= 0.05 * target, (tier, seed, entry)


def _generic_sample(targets: list[int]) -> Callable[[int, int], bool]:
    """The worlds where the generic agents play in the default run: one seed per tier, a
    different one each tier (the full matrix is `loca validate all`)."""
    return lambda length, seed: seed == targets.index(length) % 5


def test_checker_validated_at_every_tier_and_seed(task: Task) -> None:
    """The acceptance matrix: 7 tiers x 5 seeds, each world measured within 5% of its target;
    ground truth recomputed through read-only tools; the oracle passes within the agent loop's
    limits; the no-op agent and every mutant fail the check they target; the generic agents
    (in one seed per tier) fail or pass as they must; no check ever errors."""
    targets = [parse_length(t) for t in TIERS]
    outcomes = run_validation([task], targets, list(range(5)), processes=2, generic=_generic_sample(targets))[task.name]
    bad = [o for o in outcomes if not o.ok]
    assert not bad, bad[:5]
    assert not [o for o in outcomes if o.errored]
    worlds = {(o.length, o.seed): o.measured for o in outcomes}
    assert len(worlds) == 35 and len([o for o in outcomes if o.agent == VALIDATOR]) == 35
    generic = {(o.length, o.seed) for o in outcomes if o.agent.startswith(PREFIX)}
    assert len(generic) == len(TIERS)
    off = {k: m for k, m in worlds.items() if abs(m - k[0]) > 0.05 * k[0]}
    assert not off, off


@pytest.mark.parametrize("seed", [0])
def test_read_set_runs_error_free_and_measures(task: Task, tmp_path: Path, seed: int) -> None:
    world = small_world(task, tmp_path / "w", seed)
    assert world.meta.env_description_tokens and world.meta.env_description_tokens > 100


def test_no_side_effects_is_the_generic_check(task: Task) -> None:
    """Every checker judges side effects with the one check made from the task's footprint."""
    checks = dict(task.checks.checks)
    assert "no_side_effects" in checks and checks["no_side_effects"].__module__ == "checkers.side_effects"


def test_generic_agents_on_the_smallest_world(task: Task, tmp_path: Path) -> None:
    """On the smallest world (seed 0): every generic mutant fails (its side effects
    `no_side_effects`), every allowed variant passes, none errors; the ones with nothing to
    change there say why."""
    world = small_world(task, tmp_path / "base")
    rows = asyncio.run(generic_outcomes(task, world.root, tmp_path, 0, 0, 0))
    assert [r.agent for r in rows] == [g.agent for g in generic_agents(task)]
    bad = [(r.agent, r.failed, r.expected) for r in rows if not r.ok or r.errored]
    assert not bad, bad
    assert any(r.not_applicable is None and r.expected is not None for r in rows)
