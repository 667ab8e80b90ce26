"""Render: pure, replayable, incremental; every view keeps calls and results paired."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scaffolds.accounting import message_tokens
from scaffolds.budget import Budget
from scaffolds.context import clear_tool_results, truncate
from scaffolds.context.config import ClearToolResultsConfig, TruncateConfig
from scaffolds.context.view import Renderer, render, view_hash
from scaffolds.messages import (
    Message,
    ReasoningPart,
    ToolCallPart,
    assistant_message,
    system_message,
    tool_message,
    user_message,
)
from tests.test_scaffold_loop import assert_paired


class FakeLedger:
    """Events and messages as a ledger holds them, without the file."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.messages: list[Message] = []

    def record(self, type_: str, payload: dict[str, Any]) -> None:
        self.events.append({"seq": len(self.events), "type": type_, "payload": payload})

    def append(self, message: Message, turn: int) -> Message:
        from dataclasses import replace

        message = replace(message, mid=len(self.messages), turn=turn,
                          tokens=message_tokens(message))
        self.messages.append(message)
        self.record("message", {"mid": message.mid})
        return message


def within(limit: int) -> Budget:
    """A budget whose input budget is `limit`."""
    return Budget(limit, 0, 0)


def start() -> FakeLedger:
    ledger = FakeLedger()
    ledger.append(system_message("You act through tools."), 0)
    ledger.append(user_message(["Do the task."], "task"), 0)
    ledger.record("tools", {"tokens": 50})
    return ledger


def add_turn(ledger: FakeLedger, turn: int, calls: int, *, reasoning: bool = False,
             text: str | None = None, size: int = 20, note: bool = False) -> None:
    parts = [ToolCallPart.parse(f"c{turn}_{i}", "read", f'{{"n": {i}}}') for i in range(calls)]
    thought = [ReasoningPart(f"thinking about turn {turn}")] if reasoning else []
    ledger.append(assistant_message(text, parts, thought), turn)
    for part in parts:
        ledger.append(tool_message(part.call_id, "read", f"result {turn} " + "word " * size), turn)
    if note:
        ledger.append(user_message([f"note {turn}"], "harness.note"), turn)


def check_view(renderer: Renderer, ledger: FakeLedger) -> None:
    """Pairing, no empty assistant message, exact tokens, pins kept, replay identical."""
    view = renderer.view()
    assert_paired(list(view.messages))
    for entry in view.entries:
        assert entry.tokens == message_tokens(entry.message), entry
        if entry.message.role == "assistant":
            assert not entry.message.is_empty
    assert renderer.predicted == view.predicted
    assert {0, 1} <= {e.mid for e in view.entries}
    replayed = render(ledger.events, ledger.messages)
    assert replayed.pairs == view.pairs and replayed.predicted == view.predicted
    assert renderer.messages() == view.messages
    refs = renderer.refs()
    assert [mid for run in refs for mid in range(run[0], run[1] + 1)] == [e.mid for e in view.entries]
    assert renderer.view_hash() == view_hash(refs) == view_hash(json.loads(json.dumps(refs)))


def decide(renderer: Renderer, ledger: FakeLedger, changes: dict[str, Any] | None) -> None:
    if not changes:
        return
    renderer.sync(ledger.events, ledger.messages)
    renderer.apply(changes)
    ledger.record("strategy", {"name": "test", "decision": "test", "changes": changes})
    renderer.mark_seen(len(ledger.events))


