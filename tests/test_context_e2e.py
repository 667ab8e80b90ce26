"""Strategies end to end through the fake OpenAI-compatible server: each fires, and the requests
the server received show the model the cleared / compacted view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scaffolds.clients import Sampling
from scaffolds.config import AgentConfig
from scaffolds.context import ContextConfig
from scaffolds.ledger import read_trajectory
from scaffolds.loop import AgentLoop
from tests.fake_llm import FakeLLM, MakeClient, completion, tool_call
from tests.test_scaffold_loop import EXPECTED, FakeEnv, assert_paired

PLACEHOLDER = "[Tool result cleared to save context. Call the tool again if you need it.]"
SUMMARY = ("Progress: listed the notes (ids 1, 2, 3); note 1 says alpha is 3 and note 2 says "
           "beta is 4; note 3 is still to read, then write the sum with write_answer and call "
           "claim_done. ") * 2


def reads(*ids: int) -> list[Any]:
    return [completion(None, tool_call("read_note", {"id": i}, f"read_{i}")) for i in ids]


def finish() -> list[Any]:
    return [completion(None, tool_call("write_answer", {"text": EXPECTED}, "write")),
            completion(None, tool_call("claim_done", None, "done"))]


async def play(client: Any, tmp_path: Path, strategies: dict[str, Any], padding: int = 300,
               window: int = 4000) -> Any:
    context = ContextConfig.model_validate({"max_context_tokens": window, "margin": 0,
                                            "strategies": strategies})
    config = AgentConfig(sampling=Sampling(max_output_tokens=500), context=context)
    result = await AgentLoop(FakeEnv(padding=padding), client, config).run(
        seed=0, options={"length": "8k"}, episode_dir=tmp_path)
    assert_paired(read_trajectory(Path(result.trajectory_path)).messages)
    return result


def tool_contents(body: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


@pytest.mark.asyncio
async def test_clear_tool_results_on_the_wire(fake_llm: FakeLLM, make_client: MakeClient,
                                              tmp_path: Path) -> None:
    fake_llm.push(completion(None, tool_call("list_notes", None, "list")), *reads(1, 2, 3),
                  *finish())
    result = await play(make_client(), tmp_path, {"clear_tool_results": {"trigger": 700,
                                                                         "keep_last": 0}})
    assert result.terminal_state == "claimed_done" and result.success
    before, after = tool_contents(fake_llm.requests[2]), tool_contents(fake_llm.requests[3])
    assert before["read_1"].startswith("alpha is 3")
    assert after["list"] == "[1, 2, 3]"  # smaller than the placeholder: left as it is
    assert after["read_1"] == PLACEHOLDER
    assert after["read_2"].startswith("beta is 4")
    calls = [c["id"] for m in fake_llm.requests[3]["messages"] for c in m.get("tool_calls", [])]
    assert calls == ["list", "read_1", "read_2"]  # the calls stay, paired with placeholders
    m = result.metrics
    assert m.strategy_firings["clear_tool_results"] >= 1 and m.tokens_freed["clear_tool_results"] > 500
    assert m.peak_request_tokens < m.trajectory_tokens


@pytest.mark.asyncio
async def test_compaction_on_the_wire(fake_llm: FakeLLM, make_client: MakeClient,
                                      tmp_path: Path) -> None:
    fake_llm.push(completion(None, tool_call("list_notes", None, "list")), *reads(1, 2),
                  completion(SUMMARY), *reads(3), *finish())
    result = await play(make_client(), tmp_path, {"compaction": {"trigger": 700,
                                                                 "summary_max_tokens": 500}})
    assert result.terminal_state == "claimed_done" and result.success
    summary_call, after = fake_llm.requests[3], fake_llm.requests[4]
    assert "tools" not in summary_call and summary_call["max_completion_tokens"] == 500
    assert summary_call["messages"][-1]["content"].startswith("Your context is about to be reset")
    assert "read_2" in tool_contents(summary_call)
    assert [m["role"] for m in after["messages"]] == ["system", "user", "user"]
    assert after["messages"][2]["content"].startswith("This conversation continues")
    assert SUMMARY.strip() in after["messages"][2]["content"]
    assert [m["role"] for m in fake_llm.requests[5]["messages"]] == \
        ["system", "user", "user", "assistant", "tool"]
    m = result.metrics
    assert m.llm_calls == {"main": 6, "compaction": 1}
    assert m.strategy_firings == {"compaction": 1} and m.tokens_freed["compaction"] > 300


@pytest.mark.asyncio
async def test_clear_thinking_on_the_wire(fake_llm: FakeLLM, make_client: MakeClient,
                                          tmp_path: Path) -> None:
    fake_llm.push(*[completion(None, tool_call("read_note", {"id": i}, f"read_{i}"),
                               reasoning=f"I should read note {i}.") for i in (1, 2, 3)],
                  *finish())
    result = await play(make_client(), tmp_path, {"clear_thinking": {"trigger": "always"}},
                        padding=0)
    assert result.terminal_state == "claimed_done"
    assistants = [m for m in fake_llm.requests[3]["messages"] if m["role"] == "assistant"]
    assert [m.get("reasoning_content") for m in assistants] == [None, None, "I should read note 3."]
    assert result.metrics.strategy_firings["clear_thinking"] >= 2


@pytest.mark.asyncio
async def test_awareness_on_the_wire(fake_llm: FakeLLM, make_client: MakeClient,
                                     tmp_path: Path) -> None:
    fake_llm.push(*reads(1, 2), *finish())
    result = await play(make_client(), tmp_path, {"awareness": {}}, padding=10)
    assert result.terminal_state == "claimed_done"
    first, third = fake_llm.requests[0], fake_llm.requests[2]
    assert first["messages"][1]["content"].endswith(
        "do not stop early because of the token budget.")
    assert "<budget:token_budget>4000</budget:token_budget>" in first["messages"][1]["content"]
    notes = [m["content"] for m in third["messages"] if m["role"] == "user"
             and m["content"].startswith("Current token usage")]
    assert len(notes) == 1 and third["messages"][-1]["content"] == notes[0]
    assert "/4000; " in notes[0]
    assert result.metrics.awareness_notes == 3


@pytest.mark.asyncio
async def test_hard_truncation_on_the_wire(fake_llm: FakeLLM, make_client: MakeClient,
                                           tmp_path: Path) -> None:
    fake_llm.push(*reads(1, 2, 3), *finish())
    result = await play(make_client(), tmp_path, {}, padding=2600, window=3000)
    assert result.terminal_state == "claimed_done"
    wire = tool_contents(fake_llm.requests[3])
    assert list(wire) == ["read_3"] and "characters omitted to fit the context" in wire["read_3"]
    m = result.metrics
    assert m.strategy_firings["truncate"] >= 2 and m.truncation_drops >= 2
    assert m.peak_request_tokens <= 3000 - 500


@pytest.mark.asyncio
async def test_a_prompt_over_the_budget_is_context_overflow(fake_llm: FakeLLM,
                                                            make_client: MakeClient,
                                                            tmp_path: Path) -> None:
    fake_llm.push(*finish())
    result = await play(make_client(), tmp_path, {}, window=600)
    assert result.terminal_state == "context_overflow" and fake_llm.requests == []
    assert "over the input budget B = 100 (window W 600 - output reserve R 500 - margin M 0)" \
        in result.error.message


@pytest.mark.asyncio
async def test_thinking_clearing_the_client_cannot_honour_is_refused(
        make_client: MakeClient) -> None:
    context = ContextConfig.model_validate({"strategies": {"clear_thinking": {}}})
    with pytest.raises(ValueError, match="nothing to clear"):
        AgentLoop(FakeEnv(), make_client(reasoning_echo="none"), AgentConfig(context=context))
    AgentLoop(FakeEnv(), make_client(), AgentConfig(context=context))
