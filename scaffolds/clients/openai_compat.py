"""OpenAI-compatible chat-completions client on the official `openai` SDK (spec §2.2).

Covers OpenAI, vLLM, SGLang, DeepSeek and OpenRouter through `base_url`. The SDK's own retries
are off (`max_retries=0`): the shared `Retrier` does all retrying so every attempt is counted.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

import openai
from pydantic import BaseModel, ConfigDict, Field

from scaffolds.clients.base import (
    AttemptError,
    FinishReason,
    GenerateRequest,
    GenerateResult,
    Usage,
)
from scaffolds.clients.openai_wire import (
    ReasoningEcho,
    StreamAssembler,
    message_from_wire,
    provider_cost,
    usage_from_wire,
    wire_messages,
    wire_tools,
)
from scaffolds.clients.retry import Retrier, RetryPolicy, Sleep, classify_status, parse_retry_after
from scaffolds.messages import Message, assistant_message


class Timeouts(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    connect_s: float = Field(default=10.0, gt=0)
    read_s: float = Field(default=600.0, gt=0)
    stream_idle_s: float = Field(default=180.0, gt=0)
    """Longest gap between two streamed chunks."""
    attempt_s: float = Field(default=1800.0, gt=0)
    """Whole attempt, streaming included."""


class OpenAICompatClient:
    def __init__(self, model: str, *, api_key: str, base_url: str | None = None,
                 stream: bool = True, timeouts: Timeouts | None = None,
                 retry: RetryPolicy | None = None, reasoning_echo: ReasoningEcho = "all",
                 extra_body: Mapping[str, Any] | None = None,
                 parallel_tool_calls: bool | None = None,
                 max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = (
                     "max_completion_tokens"),
                 sleep: Sleep = asyncio.sleep, rng: random.Random | None = None,
                 wall_clock: Callable[[], float] = time.time) -> None:
        self.model = model
        self.stream = stream
        self.timeouts = timeouts or Timeouts()
        self.reasoning_echo: ReasoningEcho = reasoning_echo
        self.extra_body = dict(extra_body or {})
        self.parallel_tool_calls = parallel_tool_calls
        self.max_tokens_field = max_tokens_field
        self._retrier = Retrier(retry, sleep=sleep, rng=rng)
        self._wall_clock = wall_clock
        self._sdk = openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0,
                                       timeout=self._timeout(None))

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        params = self._request_params(request)
        return await self._retrier.call(lambda: self._attempt(params, request.timeout_s))

    async def aclose(self) -> None:
        await self._sdk.close()

    def _request_params(self, request: GenerateRequest) -> dict[str, Any]:
        """Keyword arguments of `chat.completions.create` for this request."""
        params: dict[str, Any] = {
            "model": self.model,
            "messages": wire_messages(request.messages, self.reasoning_echo),
            self.max_tokens_field: request.sampling.max_output_tokens,
        }
        if request.tools:
            params["tools"] = wire_tools(request.tools)
            params["tool_choice"] = request.tool_choice
            if self.parallel_tool_calls is not None:
                params["parallel_tool_calls"] = self.parallel_tool_calls
        sampling = request.sampling
        for name in ("temperature", "top_p", "seed", "reasoning_effort"):
            value = getattr(sampling, name)
            if value is not None:
                params[name] = value
        if self.extra_body:
            params["extra_body"] = self.extra_body
        return params

    def _timeout(self, read_override: float | None) -> openai.Timeout:
        read = read_override or (self.timeouts.stream_idle_s if self.stream
                                 else self.timeouts.read_s)
        return openai.Timeout(read, connect=self.timeouts.connect_s)

    async def _attempt(self, params: dict[str, Any], read_timeout: float | None) -> GenerateResult:
        started = time.monotonic()
        try:
            async with asyncio.timeout(self.timeouts.attempt_s):
                if self.stream:
                    message, finish, usage, ttft, request_id, cost = await self._streamed(
                        params, read_timeout)
                else:
                    message, finish, usage, ttft, request_id, cost = await self._whole(
                        params, read_timeout)
        except openai.APIStatusError as exc:
            text = _provider_message(exc)
            error_class = classify_status(exc.status_code, text,
                                          self._retrier.policy.context_error_patterns)
            retry_after = parse_retry_after(exc.response.headers, self._wall_clock())
            raise AttemptError(error_class, text, status=exc.status_code,
                               retry_after_s=retry_after) from exc
        except openai.APIError as exc:
            raise AttemptError("transient", f"{type(exc).__name__}: {exc}") from exc
        except TimeoutError as exc:
            raise AttemptError("transient",
                               f"attempt timed out after {self.timeouts.attempt_s} s") from exc
        except (json.JSONDecodeError, _MalformedResponse) as exc:
            raise AttemptError("transient", f"malformed response: {exc}") from exc
        return GenerateResult(message=message, finish_reason=finish, usage=usage,
                              latency_s=time.monotonic() - started, ttft_s=ttft,
                              request_id=request_id, cost_usd=cost,
                              cost_source="provider" if cost is not None else None)

    async def _whole(self, params: dict[str, Any], read_timeout: float | None) -> _Reply:
        completion = await self._sdk.chat.completions.create(
            **params, timeout=self._timeout(read_timeout))
        if not isinstance(completion, openai.BaseModel):
            raise _MalformedResponse(f"not a chat completion: {str(completion)[:200]!r}")
        data = completion.model_dump()
        choices = data.get("choices") or []
        if choices:
            message, finish = message_from_wire(choices[0])
        else:
            message, finish = assistant_message(), "stop"
        usage = data.get("usage")
        return (message, finish, usage_from_wire(usage), None, completion._request_id,
                provider_cost(usage))

    async def _streamed(self, params: dict[str, Any], read_timeout: float | None) -> _Reply:
        assembler = StreamAssembler()
        stream = await self._sdk.chat.completions.create(
            **params, stream=True, stream_options={"include_usage": True},
            timeout=self._timeout(read_timeout))
        async with stream:
            async for chunk in stream:
                assembler.add(chunk.model_dump())
        message, finish = assembler.message()
        return (message, finish, usage_from_wire(assembler.usage), assembler.ttft_s,
                stream.response.headers.get("x-request-id"), provider_cost(assembler.usage))


_Reply = tuple[Message, FinishReason, Usage, float | None, str | None, float | None]


class _MalformedResponse(ValueError):
    """The server answered with something that is not a chat completion."""


def _provider_message(exc: openai.APIStatusError) -> str:
    """The provider's own error text when the body has one, else the SDK's summary."""
    body = exc.body
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return f"HTTP {exc.status_code}: {inner['message']}"
    return f"HTTP {exc.status_code}: {exc.message}"
