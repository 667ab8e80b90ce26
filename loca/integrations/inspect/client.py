"""A model client of the gym's agent loop over an inspect model: each request the loop (and its
context strategies) renders is sent through inspect's provider for the sample's model, so the
gym's strategies run under any provider inspect supports, and every call lands in the inspect
log as a model event."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentReasoning,
    ContentText,
    GenerateConfig,
    Model,
    ModelOutput,
)
from inspect_ai.tool import ToolCall, ToolCallError, ToolInfo

from loca.integrations.inspect.tools import tool_params
from scaffolds.clients.base import (
    Attempt,
    FinishReason,
    GenerateRequest,
    GenerateResult,
    LLMCallError,
    Sampling,
    Usage,
)
from scaffolds.messages import (
    Message,
    ReasoningPart,
    ToolCallPart,
    assistant_message,
)

_FINISH: dict[str, FinishReason] = {"stop": "stop", "tool_calls": "tool_calls", "max_tokens": "length",
                                    "content_filter": "content_filter"}


class InspectClient:
    """`ModelClient` over an inspect `Model`. A context overflow reported by the provider is a
    `context` error (the loop ends `context_overflow`); any other failure, after inspect's own
    retries, is fatal."""

    def __init__(self, model: Model) -> None:
        self.model = model

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        started = time.monotonic()
        try:
            output = await self.model.generate(
                [to_inspect(m) for m in request.messages], tools=[tool_info(t) for t in request.tools],
                tool_choice=request.tool_choice if request.tools else None,
                config=generate_config(request.sampling, request.timeout_s))
        except Exception as exc:
            raise LLMCallError("fatal", f"{type(exc).__name__}: {exc}",
                               attempts=(Attempt(1, "fatal", None, str(exc)),)) from exc
        latency = time.monotonic() - started
        if output.error:
            raise LLMCallError("fatal", output.error, attempts=(Attempt(1, "fatal", None, output.error),))
        if output.stop_reason == "model_length":
            raise LLMCallError("context", "the request is over the model's context window",
                               attempts=(Attempt(1, "context", None, "model_length"),))
        message = from_inspect(output)
        finish = "tool_calls" if message.tool_calls else _FINISH.get(output.stop_reason, "stop")
        return GenerateResult(message=message, finish_reason=finish, usage=usage_of(output),
                              latency_s=latency, attempts=(Attempt(1, "ok", latency_s=latency),))


def generate_config(sampling: Sampling, timeout_s: float | None = None) -> GenerateConfig:
    """The loop's sampling settings as inspect's (unset ones leave the model's own)."""
    return GenerateConfig(
        max_tokens=sampling.max_output_tokens, temperature=sampling.temperature, top_p=sampling.top_p,
        seed=sampling.seed, reasoning_effort=sampling.reasoning_effort,
        reasoning_tokens=sampling.reasoning_budget_tokens,
        timeout=None if timeout_s is None else max(1, round(timeout_s)))


def tool_info(spec: Mapping[str, Any]) -> ToolInfo:
    return ToolInfo(name=str(spec["name"]), description=str(spec.get("description") or spec["name"]),
                    parameters=tool_params(dict(spec.get("parameters") or {})))


def to_inspect(message: Message) -> ChatMessage:
    """One message of the gym's rendered view as inspect's."""
    if message.role == "system":
        return ChatMessageSystem(content=message.text)
    if message.role == "user":
        return ChatMessageUser(content=message.text)
    if message.role == "tool":
        error = ToolCallError("unknown", message.text) if message.is_error else None
        return ChatMessageTool(content=message.text, tool_call_id=message.call_id, function=message.name,
                               error=error)
    content: list[ContentText | ContentReasoning] = [
        ContentReasoning(reasoning=p.text, signature=p.signature, redacted=p.redacted) for p in message.reasoning]
    if message.text:
        content.append(ContentText(text=message.text))
    calls = [ToolCall(id=c.call_id, function=c.name, arguments=c.arguments or {}, parse_error=c.parse_error)
             for c in message.tool_calls]
    return ChatMessageAssistant(content=content if message.reasoning else message.text,
                                tool_calls=calls or None)


def from_inspect(output: ModelOutput) -> Message:
    """The reply as a draft assistant message of the gym (its reasoning kept for echoing)."""
    reply = output.message
    content = reply.content if isinstance(reply.content, list) else []
    reasoning = [ReasoningPart(text=c.reasoning, source_field="reasoning_content", signature=c.signature,
                               redacted=c.redacted) for c in content if isinstance(c, ContentReasoning)]
    calls = [_call_part(c) for c in reply.tool_calls or ()]
    return assistant_message(reply.text or None, calls, reasoning)


def _call_part(call: ToolCall) -> ToolCallPart:
    if call.parse_error is not None:
        return ToolCallPart(call_id=call.id, name=call.function, arguments_raw="", arguments=None,
                            parse_error=call.parse_error)
    return ToolCallPart.parse(call.id, call.function, json.dumps(call.arguments, ensure_ascii=False))


def usage_of(output: ModelOutput) -> Usage:
    """The provider's usage; none reported (`reported` False) when inspect has none."""
    usage = output.usage
    if usage is None:
        return Usage()
    return Usage(input_tokens=usage.input_tokens + (usage.input_tokens_cache_read or 0)
                 + (usage.input_tokens_cache_write or 0),
                 cached_input_tokens=usage.input_tokens_cache_read or 0,
                 cache_write_tokens=usage.input_tokens_cache_write or 0,
                 output_tokens=usage.output_tokens, reasoning_tokens=usage.reasoning_tokens or 0,
                 reported=True)
