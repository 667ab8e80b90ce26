"""Anthropic Messages API client on the official `anthropic` SDK (see docs/concepts/model-clients.md).

The SDK's own retries are off (`max_retries=0`): the shared `Retrier` does all retrying, with
the same policy and timeouts as the OpenAI-compatible client. A reply is only accepted whole: an
error event in a stream or an error body in a 200 response, a stream that ends before
`message_stop` and data of an unexpected shape are failed attempts, retried per policy. The API
has no seed; `Sampling.reasoning_effort` is sent as `output_config.effort`, and
`Sampling.reasoning_budget_tokens` turns extended thinking on.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anthropic
import httpx2

from scaffolds.clients.anthropic_wire import (
    ERROR_TYPE_STATUS,
    PromptCaching,
    StreamAssembler,
    mark_cache,
    reply_from_wire,
    stub_tools,
    usage_from_wire,
    wire_messages,
    wire_tools,
)
from scaffolds.clients.base import (
    Attempt,
    AttemptError,
    FinishReason,
    GenerateRequest,
    GenerateResult,
    LLMCallError,
    Usage,
    priced,
    with_usage,
)
from scaffolds.clients.ratelimit import Limiter
from scaffolds.clients.retry import (
    Retrier,
    RetryPolicy,
    Sleep,
    Timeouts,
    classify_status,
    parse_retry_after,
)
from scaffolds.clients.wire import MalformedResponse, ProviderError, as_mapping, parsed
from scaffolds.messages import Message

if TYPE_CHECKING:
    from scaffolds.profiles import Price

_Reply = tuple[Message, FinishReason, Usage, float | None, str | None]


class AnthropicClient:
    def __init__(self, model: str, *, api_key: str, base_url: str | None = None,
                 stream: bool = True, timeouts: Timeouts | None = None,
                 retry: RetryPolicy | None = None, prompt_caching: PromptCaching = "auto",
                 max_output_tokens: int | None = None, price: Price | None = None,
                 sleep: Sleep = asyncio.sleep, rng: random.Random | None = None,
                 wall_clock: Callable[[], float] = time.time, limiter: Limiter | None = None) -> None:
        self.model = model
        self.stream = stream
        self.timeouts = timeouts or Timeouts()
        self.prompt_caching: PromptCaching = prompt_caching
        self.max_output_tokens = max_output_tokens
        """The model's output limit (from its profile): requests never ask for more."""
        self.price = price
        self._retrier = Retrier(retry, sleep=sleep, rng=rng, limiter=limiter)
        self._wall_clock = wall_clock
        self._sdk = anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0,
                                             timeout=self._timeout(None))

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        params = self._request_params(request)
        result = await self._retrier.call(lambda: self._attempt(params, request.timeout_s),
                                          request.predicted_input_tokens + params["max_tokens"])
        return priced(with_usage(result, request), self.price)

    async def aclose(self) -> None:
        await self._sdk.close()

    def _request_params(self, request: GenerateRequest) -> dict[str, Any]:
        """Keyword arguments of `messages.create` for this request."""
        sampling = request.sampling
        max_tokens = min(sampling.max_output_tokens,
                         self.max_output_tokens or sampling.max_output_tokens)
        system, messages = wire_messages(request.messages)
        params: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens,
                                  "messages": messages}
        if system:
            params["system"] = system
        tools = wire_tools(request.tools) if request.tools else stub_tools(request.messages)
        if tools:
            params["tools"] = tools
            params["tool_choice"] = {"type": request.tool_choice if request.tools else "none"}
        budget = sampling.reasoning_budget_tokens
        if budget is not None:
            if budget >= max_tokens:
                message = (f"the thinking budget ({budget}) must be below the output limit "
                           f"({max_tokens}, the model's)")
                raise LLMCallError("fatal", message, attempts=(Attempt(1, "fatal", None, message),))
            params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        # Sampling knobs go in the body as is: recent SDKs no longer list them as arguments.
        extra = {name: getattr(sampling, name) for name in ("temperature", "top_p")
                 if getattr(sampling, name) is not None}
        if sampling.reasoning_effort is not None:
            extra["output_config"] = {"effort": sampling.reasoning_effort}
        if extra:
            params["extra_body"] = extra
        if self.prompt_caching == "auto":
            mark_cache(params)
        return params

    def _timeout(self, read_override: float | None) -> anthropic.Timeout:
        read = read_override or (self.timeouts.stream_idle_s if self.stream
                                 else self.timeouts.read_s)
        return anthropic.Timeout(read, connect=self.timeouts.connect_s)

    async def _attempt(self, params: dict[str, Any], read_timeout: float | None) -> GenerateResult:
        started = time.monotonic()
        assembler = StreamAssembler()
        try:
            async with asyncio.timeout(self.timeouts.attempt_s):
                if self.stream:
                    reply = await self._streamed(params, read_timeout, assembler)
                else:
                    reply = await self._whole(params, read_timeout)
        except anthropic.APIStatusError as exc:
            raise self._status_error(exc) from exc
        except ProviderError as exc:
            raise self._provider_error(exc.error) from exc
        except (anthropic.APIError, httpx2.TransportError) as exc:
            # the SDK wraps transport errors of the request, not those while a stream is read
            raise AttemptError("transient", f"{type(exc).__name__}: {exc}",
                               unanswered=not assembler.received) from exc
        except TimeoutError as exc:
            raise AttemptError("transient", f"attempt timed out after {self.timeouts.attempt_s} s",
                               unanswered=not assembler.received) from exc
        except (json.JSONDecodeError, MalformedResponse) as exc:
            raise AttemptError("transient", f"malformed response: {exc}") from exc
        message, finish, usage, ttft, request_id = reply
        return GenerateResult(message=message, finish_reason=finish, usage=usage,
                              latency_s=time.monotonic() - started, ttft_s=ttft,
                              request_id=request_id)

    async def _whole(self, params: dict[str, Any], read_timeout: float | None) -> _Reply:
        response = await self._sdk.messages.create(**params, timeout=self._timeout(read_timeout))
        if not isinstance(response, anthropic.BaseModel):
            raise MalformedResponse(f"not a message: {str(response)[:200]!r}")
        data = response.model_dump(warnings=False)
        message, finish = parsed(reply_from_wire, data)
        return (message, finish, usage_from_wire(data.get("usage")), None,
                getattr(response, "_request_id", None))

    async def _streamed(self, params: dict[str, Any], read_timeout: float | None,
                        assembler: StreamAssembler) -> _Reply:
        try:
            async with asyncio.timeout(self.timeouts.response_s):
                stream = await self._sdk.messages.create(**params, stream=True,
                                                         timeout=self._timeout(read_timeout))
        except TimeoutError as exc:
            raise AttemptError("transient", f"no response within {self.timeouts.response_s:g} s",
                               unanswered=True) from exc
        async with stream:
            async for event in stream:
                parsed(assembler.add, event.model_dump(warnings=False))
        if not assembler.complete:
            raise AttemptError("transient", "the stream ended before message_stop (cut off)")
        message, finish = parsed(assembler.message)
        return (message, finish, usage_from_wire(assembler.usage), assembler.ttft_s,
                stream.response.headers.get("request-id") or assembler.request_id)

    @property
    def _context_patterns(self) -> tuple[str, ...]:
        return self._retrier.policy.context_error_patterns

    def _status_error(self, exc: anthropic.APIStatusError) -> AttemptError:
        """An HTTP error status, or (status 200) an error event the SDK raised from a stream."""
        if exc.status_code == 200:
            return self._provider_error(as_mapping(exc.body).get("error") or exc.body)
        text = f"HTTP {exc.status_code}: {_error_message(exc.body) or exc.message}"
        error_class = classify_status(exc.status_code, text, self._context_patterns)
        retry_after = parse_retry_after(exc.response.headers, self._wall_clock())
        return AttemptError(error_class, text, status=exc.status_code, retry_after_s=retry_after)

    def _provider_error(self, error: Any) -> AttemptError:
        """An error sent inside a 200 response, classified as its type's HTTP status would be;
        an error of unknown type is transient (or `context` when the message says so)."""
        inner = as_mapping(error)
        message = _error_message(error) or str(error)
        status = ERROR_TYPE_STATUS.get(str(inner.get("type")))
        if status is not None:
            error_class = classify_status(status, message, self._context_patterns)
        else:
            error_class = "context" if any(re.search(p, message, re.IGNORECASE)
                                           for p in self._context_patterns) else "transient"
        return AttemptError(error_class, f"provider error in a 200 response: {message}",
                            status=status)


def _error_message(body: Any) -> str | None:
    """The provider's own error text: `{"error": {"message"}}` or `{"message"}`."""
    body = as_mapping(body)
    inner = as_mapping(body.get("error")) or body
    message = inner.get("message")
    return message if isinstance(message, str) else None
