"""The validator's own rules: an oracle that needs more than the agent loop allows (turns, calls,
a turn too large for the input budget) is a violation."""

from __future__ import annotations

import pytest

from envs.core.registry import Task
from loca import validate
from loca.core.script import Script, ToolReply, ToolRequest
from loca.validate import run_validation
from scaffolds.config import Limits


@pytest.mark.parametrize("limits,says", [(Limits(max_tool_calls=2), "tool calls, over the limit of 2"),
                                         (Limits(max_turns=2), "turns, over the limit of 2")])
def test_an_oracle_over_the_loop_limits_is_a_violation(any_task: Task, limits: Limits, says: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validate, "LIMITS", limits)
    outcomes = run_validation([any_task], [8000], [0])[any_task.name]
    oracle = next(o for o in outcomes if o.agent == "oracle")
    assert not oracle.ok and validate.OVER_LIMITS in oracle.failed
    assert oracle.over_limits is not None and says in oracle.over_limits
    assert all(o.ok for o in outcomes if o.agent != "oracle")  # the limits bind the oracle only


def test_within_the_default_limits_the_oracle_is_not_flagged(any_task: Task) -> None:
    oracle = next(o for o in run_validation([any_task], [8000], [0])[any_task.name] if o.agent == "oracle")
    assert oracle.ok and oracle.over_limits is None


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


def test_a_turn_of_calls_too_large_for_the_budget_left_is_a_violation() -> None:
    def script() -> Script:
        yield ToolRequest("small", {"n": 1})
        yield [ToolRequest("write", {"data": "word " * 3000}), ToolRequest("write", {"data": "x"})]
        yield ToolRequest("claim_done", {})

    effort = validate.Effort()
    counted = effort.counted(script())
    step = next(counted)
    with pytest.raises(StopIteration):
        while True:
            step = counted.send([ToolReply("{}", False)] * (len(step) if isinstance(step, list) else 1))
    assert effort.turns == 3 and '"word word' in effort.largest
    assert effort.over(Limits(), room=10_000) is None
    assert effort.over(Limits(), room=None) is None  # a first request over the budget is its own row
    over = effort.over(Limits(), room=1_000)
    assert over is not None and "tokens of tool calls, over the 1000 the input budget leaves" in over
