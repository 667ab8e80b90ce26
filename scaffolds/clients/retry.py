"""Error classes, Retry-After parsing and the retry loop shared by every client (see docs/concepts/model-clients.md).

Waits use full-jitter exponential backoff, or the server's Retry-After plus up to 10 % jitter.
The sleep function, the RNG and the clock are injected, so tests run instantly and
deterministically; every attempt is recorded.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import re
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from scaffolds.clients.base import (
    Attempt,
    AttemptError,
    ErrorClass,
    FaultKind,
    GenerateResult,
    LLMCallError,
)
from scaffolds.clients.ratelimit import Limiter

TRANSIENT_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
AUTH_STATUSES = frozenset({401, 403})
DEFAULT_CONTEXT_ERROR_PATTERNS = (
    r"context[ _-]?length",
    r"context[ _-]?window",
    r"maximum context",
    r"prompt is too long",
    r"too many (input )?tokens",
    r"reduce the length",
    r"input is too long",
)
TOOL_CHOICE_PATTERN = re.compile(r"tool[ _-]?choice|tool[ _-]call[ _-]parser", re.IGNORECASE)
"""A 400 saying the server cannot do tool calls (vLLM without `--enable-auto-tool-choice`)."""

Sleep = Callable[[float], Awaitable[None]]


class Timeouts(BaseModel):
    """Per attempt. With the retry policy's `unanswered_budget_s`, the defaults give up on a
    provider that refuses connections, cannot be reached or never starts a response within a
    minute (`test_defaults_give_up_on_a_dead_provider_within_a_minute`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    connect_s: float = Field(default=10.0, gt=0)
    response_s: float = Field(default=30.0, gt=0)
    """Streamed calls: from sending the request to the response headers. A live server starts
    the stream at once (prompt processing comes after), so this stays short."""
    read_s: float = Field(default=600.0, gt=0)
    """Calls without streaming: the whole reply comes at once, so this must cover generation."""
    stream_idle_s: float = Field(default=180.0, gt=0)
    """Longest gap between two streamed chunks (the first one comes after prompt processing)."""
    attempt_s: float = Field(default=1800.0, gt=0)
    """Whole attempt, streaming included."""


class RetryPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int = Field(default=8, ge=1)
    base_delay_s: float = Field(default=1.0, gt=0)
    max_delay_s: float = Field(default=60.0, gt=0)
    min_delay_s: float = Field(default=0.25, ge=0)
    max_retry_after_s: float = Field(default=120.0, gt=0)
    retry_after_jitter: float = Field(default=0.1, ge=0)
    retry_budget_s: float = Field(default=900.0, gt=0)
    """Per call: time spent in attempts and waits, plus the next wait, may not exceed this."""
    unanswered_budget_s: float = Field(default=20.0, gt=0)
    """Per call, while no attempt has had any answer (connection refused or timed out, no
    response, no streamed chunk): the same bound for those attempts and their waits. A dead
    provider fails the call within this plus one attempt's connect or response timeout."""
    empty_retries: int = Field(default=2, ge=0)
    on_length: Literal["accept", "retry_once"] = "accept"
    context_error_patterns: tuple[str, ...] = DEFAULT_CONTEXT_ERROR_PATTERNS


def classify_status(status: int, message: str, context_patterns: tuple[str, ...]) -> ErrorClass:
    """Map an HTTP error status (and the provider's message) to an error class."""
    if status == 413 or (status == 400 and any(
            re.search(p, message, re.IGNORECASE) for p in context_patterns)):
        return "context"
    if status in AUTH_STATUSES:
        return "auth"
    if status in TRANSIENT_STATUSES or status >= 500:
        return "transient"
    return "fatal"


def fault_kind(error: AttemptError) -> FaultKind:
    """What a failed attempt ran into: from its HTTP status and message when it had an answer,
    else from the exceptions below it (a refused connection, a name that does not resolve)."""
    if error.error_class == "context":
        return "context"
    status = error.status
    if status is not None:
        if status in AUTH_STATUSES:
            return "auth"
        if status == 404:
            return "model_not_found"
        if status == 429:
            return "rate_limited"
        if status >= 500:
            return "server_error"
        if status == 400 and TOOL_CHOICE_PATTERN.search(error.message):
            return "tool_choice"
        return "other" if status in TRANSIENT_STATUSES else "bad_request"
    causes = list(_causes(error))
    if any(isinstance(c, socket.gaierror) for c in causes):
        return "dns"
    if any(isinstance(c, ConnectionRefusedError) for c in causes):
        return "connection_refused"
    return "unreachable" if error.unanswered else "other"


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions below `exc` (explicit causes, else the context), outermost first."""
    seen: set[int] = set()
    below = exc.__cause__ or exc.__context__
    while below is not None and id(below) not in seen:
        seen.add(id(below))
        yield below
        below = below.__cause__ or below.__context__


def parse_retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `Retry-After` in seconds or as an HTTP date.

    `now` is the current Unix time, used only for the HTTP-date form. Negative values clamp to 0.
    """
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - now)


