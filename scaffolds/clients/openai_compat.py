"""OpenAI-compatible chat-completions client on the official `openai` SDK (see docs/concepts/model-clients.md).

Covers OpenAI, vLLM, SGLang, DeepSeek and OpenRouter through `base_url`. The SDK's own retries
are off (`max_retries=0`): the shared `Retrier` does all retrying so every attempt is counted.
A reply is only accepted whole: an error inside a 200 response, a stream that ends without a
finish reason and data of an unexpected shape are failed attempts, retried per policy. A 400
about tool choice says how to start the server so that it serves tool calls.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import openai

from scaffolds.clients.base import (
    AttemptError,
    FinishReason,
    GenerateRequest,
    GenerateResult,
    Usage,
    priced,
    with_usage,
)
from scaffolds.clients.openai_wire import (
    ReasoningEcho,
    StreamAssembler,
    provider_cost,
    reply_from_wire,
    usage_from_wire,
    wire_messages,
    wire_tools,
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
from scaffolds.clients.wire import MalformedResponse, ProviderError, parsed
from scaffolds.messages import Message

if TYPE_CHECKING:
    from scaffolds.profiles import Price

TOOL_CHOICE_ERROR = re.compile(r"tool[ _-]?choice", re.IGNORECASE)
TOOL_CHOICE_HINT = (
    "the server does not serve tool calls: vLLM does only when started with "
    "`--enable-auto-tool-choice --tool-call-parser <parser>` (the parser of the model's family, "
    "for example hermes for Qwen, llama3_json for Llama 3, mistral for Mistral), SGLang with "
    "`--tool-call-parser <parser>`")


class OpenAICompatClient:
    def __init__(self, model: str, *, api_key: str, base_url: str | None = None,
                 stream: bool = True, timeouts: Timeouts | None = None,
                 retry: RetryPolicy | None = None, reasoning_echo: ReasoningEcho = "all",
                 extra_body: Mapping[str, Any] | None = None,
                 parallel_tool_calls: bool | None = None,
                 max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = (
                     "max_completion_tokens"),
                 max_output_tokens: int | None = None, price: Price | None = None,
                 sleep: Sleep = asyncio.sleep, rng: random.Random | None = None,
                 wall_clock: Callable[[], float] = time.time, limiter: Limiter | None = None) -> None:
        self.model = model
        self.stream = stream
        self.timeouts = timeouts or Timeouts()
        self.reasoning_echo: ReasoningEcho = reasoning_echo
        self.extra_body = dict(extra_body or {})
        self.parallel_tool_calls = parallel_tool_calls
        self.max_tokens_field = max_tokens_field
        self.max_output_tokens = max_output_tokens
        """The model's output limit (from its profile): requests never ask for more."""
        self.price = price
        """Prices the calls whose cost the provider does not report."""
        self._retrier = Retrier(retry, sleep=sleep, rng=rng, limiter=limiter)
        self._wall_clock = wall_clock
        self._sdk = openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0,
                                       timeout=self._timeout(None))

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        params = self._request_params(request)
        result = await self._retrier.call(lambda: self._attempt(params, request.timeout_s),
                                          request.predicted_input_tokens + params[self.max_tokens_field])
        return priced(with_usage(result, request), self.price)

    async def aclose(self) -> None:
        await self._sdk.close()

    def _request_params(self, request: GenerateRequest) -> dict[str, Any]:
        """Keyword arguments of `chat.completions.create` for this request."""
        params: dict[str, Any] = {
            "model": self.model,
            "messages": wire_messages(request.messages, self.reasoning_echo),
            self.max_tokens_field: min(request.sampling.max_output_tokens,
                                       self.max_output_tokens or request.sampling.max_output_tokens),
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
        assembler = StreamAssembler()
        try:
            async with asyncio.timeout(self.timeouts.attempt_s):
                if self.stream:
                    message, finish, usage, ttft, request_id, cost = await self._streamed(
                        params, read_timeout, assembler)
                else:
                    message, finish, usage, ttft, request_id, cost = await self._whole(
                        params, read_timeout)
        except openai.APIStatusError as exc:
            text = _provider_message(exc)
            error_class = classify_status(exc.status_code, text, self._context_patterns)
            retry_after = parse_retry_after(exc.response.headers, self._wall_clock())
            raise AttemptError(error_class, text, status=exc.status_code,
                               retry_after_s=retry_after) from exc
        except ProviderError as exc:
            raise self._provider_error(exc.error) from exc
        except openai.APIError as exc:
            if type(exc) is openai.APIError and exc.body is not None:  # an error event in a stream
                raise self._provider_error(exc.body) from exc
            raise AttemptError("transient", f"{type(exc).__name__}: {exc}",
                               unanswered=not assembler.received) from exc
        except TimeoutError as exc:
            raise AttemptError("transient", f"attempt timed out after {self.timeouts.attempt_s} s",
                               unanswered=not assembler.received) from exc
        except (json.JSONDecodeError, MalformedResponse) as exc:
            raise AttemptError("transient", f"malformed response: {exc}") from exc
        return GenerateResult(message=message, finish_reason=finish, usage=usage,
                              latency_s=time.monotonic() - started, ttft_s=ttft,
                              request_id=request_id, cost_usd=cost,
                              cost_source="provider" if cost is not None else None)

    async def _whole(self, params: dict[str, Any], read_timeout: float | None) -> _Reply:
        completion = await self._sdk.chat.completions.create(
            **params, timeout=self._timeout(read_timeout))
        if not isinstance(completion, openai.BaseModel):
            raise MalformedResponse(f"not a chat completion: {str(completion)[:200]!r}")
        data = completion.model_dump(warnings=False)
        message, finish = parsed(reply_from_wire, data)
        usage = data.get("usage")
        return (message, finish, usage_from_wire(usage), None, completion._request_id,
                provider_cost(usage))

    async def _streamed(self, params: dict[str, Any], read_timeout: float | None,
                        assembler: StreamAssembler) -> _Reply:
        try:
            async with asyncio.timeout(self.timeouts.response_s):
                stream = await self._sdk.chat.completions.create(
                    **params, stream=True, stream_options={"include_usage": True},
                    timeout=self._timeout(read_timeout))
        except TimeoutError as exc:
            raise AttemptError("transient", f"no response within {self.timeouts.response_s:g} s",
                               unanswered=True) from exc
        async with stream:
            async for chunk in stream:
                parsed(assembler.add, chunk.model_dump(warnings=False))
        if not assembler.complete:
            raise AttemptError("transient", "the stream ended without a finish reason (cut off)")
        message, finish = parsed(assembler.message)
        return (message, finish, usage_from_wire(assembler.usage), assembler.ttft_s,
                stream.response.headers.get("x-request-id"), provider_cost(assembler.usage))

    @property
    def _context_patterns(self) -> tuple[str, ...]:
        return self._retrier.policy.context_error_patterns

    def _provider_error(self, error: Any) -> AttemptError:
        """An error the provider sent inside a 200 response, classified by its code when that is
        an HTTP status, else transient (or `context` when the message says the prompt is too
        long)."""
        inner = error if isinstance(error, Mapping) else {"message": error}
        message = str(inner.get("message") or error)
        code = inner.get("code")
        status = int(code) if isinstance(code, (int, str)) and str(code).isdigit() else None
        if status is not None and 400 <= status <= 599:
            error_class = classify_status(status, message, self._context_patterns)
        else:
            status = None
            error_class = "context" if any(re.search(p, message, re.IGNORECASE)
                                           for p in self._context_patterns) else "transient"
        return AttemptError(error_class, f"provider error in a 200 response: {message}",
                            status=status)


_Reply = tuple[Message, FinishReason, Usage, float | None, str | None, float | None]


def _provider_message(exc: openai.APIStatusError) -> str:
    """The provider's own error text when the body has one, else the SDK's summary; a 400 about
    tool choice with the server flags that fix it."""
    body = exc.body
    text = f"HTTP {exc.status_code}: {exc.message}"
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            text = f"HTTP {exc.status_code}: {inner['message']}"
    if exc.status_code == 400 and TOOL_CHOICE_ERROR.search(text):
        text += f" ({TOOL_CHOICE_HINT})"
    return text
