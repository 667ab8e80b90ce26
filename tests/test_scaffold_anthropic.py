"""The Anthropic client (real `anthropic` SDK) against the fake Messages API, and in the loop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scaffolds.clients import (
    AnthropicClient,
    GenerateRequest,
    LLMCallError,
    Sampling,
)
from scaffolds.clients.anthropic_wire import StreamAssembler, usage_from_wire, wire_messages
from scaffolds.config import AgentConfig
from scaffolds.ledger import read_trajectory
from scaffolds.loop import AgentLoop
from scaffolds.messages import (
    ReasoningPart,
    ToolCallPart,
    assistant_message,
    system_message,
    tool_message,
    user_message,
)
from scaffolds.profiles import registry
from tests.fake_anthropic import (
    FakeAnthropic,
    MakeAnthropic,
    measured_usage,
    message,
    redacted_thinking,
    text,
    thinking,
    tool_use,
)
from tests.test_context_e2e import PLACEHOLDER, SUMMARY, play
from tests.test_scaffold_loop import EXPECTED, FakeEnv, assert_paired

STREAM = [True, False]


def request(**sampling: Any) -> GenerateRequest:
    return GenerateRequest(messages=(user_message(["hello"], "task"),), tools=FakeEnv.TOOLS,
                           sampling=Sampling(**sampling))


def solution_replies() -> list[Any]:
    return [
        message(tool_use("list_notes")),
        message(text("Reading all notes."),
                *[tool_use("read_note", {"id": i}, f"toolu_read_{i}") for i in (1, 2, 3)]),
        message(tool_use("write_answer", {"text": EXPECTED})),
        message(tool_use("claim_done")),
    ]


async def run_loop(client: AnthropicClient, tmp_path: Path, env: FakeEnv | None = None,
                   **config: Any):
    loop = AgentLoop(env or FakeEnv(), client, AgentConfig(**config))
    return await loop.run(seed=0, options={"length": "8k"}, episode_dir=tmp_path)


def blocks_with_marks(body: dict[str, Any]) -> list[str]:
    """Where a request carries cache breakpoints."""
    marked = [f"tool:{t['name']}" for t in body.get("tools", ()) if "cache_control" in t]
    marked += ["system" for b in body.get("system", ()) if "cache_control" in b]
    for index, wire in enumerate(body["messages"]):
        marked += [f"message:{index}:{b['type']}" for b in wire["content"]
                   if "cache_control" in b]
    return marked


# ---------------------------------------------------------------- a whole episode


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", STREAM)
async def test_tool_use_round_trip_in_the_loop(fake_anthropic: FakeAnthropic,
                                               make_anthropic: MakeAnthropic, tmp_path: Path,
                                               stream: bool) -> None:
    fake_anthropic.push(*solution_replies())
    env = FakeEnv()
    result = await run_loop(make_anthropic(stream=stream), tmp_path, env,
                            sampling=Sampling(temperature=0.5, max_output_tokens=1000))
    assert result.terminal_state == "claimed_done" and result.success and result.reward == 1.0
    assert env.called == ["list_notes", "read_note", "read_note", "read_note", "write_answer",
                          "claim_done"]
    first, last = fake_anthropic.requests[0], fake_anthropic.requests[-1]
    sent = fake_anthropic.headers[0]
    assert "sk-ant-test" in (sent.get("x-api-key"), sent.get("authorization", "").removeprefix(
        "Bearer "))  # the header depends on the SDK's version
    assert "anthropic-version" in sent
    assert bool(first.get("stream")) == stream
    assert (first["model"], first["max_tokens"], first["temperature"]) == ("claude-fake", 1000,
                                                                           0.5)
    assert "seed" not in first and first["tool_choice"] == {"type": "auto"}
    assert [t["name"] for t in first["tools"]] == [t["name"] for t in FakeEnv.TOOLS]
    assert first["tools"][1]["input_schema"] == FakeEnv.TOOLS[1]["parameters"]
    assert first["system"][0]["type"] == "text" and first["system"][0]["text"]
    assert [m["role"] for m in first["messages"]] == ["user"]
    wire = last["messages"]
    assert [m["role"] for m in wire] == ["user", "assistant", "user", "assistant", "user",
                                         "assistant", "user"]
    assert [_strip(b) for b in wire[3]["content"]] == [
        {"type": "text", "text": "Reading all notes."},
        *[{"type": "tool_use", "id": f"toolu_read_{i}", "name": "read_note", "input": {"id": i}}
          for i in (1, 2, 3)]]
    assert [_strip(b) for b in wire[4]["content"]] == [
        {"type": "tool_result", "tool_use_id": f"toolu_read_{i}", "content": f"{word} is {n} "}
        for i, word, n in ((1, "alpha", 3), (2, "beta", 4), (3, "gamma", 5))]
    m = result.metrics
    assert m.usage_reported and m.output_tokens == 40  # the provider's counts, not the gym's
    assert m.input_tokens == sum(measured_usage(body)["input_tokens"]
                                 for body in fake_anthropic.requests)
    assert m.cost_usd is None  # no price for this model
    trajectory = read_trajectory(Path(result.trajectory_path))
    assert [r["request_id"] for r in trajectory.of_type("llm_response")] == [
        f"req_fake_{n}" for n in range(1, 5)]
    assert_paired(trajectory.messages)


def _strip(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", STREAM)
async def test_thinking_blocks_are_stored_and_echoed_exactly(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, tmp_path: Path,
        stream: bool) -> None:
    blocks = (thinking("The sum is twelve.", "sig-1"), redacted_thinking("EncryptedBlob=="),
              text("Writing it."), thinking("Then finish.", "sig-2"),
              tool_use("write_answer", {"text": EXPECTED}, "toolu_w"))
    fake_anthropic.push(message(*blocks), message(tool_use("claim_done")))
    result = await run_loop(make_anthropic(stream=stream), tmp_path,
                            sampling=Sampling(reasoning_budget_tokens=2048,
                                              max_output_tokens=4096))
    assert result.success
    first, second = fake_anthropic.requests
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in first and "top_p" not in first
    echoed = second["messages"][1]
    assert echoed["role"] == "assistant" and echoed["content"] == list(blocks)
    stored = read_trajectory(Path(result.trajectory_path)).messages[2]
    assert [(p.source_field, p.text, p.signature, p.redacted) for p in stored.reasoning] == [
        ("thinking", "The sum is twelve.", "sig-1", False),
        ("redacted_thinking", "EncryptedBlob==", None, True),
        ("thinking", "Then finish.", "sig-2", False)]


@pytest.mark.asyncio
async def test_cache_marks_on_last_tool_system_and_newest_message(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, tmp_path: Path) -> None:
    fake_anthropic.push(*solution_replies())
    await run_loop(make_anthropic(), tmp_path)
    marks = [blocks_with_marks(body) for body in fake_anthropic.requests]
    assert marks[0] == ["tool:claim_done", "system", "message:0:text"]
    assert marks[1] == ["tool:claim_done", "system", "message:2:tool_result"]
    assert marks[2] == ["tool:claim_done", "system", "message:4:tool_result"]
    last_results = fake_anthropic.requests[2]["messages"][4]["content"]
    assert ["cache_control" in b for b in last_results] == [False, False, True]


@pytest.mark.asyncio
async def test_prompt_caching_off_sends_no_marks(fake_anthropic: FakeAnthropic,
                                                 make_anthropic: MakeAnthropic) -> None:
    fake_anthropic.push(message(text("ok")))
    await make_anthropic(prompt_caching="off").generate(request())
    assert blocks_with_marks(fake_anthropic.requests[0]) == []


@pytest.mark.asyncio
async def test_summary_call_keeps_tools_with_tool_choice_none(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic) -> None:
    fake_anthropic.push(message(text("Summary.")))
    call = GenerateRequest(messages=(user_message(["hello"], "task"),), tools=FakeEnv.TOOLS,
                           tool_choice="none", purpose="compaction")
    result = await make_anthropic().generate(call)
    body = fake_anthropic.requests[0]
    assert body["tool_choice"] == {"type": "none"} and len(body["tools"]) == len(FakeEnv.TOOLS)
    assert result.message.text == "Summary."


@pytest.mark.asyncio
async def test_a_call_without_tools_over_a_history_with_tool_blocks_gets_stubs(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic) -> None:
    fake_anthropic.push(message(text("Summary.")), message(text("Hi.")))
    calls = [ToolCallPart.parse("toolu_a", "read_note", '{"id": 1}'),
             ToolCallPart.parse("toolu_b", "read_note", '{"id": 2}')]
    history = (user_message(["task"], "task"), assistant_message(None, calls),
               tool_message("toolu_a", "read_note", "alpha"),
               tool_message("toolu_b", "read_note", "beta"),
               user_message(["Summarise."], "harness.prompt"))
    client = make_anthropic()
    await client.generate(GenerateRequest(messages=history, tools=(), purpose="compaction"))
    await client.generate(GenerateRequest(messages=(user_message(["hi"], "task"),), tools=()))
    with_history, plain = fake_anthropic.requests
    assert [_strip(t) for t in with_history["tools"]] == [
        {"name": "read_note", "input_schema": {"type": "object", "properties": {}}}]
    assert with_history["tool_choice"] == {"type": "none"}
    assert "tools" not in plain and "tool_choice" not in plain


@pytest.mark.asyncio
async def test_an_empty_reply_is_not_sent_back_and_the_nudge_follows_the_task(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, tmp_path: Path) -> None:
    fake_anthropic.push(*[message()] * 3, *solution_replies())
    result = await run_loop(make_anthropic(), tmp_path, on_text_reply="nudge")
    assert result.success and result.metrics.retries_by_class == {"empty": 2}
    fourth = fake_anthropic.requests[3]["messages"]
    assert [m["role"] for m in fourth] == ["user"]
    assert [b["type"] for b in fourth[0]["content"]] == ["text", "text"]
    assert "claim_done" in fourth[0]["content"][1]["text"]


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", STREAM)
async def test_tool_input_cut_off_at_the_output_limit_is_an_error_result(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, tmp_path: Path,
        stream: bool) -> None:
    fake_anthropic.push(message(tool_use("write_answer", '{"text": "1', "toolu_cut"),
                                stop_reason="max_tokens"),
                        *solution_replies())
    env = FakeEnv()
    result = await run_loop(make_anthropic(stream=stream), tmp_path, env)
    assert result.success and result.metrics.tool_calls_invalid == 1
    assert "write_answer" not in env.called[:1]
    second = fake_anthropic.requests[1]["messages"]
    assert _strip(second[1]["content"][0]) == {"type": "tool_use", "id": "toolu_cut",
                                               "name": "write_answer", "input": {}}
    (result_block,) = second[2]["content"]
    assert result_block["is_error"] and "cut off at the output token limit" in result_block[
        "content"]


# ---------------------------------------------------------------- wire rules


def test_one_user_message_per_turn_results_first_then_notes() -> None:
    calls = [ToolCallPart.parse("toolu_a", "read_note", '{"id": 1}'),
             ToolCallPart.parse("toolu_b", "list_notes", "")]
    system, wire = wire_messages([
        system_message("Be brief."), user_message(["task"], "task"),
        assistant_message("Two calls.", calls),
        tool_message("toolu_a", "read_note", "alpha"),
        user_message(["Note: 3 turns left."], "harness.warning"),
        tool_message("toolu_b", "list_notes", "", is_error=True),
    ])
    assert system == [{"type": "text", "text": "Be brief."}]
    assert [m["role"] for m in wire] == ["user", "assistant", "user"]
    assert wire[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "alpha"},
        {"type": "tool_result", "tool_use_id": "toolu_b", "is_error": True},
        {"type": "text", "text": "Note: 3 turns left."}]


def test_reasoning_of_other_providers_and_invalid_arguments() -> None:
    reply = assistant_message(
        "Done.", [ToolCallPart.parse("toolu_x", "write_answer", '{"text": "1')],
        [ReasoningPart("from elsewhere", "reasoning_content"),
         ReasoningPart("unsigned", "thinking")])
    _, wire = wire_messages([user_message(["task"], "task"), reply])
    assert wire[1]["content"] == [
        {"type": "text", "text": "Done."},
        {"type": "tool_use", "id": "toolu_x", "name": "write_answer", "input": {}}]


def test_lone_surrogates_are_replaced_on_the_way_out() -> None:
    _, wire = wire_messages([user_message(["a\ud800b"], "task")])
    assert wire[0]["content"][0]["text"] == "a\ufffdb"


@pytest.mark.parametrize(("stop_reason", "finish"), [
    ("end_turn", "stop"), ("stop_sequence", "stop"), ("max_tokens", "length"),
    ("model_context_window_exceeded", "length"), ("pause_turn", "pause"),
    ("refusal", "refusal"), ("something_new", "stop")])
@pytest.mark.asyncio
async def test_stop_reasons_map_to_finish_reasons(fake_anthropic: FakeAnthropic,
                                                  make_anthropic: MakeAnthropic,
                                                  stop_reason: str, finish: str) -> None:
    fake_anthropic.push(message(text("x"), stop_reason=stop_reason))
    result = await make_anthropic().generate(request())
    assert result.finish_reason == finish
    assert result.message.refusal == (finish == "refusal")


def test_a_streamed_delta_for_an_unknown_block_is_malformed() -> None:
    assembler = StreamAssembler()
    with pytest.raises(KeyError):
        assembler.add({"type": "content_block_delta", "index": 3,
                       "delta": {"type": "text_delta", "text": "x"}})


# ---------------------------------------------------------------- usage and cost


def test_usage_counts_cache_reads_and_writes_in_the_prompt() -> None:
    usage = usage_from_wire({"input_tokens": 50, "cache_creation_input_tokens": 1000,
                             "cache_read_input_tokens": 4000, "output_tokens": 300,
                             "output_tokens_details": {"thinking_tokens": 120}})
    assert (usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens,
            usage.output_tokens, usage.reasoning_tokens, usage.reported) == (
        5050, 4000, 1000, 300, 120, True)
    assert not usage_from_wire({"output_tokens": 3}).reported
    assert not usage_from_wire({"input_tokens": "many", "output_tokens": 3}).reported
    assert usage_from_wire(None) == usage_from_wire([])


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", STREAM)
async def test_provider_usage_is_the_ground_truth_and_the_price_table_gives_the_cost(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, tmp_path: Path,
        stream: bool) -> None:
    usages = [{"input_tokens": 900, "cache_creation_input_tokens": 2000,
               "cache_read_input_tokens": 0, "output_tokens": 40},
              {"input_tokens": 60, "cache_creation_input_tokens": 100,
               "cache_read_input_tokens": 2900, "output_tokens": 20,
               "output_tokens_details": {"thinking_tokens": 5}}]
    fake_anthropic.push(message(tool_use("write_answer", {"text": EXPECTED}), usage=usages[0]),
                        message(tool_use("claim_done"), usage=usages[1]))
    price = registry().prices["claude-sonnet-4-5"]
    result = await run_loop(make_anthropic(stream=stream, price=price), tmp_path)
    m = result.metrics
    assert m.usage_reported
    assert (m.input_tokens, m.cached_input_tokens, m.cache_write_tokens, m.output_tokens,
            m.reasoning_tokens) == (2900 + 3060, 2900, 2100, 60, 5)
    expected = (960 * 3.00 + 2900 * 0.30 + 2100 * 3.75 + 60 * 15.00) / 1e6
    assert m.cost_usd == pytest.approx(expected)
    responses = read_trajectory(Path(result.trajectory_path)).of_type("llm_response")
    assert [r["cost_source"] for r in responses] == ["table", "table"]


@pytest.mark.asyncio
async def test_a_call_without_reported_usage_has_no_cost(fake_anthropic: FakeAnthropic,
                                                         make_anthropic: MakeAnthropic,
                                                         tmp_path: Path) -> None:
    fake_anthropic.push(message(tool_use("write_answer", {"text": EXPECTED})),
                        message(tool_use("claim_done"), usage={"output_tokens": 3}))
    price = registry().prices["claude-haiku-4-5"]
    result = await run_loop(make_anthropic(stream=False, price=price), tmp_path)
    responses = read_trajectory(Path(result.trajectory_path)).of_type("llm_response")
    assert [r["cost_usd"] is None for r in responses] == [False, True]
    assert not result.metrics.usage_reported and result.metrics.cost_usd is None


@pytest.mark.asyncio
async def test_output_is_capped_at_the_model_limit(fake_anthropic: FakeAnthropic,
                                                   make_anthropic: MakeAnthropic) -> None:
    fake_anthropic.push(message(text("ok")))
    await make_anthropic(max_output_tokens=64000).generate(request(max_output_tokens=100000))
    assert fake_anthropic.requests[0]["max_tokens"] == 64000


@pytest.mark.asyncio
async def test_a_thinking_budget_above_the_model_limit_fails_without_a_request(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic) -> None:
    client = make_anthropic(max_output_tokens=8192)
    with pytest.raises(LLMCallError) as info:
        await client.generate(request(reasoning_budget_tokens=10000, max_output_tokens=20000))
    assert info.value.error_class == "fatal" and "thinking budget" in info.value.message
    assert fake_anthropic.requests == []


# ---------------------------------------------------------------- context strategies on the wire


def anthropic_reads(*ids: int) -> list[Any]:
    return [message(tool_use("read_note", {"id": i}, f"read_{i}")) for i in ids]


def anthropic_finish() -> list[Any]:
    return [message(tool_use("write_answer", {"text": EXPECTED}, "write")),
            message(tool_use("claim_done", None, "done"))]


def results(body: dict[str, Any]) -> dict[str, str]:
    return {b["tool_use_id"]: b.get("content", "") for m in body["messages"]
            for b in m["content"] if b["type"] == "tool_result"}


@pytest.mark.asyncio
async def test_clear_tool_results_reaches_the_messages_api(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, tmp_path: Path) -> None:
    fake_anthropic.push(message(tool_use("list_notes", None, "list")), *anthropic_reads(1, 2, 3),
                        *anthropic_finish())
    result = await play(make_anthropic(), tmp_path, {"clear_tool_results": {"trigger": 700,
                                                                             "keep_last": 0}})
    assert result.terminal_state == "claimed_done" and result.success
    before, after = results(fake_anthropic.requests[2]), results(fake_anthropic.requests[3])
    assert before["read_1"].startswith("alpha is 3")
    assert after["list"] == "[1, 2, 3]"  # smaller than the placeholder: left as it is
    assert after["read_1"] == PLACEHOLDER
    assert after["read_2"].startswith("beta is 4")
    assert result.metrics.strategy_firings["clear_tool_results"] >= 1


@pytest.mark.asyncio
async def test_compaction_reaches_the_messages_api(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, tmp_path: Path) -> None:
    fake_anthropic.push(message(tool_use("list_notes", None, "list")), *anthropic_reads(1, 2),
                        message(text(SUMMARY)), *anthropic_reads(3), *anthropic_finish())
    result = await play(make_anthropic(), tmp_path, {"compaction": {"trigger": 700,
                                                                    "summary_max_tokens": 500}})
    assert result.terminal_state == "claimed_done" and result.success
    summary_call, after = fake_anthropic.requests[3], fake_anthropic.requests[4]
    assert summary_call["tool_choice"] == {"type": "none"}  # tool blocks need tool definitions
    assert {t["name"] for t in summary_call["tools"]} == {"list_notes", "read_note"}
    assert summary_call["max_tokens"] == 500 and "read_2" in results(summary_call)
    assert [m["role"] for m in after["messages"]] == ["user"]
    assert SUMMARY.strip() in after["messages"][0]["content"][-1]["text"]
    assert result.metrics.llm_calls == {"main": 6, "compaction": 1}


@pytest.mark.asyncio
async def test_clear_thinking_reaches_the_messages_api(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, tmp_path: Path) -> None:
    fake_anthropic.push(*[message(thinking(f"I should read note {i}.", f"sig-{i}"),
                                  tool_use("read_note", {"id": i}, f"read_{i}")) for i in (1, 2, 3)],
                        *anthropic_finish())
    result = await play(make_anthropic(), tmp_path, {"clear_thinking": {"trigger": "always"}},
                        padding=0)
    assert result.terminal_state == "claimed_done"
    assistants = [m for m in fake_anthropic.requests[3]["messages"] if m["role"] == "assistant"]
    kept = [[b["thinking"] for b in m["content"] if b["type"] == "thinking"] for m in assistants]
    assert kept == [[], [], ["I should read note 3."]]
    assert result.metrics.strategy_firings["clear_thinking"] >= 2


@pytest.mark.asyncio
async def test_awareness_reaches_the_messages_api(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, tmp_path: Path) -> None:
    fake_anthropic.push(*anthropic_reads(1, 2), *anthropic_finish())
    result = await play(make_anthropic(), tmp_path, {"awareness": {}}, padding=10)
    assert result.terminal_state == "claimed_done"
    task = fake_anthropic.requests[0]["messages"][0]["content"]
    assert any("<budget:token_budget>4000</budget:token_budget>" in b.get("text", "") for b in task)
    last_user = fake_anthropic.requests[2]["messages"][-1]
    kinds = [b["type"] for b in last_user["content"]]
    assert kinds == ["tool_result", "text"]  # the usage note follows the results in one message
    assert last_user["content"][-1]["text"].startswith("Current token usage")
    assert result.metrics.awareness_notes == 3


@pytest.mark.asyncio
async def test_hard_truncation_reaches_the_messages_api(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, tmp_path: Path) -> None:
    fake_anthropic.push(*anthropic_reads(1, 2, 3), *anthropic_finish())
    result = await play(make_anthropic(), tmp_path, {}, padding=2600, window=3000)
    assert result.terminal_state == "claimed_done"
    wire = results(fake_anthropic.requests[3])
    assert list(wire) == ["read_3"]
    assert "characters omitted to fit the context" in str(wire["read_3"])
    assert result.metrics.strategy_firings["truncate"] >= 2