def backoff_s(attempt: int, policy: RetryPolicy, rng: random.Random) -> float:
    """Full jitter: uniform(0, min(max_delay, base * 2**(attempt-1))), at least the floor."""
    ceiling = min(policy.max_delay_s, policy.base_delay_s * 2 ** (attempt - 1))
    return max(policy.min_delay_s, rng.uniform(0.0, ceiling))


def retry_after_wait_s(retry_after: float, policy: RetryPolicy, rng: random.Random) -> float:
    jittered = retry_after * (1.0 + rng.uniform(0.0, policy.retry_after_jitter))
    return max(policy.min_delay_s, min(policy.max_retry_after_s, jittered))


@dataclass
class _Permit:
    used: int | None = None
    throttled: bool = False


class Retrier:
    """Runs one model call with the shared retry rules (see docs/concepts/model-clients.md)."""

    def __init__(self, policy: RetryPolicy | None = None, *, sleep: Sleep = asyncio.sleep,
                 rng: random.Random | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 limiter: Limiter | None = None) -> None:
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._rng = rng or random.Random(0)
        self._clock = clock
        self._limiter = limiter

    @asynccontextmanager
    async def _permit(self, tokens: int) -> AsyncIterator[_Permit]:
        """The rate limiter's permit for one attempt (nothing to wait for without a limiter)."""
        permit = _Permit()
        if self._limiter is None:
            yield permit
            return
        await self._limiter.acquire(tokens)
        try:
            yield permit
        finally:
            await self._limiter.release(tokens, permit.used, permit.throttled)

    async def call(self, attempt: Callable[[], Awaitable[GenerateResult]],
                   tokens: int = 0) -> GenerateResult:
        """Call `attempt` until it yields an acceptable result; raise `LLMCallError` otherwise.

        `attempt` raises `AttemptError` for a failed try. Each attempt holds a permit of the
        rate limiter charged with `tokens` (the predicted input plus the output limit). Empty
        replies are resent up to `empty_retries` times and then returned; a `length` finish is
        resent once under `on_length: retry_once`.
        """
        policy = self.policy
        history: list[Attempt] = []
        answered = False
        empties = 0
        length_retried = False
        number = 0
        while True:
            number += 1
            failed: AttemptError | None = None
            async with self._permit(tokens) as permit:
                t0 = self._clock()
                try:
                    result = await attempt()
                    permit.used = result.usage.input_tokens + result.usage.output_tokens \
                        if result.usage.reported else None
                except AttemptError as error:
                    permit.throttled = error.status == 429
                    failed = error
                latency = self._clock() - t0
            if failed is not None:
                answered = answered or not failed.unanswered
                spent = sum(a.latency_s + a.wait_s for a in history) + latency
                wait = self._wait_after(failed, number, spent, answered)
                history.append(Attempt(number, failed.error_class, failed.status, failed.message,
                                       wait or 0.0, latency))
                if wait is None:
                    message = self._final_message(failed, number, spent, answered)
                    raise LLMCallError(failed.error_class, message, status=failed.status,
                                       attempts=tuple(history), kind=fault_kind(failed)) from failed
                await self._sleep(wait)
                continue
            if result.message.is_empty and empties < policy.empty_retries:
                empties += 1
                history.append(Attempt(number, "empty", None,
                                       "reply had no text and no tool calls", 0.0, latency))
                continue
            if (result.finish_reason == "length" and policy.on_length == "retry_once"
                    and not length_retried):
                length_retried = True
                history.append(Attempt(number, "length", None, "output limit reached", 0.0,
                                       latency))
                continue
            history.append(Attempt(number, "ok", None, "", 0.0, latency))
            return replace(result, attempts=tuple(history))

    def _wait_after(self, error: AttemptError, number: int, spent: float,
                    answered: bool) -> float | None:
        """Seconds to sleep before the next attempt, or None when the call must fail now."""
        policy = self.policy
        if error.error_class != "transient" or number >= policy.max_attempts:
            return None
        if error.retry_after_s is not None:
            wait = retry_after_wait_s(error.retry_after_s, policy, self._rng)
        else:
            wait = backoff_s(number, policy, self._rng)
        budget = policy.retry_budget_s if answered else min(policy.retry_budget_s,
                                                            policy.unanswered_budget_s)
        return None if spent + wait > budget else wait

    def _final_message(self, error: AttemptError, number: int, spent: float,
                       answered: bool) -> str:
        if error.error_class != "transient":
            return error.message
        if not answered:
            roots = [str(c) for c in _causes(error) if str(c)]
            root = roots[-1] if roots else error.message
            reason = error.message if root in error.message else f"{error.message} ({root})"
            return (f"gave up after {number} attempts in {spent:.1f} s without any answer from "
                    f"the provider: {reason}")
        return f"gave up after {number} attempts: {error.message}"
