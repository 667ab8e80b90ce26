"""Faults of the Messages API against the Anthropic client, each retried or given up as the
shared retry policy says (see docs/concepts/model-clients.md): rate limits with Retry-After, overload (529) and server
errors, errors inside 200 responses, replies that are not whole, hung and refused providers,
fatal, auth and too-long requests."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from scaffolds.clients import AnthropicClient, LLMCallError, RetryPolicy, Timeouts
from tests.fake_anthropic import (
    FakeAnthropic,
    MakeAnthropic,
    cut_off,
    error_event,
    http_error,
    malformed,
    message,
    overloaded,
    reset,
    stall,
    text,
)
from tests.fake_llm import FIXED_NOW, SleepRecorder
from tests.test_scaffold_anthropic import STREAM, request, run_loop


def rate_limited(kind: str) -> Any:
    if kind == "seconds":
        return http_error(429, error_type="rate_limit_error", retry_after=2)
    return http_error(429, error_type="rate_limit_error",
                      retry_after_date=datetime.fromtimestamp(FIXED_NOW + 30, tz=UTC))


@pytest.mark.asyncio
@pytest.mark.parametrize(("kind", "low", "high", "stream"), [
    ("seconds", 2.0, 2.2, True), ("seconds", 2.0, 2.2, False), ("http_date", 30.0, 33.0, True)])
async def test_429_honours_retry_after(fake_anthropic: FakeAnthropic,
                                       make_anthropic: MakeAnthropic, kind: str, low: float,
                                       high: float, stream: bool) -> None:
    fake_anthropic.push(rate_limited(kind), message(text("ok")))
    sleep = SleepRecorder()
    result = await make_anthropic(stream=stream, sleep=sleep).generate(request())
    assert result.message.text == "ok" and len(fake_anthropic.requests) == 2
    assert [(a.outcome, a.status) for a in result.attempts] == [("transient", 429), ("ok", None)]
    (wait,) = sleep.waits
    assert low <= wait <= high and result.attempts[0].wait_s == wait


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", STREAM)
async def test_overloaded_and_server_errors_back_off_with_full_jitter(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, stream: bool) -> None:
    statuses = [529, 500, 502, 503, 504, 408, 409]
    fake_anthropic.push(overloaded(), *[http_error(s) for s in statuses[1:]], message(text("ok")))
    sleep = SleepRecorder()
    result = await make_anthropic(stream=stream, sleep=sleep).generate(request())
    assert result.message.text == "ok" and len(fake_anthropic.requests) == 8
    assert [(a.outcome, a.status) for a in result.attempts] == [
        *[("transient", s) for s in statuses], ("ok", None)]
    assert "Overloaded" in result.attempts[0].message
    for n, wait in enumerate(sleep.waits, start=1):
        assert 0.25 <= wait <= min(60.0, 2.0 ** (n - 1))


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", STREAM)
async def test_an_error_inside_a_200_response_is_retried(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, stream: bool) -> None:
    fake_anthropic.push(error_event(), error_event("api_error", "Internal"), message(text("ok")))
    sleep = SleepRecorder()
    result = await make_anthropic(stream=stream, sleep=sleep).generate(request())
    assert result.message.text == "ok"
    assert [(a.outcome, a.status) for a in result.attempts] == [
        ("transient", 529), ("transient", 500), ("ok", None)]
    assert "provider error in a 200 response: Overloaded" in result.attempts[0].message
    assert len(sleep.waits) == 2


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", STREAM)
async def test_an_invalid_request_inside_a_200_response_is_fatal(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, stream: bool) -> None:
    fake_anthropic.push(error_event("invalid_request_error", "tools.0: bad schema"))
    with pytest.raises(LLMCallError) as info:
        await make_anthropic(stream=stream).generate(request())
    assert (info.value.error_class, info.value.status) == ("fatal", 400)
    assert "bad schema" in info.value.message and len(fake_anthropic.requests) == 1


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", STREAM)
@pytest.mark.parametrize("fault", [cut_off, reset, malformed])
async def test_a_reply_that_is_not_whole_is_retried(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, stream: bool,
        fault: Any) -> None:
    fake_anthropic.push(fault(), message(text("ok")))
    sleep = SleepRecorder()
    result = await make_anthropic(stream=stream, sleep=sleep).generate(request())
    assert result.message.text == "ok" and len(fake_anthropic.requests) == 2
    assert [a.outcome for a in result.attempts] == ["transient", "ok"]
    assert len(sleep.waits) == 1


@pytest.mark.asyncio
async def test_a_cut_stream_says_so(fake_anthropic: FakeAnthropic,
                                    make_anthropic: MakeAnthropic) -> None:
    fake_anthropic.push(cut_off(), message(text("ok")))
    result = await make_anthropic().generate(request())
    assert "before message_stop" in result.attempts[0].message


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", STREAM)
async def test_a_stalled_provider_times_out_and_is_retried(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, stream: bool) -> None:
    fake_anthropic.push(stall(5.0), message(text("ok")))
    timeouts = Timeouts(response_s=0.3, read_s=0.3)
    result = await make_anthropic(stream=stream, timeouts=timeouts).generate(request())
    assert result.message.text == "ok"
    assert [a.outcome for a in result.attempts] == ["transient", "ok"]


@pytest.mark.asyncio
@pytest.mark.parametrize(("stream", "after_headers"), [(True, False), (True, True),
                                                      (False, False)])
async def test_a_hung_provider_is_given_up_within_the_unanswered_budget(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, tmp_path: Path,
        stream: bool, after_headers: bool) -> None:
    fake_anthropic.push(*[stall(5.0, after_headers=after_headers)] * 8)
    client = make_anthropic(stream=stream, timeouts=Timeouts(response_s=0.3, read_s=0.3,
                                                             stream_idle_s=0.3),
                            retry=RetryPolicy(unanswered_budget_s=1.0))
    started = time.monotonic()
    result = await run_loop(client, tmp_path)
    assert result.terminal_state == "llm_error" and time.monotonic() - started < 2.3
    assert result.error is not None and "without any answer" in result.error.message
    attempts = result.error.details["attempts"]
    assert len(attempts) == len(fake_anthropic.requests) < 8
    assert {a["outcome"] for a in attempts} == {"transient"}


@pytest.mark.asyncio
async def test_refused_connections_are_given_up_within_the_unanswered_budget(
        tmp_path: Path) -> None:
    client = AnthropicClient("m", api_key="k", base_url="http://127.0.0.1:9",
                             sleep=SleepRecorder(), rng=random.Random(7))
    try:
        result = await run_loop(client, tmp_path)
    finally:
        await client.aclose()
    assert result.terminal_state == "llm_error"
    attempts = result.error.details["attempts"]
    assert sum(a["latency_s"] + a["wait_s"] for a in attempts) <= RetryPolicy().unanswered_budget_s + 1
    assert len(attempts) < 8 and all("APIConnectionError" in a["message"] for a in attempts)


@pytest.mark.asyncio
async def test_retries_are_exhausted_after_max_attempts(fake_anthropic: FakeAnthropic,
                                                        make_anthropic: MakeAnthropic,
                                                        tmp_path: Path) -> None:
    fake_anthropic.push(*[overloaded()] * 8)
    sleep = SleepRecorder()
    result = await run_loop(make_anthropic(sleep=sleep), tmp_path)
    assert result.terminal_state == "llm_error"
    assert len(fake_anthropic.requests) == 8 and len(sleep.waits) == 7
    assert result.error is not None and "gave up after 8 attempts" in result.error.message
    assert result.metrics.retries == 7


@pytest.mark.asyncio
@pytest.mark.parametrize(("status", "error_type", "error_class"), [
    (400, "invalid_request_error", "fatal"), (404, "not_found_error", "fatal"),
    (401, "authentication_error", "auth"), (403, "permission_error", "auth")])
async def test_fatal_and_auth_errors_are_not_retried(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, tmp_path: Path,
        status: int, error_type: str, error_class: str) -> None:
    fake_anthropic.push(http_error(status, "model: claude-nope", error_type=error_type))
    sleep = SleepRecorder()
    result = await run_loop(make_anthropic(sleep=sleep), tmp_path)
    assert result.terminal_state == "llm_error" and sleep.waits == []
    assert len(fake_anthropic.requests) == 1
    assert result.error is not None and result.error.details is not None
    assert (result.error.details["error_class"], result.error.details["status"]) == (
        error_class, status)
    assert "model: claude-nope" in result.error.message


@pytest.mark.asyncio
@pytest.mark.parametrize(("status", "error_type", "text_"), [
    (400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
    (413, "request_too_large", "Request exceeds the maximum allowed number of bytes")])
async def test_too_long_request_is_context_overflow(
        fake_anthropic: FakeAnthropic, make_anthropic: MakeAnthropic, tmp_path: Path,
        status: int, error_type: str, text_: str) -> None:
    fake_anthropic.push(http_error(status, text_, error_type=error_type))
    result = await run_loop(make_anthropic(), tmp_path)
    assert result.terminal_state == "context_overflow"
    assert len(fake_anthropic.requests) == 1
