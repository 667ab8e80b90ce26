"""Budget, triggers, hard truncation and predicted-token accounting at 1M and 2M windows."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from loca.core.tokens import count_tokens
from scaffolds.budget import Budget, default_margin
from scaffolds.clients import Sampling
from scaffolds.context import ContextConfig, ContextPipeline, Prepared, render
from scaffolds.ledger import Ledger
from scaffolds.messages import ToolCallPart, assistant_message, system_message, tool_message, user_message

OUTPUT_LIMIT = 32_768
RESULT_WORDS = 20_000
"""Each turn's tool result: about 20K tokens, so a 1.9M-token ledger is about 95 turns."""


def budget_of(window: int) -> Budget:
    return Budget(window, OUTPUT_LIMIT, default_margin(window))


def test_the_default_budget_terms_scale_with_a_million_token_window() -> None:
    assert budget_of(1_000_000).input_budget == 1_000_000 - 32_768 - 20_000 == 947_232
    assert budget_of(2_000_000).input_budget == 2_000_000 - 32_768 - 40_000 == 1_927_232
    for window in (1_000_000, 2_000_000):
        config = ContextConfig.model_validate({"max_context_tokens": window})
        config.check(OUTPUT_LIMIT)
        assert config.budget(OUTPUT_LIMIT) == budget_of(window)


@pytest.mark.parametrize(("trigger", "budget", "tokens"), [
    (0.009, 1_500_000, 13_500), (0.043, 1_200_000, 51_600), (0.5, 1_927_232, 963_616),
    (0.8, 1_927_232, 1_541_785), (0.999, 1_927_232, 1_925_304), (1_900_000, 1_927_232, 1_900_000)])
def test_a_trigger_is_exact_at_a_million_token_budget(trigger: float | int, budget: int,
                                                        tokens: int) -> None:
    b = Budget(budget, 0, 0)
    b.check_trigger("trigger", trigger)
    assert b.tokens(trigger) == tokens
    assert not b.over(tokens, trigger) and b.over(tokens + 1, trigger)


class Run:
    """A ledger on disk filled with `turns` turns of one large tool result each."""

    def __init__(self, folder: Path, tokens: int) -> None:
        self.ledger = Ledger(folder / "trajectory.jsonl", {"format": "test"})
        self.ledger.append_message(system_message("Act through tools."), turn=0)
        self.ledger.append_message(user_message(["Read every page."], "task"), turn=0)
        self.ledger.record("tools", {"tokens": 100})
        body = " ".join(f"w{i % 997}" for i in range(RESULT_WORDS // 2))
        self.turn = 0
        while self.ledger.message_tokens_total < tokens:
            self.turn += 1
            call = ToolCallPart.parse(f"c{self.turn}", "read", f'{{"page": {self.turn}}}')
            self.ledger.append_message(assistant_message(None, [call]), turn=self.turn)
            self.ledger.append_message(tool_message(call.call_id, "read", f"{self.turn} {body}"),
                                       turn=self.turn)

    def prepare(self, window: int, strategies: dict[str, Any] | None = None) -> Prepared:
        config = ContextConfig.model_validate({"max_context_tokens": window,
                                               "strategies": strategies or {}})
        config.check(OUTPUT_LIMIT)
        pipeline = ContextPipeline(config, Sampling(max_output_tokens=OUTPUT_LIMIT), None,  # type: ignore[arg-type]
                                   [{"name": "read"}, {"name": "done"}], "done")
        prepared = asyncio.run(pipeline.prepare(self.ledger, self.turn + 1))
        replay = render(self.ledger.events, self.ledger.messages)
        assert replay.messages == prepared.messages and replay.predicted == prepared.predicted
        return prepared

    def decisions(self, name: str) -> list[dict[str, Any]]:
        return [e["payload"] for e in self.ledger.events
                if e["type"] == "strategy" and e["payload"]["name"] == name]


@pytest.fixture(scope="module")
def run_1_9m(tmp_path_factory: pytest.TempPathFactory) -> Run:
    run = Run(tmp_path_factory.mktemp("ledger"), 1_900_000)
    assert 1_900_000 <= run.ledger.message_tokens_total < 1_900_000 + 2 * RESULT_WORDS
    return run


def test_a_1_9m_ledger_fits_a_2m_window_whole_and_its_prediction_is_exact(run_1_9m: Run) -> None:
    prepared = run_1_9m.prepare(2_000_000)
    assert run_1_9m.decisions("truncate") == []
    assert [m.mid for m in prepared.messages] == list(range(len(run_1_9m.ledger.messages)))
    expected = 100 + sum(count_tokens(m.content or "") if m.role == "tool" else m.tokens
                         for m in run_1_9m.ledger.messages)
    assert prepared.predicted == expected == 100 + run_1_9m.ledger.message_tokens_total
    assert 1_900_000 < prepared.predicted <= budget_of(2_000_000).input_budget


def test_the_same_ledger_under_a_1m_window_is_truncated_to_just_within_its_budget(
        run_1_9m: Run) -> None:
    prepared = run_1_9m.prepare(1_000_000)
    limit = budget_of(1_000_000).input_budget
    group = max(m.tokens for m in run_1_9m.ledger.messages) + 20
    assert limit - 2 * group < prepared.predicted <= limit  # dropped no more than it needed
    (dropped,) = run_1_9m.decisions("truncate")
    mids = [m.mid for m in prepared.messages]
    last = len(run_1_9m.ledger.messages)
    assert mids[:2] == [0, 1] and mids[-2:] == [last - 2, last - 1]
    assert dropped["changes"]["hide"] == list(range(2, mids[2]))
    assert dropped["tokens_before"] == 100 + run_1_9m.ledger.message_tokens_total


@pytest.mark.parametrize(("window", "fires"), [(2_000_000, False), (1_000_000, True)])
def test_a_fraction_trigger_fires_by_the_window_it_is_a_fraction_of(
        tmp_path: Path, window: int, fires: bool) -> None:
    run = Run(tmp_path, 800_000)  # over 0.8 of B at W=1M (757,785), under it at 2M (1,541,785)
    prepared = run.prepare(window, {"clear_tool_results": {"trigger": 0.8}})
    assert bool(run.decisions("clear_tool_results")) is fires
    assert ("clear_tool_results" in prepared.fired) is fires
    assert run.decisions("truncate") == []
    assert prepared.predicted <= budget_of(window).input_budget
