"""Rate limiting of model calls (see docs/concepts/model-clients.md): per rate group (provider, endpoint and key), a
concurrency cap and token buckets for requests and tokens per minute.

Each attempt takes a permit before it is sent, charged with the request's predicted input plus
its output limit, and gives it back when it ends, corrected to the tokens the provider reported.
A throttled attempt (HTTP 429) halves the concurrency cap; each call that goes through raises it
by one again, up to the configured maximum (AIMD). One `Limiter` serves every episode of a
process; `share` installs another (the runner's Ray executor installs one that asks a limiter
actor, so that all workers share one budget)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

Sleep = Callable[[float], Awaitable[None]]


class RateLimits(BaseModel):
    """Limits of one rate group; None: unlimited."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_in_flight: int | None = Field(default=None, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)

    @property
    def unlimited(self) -> bool:
        return self.max_in_flight is None and self.requests_per_minute is None \
            and self.tokens_per_minute is None

    def split(self, parts: int) -> RateLimits:
        """One of `parts` equal shares (each keeps at least one call in flight)."""
        def share(value: float | None) -> float | None:
            return None if value is None else value / parts
        return RateLimits(
            max_in_flight=None if self.max_in_flight is None else max(1, self.max_in_flight // parts),
            requests_per_minute=share(self.requests_per_minute),
            tokens_per_minute=share(self.tokens_per_minute))


class Limiter(Protocol):
    async def acquire(self, tokens: int) -> None: ...
    async def release(self, tokens: int, used: int | None, throttled: bool) -> None: ...


class _Bucket:
    """`per_minute` units refilled continuously, holding at most one minute's worth."""

    def __init__(self, per_minute: float, now: float) -> None:
        self.rate = per_minute / 60.0
        self.capacity = per_minute
        self.level = per_minute
        self.stamp = now

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_s(self, amount: float) -> float:
        """Seconds until `amount` (at most the capacity) is there."""
        return max(0.0, (min(amount, self.capacity) - self.level) / self.rate)


class LocalLimiter:
    """The limits of one rate group within one event loop's process."""

    def __init__(self, limits: RateLimits, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Sleep = asyncio.sleep) -> None:
        self.limits = limits
        self._clock, self._sleep = clock, sleep
        now = clock()
        self._requests = None if limits.requests_per_minute is None else _Bucket(limits.requests_per_minute, now)
        self._tokens = None if limits.tokens_per_minute is None else _Bucket(limits.tokens_per_minute, now)
        self.cap = limits.max_in_flight
        self.in_flight = 0
        self.throttles = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed = asyncio.Condition()

    def _condition(self) -> asyncio.Condition:
        """The condition of the running loop (episodes run one event loop after another)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop, self._changed = loop, asyncio.Condition()
        return self._changed

    async def acquire(self, tokens: int) -> None:
        changed = self._condition()
        async with changed:
            await changed.wait_for(lambda: self.cap is None or self.in_flight < self.cap)
            self.in_flight += 1
        try:
            while (wait := self._bucket_wait(tokens)) > 0:
                await self._sleep(wait)
        except BaseException:
            await self._done()
            raise
        if self._requests is not None:
            self._requests.level -= 1
        if self._tokens is not None:
            self._tokens.level -= min(tokens, self._tokens.capacity)

    async def release(self, tokens: int, used: int | None, throttled: bool) -> None:
        if self._tokens is not None and used is not None:
            self._tokens.level += min(tokens, self._tokens.capacity) - used  # charged vs spent
        maximum = self.limits.max_in_flight
        if maximum is not None and self.cap is not None:
            if throttled:
                self.throttles += 1
                self.cap = max(1, self.cap // 2)
            else:
                self.cap = min(maximum, self.cap + 1)
        await self._done()

    def _bucket_wait(self, tokens: int) -> float:
        now = self._clock()
        waits = [0.0]
        if self._requests is not None:
            self._requests.refill(now)
            waits.append(self._requests.wait_s(1))
        if self._tokens is not None:
            self._tokens.refill(now)
            waits.append(self._tokens.wait_s(tokens))
        return max(waits)

    async def _done(self) -> None:
        changed = self._condition()
        async with changed:
            self.in_flight -= 1
            changed.notify_all()


_LIMITERS: dict[str, Limiter] = {}
_SHARED: dict[str, Limiter] = {}


def limiter_for(group: str, limits: RateLimits) -> Limiter | None:
    """The limiter of rate group `group` in this process (None when `limits` are unlimited): the
    one `share` installed for it, else one made here and kept for every later episode."""
    if group in _SHARED:
        return _SHARED[group]
    if limits.unlimited:
        return None
    if group not in _LIMITERS:
        _LIMITERS[group] = LocalLimiter(limits)
    return _LIMITERS[group]


def share(group: str, limiter: Limiter) -> None:
    """Serve rate group `group` from `limiter` in this process (a worker of a shared budget)."""
    _SHARED[group] = limiter
