"""Model-side faults against the fake provider: bad usage blocks, lone surrogates, errors inside
200 responses, streamed parallel calls without `index`, streams cut off before their finish
reason, and providers that never answer."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from scaffolds.clients import OpenAICompatClient, RetryPolicy, Timeouts
from scaffolds.clients.openai_wire import StreamAssembler, usage_from_wire
from scaffolds.ledger import read_trajectory
from tests.fake_llm import (
    FakeLLM,
    MakeClient,
    SleepRecorder,
    completion,
    cut_off,
    error_body,
    http_error,
    stall,
    tool_call,
)
from tests.test_scaffold_loop import EXPECTED, FakeEnv, assert_paired
from tests.test_scaffold_openai import request, run_loop

# ---------------------------------------------------------------- usage


@pytest.mark.parametrize("usage", [
    {"prompt_tokens": 100, "completion_tokens": "many"},
    {"prompt_tokens": -5, "completion_tokens": 10},
    {"prompt_tokens": True, "completion_tokens": 10},
    {"prompt_tokens": 100, "completion_tokens": float("nan")},
    {"completion_tokens": 10},
])
def test_usage_with_a_bad_count_is_not_reported(usage: dict) -> None:
    parsed = usage_from_wire(usage)
    assert not parsed.reported
    assert all(isinstance(v, int) and v >= 0 for k, v in parsed.to_dict().items() if k != "reported")


def test_usage_tolerates_details_of_any_shape() -> None:
    parsed = usage_from_wire({"prompt_tokens": 100.0, "completion_tokens": 10,
                              "prompt_tokens_details": "lots", "completion_tokens_details": [1],
                              "prompt_cache_hit_tokens": 40})
    assert parsed.reported and (parsed.input_tokens, parsed.cached_input_tokens) == (100, 40)
    assert usage_from_wire("many") == usage_from_wire(None) and not usage_from_wire([]).reported


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [True, False])
async def test_an_unusable_usage_block_leaves_the_episode_intact(
        fake_llm: FakeLLM, make_client: MakeClient, tmp_path: Path, stream: bool) -> None:
    fake_llm.push(completion(None, tool_call("write_answer", {"text": EXPECTED}),
                             usage={"prompt_tokens": 100, "completion_tokens": "many"}),
                  completion(None, tool_call("claim_done"), usage={"prompt_tokens": {"a": 1}}))
    result = await run_loop(make_client(stream=stream), tmp_path)
    assert result.terminal_state == "claimed_done" and result.success
    assert not result.metrics.usage_reported  # the gym's own counts stand in
    trajectory = read_trajectory(Path(result.trajectory_path))
    requests = trajectory.of_type("llm_request")
    replies = [m for m in trajectory.messages if m.role == "assistant"]
    assert result.metrics.input_tokens == sum(r["predicted_tokens"] for r in requests)
    assert result.metrics.output_tokens == sum(m.tokens for m in replies)
    assert [c["outcome"] for c in trajectory.of_type("provider_check")] == ["usage_missing"]


@pytest.mark.asyncio
async def test_a_failure_while_summing_up_still_ends_in_a_recorded_state(
        fake_llm: FakeLLM, make_client: MakeClient, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_metrics(events: object) -> None:
        raise TypeError("unsupported operand type(s) for +=: 'int' and 'str'")

    monkeypatch.setattr("scaffolds.loop.episode_metrics", broken_metrics)
    fake_llm.push(completion(None, tool_call("write_answer", {"text": EXPECTED})),
                  completion(None, tool_call("claim_done")))
    result = await run_loop(make_client(), tmp_path)
    assert result.terminal_state == "harness_error" and not result.success
    assert result.error is not None and result.error.class_ == "TypeError"
    terminal = read_trajectory(Path(result.trajectory_path)).of_type("terminal")
    assert [t["state"] for t in terminal] == ["harness_error"]


# ---------------------------------------------------------------- lone surrogates


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [True, False])
async def test_a_lone_surrogate_is_kept_in_the_ledger_and_made_sendable(
        fake_llm: FakeLLM, make_client: MakeClient, tmp_path: Path, stream: bool) -> None:
    fake_llm.push(completion("Sum \ud83d done", tool_call("write_answer", {"text": EXPECTED})),
                  completion(None, tool_call("claim_done")))
    result = await run_loop(make_client(stream=stream), tmp_path)
    assert result.terminal_state == "claimed_done" and result.success
    trajectory = read_trajectory(Path(result.trajectory_path))
    assert trajectory.messages[2].text == "Sum \ud83d done"
    assert fake_llm.requests[1]["messages"][2]["content"] == "Sum \ufffd done"


@pytest.mark.asyncio
async def test_a_surrogate_pair_split_across_chunks_is_joined(
        fake_llm: FakeLLM, make_client: MakeClient) -> None:
    fake_llm.push(completion("\ud83d\ude00"))  # streamed as two chunks of one surrogate each
    result = await make_client(stream=True).generate(request())
    assert result.message.text == "\N{GRINNING FACE}"


# ---------------------------------------------------------------- errors inside 200 responses


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [True, False])
async def test_an_error_body_in_a_200_response_is_retried(
        fake_llm: FakeLLM, make_client: MakeClient, stream: bool) -> None:
    fake_llm.push(error_body("upstream overloaded", code=502), error_body(code=None),
                  completion("ok", finish_reason="error"), completion("ok"))
    sleep = SleepRecorder()
    result = await make_client(stream=stream, sleep=sleep).generate(request())
    assert result.message.text == "ok" and len(fake_llm.requests) == 4
    assert [(a.outcome, a.status) for a in result.attempts] == [
        ("transient", 502), ("transient", None), ("transient", None), ("ok", None)]
    assert "upstream overloaded" in result.attempts[0].message and len(sleep.waits) == 3


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [True, False])
async def test_an_error_body_is_never_graded_as_the_final_answer(
        fake_llm: FakeLLM, make_client: MakeClient, tmp_path: Path, stream: bool) -> None:
    fake_llm.push(error_body("model not found", code=404))
    env = FakeEnv()
    result = await run_loop(make_client(stream=stream), tmp_path, env)
    assert result.terminal_state == "llm_error" and not result.graded
    assert env.actions == [] and len(fake_llm.requests) == 1
    assert result.error is not None and "model not found" in result.error.message


@pytest.mark.asyncio
async def test_a_too_long_error_body_is_context_overflow(fake_llm: FakeLLM,
                                                         make_client: MakeClient,
                                                         tmp_path: Path) -> None:
    fake_llm.push(error_body("This model's maximum context length is 8192 tokens", code=None))
    result = await run_loop(make_client(), tmp_path)
    assert result.terminal_state == "context_overflow" and len(fake_llm.requests) == 1


# ---------------------------------------------------------------- streamed tool calls


@pytest.mark.asyncio
async def test_parallel_streamed_calls_without_index_are_kept_apart(
        fake_llm: FakeLLM, make_client: MakeClient, tmp_path: Path) -> None:
    fake_llm.push(completion(None, *[tool_call("read_note", {"id": i}, f"read_{i}")
                                     for i in (1, 2, 3)], call_index=False),
                  completion(None, tool_call("write_answer", {"text": EXPECTED}),
                             tool_call("claim_done"), call_index=False))
    env = FakeEnv()
    result = await run_loop(make_client(stream=True), tmp_path, env)
    assert result.success and env.called == ["read_note"] * 3 + ["write_answer", "claim_done"]
    assert [a["arguments"] for a in env.actions[:3]] == [{"id": 1}, {"id": 2}, {"id": 3}]
    echoed = fake_llm.requests[1]["messages"][2]["tool_calls"]
    assert [(c["id"], c["function"]["name"]) for c in echoed] == [
        (f"read_{i}", "read_note") for i in (1, 2, 3)]
    assert_paired(read_trajectory(Path(result.trajectory_path)).messages)


def _streamed_calls(*deltas: dict) -> list[tuple[str, str, str]]:
    assembler = StreamAssembler()
    for delta in deltas:
        assembler.add({"choices": [{"index": 0, "delta": {"tool_calls": [delta]}}]})
    assembler.add({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return [(c.call_id, c.name, c.arguments_raw) for c in assembler.message()[0].tool_calls]


def test_stream_assembly_keys_calls_by_index_then_id() -> None:
    fn = {"name": "f", "arguments": "{}"}
    # every call sent as index 0, told apart by id
    assert _streamed_calls({"index": 0, "id": "a", "function": fn},
                           {"index": 0, "id": "b", "function": fn}) == [("a", "f", "{}"),
                                                                          ("b", "f", "{}")]
    # no index: pieces without an id continue the latest call; a known id goes back to it
    assert _streamed_calls({"id": "a", "function": {"name": "f"}},
                           {"function": {"arguments": '{"x":'}},
                           {"id": "b", "function": {"name": "g", "arguments": "{}"}},
                           {"id": "a", "function": {"arguments": "1}"}}) == [
        ("a", "f", '{"x":1}'), ("b", "g", "{}")]
    # the usual form: id and name once, then arguments by index; arguments sent as an object
    assert _streamed_calls({"index": 0, "id": "a", "function": {"name": "f"}},
                           {"index": 1, "id": "b", "function": {"name": "g"}},
                           {"index": 0, "function": {"arguments": {"x": 1}}}) == [
        ("a", "f", '{"x": 1}'), ("b", "g", "")]


# ---------------------------------------------------------------- cut-off streams


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [True, False])
async def test_a_reply_cut_off_before_its_finish_reason_is_retried(
        fake_llm: FakeLLM, make_client: MakeClient, stream: bool) -> None:
    fake_llm.push(cut_off(), completion("The answer is 12."))
    result = await make_client(stream=stream).generate(request())
    assert result.message.text == "The answer is 12." and len(fake_llm.requests) == 2
    assert [a.outcome for a in result.attempts] == ["transient", "ok"]
    expected = "without a finish reason" if stream else "malformed"
    assert expected in result.attempts[0].message


@pytest.mark.asyncio
async def test_cut_off_streams_end_as_llm_error_once_retries_run_out(
        fake_llm: FakeLLM, make_client: MakeClient, tmp_path: Path) -> None:
    fake_llm.push(*[cut_off()] * 3)
    env = FakeEnv()
    result = await run_loop(make_client(retry=RetryPolicy(max_attempts=3)), tmp_path, env)
    assert result.terminal_state == "llm_error" and env.actions == []
    assert result.error is not None and "gave up after 3 attempts" in result.error.message


# ---------------------------------------------------------------- providers that never answer


def test_defaults_give_up_on_a_dead_provider_within_a_minute() -> None:
    """No new attempt starts once unanswered attempts and their waits pass the budget, and each
    attempt waits at most its connect timeout plus, streamed, its response timeout."""
    timeouts, policy = Timeouts(), RetryPolicy()
    assert policy.unanswered_budget_s + timeouts.connect_s + timeouts.response_s <= 60
    assert policy.retry_budget_s == 900 and policy.max_attempts == 8  # answered failures


@pytest.mark.asyncio
@pytest.mark.parametrize(("stream", "after_headers"), [(True, False), (True, True),
                                                      (False, False)])
async def test_a_hung_provider_is_given_up_within_the_unanswered_budget(
        fake_llm: FakeLLM, make_client: MakeClient, tmp_path: Path, stream: bool,
        after_headers: bool) -> None:
    fake_llm.push(*[stall(5.0, after_headers=after_headers)] * 8)
    client = make_client(stream=stream, timeouts=Timeouts(response_s=0.3, read_s=0.3,
                                                          stream_idle_s=0.3),
                         retry=RetryPolicy(unanswered_budget_s=1.0))
    started = time.monotonic()
    result = await run_loop(client, tmp_path)
    elapsed = time.monotonic() - started
    assert result.terminal_state == "llm_error" and elapsed < 1.0 + 0.3 + 1.0
    assert result.error is not None and "without any answer" in result.error.message
    assert result.error.details["kind"] == "unreachable"
    attempts = result.error.details["attempts"]
    assert len(attempts) == len(fake_llm.requests) < 8
    assert {a["outcome"] for a in attempts} == {"transient"}


@pytest.mark.asyncio
async def test_refused_connections_are_given_up_within_the_unanswered_budget(
        tmp_path: Path) -> None:
    sleep = SleepRecorder()
    client = OpenAICompatClient("m", api_key="k", base_url="http://127.0.0.1:9/v1",
                                sleep=sleep, rng=random.Random(7))
    try:
        result = await run_loop(client, tmp_path)
    finally:
        await client.aclose()
    assert result.terminal_state == "llm_error"
    attempts = result.error.details["attempts"]
    spent = sum(a["latency_s"] + a["wait_s"] for a in attempts)
    assert spent <= RetryPolicy().unanswered_budget_s + 1 and len(attempts) < 8
    assert all("APIConnectionError" in a["message"] for a in attempts)


# ---------------------------------------------------------------- what a failed call ran into


@pytest.mark.asyncio
@pytest.mark.parametrize(("status", "message", "kind"), [
    (401, "Incorrect API key provided", "auth"),
    (404, "The model `nope` does not exist.", "model_not_found"),
    (400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
     "tool_choice"),
    (400, "messages: field required", "bad_request"),
    (400, "This model's maximum context length is 8192 tokens", "context"),
])
async def test_a_failed_call_names_what_it_ran_into(
        fake_llm: FakeLLM, make_client: MakeClient, tmp_path: Path, status: int, message: str,
        kind: str) -> None:
    fake_llm.push(*[http_error(status, message)] * 2)
    result = await run_loop(make_client(), tmp_path)
    assert result.error is not None and result.error.details["kind"] == kind


@pytest.mark.asyncio
@pytest.mark.parametrize(("base_url", "kind", "says"), [
    ("http://127.0.0.1:9/v1", "connection_refused", "Connect call failed"),
    ("http://no-such-host.invalid/v1", "dns", "Errno"),
])
async def test_an_unreachable_provider_is_named_with_the_cause_below_the_sdk_error(
        tmp_path: Path, base_url: str, kind: str, says: str) -> None:
    client = OpenAICompatClient("m", api_key="k", base_url=base_url, sleep=SleepRecorder(),
                                rng=random.Random(7))
    try:
        result = await run_loop(client, tmp_path)
    finally:
        await client.aclose()
    assert result.error is not None and result.error.details["kind"] == kind
    assert says in result.error.message
