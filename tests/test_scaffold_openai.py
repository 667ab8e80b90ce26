"""The OpenAI-compatible client (real `openai` SDK) against the fake server, and in the loop."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from scaffolds.clients import (
    GenerateRequest,
    LLMCallError,
    OpenAICompatClient,
    RetryPolicy,
    Sampling,
    client_from_agent_string,
)
from scaffolds.config import AgentConfig, Limits
from scaffolds.ledger import read_trajectory
from scaffolds.loop import AgentLoop
from scaffolds.messages import user_message
from tests.fake_llm import (
    FIXED_NOW,
    FakeLLM,
    MakeClient,
    SleepRecorder,
    completion,
    empty_choices,
    http_error,
    malformed,
    measured_usage,
    tool_call,
)
from tests.test_scaffold_loop import EXPECTED, FakeEnv, assert_paired


def request(**sampling: Any) -> GenerateRequest:
    return GenerateRequest(messages=(user_message(["hello"], "task"),), tools=FakeEnv.TOOLS,
                           sampling=Sampling(**sampling))


def solution_replies() -> list[Any]:
    return [
        completion(None, tool_call("list_notes")),
        completion("Reading all notes.", *[tool_call("read_note", {"id": i}, f"read_{i}")
                                          for i in (1, 2, 3)]),
        completion(None, tool_call("write_answer", {"text": EXPECTED})),
        completion(None, tool_call("claim_done")),
    ]


async def run_loop(client: OpenAICompatClient, tmp_path: Path, env: FakeEnv | None = None,
                   **config: Any):
    loop = AgentLoop(env or FakeEnv(), client, AgentConfig(**config))
    return await loop.run(seed=0, options={"length": "8k"}, episode_dir=tmp_path)


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [True, False])
async def test_replayed_tool_script_claims_done(fake_llm: FakeLLM, make_client: MakeClient,
                                                tmp_path: Path, stream: bool) -> None:
    fake_llm.push(*solution_replies())
    env = FakeEnv()
    result = await run_loop(make_client(stream=stream), tmp_path, env, sampling=Sampling(
        temperature=0.5, seed=3, max_output_tokens=1000))
    assert result.terminal_state == "claimed_done" and result.success and result.reward == 1.0
    assert env.called == ["list_notes", "read_note", "read_note", "read_note", "write_answer",
                          "claim_done"]
    assert len(fake_llm.requests) == 4
    first, last = fake_llm.requests[0], fake_llm.requests[-1]
    assert bool(first.get("stream")) == stream
    assert ("stream_options" in first) == stream
    assert [t["function"]["name"] for t in first["tools"]] == [t["name"] for t in FakeEnv.TOOLS]
    assert (first["temperature"], first["seed"], first["max_completion_tokens"]) == (0.5, 3, 1000)
    assert first["tool_choice"] == "auto"
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    wire = last["messages"]
    assert wire[4] == {"role": "assistant", "content": "Reading all notes.",
                       "tool_calls": [{"id": f"read_{i}", "type": "function",
                                       "function": {"name": "read_note",
                                                    "arguments": f'{{"id": {i}}}'}}
                                      for i in (1, 2, 3)]}
    assert [(m["tool_call_id"], m["content"]) for m in wire[5:8]] == [
        ("read_1", "alpha is 3 "), ("read_2", "beta is 4 "), ("read_3", "gamma is 5 ")]
    m = result.metrics
    assert m.usage_reported and m.output_tokens == 40  # the provider's counts, not the gym's
    assert m.input_tokens == sum(measured_usage(body)["prompt_tokens"] for body in fake_llm.requests)
    trajectory = read_trajectory(Path(result.trajectory_path))
    assert [r["request_id"] for r in trajectory.of_type("llm_response")][0].startswith("req_fake_")
    assert_paired(trajectory.messages)


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_is_echoed_under_its_own_field(
        fake_llm: FakeLLM, make_client: MakeClient, tmp_path: Path, stream: bool,
        field: str) -> None:
    fake_llm.push(completion("Let me look.", tool_call("write_answer", {"text": EXPECTED}),
                             reasoning="The sum is twelve.", reasoning_field=field),
                  completion(None, tool_call("claim_done")))
    result = await run_loop(make_client(stream=stream), tmp_path)
    assert result.success
    echoed = fake_llm.requests[1]["messages"][2]
    assert echoed["role"] == "assistant" and echoed[field] == "The sum is twelve."
    other = {"reasoning_content", "reasoning"} - {field}
    assert not other & set(echoed)
    stored = read_trajectory(Path(result.trajectory_path)).messages[2].reasoning
    assert [(p.text, p.source_field) for p in stored] == [("The sum is twelve.", field)]


@pytest.mark.asyncio
async def test_reasoning_echo_none_leaves_it_out(fake_llm: FakeLLM, make_client: MakeClient,
                                                 tmp_path: Path) -> None:
    fake_llm.push(completion(None, tool_call("write_answer", {"text": EXPECTED}),
                             reasoning="hidden"),
                  completion(None, tool_call("claim_done")))
    result = await run_loop(make_client(reasoning_echo="none"), tmp_path)
    assert result.success
    assert "reasoning_content" not in fake_llm.requests[1]["messages"][2]


def rate_limited(kind: str) -> Any:
    if kind == "seconds":
        return http_error(429, retry_after=2)
    if kind == "milliseconds":
        return http_error(429, retry_after_ms=1500)
    if kind == "http_date":
        return http_error(429, retry_after_date=datetime.fromtimestamp(FIXED_NOW + 30,
                                                                       tz=UTC))
    return http_error(429, retry_after=500)


@pytest.mark.asyncio
@pytest.mark.parametrize(("kind", "low", "high", "stream"), [
    ("seconds", 2.0, 2.2, True), ("seconds", 2.0, 2.2, False),
    ("milliseconds", 1.5, 1.65, True), ("http_date", 30.0, 33.0, True),
    ("over_the_cap", 120.0, 120.0, False)])
async def test_429_honours_retry_after(fake_llm: FakeLLM, make_client: MakeClient, kind: str,
                                       low: float, high: float, stream: bool) -> None:
    fake_llm.push(rate_limited(kind), completion("ok"))
    sleep = SleepRecorder()
    result = await make_client(stream=stream, sleep=sleep).generate(request())
    assert result.message.text == "ok"
    assert len(fake_llm.requests) == 2
    assert [(a.outcome, a.status) for a in result.attempts] == [("transient", 429), ("ok", None)]
    (wait,) = sleep.waits
    assert low <= wait <= high
    assert result.attempts[0].wait_s == wait


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [True, False])
async def test_transient_statuses_back_off_with_full_jitter(
        fake_llm: FakeLLM, make_client: MakeClient, stream: bool) -> None:
    statuses = [408, 500, 502, 503, 504, 529, 409]
    fake_llm.push(*[http_error(status) for status in statuses], completion("ok"))
    sleep = SleepRecorder()
    result = await make_client(stream=stream, sleep=sleep).generate(request())
    assert result.message.text == "ok" and len(fake_llm.requests) == 8
    assert [(a.outcome, a.status) for a in result.attempts] == [
        *[("transient", status) for status in statuses], ("ok", None)]
    assert len(sleep.waits) == 7
    for n, wait in enumerate(sleep.waits, start=1):
        assert 0.25 <= wait <= min(60.0, 2.0 ** (n - 1))


@pytest.mark.asyncio
async def test_retries_are_exhausted_after_max_attempts(fake_llm: FakeLLM, make_client: MakeClient,
                                                        tmp_path: Path) -> None:
    fake_llm.push(*[http_error(503)] * 8)
    sleep = SleepRecorder()
    result = await run_loop(make_client(sleep=sleep), tmp_path)
    assert result.terminal_state == "llm_error" and not result.success
    assert len(fake_llm.requests) == 8 and len(sleep.waits) == 7
    assert result.error is not None and result.error.details is not None
    assert len(result.error.details["attempts"]) == 8
    assert "gave up after 8 attempts" in result.error.message
    assert result.metrics.retries == 7
    assert result.metrics.retry_wait_s == pytest.approx(sum(sleep.waits))
    assert result.diagnostic is None


@pytest.mark.asyncio
@pytest.mark.parametrize(("status", "error_class"), [(400, "fatal"), (404, "fatal"),
                                                     (422, "fatal"), (401, "auth"),
                                                     (403, "auth")])
async def test_fatal_and_auth_errors_are_not_retried(
        fake_llm: FakeLLM, make_client: MakeClient, tmp_path: Path, status: int,
        error_class: str) -> None:
    fake_llm.push(http_error(status, "model does not exist"))
    sleep = SleepRecorder()
    result = await run_loop(make_client(sleep=sleep), tmp_path)
    assert result.terminal_state == "llm_error"
    assert len(fake_llm.requests) == 1 and sleep.waits == []
    assert result.error is not None and result.error.details is not None
    assert result.error.details["error_class"] == error_class
    assert result.error.details["status"] == status
    assert "model does not exist" in result.error.message


@pytest.mark.asyncio
async def test_too_long_request_is_context_overflow(fake_llm: FakeLLM, make_client: MakeClient,
                                                    tmp_path: Path) -> None:
    fake_llm.push(http_error(400, "This model's maximum context length is 128000 tokens."))
    result = await run_loop(make_client(), tmp_path)
    assert result.terminal_state == "context_overflow"
    assert len(fake_llm.requests) == 1
    assert result.diagnostic is not None  # an agent-class ending gets diagnostic grading


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [True, False])
async def test_malformed_response_is_retried(fake_llm: FakeLLM, make_client: MakeClient,
                                             stream: bool) -> None:
    fake_llm.push(malformed(), completion("ok"))
    sleep = SleepRecorder()
    result = await make_client(stream=stream, sleep=sleep).generate(request())
    assert result.message.text == "ok"
    assert [a.outcome for a in result.attempts] == ["transient", "ok"]
    assert "malformed" in result.attempts[0].message and len(sleep.waits) == 1


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [True, False])
async def test_empty_replies_are_resent_then_treated_as_text(
        fake_llm: FakeLLM, make_client: MakeClient, tmp_path: Path, stream: bool) -> None:
    fake_llm.push(empty_choices(), completion(""), empty_choices())
    sleep = SleepRecorder()
    env = FakeEnv()
    result = await run_loop(make_client(stream=stream, sleep=sleep), tmp_path, env)
    assert len(fake_llm.requests) == 3 and sleep.waits == []
    assert result.terminal_state == "final_text" and not result.success
    assert env.actions[-1]["arguments"] == {"text": ""}
    assert result.metrics.retries_by_class == {"empty": 2}


@pytest.mark.asyncio
async def test_length_finish_is_resent_once_when_asked(fake_llm: FakeLLM,
                                                       make_client: MakeClient) -> None:
    fake_llm.push(completion("cut", finish_reason="length"),
                  completion("cut again", finish_reason="length"))
    client = make_client(retry=RetryPolicy(on_length="retry_once"))
    result = await client.generate(request())
    assert result.finish_reason == "length" and result.message.text == "cut again"
    assert [a.outcome for a in result.attempts] == ["length", "ok"]


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [True, False])
async def test_invalid_tool_call_json_is_an_error_result(
        fake_llm: FakeLLM, make_client: MakeClient, tmp_path: Path, stream: bool) -> None:
    fake_llm.push(completion(None, tool_call("read_note", '{"id": 1')),
                  completion(None, tool_call("write_answer", '{"text": "1'),
                             finish_reason="length"),
                  *solution_replies())
    env = FakeEnv()
    result = await run_loop(make_client(stream=stream), tmp_path, env)
    assert result.terminal_state == "claimed_done" and result.success
    assert result.metrics.tool_calls_invalid == 2 and result.metrics.tool_calls == 6
    assert env.called.count("read_note") == 3
    second, third = fake_llm.requests[1]["messages"], fake_llm.requests[2]["messages"]
    assert second[-2]["tool_calls"][0]["function"]["arguments"] == '{"id": 1'
    assert "not a valid JSON object" in second[-1]["content"]
    assert "cut off at the output token limit" in third[-1]["content"]


@pytest.mark.asyncio
async def test_unknown_tool_gets_the_closest_names(fake_llm: FakeLLM, make_client: MakeClient,
                                                   tmp_path: Path) -> None:
    fake_llm.push(completion(None, tool_call("claim_don")), *solution_replies())
    env = FakeEnv()
    result = await run_loop(make_client(), tmp_path, env)
    assert result.success and "claim_don" not in env.called
    reply = fake_llm.requests[1]["messages"][-1]
    assert reply["role"] == "tool" and "Closest tool names: claim_done" in reply["content"]


@pytest.mark.asyncio
async def test_duplicate_provider_call_ids_are_replaced(fake_llm: FakeLLM,
                                                        make_client: MakeClient,
                                                        tmp_path: Path) -> None:
    fake_llm.push(completion(None, tool_call("list_notes", call_id="same"),
                             tool_call("write_answer", {"text": EXPECTED}, call_id="same")),
                  completion(None, tool_call("claim_done", call_id="same")))
    result = await run_loop(make_client(), tmp_path)
    assert result.success
    wire = fake_llm.requests[1]["messages"]
    assert [c["id"] for c in wire[2]["tool_calls"]] == ["same", "call_1_1"]
    assert [m["tool_call_id"] for m in wire[3:]] == ["same", "call_1_1"]


@pytest.mark.asyncio
async def test_text_reply_is_graded_as_final_text(fake_llm: FakeLLM, make_client: MakeClient,
                                                  tmp_path: Path) -> None:
    fake_llm.push(completion(None, tool_call("write_answer", {"text": EXPECTED})),
                  completion("All done: 12."))
    env = FakeEnv()
    result = await run_loop(make_client(), tmp_path, env)
    assert result.terminal_state == "final_text" and result.graded and result.success
    assert env.actions[-1]["name"] == "__final__"


@pytest.mark.asyncio
async def test_nudge_reaches_the_model(fake_llm: FakeLLM, make_client: MakeClient,
                                       tmp_path: Path) -> None:
    fake_llm.push(completion("I will now work."), *solution_replies())
    result = await run_loop(make_client(), tmp_path, on_text_reply="nudge")
    assert result.terminal_state == "claimed_done" and result.success
    wire = fake_llm.requests[1]["messages"]
    assert wire[-2] == {"role": "assistant", "content": "I will now work."}
    assert wire[-1]["role"] == "user" and "claim_done" in wire[-1]["content"]


@pytest.mark.asyncio
async def test_max_turns_stops_calling_the_model(fake_llm: FakeLLM, make_client: MakeClient,
                                                 tmp_path: Path) -> None:
    fake_llm.push(*[completion(None, tool_call("list_notes"))] * 3)
    result = await run_loop(make_client(), tmp_path, limits=Limits(max_turns=2))
    assert result.terminal_state == "max_turns"
    assert len(fake_llm.requests) == 2 and fake_llm.pending == 1


@pytest.mark.asyncio
async def test_max_tool_calls_keeps_pairing_on_the_wire(fake_llm: FakeLLM,
                                                        make_client: MakeClient,
                                                        tmp_path: Path) -> None:
    fake_llm.push(completion(None, tool_call("list_notes")),
                  completion(None, tool_call("list_notes"), tool_call("read_note", {"id": 1})))
    result = await run_loop(make_client(), tmp_path, limits=Limits(max_tool_calls=2))
    assert result.terminal_state == "max_tool_calls"
    messages = read_trajectory(Path(result.trajectory_path)).messages
    assert_paired(messages)
    assert "limit of 2 tool calls" in (messages[-1].content or "")


def test_client_from_agent_string(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCA_TEST_KEY", "sk-test")
    client = client_from_agent_string("openai:gpt-test", base_url="http://127.0.0.1:9/v1",
                                      api_key_env="LOCA_TEST_KEY", stream=False)
    assert isinstance(client, OpenAICompatClient)
    assert (client.model, client.stream) == ("gpt-test", False)
    monkeypatch.delenv("LOCA_TEST_KEY")
    with pytest.raises(ValueError, match="LOCA_TEST_KEY"):
        client_from_agent_string("openai:gpt-test", api_key_env="LOCA_TEST_KEY")
    with pytest.raises(ValueError, match="unsupported agent string"):
        client_from_agent_string("gemini:flash")


@pytest.mark.asyncio
async def test_llm_error_raised_directly_carries_attempts(fake_llm: FakeLLM,
                                                          make_client: MakeClient) -> None:
    fake_llm.push(http_error(503), http_error(400, "bad request"))
    with pytest.raises(LLMCallError) as info:
        await make_client().generate(request())
    assert info.value.error_class == "fatal" and info.value.status == 400
    assert [a.outcome for a in info.value.attempts] == ["transient", "fatal"]