@st.composite
def random_decision(draw: st.DrawFn, renderer: Renderer, ledger: FakeLedger,
                    turn: int) -> dict[str, Any] | None:
    visible = list(renderer.entries.values())
    kind = draw(st.sampled_from(["clear", "strip", "truncate", "strategy", "compact", "none"]))
    if kind == "clear":
        tools = [e.mid for e in visible if e.message.role == "tool"]
        chosen = draw(st.lists(st.sampled_from(tools), unique=True)) if tools else []
        return {"clear": chosen, "style": draw(st.sampled_from(["placeholder", "remove"])),
                "placeholder": "[cleared]", "arguments": draw(st.booleans())}
    if kind == "strip":
        mids = list(renderer.reasoning_mids)
        return {"strip": draw(st.lists(st.sampled_from(mids), unique=True)) if mids else []}
    if kind == "truncate":
        limit = draw(st.integers(0, renderer.predicted + 10))
        config = TruncateConfig(min_recent_turns=draw(st.integers(0, 2)))
        try:
            return truncate.plan(renderer, within(limit), config)
        except truncate.Overflow:
            return None
    if kind == "strategy":
        config = ClearToolResultsConfig(
            trigger=1, unit=draw(st.sampled_from(["turn", "call"])),
            style=draw(st.sampled_from(["placeholder", "remove"])),
            protect_recent=draw(st.integers(0, 2)), clear_arguments=draw(st.booleans()))
        return clear_tool_results.decide(renderer, Budget(10**6, 0, 0), config, {"done"})
    if kind == "compact":
        groups = renderer.groups()
        keep = draw(st.integers(0, len(groups)))
        kept = [e.mid for g in groups[len(groups) - keep:] for e in g] if keep else []
        summary = ledger.append(user_message(["summary", "of work"], "strategy.compaction"),
                                turn)
        renderer.sync(ledger.events, ledger.messages)
        hide = [m for m, e in renderer.entries.items()
                if e.turn != 0 and m not in set(kept) and m != summary.mid]
        return {"hide": hide, "pin": [summary.mid], "to_end": kept}
    return None


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_ledgers_and_decisions_keep_every_view_valid(data: st.DataObject) -> None:
    ledger = start()
    live = Renderer()
    turns = data.draw(st.integers(1, 8))
    for turn in range(1, turns + 1):
        add_turn(ledger, turn, data.draw(st.integers(0, 3)), reasoning=data.draw(st.booleans()),
                 text=data.draw(st.sampled_from([None, "", "Working."])),
                 size=data.draw(st.integers(0, 60)), note=data.draw(st.booleans()))
        live.sync(ledger.events, ledger.messages)
        for _ in range(data.draw(st.integers(0, 3))):
            decide(live, ledger, data.draw(random_decision(live, ledger, turn)))
            check_view(live, ledger)
        check_view(live, ledger)


def test_render_is_the_whole_conversation_without_decisions() -> None:
    ledger = start()
    for turn in (1, 2):
        add_turn(ledger, turn, 2)
    view = render(ledger.events, ledger.messages)
    assert [m.mid for m in view.messages] == list(range(len(ledger.messages)))
    assert view.predicted == 50 + sum(m.tokens for m in ledger.messages)
    assert {variant for _, variant in view.pairs} == {"full"}


def test_placeholder_clearing_keeps_the_call_and_shows_the_placeholder() -> None:
    ledger = start()
    add_turn(ledger, 1, 2, size=200)
    renderer = Renderer().sync(ledger.events, ledger.messages)
    before = renderer.predicted
    decide(renderer, ledger, {"clear": [3], "style": "placeholder", "placeholder": "[cleared]",
                              "arguments": True})
    view = renderer.view()
    by_mid = {e.mid: e for e in view.entries}
    assert by_mid[3].message.content == "[cleared]" and by_mid[3].variant == "result_cleared"
    assert by_mid[2].variant == "arguments_cleared"
    assert by_mid[2].message.tool_calls[0].arguments_raw == "{}"
    assert by_mid[2].message.tool_calls[1].arguments_raw == '{"n": 1}'
    assert ledger.messages[3].content.startswith("result 1")  # the ledger is untouched
    assert renderer.predicted < before
    check_view(renderer, ledger)


def test_remove_style_strips_calls_and_drops_an_emptied_assistant_message() -> None:
    ledger = start()
    add_turn(ledger, 1, 2, reasoning=True)
    add_turn(ledger, 2, 1, text="Still working.")
    renderer = Renderer().sync(ledger.events, ledger.messages)
    decide(renderer, ledger, {"clear": [3], "style": "remove", "placeholder": "x"})
    assert renderer.entries[2].variant == "call_removed"
    assert [c.call_id for c in renderer.entries[2].message.tool_calls] == ["c1_1"]
    assert renderer.entries[2].message.reasoning  # one call is left, so is the reasoning
    decide(renderer, ledger, {"clear": [4, 6], "style": "remove", "placeholder": "x"})
    assert 2 not in renderer.entries  # no text, no call left: not sent
    assert renderer.entries[5].message.text == "Still working."
    assert not renderer.entries[5].message.tool_calls
    check_view(renderer, ledger)


