"""The retry layer alone: error classes, Retry-After, backoff bounds, budget, determinism."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scaffolds.clients import AttemptError, GenerateResult, LLMCallError, Usage
from scaffolds.clients.retry import (
    Retrier,
    RetryPolicy,
    backoff_s,
    classify_status,
    parse_retry_after,
    retry_after_wait_s,
)
from scaffolds.messages import assistant_message

PATTERNS = RetryPolicy().context_error_patterns
NOW = 1_767_225_600.0


@pytest.mark.parametrize(("status", "message", "expected"), [
    (429, "", "transient"), (408, "", "transient"), (409, "", "transient"),
    (425, "", "transient"), (500, "", "transient"), (502, "", "transient"),
    (503, "", "transient"), (504, "", "transient"), (529, "", "transient"),
    (520, "", "transient"), (400, "bad field", "fatal"), (404, "", "fatal"),
    (422, "", "fatal"), (401, "", "auth"), (403, "", "auth"), (413, "", "context"),
    (400, "This model's maximum context length is 8192 tokens", "context"),
    (400, "prompt is too long: 210000 tokens > 200000 maximum", "context"),
])
def test_classify_status(status: int, message: str, expected: str) -> None:
    assert classify_status(status, message, PATTERNS) == expected


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "7"}, NOW) == 7.0
    assert parse_retry_after({"retry-after": "1.5"}, NOW) == 1.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}, NOW) == 0.25
    date = format_datetime(datetime.fromtimestamp(NOW + 42, tz=UTC), usegmt=True)
    assert parse_retry_after({"retry-after": date}, NOW) == 42.0
    past = format_datetime(datetime.fromtimestamp(NOW - 42, tz=UTC), usegmt=True)
    assert parse_retry_after({"retry-after": past}, NOW) == 0.0
    assert parse_retry_after({"retry-after": "soon"}, NOW) is None
    assert parse_retry_after({}, NOW) is None


@given(attempt=st.integers(min_value=1, max_value=40), seed=st.integers(0, 2**32))
def test_backoff_stays_within_full_jitter_bounds(attempt: int, seed: int) -> None:
    wait = backoff_s(attempt, RetryPolicy(), random.Random(seed))
    assert 0.25 <= wait <= min(60.0, 2.0 ** (attempt - 1))


@given(retry_after=st.floats(min_value=0, max_value=1000), seed=st.integers(0, 2**32))
def test_retry_after_wait_adds_at_most_ten_percent_and_is_capped(retry_after: float,
                                                                 seed: int) -> None:
    wait = retry_after_wait_s(retry_after, RetryPolicy(), random.Random(seed))
    assert max(0.25, min(120.0, retry_after)) <= wait <= max(0.25, min(120.0, 1.1 * retry_after))


class Script:
    """An attempt function failing with the given errors, then answering."""

    def __init__(self, *errors: AttemptError, reply: str = "ok") -> None:
        self.errors = list(errors)
        self.reply = reply
        self.calls = 0

    async def __call__(self) -> GenerateResult:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return GenerateResult(message=assistant_message(self.reply), finish_reason="stop",
                              usage=Usage())


async def run(script: Script, policy: RetryPolicy | None = None,
              seed: int = 0) -> tuple[GenerateResult | LLMCallError, list[float]]:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    retrier = Retrier(policy, sleep=sleep, rng=random.Random(seed))
    try:
        return await retrier.call(script), waits
    except LLMCallError as exc:
        return exc, waits


def transient(status: int = 503, retry_after: float | None = None) -> AttemptError:
    return AttemptError("transient", f"HTTP {status}", status=status, retry_after_s=retry_after)


@pytest.mark.asyncio
async def test_same_seed_same_waits() -> None:
    first = await run(Script(*[transient()] * 5), seed=11)
    second = await run(Script(*[transient()] * 5), seed=11)
    other = await run(Script(*[transient()] * 5), seed=12)
    assert first[1] == second[1] != other[1]
    assert isinstance(first[0], GenerateResult)
    assert [a.wait_s for a in first[0].attempts[:-1]] == first[1]


@pytest.mark.asyncio
async def test_fatal_error_is_raised_at_once() -> None:
    script = Script(AttemptError("fatal", "HTTP 400: bad", status=400))
    error, waits = await run(script)
    assert isinstance(error, LLMCallError) and error.error_class == "fatal"
    assert script.calls == 1 and waits == []
    (attempt,) = error.attempts
    assert (attempt.number, attempt.outcome, attempt.status, attempt.wait_s) == (1, "fatal", 400,
                                                                                 0.0)


@pytest.mark.asyncio
async def test_max_attempts_bounds_the_tries() -> None:
    script = Script(*[transient()] * 10)
    error, waits = await run(script, RetryPolicy(max_attempts=3))
    assert isinstance(error, LLMCallError) and error.error_class == "transient"
    assert script.calls == 3 and len(waits) == 2
    assert "gave up after 3 attempts" in error.message


@pytest.mark.asyncio
async def test_retry_budget_stops_long_waits() -> None:
    script = Script(transient(429, retry_after=100.0), transient(429, retry_after=100.0))
    error, waits = await run(script, RetryPolicy(retry_budget_s=150.0))
    assert isinstance(error, LLMCallError)
    assert script.calls == 2 and len(waits) == 1 and 100.0 <= waits[0] <= 110.0


@pytest.mark.asyncio
async def test_empty_replies_are_resent_without_waiting() -> None:
    class Empty(Script):
        async def __call__(self) -> GenerateResult:
            self.calls += 1
            text = "" if self.calls < 3 else "finally"
            return GenerateResult(message=assistant_message(text), finish_reason="stop",
                                  usage=Usage())

    script = Empty()
    result, waits = await run(script)
    assert isinstance(result, GenerateResult) and result.message.text == "finally"
    assert [a.outcome for a in result.attempts] == ["empty", "empty", "ok"] and waits == []
    script = Empty()
    result, _ = await run(script, RetryPolicy(empty_retries=1))
    assert isinstance(result, GenerateResult) and result.message.is_empty and script.calls == 2
