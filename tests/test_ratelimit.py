"""Rate limiting (see docs/concepts/model-clients.md): the concurrency cap with AIMD, token buckets for requests and
tokens per minute with correction to the reported usage, the split between worker processes,
and the limiter in the retry loop of a real client against the fake server."""

from __future__ import annotations

import asyncio

import pytest

from scaffolds.clients import GenerateRequest, RateLimits, Sampling
from scaffolds.clients.ratelimit import LocalLimiter
from scaffolds.messages import user_message
from tests.fake_llm import FakeLLM, MakeClient, completion, http_error


class VirtualTime:
    """A clock and a sleep that advances it (no real waiting)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.mark.asyncio
async def test_no_more_calls_in_flight_than_the_cap() -> None:
    limiter = LocalLimiter(RateLimits(max_in_flight=2))
    peak = 0

    async def call() -> None:
        nonlocal peak
        await limiter.acquire(10)
        peak = max(peak, limiter.in_flight)
        await asyncio.sleep(0.01)
        await limiter.release(10, 10, False)

    await asyncio.gather(*(call() for _ in range(7)))
    assert peak == 2 and limiter.in_flight == 0


@pytest.mark.asyncio
async def test_throttling_halves_the_cap_and_success_adds_one_back() -> None:
    limiter = LocalLimiter(RateLimits(max_in_flight=8))
    for expected in (4, 2, 1, 1):
        await limiter.acquire(1)
        await limiter.release(1, None, True)
        assert limiter.cap == expected
    for expected in (2, 3, 4, 5, 6, 7, 8, 8):
        await limiter.acquire(1)
        await limiter.release(1, 1, False)
        assert limiter.cap == expected
    assert limiter.throttles == 4


@pytest.mark.asyncio
async def test_token_bucket_waits_and_is_corrected_to_the_usage() -> None:
    time = VirtualTime()
    limiter = LocalLimiter(RateLimits(tokens_per_minute=600), clock=time.clock, sleep=time.sleep)
    await limiter.acquire(600)  # a full minute's worth at once
    assert time.slept == []
    await limiter.release(600, 300, False)  # only 300 were spent: 300 come back
    await limiter.acquire(450)  # 150 short: 15 s at 10 tokens per second
    assert sum(time.slept) == pytest.approx(15.0)
    await limiter.release(450, 450, False)
    await limiter.acquire(10**6)  # more than the bucket holds: charged as a full bucket
    assert sum(time.slept) == pytest.approx(75.0)


@pytest.mark.asyncio
async def test_requests_per_minute() -> None:
    time = VirtualTime()
    limiter = LocalLimiter(RateLimits(requests_per_minute=60), clock=time.clock, sleep=time.sleep)
    for _ in range(60):
        await limiter.acquire(0)
        await limiter.release(0, 0, False)
    assert time.slept == []
    await limiter.acquire(0)
    assert sum(time.slept) == pytest.approx(1.0)


def test_a_run_is_split_evenly_between_worker_processes() -> None:
    limits = RateLimits(max_in_flight=5, requests_per_minute=100, tokens_per_minute=90_000)
    assert limits.split(2) == RateLimits(max_in_flight=2, requests_per_minute=50,
                                         tokens_per_minute=45_000)
    assert RateLimits(max_in_flight=1).split(4).max_in_flight == 1
    assert RateLimits().unlimited and not limits.unlimited


@pytest.mark.asyncio
async def test_a_429_through_a_real_client_throttles_the_limiter(fake_llm: FakeLLM,
                                                                 make_client: MakeClient) -> None:
    limiter = LocalLimiter(RateLimits(max_in_flight=4, tokens_per_minute=10**6))
    fake_llm.push(http_error(429, "slow down", retry_after=1), completion("ok"))
    client = make_client(limiter=limiter)
    result = await client.generate(GenerateRequest(
        messages=[user_message(["hi"], "task")], tools=[], sampling=Sampling(max_output_tokens=100),
        predicted_input_tokens=50))
    assert result.message.text == "ok"
    assert [a.outcome for a in result.attempts] == ["transient", "ok"]
    assert (limiter.throttles, limiter.cap, limiter.in_flight) == (1, 3, 0)  # halved, then +1
