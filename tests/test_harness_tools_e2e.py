"""Memory and programmatic tool calling end to end through the fake OpenAI-compatible and
Anthropic servers: the requests they received show what the model saw (tools, protocol,
warning, results)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scaffolds.clients import Sampling
from scaffolds.config import AgentConfig
from scaffolds.context import ContextConfig
from scaffolds.loop import AgentLoop
from tests.fake_anthropic import FakeAnthropic, MakeAnthropic, message, tool_use
from tests.fake_llm import FakeLLM, MakeClient, completion, tool_call
from tests.sandboxing import new_world, open_folder
from tests.test_context_e2e import finish, reads
from tests.test_ptc_strategy import CountingEnv
from tests.test_scaffold_loop import EXPECTED, FakeEnv

pytestmark = pytest.mark.sandbox  # runs code in the sandbox

SOLVE = """
total = 0
for note in tools.list_notes():
    total += int(tools.read_note(id=note).split()[2])
print("sum", total)
result = tools.write_answer(text=str(total))
"""


@pytest.fixture(scope="module")
def world_dir() -> Iterator[Path]:
    for folder in open_folder():
        yield new_world(folder).root


async def play(client: Any, env: Any, tmp_path: Path, strategies: dict[str, Any],
               window: int = 128_000) -> Any:
    context = ContextConfig.model_validate({"max_context_tokens": window, "margin": 0,
                                            "strategies": strategies})
    config = AgentConfig(sampling=Sampling(max_output_tokens=500), context=context)
    return await AgentLoop(env, client, config).run(seed=0, options=None, episode_dir=tmp_path)


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body["tools"]]


@pytest.mark.asyncio
async def test_memory_on_the_wire(fake_llm: FakeLLM, make_client: MakeClient,
                                  tmp_path: Path) -> None:
    fake_llm.push(completion(None, tool_call("memory_view", {"path": "/memories"}, "look")),
                  completion(None, tool_call("memory_create", {
                      "path": "/memories/progress.md", "file_text": "notes: 1, 2, 3"}, "save")),
                  *reads(1, 2, 3),
                  completion(None, tool_call("memory_view", {"path": "/memories/progress.md"},
                                             "check")),
                  *finish())
    result = await play(make_client(), FakeEnv(padding=300), tmp_path,
                        {"memory": {}, "clear_tool_results": {"trigger": 1800, "keep_last": 1}},
                        window=4000)
    assert result.terminal_state == "claimed_done" and result.success
    assert (tmp_path / "memories/progress.md").read_text() == "notes: 1, 2, 3"
    first = fake_llm.requests[0]
    assert tool_names(first)[-6:] == ["memory_view", "memory_create", "memory_str_replace",
                                      "memory_insert", "memory_delete", "memory_rename"]
    task = first["messages"][1]["content"]
    assert task.startswith("Add up the numbers") and "view /memories" in task
    results = {m["tool_call_id"]: m["content"] for r in fake_llm.requests
               for m in r["messages"] if m["role"] == "tool"}
    assert results["look"] == "Directory: /memories\n(empty)"
    assert results["check"] == "     1: notes: 1, 2, 3"
    warned = [i for i, r in enumerate(fake_llm.requests) if any(
        m["role"] == "user" and m["content"].startswith("You are nearing the context window")
        for m in r["messages"])]
    assert warned and result.metrics.memory_warnings >= 1
    last = {m["tool_call_id"]: m["content"] for m in fake_llm.requests[-1]["messages"]
            if m["role"] == "tool"}
    assert last["look"] == results["look"] and last["save"].startswith("File created")
    assert last["read_1"].startswith("[Tool result cleared")  # cleared, unlike memory results


@pytest.mark.asyncio
async def test_code_execution_on_the_wire(fake_llm: FakeLLM, make_client: MakeClient,
                                          world_dir: Path, tmp_path: Path) -> None:
    fake_llm.push(completion(None, tool_call("code_execution", {"code": SOLVE}, "solve")),
                  completion(None, tool_call("claim_done", None, "done")))
    env = CountingEnv(world_dir)
    result = await play(make_client(), env, tmp_path, {"ptc": {}})
    assert result.terminal_state == "claimed_done" and result.success
    assert env.answer == EXPECTED
    first, second = fake_llm.requests
    assert tool_names(first) == ["list_notes", "read_note", "write_answer", "claim_done", "bump",
                                 "code_execution"]
    description = first["tools"][-1]["function"]["description"]
    assert "Callable tools: list_notes, read_note, write_answer, bump" in description
    (answer,) = [m for m in second["messages"] if m["role"] == "tool"]
    out = json.loads(answer["content"])
    assert out["stdout"] == "sum 12\n" and out["result"] == "saved" and out["success"]
    assert [c["name"] for c in out["nested_calls"]] == ["list_notes"] + ["read_note"] * 3 + \
        ["write_answer"]
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool"]
    m = result.metrics
    assert (m.tool_calls, m.tool_calls_nested) == (2, 5)


# ---------------------------------------------------------------- the same through the Anthropic fake


def _anthropic_results(body: dict[str, Any]) -> dict[str, Any]:
    return {b["tool_use_id"]: b.get("content", "") for m in body["messages"]
            if isinstance(m["content"], list) for b in m["content"] if b["type"] == "tool_result"}


def _texts(body: dict[str, Any]) -> list[str]:
    return [b["text"] for m in body["messages"] if m["role"] == "user"
            for b in (m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}])
            if b["type"] == "text"]


def _flat(content: Any) -> str:
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


@pytest.mark.asyncio
async def test_memory_through_the_messages_api(fake_anthropic: FakeAnthropic,
                                               make_anthropic: MakeAnthropic, tmp_path: Path) -> None:
    fake_anthropic.push(
        message(tool_use("memory_create", {"path": "/memories/progress.md", "file_text": "1, 2"}, "save")),
        *[message(tool_use("read_note", {"id": i}, f"read_{i}")) for i in (1, 2, 3)],
        message(tool_use("memory_view", {"path": "/memories/progress.md"}, "check")),
        message(tool_use("write_answer", {"text": EXPECTED}, "write")),
        message(tool_use("claim_done", None, "done")))
    result = await play(make_anthropic(), FakeEnv(padding=300), tmp_path,
                        {"memory": {}, "clear_tool_results": {"trigger": 1800, "keep_last": 1}},
                        window=4000)
    assert result.terminal_state == "claimed_done" and result.success
    assert (tmp_path / "memories/progress.md").read_text() == "1, 2"
    first, last = fake_anthropic.requests[0], fake_anthropic.requests[-1]
    assert [t["name"] for t in first["tools"]][-6:] == [
        "memory_view", "memory_create", "memory_str_replace", "memory_insert", "memory_delete",
        "memory_rename"]
    assert any("view /memories" in text for text in _texts(first))
    assert any(any(t.startswith("You are nearing the context window") for t in _texts(body))
               for body in fake_anthropic.requests) and result.metrics.memory_warnings >= 1
    seen = _anthropic_results(last)
    assert _flat(seen["save"]).startswith("File created") and "1, 2" in _flat(seen["check"])
    assert _flat(seen["read_1"]).startswith("[Tool result cleared")


@pytest.mark.asyncio
async def test_code_execution_through_the_messages_api(fake_anthropic: FakeAnthropic,
                                                       make_anthropic: MakeAnthropic,
                                                       world_dir: Path, tmp_path: Path) -> None:
    fake_anthropic.push(message(tool_use("code_execution", {"code": SOLVE}, "solve")),
                        message(tool_use("claim_done", None, "done")))
    env = CountingEnv(world_dir)
    result = await play(make_anthropic(), env, tmp_path, {"ptc": {}})
    assert result.terminal_state == "claimed_done" and result.success and env.answer == EXPECTED
    first, second = fake_anthropic.requests
    assert [t["name"] for t in first["tools"]][-1] == "code_execution"
    out = json.loads(_flat(_anthropic_results(second)["solve"]))
    assert out["stdout"] == "sum 12\n" and out["result"] == "saved" and out["success"]
    assert (result.metrics.tool_calls, result.metrics.tool_calls_nested) == (2, 5)
