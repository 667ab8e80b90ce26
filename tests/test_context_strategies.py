"""Each strategy at the ledger level: what it clears, when it fires, what stays pinned, pairing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from scaffolds.clients import GenerateRequest, GenerateResult, LLMCallError, Sampling, Usage
from scaffolds.context import ContextConfig, ContextPipeline, Overflow, render
from scaffolds.ledger import Ledger, read_trajectory
from scaffolds.messages import (
    ReasoningPart,
    ToolCallPart,
    assistant_message,
    system_message,
    tool_message,
    user_message,
)
from scaffolds.metrics import episode_metrics
from tests.test_scaffold_loop import assert_paired

SUMMARY = "The notes hold alpha 3, beta 4 and gamma 5; the answer 12 is not written yet. " * 4


class SummaryClient:
    """Answers compaction requests with scripted replies; records what it was sent."""

    def __init__(self, *replies: str | Exception) -> None:
        self.replies = list(replies)
        self.requests: list[GenerateRequest] = []

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return GenerateResult(message=assistant_message(reply, reasoning=[ReasoningPart("hm")]),
                              finish_reason="stop", usage=Usage(input_tokens=10, output_tokens=5))


class Episode:
    """A ledger on disk and a pipeline over it, filled turn by turn."""

    def __init__(self, tmp_path: Path, strategies: dict[str, Any], client: Any = None,
                 window: int = 6000, **context: Any) -> None:
        config = ContextConfig.model_validate({"max_context_tokens": window, "margin": 0,
                                               "strategies": strategies, **context})
        config.check(1000)
        self.ledger = Ledger(tmp_path / "trajectory.jsonl", {"format": "test"})
        self.client = client or SummaryClient()
        self.pipeline = ContextPipeline(config, Sampling(max_output_tokens=1000), self.client,
                                        [{"name": "read"}, {"name": "done"}], "done")
        self.ledger.append_message(system_message("Act through tools."), turn=0)
        self.ledger.append_message(user_message(["Sum the notes.", *self.pipeline.suffixes(
            "task_message")], "task"), turn=0)
        self.ledger.record("tools", {"tokens": 100})
        self.turn = 0

    def play(self, calls: int = 1, size: int = 200, reasoning: bool = False,
             name: str = "read") -> None:
        self.turn += 1
        parts = [ToolCallPart.parse(f"c{self.turn}_{i}", name, f'{{"n": {i}}}')
                 for i in range(calls)]
        thought = [ReasoningPart(f"thinking {self.turn} " * 5)] if reasoning else []
        self.ledger.append_message(assistant_message(None, parts, thought), turn=self.turn)
        for part in parts:
            self.ledger.append_message(tool_message(part.call_id, name,
                                                    f"note {self.turn}: " + "word " * size),
                                       turn=self.turn)

    def prepare(self) -> Any:
        prepared = asyncio.run(self.pipeline.prepare(self.ledger, self.turn + 1))
        assert_paired(list(prepared.messages))
        replay = render(self.ledger.events, self.ledger.messages)
        assert replay.messages == prepared.messages and replay.predicted == prepared.predicted
        return prepared

    def decisions(self, name: str | None = None) -> list[dict[str, Any]]:
        return [e["payload"] for e in self.ledger.events if e["type"] == "strategy"
                and (name is None or e["payload"]["name"] == name)]


def contents(prepared: Any) -> list[str]:
    return [m.content for m in prepared.messages if m.role == "tool"]


def test_clear_tool_results_fires_over_its_trigger_and_clears_the_oldest_half(
        tmp_path: Path) -> None:
    ep = Episode(tmp_path, {"clear_tool_results": {"trigger": 2000}})
    for _ in range(4):
        ep.play()
        ep.prepare()
    assert ep.decisions() == []  # 4 x ~205 tokens + prompt: under 2000
    for _ in range(6):
        ep.play()
    prepared = ep.prepare()
    (fired,) = ep.decisions("clear_tool_results")
    # 10 eligible turns less the protected newest one: floor(0.5 x 9) = 4 oldest cleared
    assert fired["changes"]["clear"] == [3, 5, 7, 9]
    assert fired["tokens_before"] - fired["tokens_after"] > 4 * 150
    placeholder = "[Tool result cleared to save context. Call the tool again if you need it.]"
    assert contents(prepared)[:5] == [placeholder] * 4 + [ep.ledger.messages[11].content]
    assert [m.mid for m in prepared.messages] == list(range(len(ep.ledger.messages)))
    assert prepared.fired == ("clear_tool_results",)
    assert ep.ledger.messages[3].content.startswith("note 1")  # the ledger keeps everything
    ep.prepare()
    assert len(ep.decisions("clear_tool_results")) == 1  # sticky; under the trigger now


def test_clear_tool_results_remove_style_keep_last_and_protected_tools(tmp_path: Path) -> None:
    ep = Episode(tmp_path, {"clear_tool_results": {"trigger": 500, "style": "remove",
                                                   "keep_last": 0, "unit": "call",
                                                   "exclude_tools": ["keep"]}})
    ep.play(calls=2)
    ep.play(name="keep")
    ep.play()
    ep.play(name="done")
    prepared = ep.prepare()
    # call units (2 + 1) of `read`; the newest is protected, keep_last=0 clears the others
    (fired,) = ep.decisions()
    assert fired["changes"]["clear"] == [3, 4]
    assert [m.mid for m in prepared.messages][:2] == [0, 1]
    assert 2 not in [m.mid for m in prepared.messages]  # its calls are all gone: not sent
    assert [m.name for m in prepared.messages if m.role == "tool"] == ["keep", "read", "done"]


def test_clear_at_least_skips_a_small_firing(tmp_path: Path) -> None:
    ep = Episode(tmp_path, {"clear_tool_results": {"trigger": 300, "clear_at_least": 10_000}})
    for _ in range(4):
        ep.play()
    ep.prepare()
    assert ep.decisions() == []


def test_placeholder_clearing_leaves_results_no_larger_than_the_placeholder(
        tmp_path: Path) -> None:
    ep = Episode(tmp_path, {"clear_tool_results": {"trigger": 300, "keep_last": 0}})
    ep.play(size=1)
    ep.play(size=200)
    ep.play(size=200)
    ep.prepare()
    (fired,) = ep.decisions("clear_tool_results")
    assert fired["changes"]["clear"] == [5]  # the 3-token result of turn 1 stays as it is
    assert fired["tokens_before"] > fired["tokens_after"]


def test_clear_thinking_keeps_the_newest_reasoning(tmp_path: Path) -> None:
    ep = Episode(tmp_path, {"clear_thinking": {"trigger": "always", "keep_last_turns": 1}})
    for _ in range(3):
        ep.play(reasoning=True, size=5)
    prepared = ep.prepare()
    shown = [bool(m.reasoning) for m in prepared.messages if m.role == "assistant"]
    assert shown == [False, False, True]
    assert [m.text for m in prepared.messages if m.role == "tool"] == \
        [m.content for m in ep.ledger.messages if m.role == "tool"]  # results untouched
    (fired,) = ep.decisions()
    assert fired["changes"]["strip"] == [2, 4]
    ep.prepare()
    assert len(ep.decisions()) == 1  # nothing new to strip: no firing
    ep.play(reasoning=True, size=5)
    ep.prepare()
    assert ep.decisions()[-1]["changes"]["strip"] == [6]


def test_clear_thinking_waits_for_its_trigger(tmp_path: Path) -> None:
    ep = Episode(tmp_path, {"clear_thinking": {"trigger": 3000, "keep_last_turns": 0}})
    for _ in range(3):
        ep.play(reasoning=True, size=5)
    ep.prepare()
    assert ep.decisions() == []


def test_compaction_pins_the_summary_and_keeps_recent_groups(tmp_path: Path) -> None:
    client = SummaryClient(SUMMARY)
    ep = Episode(tmp_path, {"compaction": {"trigger": 1500, "keep_recent_turns": 1,
                                           "summary_max_tokens": 500}}, client)
    for _ in range(8):
        ep.play()
    prepared = ep.prepare()
    (request,) = client.requests
    assert request.purpose == "compaction" and request.tools == [] and request.tool_choice == "auto"
    assert request.messages[-1].text.startswith("Your context is about to be reset")
    assert request.sampling.max_output_tokens == 500
    summary = ep.ledger.messages[-1]
    assert summary.origin == "strategy.compaction" and summary.role == "user"
    assert summary.text.startswith("This conversation continues earlier work") and SUMMARY.strip() in summary.text
    assert [m.mid for m in prepared.messages] == [0, 1, summary.mid, 16, 17]
    (fired,) = ep.decisions("compaction")
    assert fired["summary_mid"] == summary.mid and fired["summary_reasoning"] == ["hm"]
    assert "hm" not in [p.text for m in prepared.messages for p in m.reasoning]
    ep.play()
    later = ep.prepare()
    assert [m.mid for m in later.messages][:3] == [0, 1, summary.mid]
    metrics = episode_metrics(read_back(ep))
    assert metrics.llm_calls == {"compaction": 1}
    assert metrics.strategy_firings == {"compaction": 1}
    assert metrics.tokens_freed["compaction"] == fired["tokens_before"] - fired["tokens_after"] > 0


def read_back(ep: Episode) -> list[dict[str, Any]]:
    ep.ledger.close()
    return read_trajectory(ep.ledger.path).events


def test_a_later_compaction_summarises_the_previous_summary(tmp_path: Path) -> None:
    client = SummaryClient(SUMMARY, SUMMARY + " Second.")
    ep = Episode(tmp_path, {"compaction": {"trigger": 1000, "summary_max_tokens": 300}}, client)
    for _ in range(6):
        ep.play()
    ep.prepare()
    first = ep.ledger.messages[-1].mid
    for _ in range(6):
        ep.play()
    prepared = ep.prepare()
    assert any(m.mid == first for m in client.requests[1].messages)
    assert [m.mid for m in prepared.messages] == [0, 1, ep.ledger.messages[-1].mid]


@pytest.mark.parametrize("fallback", ["truncate", "fail"])
def test_invalid_summaries_fall_back(tmp_path: Path, fallback: str) -> None:
    client = SummaryClient("too short", LLMCallError("fatal", "boom"), SUMMARY)
    ep = Episode(tmp_path, {"compaction": {"trigger": 1000, "summary_max_tokens": 300,
                                           "fallback": fallback, "cooldown_turns": 1}}, client)
    for _ in range(6):
        ep.play()
    if fallback == "fail":
        with pytest.raises(Overflow, match="compaction failed 2 times: fatal: boom"):
            ep.prepare()
        return
    ep.prepare()
    (failed,) = ep.decisions("compaction")
    assert failed["decision"] == "failed" and len(failed["problems"]) == 2
    assert "shorter than 64 tokens" in failed["problems"][0]
    ep.play()
    ep.prepare()  # cooling down: no call
    assert len(client.requests) == 2
    ep.play()
    ep.prepare()
    assert len(client.requests) == 3 and ep.decisions("compaction")[-1]["decision"] == "compact"
    assert episode_metrics(read_back(ep)).summary_failures == 1


def test_scripted_summariser_digests_the_view(tmp_path: Path) -> None:
    ep = Episode(tmp_path, {"compaction": {"trigger": 1000, "summarizer": "scripted",
                                           "summary_max_tokens": 400}})
    for _ in range(6):
        ep.play()
    ep.prepare()
    summary = ep.ledger.messages[-1]
    assert summary.origin == "strategy.compaction"
    assert "called read({\"n\": 0})" in summary.text and "note 1: word" in summary.text
    assert summary.tokens < 400 + 50


def test_awareness_notice_and_one_usage_note(tmp_path: Path) -> None:
    ep = Episode(tmp_path, {"awareness": {"budget_shown": "input_budget"}})
    task = ep.ledger.messages[1]
    assert task.parts[1].text.startswith("<budget:token_budget>5000</budget:token_budget>")
    ep.prepare()
    assert len(ep.ledger.messages) == 2  # no tool batch yet: no note
    ep.play()
    first = ep.prepare()
    note = first.messages[-1]
    used = ep.decisions()[0]["used"]
    assert note.origin == "harness.note" and note.text == (
        f"Current token usage:\n<system_warning>Token usage: {used}/5000; {5000 - used} "
        f"remaining</system_warning>")
    assert first.predicted == used + note.tokens
    ep.play()
    second = ep.prepare()
    notes = [m for m in second.messages if m.origin == "harness.note"]
    assert len(notes) == 1 and notes[0].mid != note.mid  # keep_notes: last
    assert episode_metrics(read_back(ep)).awareness_notes == 2


def test_awareness_keep_all_notes(tmp_path: Path) -> None:
    ep = Episode(tmp_path, {"awareness": {"keep_notes": "all", "budget_shown": 4321}})
    for _ in range(3):
        ep.play(size=5)
        prepared = ep.prepare()
    notes = [m for m in prepared.messages if m.origin == "harness.note"]
    assert len(notes) == 3 and all("/4321;" in n.text for n in notes)


def test_truncation_keeps_pins_and_the_newest_group(tmp_path: Path) -> None:
    ep = Episode(tmp_path, {}, window=2000)
    for _ in range(8):
        ep.play()
    prepared = ep.prepare()
    assert prepared.predicted <= 1000
    (dropped,) = ep.decisions("truncate")
    mids = [m.mid for m in prepared.messages]
    assert mids[:2] == [0, 1] and mids[-2:] == [16, 17]
    assert dropped["changes"]["hide"] == list(range(2, mids[2]))
    metrics = episode_metrics(read_back(ep))
    assert metrics.strategy_firings == {"truncate": 1}
    assert metrics.truncation_drops == len(dropped["changes"]["hide"])


def test_strategies_compose_in_order(tmp_path: Path) -> None:
    client = SummaryClient(SUMMARY)
    ep = Episode(tmp_path, {"clear_tool_results": {"trigger": 1200},
                            "compaction": {"trigger": 1200, "summary_max_tokens": 300}}, client)
    for _ in range(6):
        ep.play()
    ep.prepare()
    assert [d["name"] for d in ep.decisions()] == ["clear_tool_results"]  # clearing was enough
    assert client.requests == []
    for _ in range(6):
        ep.play()
    prepared = ep.prepare()
    assert [d["name"] for d in ep.decisions()][1:] == ["clear_tool_results", "compaction"]
    assert prepared.fired == ("clear_tool_results", "compaction")
    # the summary request saw the cleared view
    placeholder = "[Tool result cleared"
    assert any((m.content or "").startswith(placeholder) for m in client.requests[0].messages)


def test_compaction_counts_the_summary_against_what_it_freed(tmp_path: Path) -> None:
    ep = Episode(tmp_path, {"compaction": {"trigger": 1000, "summary_max_tokens": 300}},
                 SummaryClient(SUMMARY))
    for _ in range(6):
        ep.play()
    after = ep.prepare().predicted
    (fired,) = ep.decisions("compaction")
    summary = ep.ledger.messages[fired["summary_mid"]]
    unsummarised = 100 + sum(m.tokens for m in ep.ledger.messages[:-1])
    assert fired["tokens_before"] == unsummarised
    assert fired["tokens_after"] == after == 100 + sum(m.tokens for m in ep.ledger.messages[:2]) \
        + summary.tokens


def test_a_summary_no_smaller_than_the_history_is_discarded(tmp_path: Path) -> None:
    """Only turn 1's small result would be replaced: a long summary would grow the request, so
    the view stays, the outcome is `discarded` (no firing, nothing freed) and the cooldown runs."""
    long_summary = SUMMARY * 6
    client = SummaryClient(long_summary, SUMMARY)
    ep = Episode(tmp_path, {"compaction": {"trigger": 1000, "keep_recent_turns": 1,
                                           "summary_max_tokens": 1200, "cooldown_turns": 1}},
                 client, window=8000)
    ep.play(size=10)
    ep.play(calls=5)
    before = ep.prepare()
    (discarded,) = ep.decisions("compaction")
    assert discarded["decision"] == "discarded" and discarded["changes"] == {}
    assert discarded["summary_tokens"] >= discarded["replaced_tokens"] > 0
    assert discarded["summary"] == long_summary.strip()
    assert [m.mid for m in before.messages] == list(range(len(ep.ledger.messages)))
    assert not any(m.origin == "strategy.compaction" for m in ep.ledger.messages)
    ep.play(size=10)
    ep.prepare()  # cooling down: no call
    assert len(client.requests) == 1
    ep.play(size=10)
    ep.prepare()
    assert ep.decisions("compaction")[-1]["decision"] == "compact"
    metrics = episode_metrics(read_back(ep))
    assert metrics.summaries_discarded == 1 and metrics.strategy_firings == {"compaction": 1}
    assert metrics.tokens_freed["compaction"] > 0
