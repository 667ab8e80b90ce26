"""The validator's own rules: the oracle plays in the agent loop with its default settings, so an
oracle that needs more than the loop allows (turns, tool calls, a context that does not fit even
truncated) is a violation; so is a first request over the default input budget."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from envs.core.registry import Task
from envs.core.reuse import obtain_world
from loca import validate
from loca.core.world import World
from loca.validate import run_validation
from scaffolds.config import AgentConfig, Limits
from scaffolds.context import ContextConfig

pytestmark = pytest.mark.slow  # the validation matrix: every task's agents at several lengths and seeds


@pytest.mark.parametrize("limits,says", [(Limits(max_tool_calls=2), "max_tool_calls"),
                                         (Limits(max_turns=2), "max_turns")])
def test_an_oracle_over_the_loop_limits_is_a_violation(any_task: Task, limits: Limits, says: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validate, "LOOP", AgentConfig(limits=limits))
    outcomes = run_validation([any_task], [8000], [0])[any_task.name]
    oracle = next(o for o in outcomes if o.agent == validate.ORACLE)
    assert not oracle.ok and oracle.failed == (validate.OVER_LIMITS,)
    assert oracle.over_limits is not None and oracle.over_limits.startswith(says)
    assert all(o.ok for o in outcomes if o.agent != validate.ORACLE)  # the loop binds the oracle only


def test_within_the_default_limits_the_oracle_is_not_flagged(any_task: Task) -> None:
    outcomes = run_validation([any_task], [8000], [0])[any_task.name]
    oracle = next(o for o in outcomes if o.agent == validate.ORACLE)
    assert oracle.ok and oracle.over_limits is None and not oracle.failed


def test_a_context_the_oracle_cannot_fit_even_truncated_is_a_violation(
        any_task: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A window that holds the first request and little more: the oracle's turns overflow it
    however much hard truncation drops (the case of a turn of hundreds of calls at 256K)."""
    world = asyncio.run(_world(any_task, tmp_path))
    first = validate.initial_request_tokens(any_task, world)
    window = next(w for w in range(first, 4 * first + 100_000, 256)
                  if ContextConfig(max_context_tokens=w).budget(
                      AgentConfig().sampling.max_output_tokens).input_budget >= first + 20)
    monkeypatch.setattr(validate, "LOOP", AgentConfig(context=ContextConfig(max_context_tokens=window)))
    outcomes = run_validation([any_task], [8000], [0])[any_task.name]
    oracle = next(o for o in outcomes if o.agent == validate.ORACLE)
    assert not oracle.ok and validate.OVER_LIMITS in oracle.failed
    assert oracle.over_limits is not None and oracle.over_limits.startswith("context_overflow")


async def _world(task: Task, root: Path) -> World:
    world, _ = await obtain_world(task, root / "w", 8000, 0)
    return world


def test_a_first_request_over_the_default_budget_is_a_violation(any_task: Task,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    fits = next(o for o in run_validation([any_task], [8000], [0])[any_task.name] if o.agent == validate.INITIAL)
    assert fits.ok and fits.over_limits is None
    monkeypatch.setattr(validate, "BUDGET", 1000)
    outcomes = run_validation([any_task], [8000], [0])[any_task.name]
    first = next(o for o in outcomes if o.agent == validate.INITIAL)
    assert not first.ok and first.failed == (validate.INITIAL,)
    assert first.over_limits is not None and "over the default input budget of 1000" in first.over_limits
    assert all(o.ok for o in outcomes if o.agent != validate.INITIAL)