def test_compaction_order_puts_the_summary_before_kept_groups() -> None:
    ledger = start()
    for turn in (1, 2, 3):
        add_turn(ledger, turn, 1)
    renderer = Renderer().sync(ledger.events, ledger.messages)
    summary = ledger.append(user_message(["summary"], "strategy.compaction"), 3)
    decide(renderer, ledger, {"hide": [2, 3, 4, 5], "pin": [summary.mid], "to_end": [6, 7]})
    assert [e.mid for e in renderer.view().entries] == [0, 1, summary.mid, 6, 7]
    assert summary.mid in renderer.pinned
    assert [[e.mid for e in g] for g in renderer.groups()] == [[6, 7]]
    check_view(renderer, ledger)


def test_refs_compress_runs_and_follow_appends() -> None:
    ledger = start()
    add_turn(ledger, 1, 2)
    renderer = Renderer().sync(ledger.events, ledger.messages)
    assert renderer.refs() == ([0, 4],)
    decide(renderer, ledger, {"clear": [3], "style": "placeholder", "placeholder": "[c]"})
    snapshot = renderer.refs()
    assert snapshot == ([0, 2], [3, 3, "result_cleared"], [4, 4])
    add_turn(ledger, 2, 1)
    renderer.sync(ledger.events, ledger.messages)
    assert renderer.refs() == ([0, 2], [3, 3, "result_cleared"], [4, 6])
    assert snapshot == ([0, 2], [3, 3, "result_cleared"], [4, 4])  # recorded views stay as sent


def test_truncation_drops_oldest_groups_then_shortens_the_largest_result() -> None:
    ledger = start()
    add_turn(ledger, 1, 1, size=50)
    add_turn(ledger, 2, 1, size=50)
    add_turn(ledger, 3, 1, size=2000)
    renderer = Renderer().sync(ledger.events, ledger.messages)
    limit = renderer.predicted - 60
    changes = truncate.plan(renderer, within(limit), TruncateConfig())
    assert changes == {"hide": [2, 3]}
    limit = 400
    changes = truncate.plan(renderer, within(limit), TruncateConfig())
    assert changes is not None and changes["hide"] == [2, 3, 4, 5]
    assert changes["shorten"][0][0] == 7
    decide(renderer, ledger, changes)
    assert renderer.predicted <= limit
    assert renderer.entries[7].variant == "content_truncated"
    assert "characters omitted" in renderer.entries[7].message.content
    check_view(renderer, ledger)


def test_truncation_overflow_cases() -> None:
    ledger = start()
    add_turn(ledger, 1, 1, size=2000)
    renderer = Renderer().sync(ledger.events, ledger.messages)
    for config in (TruncateConfig(enabled=False), TruncateConfig(oversize_result="fail")):
        try:
            truncate.plan(renderer, within(200), config)
        except truncate.Overflow:
            continue
        raise AssertionError(f"{config} fitted")
    try:
        truncate.plan(renderer, within(40), TruncateConfig())  # the pinned prompt alone is too large
    except truncate.Overflow as exc:
        assert "over the input budget B = 40 " in str(exc)
        assert "the pinned messages (system prompt, task, summary)" in str(exc)
    else:
        raise AssertionError("the pinned messages fitted 40 tokens")


def test_truncation_shortens_as_many_parallel_results_as_it_takes() -> None:
    ledger = start()
    add_turn(ledger, 1, 10, size=200)
    renderer = Renderer().sync(ledger.events, ledger.messages)
    limit = renderer.predicted - 1000
    changes = truncate.plan(renderer, within(limit), TruncateConfig())
    assert changes is not None and changes["hide"] == [] and len(changes["shorten"]) >= 5
    decide(renderer, ledger, changes)
    assert renderer.predicted <= limit
    check_view(renderer, ledger)
    again = truncate.plan(renderer, within(limit - 200), TruncateConfig())
    decide(renderer, ledger, again)
    assert renderer.predicted <= limit - 200
    for entry in renderer.entries.values():
        if "content_truncated" in entry.variants:
            source = ledger.messages[entry.mid].content
            content = entry.message.content
            assert content.count("characters omitted") == 1
            head = content.split("\n[...")[0]
            tail = content.split("...]\n")[1]
            assert source.startswith(head) and source.endswith(tail)
    check_view(renderer, ledger)
