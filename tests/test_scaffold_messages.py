"""Canonical messages, the prompt registry, the ledger file and the OpenAI wire conversion."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loca.core.tokens import count_tokens
from scaffolds.clients.openai_wire import StreamAssembler, wire_messages
from scaffolds.ledger import Ledger, read_trajectory
from scaffolds.messages import (
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    assistant_message,
    message_from_dict,
    message_to_dict,
    normalize_call_ids,
    parse_arguments,
    system_message,
    tool_message,
    user_message,
)
from scaffolds.prompts import PROMPTS, get_prompt


@pytest.mark.parametrize(("raw", "arguments", "error"), [
    ("", {}, None), ("  \n", {}, None), ('{"a": [1, 2]}', {"a": [1, 2]}, None),
    ("[1]", None, "arguments must be a JSON object, got list"),
    ('"text"', None, "arguments must be a JSON object, got str"),
])
def test_parse_arguments(raw: str, arguments: object, error: str | None) -> None:
    assert parse_arguments(raw) == (arguments, error)


def test_parse_arguments_reports_broken_json() -> None:
    arguments, error = parse_arguments('{"a": 1')
    assert arguments is None and error is not None and error.startswith("invalid JSON")


def test_missing_and_duplicate_call_ids_are_replaced() -> None:
    seen = {"old"}
    message = assistant_message(tool_calls=[
        ToolCallPart.parse("", "a", "{}"), ToolCallPart.parse("old", "b", "{}"),
        ToolCallPart.parse("x", "c", "{}"), ToolCallPart.parse("x", "d", "{}")])
    fixed = normalize_call_ids(message, 7, seen)
    assert [c.call_id for c in fixed.tool_calls] == ["call_7_0", "call_7_1", "x", "call_7_3"]
    assert [c.provider_call_id for c in fixed.tool_calls] == [None, "old", None, "x"]
    assert seen == {"old", "call_7_0", "call_7_1", "x", "call_7_3"}


texts = st.text(max_size=40)
parts = st.one_of(
    st.builds(TextPart, texts),
    st.builds(ReasoningPart, texts, st.sampled_from(["reasoning_content", "reasoning"]),
              st.none() | texts, st.booleans()),
    st.builds(ToolCallPart.parse, texts, st.sampled_from(["read", "write"]),
              st.one_of(texts, st.dictionaries(texts, st.integers()).map(json.dumps))),
)
messages = st.one_of(
    st.builds(lambda p, refusal: Message(role="assistant", origin="model", parts=tuple(p),
                                         refusal=refusal, mid=3, turn=2, tokens=11),
              st.lists(parts, max_size=4), st.booleans()),
    st.builds(lambda c, err: Message(role="tool", origin="tool", call_id="call_1_0",
                                     name="read", content=c, is_error=err, mid=4, turn=2, tokens=5),
              texts, st.booleans()),
)


@settings(max_examples=60)
@given(messages)
def test_message_dict_round_trip(message: Message) -> None:
    data = json.loads(json.dumps(message_to_dict(message)))
    assert message_from_dict(data) == message


def test_prompts_are_versioned_and_hashed() -> None:
    for prompt_id, prompt in PROMPTS.items():
        assert prompt_id == f"{prompt.name}@{prompt.version}"
        assert prompt.sha256 == hashlib.sha256(prompt.text.encode()).hexdigest()
    assert get_prompt("system/none@1").text == ""
    assert "claim_done" in get_prompt("nudge/text_reply@1").render(terminal_tool="claim_done")
    assert "7 tool calls" in get_prompt("limit/tool_calls@1").render(limit=7)
    with pytest.raises(KeyError, match="system/react@1"):
        get_prompt("system/react@2")


def test_ledger_streams_events_and_counts_tokens_once(tmp_path: Path) -> None:
    path = tmp_path / "attempt-1" / "trajectory.jsonl"
    ledger = Ledger(path, {"format": "test"})
    ledger.append_message(system_message("be brief"), turn=0)
    reply = ledger.append_message(assistant_message(
        "hi", [ToolCallPart.parse("", "read", '{"k": 1}')]), turn=1)
    result = ledger.append_message(tool_message(reply.tool_calls[0].call_id, "read", "x" * 9),
                                   turn=1, tokens=123)
    assert reply.tokens == count_tokens("hi") + count_tokens("read") + count_tokens('{"k": 1}')
    assert result.tokens == 123 and ledger.message_tokens_total == 2 + reply.tokens + 123
    assert [m.mid for m in ledger.messages] == [0, 1, 2]
    # flushed per event: readable before close
    assert len(read_trajectory(path).messages) == 3
    ledger.close()
    ledger.close()
    trajectory = read_trajectory(path)
    assert trajectory.header == {"format": "test"}
    assert trajectory.messages == ledger.messages
    assert [e["seq"] for e in trajectory.events] == [0, 1, 2, 3]


def test_reader_rejects_a_corrupt_line_in_the_middle(tmp_path: Path) -> None:
    path = tmp_path / "trajectory.jsonl"
    ledger = Ledger(path, {"format": "test"})
    ledger.append_message(system_message("x"), turn=0)
    ledger.close()
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], "{oops", lines[1]]) + "\n")
    with pytest.raises(ValueError, match="corrupt ledger line"):
        read_trajectory(path)


def test_reasoning_echo_modes() -> None:
    history = [
        user_message(["task"], "task"),
        assistant_message("a", reasoning=[ReasoningPart("r1", "reasoning")]),
        user_message(["nudge"], "harness.nudge"),
        assistant_message(None, [ToolCallPart("c1", "read", "{}", {})],
                          [ReasoningPart("r2", "reasoning_content")]),
        tool_message("c1", "read", "out"),
    ]
    every = wire_messages(history, "all")
    assert every[1]["reasoning"] == "r1" and every[3]["reasoning_content"] == "r2"
    current = wire_messages(history, "current_turn")
    assert "reasoning" not in current[1] and current[3]["reasoning_content"] == "r2"
    assert current[3]["content"] is None
    assert current[4] == {"role": "tool", "tool_call_id": "c1", "content": "out"}
    none = wire_messages(history, "none")
    assert all("reasoning" not in m and "reasoning_content" not in m for m in none)


def test_stream_assembler_joins_interleaved_tool_call_deltas() -> None:
    def chunk(**delta: object) -> dict[str, object]:
        return {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}

    assembler = StreamAssembler()
    for piece in [
        chunk(role="assistant"), chunk(reasoning="thinking "), chunk(reasoning="hard"),
        chunk(content="Two calls."),
        chunk(tool_calls=[{"index": 0, "id": "a", "function": {"name": "read", "arguments": ""}}]),
        chunk(tool_calls=[{"index": 1, "id": "b", "function": {"name": "wri"}}]),
        chunk(tool_calls=[{"index": 1, "function": {"name": "te", "arguments": '{"t"'}}]),
        chunk(tool_calls=[{"index": 0, "function": {"arguments": '{"k": 2}'}}]),
        chunk(tool_calls=[{"index": 1, "function": {"arguments": ': "x"}'}}]),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 4,
                                  "completion_tokens_details": {"reasoning_tokens": 2}}},
    ]:
        assembler.add(piece)
    message, finish = assembler.message()
    assert finish == "tool_calls" and message.text == "Two calls."
    assert [(c.call_id, c.name, c.arguments) for c in message.tool_calls] == [
        ("a", "read", {"k": 2}), ("b", "write", {"t": "x"})]
    assert [(p.text, p.source_field) for p in message.reasoning] == [("thinking hard",
                                                                      "reasoning")]
    assert assembler.usage == {"prompt_tokens": 9, "completion_tokens": 4,
                               "completion_tokens_details": {"reasoning_tokens": 2}}
