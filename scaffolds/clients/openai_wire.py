"""Conversion between canonical messages and the OpenAI chat-completions wire format.

Responses are handled as plain dicts (the SDK objects' `model_dump()`), so provider-specific
extra fields such as `reasoning_content` or `reasoning` are seen wherever they appear.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from scaffolds.clients.base import FinishReason, Usage
from scaffolds.clients.wire import ProviderError, as_mapping, token_count
from scaffolds.messages import (
    Message,
    ReasoningField,
    ReasoningPart,
    ToolCallPart,
    assistant_message,
    join_surrogate_pairs,
    utf8_safe,
)

ReasoningEcho = Literal["all", "current_turn", "none"]
REASONING_FIELDS: tuple[ReasoningField, ...] = ("reasoning_content", "reasoning")
PROVIDER_ERROR_FINISH = "error"
"""A finish reason some routers (OpenRouter) send when the upstream model failed mid-reply."""
_FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop", "tool_calls": "tool_calls", "function_call": "tool_calls",
    "length": "length", "content_filter": "content_filter",
}


# ---------------------------------------------------------------- requests


def wire_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "function",
             "function": {"name": t["name"], "description": t.get("description", ""),
                          "parameters": t.get("parameters") or {"type": "object",
                                                                "properties": {}}}}
            for t in tools]


def wire_messages(messages: Sequence[Message],
                  reasoning_echo: ReasoningEcho) -> list[dict[str, Any]]:
    """Messages in wire form; reasoning is echoed under its source field per `reasoning_echo`."""
    echo_from = _echo_start(messages, reasoning_echo)
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if message.role == "tool":
            out.append({"role": "tool", "tool_call_id": utf8_safe(message.call_id or ""),
                        "content": utf8_safe(message.content or "")})
        elif message.role == "assistant":
            out.append(_wire_assistant(message, echo=index >= echo_from))
        else:
            out.append({"role": message.role, "content": utf8_safe(message.text)})
    return out


def _echo_start(messages: Sequence[Message], reasoning_echo: ReasoningEcho) -> int:
    """Index of the first message whose reasoning is echoed."""
    if reasoning_echo == "all":
        return 0
    if reasoning_echo == "none":
        return len(messages)
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            return index
    return 0


def _wire_assistant(message: Message, *, echo: bool) -> dict[str, Any]:
    """The assistant message as sent back; text a model produced may hold lone surrogates, which
    UTF-8 cannot carry (the ledger keeps the text as received)."""
    calls = message.tool_calls
    wire: dict[str, Any] = {"role": "assistant",
                            "content": utf8_safe(message.text) or (None if calls else "")}
    if calls:
        wire["tool_calls"] = [{"id": utf8_safe(c.call_id), "type": "function",
                               "function": {"name": utf8_safe(c.name),
                                            "arguments": utf8_safe(c.arguments_raw)}}
                              for c in calls]
    if echo:
        for part in message.reasoning:
            wire[part.source_field] = wire.get(part.source_field, "") + utf8_safe(part.text)
    return wire


# ---------------------------------------------------------------- responses


def usage_from_wire(data: Any) -> Usage:
    """Normalised usage. A count that is not a non-negative integer reads as 0; when the prompt
    or completion count is such a value (or missing), the usage counts as not reported."""
    data = as_mapping(data)
    if not data:
        return Usage()
    prompt_details = as_mapping(data.get("prompt_tokens_details"))
    completion_details = as_mapping(data.get("completion_tokens_details"))
    prompt, completion = token_count(data.get("prompt_tokens")), token_count(data.get("completion_tokens"))
    cached = token_count(prompt_details.get("cached_tokens")) or token_count(
        data.get("prompt_cache_hit_tokens"))
    return Usage(
        input_tokens=prompt or 0,
        cached_input_tokens=cached or 0,
        output_tokens=completion or 0,
        reasoning_tokens=token_count(completion_details.get("reasoning_tokens")) or 0,
        reported=prompt is not None and completion is not None,
    )


def provider_cost(data: Any) -> float | None:
    """Cost in USD when the provider reports a usable one in the usage block (OpenRouter)."""
    cost = as_mapping(data).get("cost")
    if isinstance(cost, bool) or not isinstance(cost, (int, float)):
        return None
    return float(cost) if math.isfinite(cost) and cost >= 0 else None


def finish_reason(raw: str | None, *, has_calls: bool, refusal: bool) -> FinishReason:
    if refusal:
        return "refusal"
    if raw in _FINISH_REASONS:
        return _FINISH_REASONS[raw]
    return "tool_calls" if has_calls else "stop"


def _text(value: Any) -> str:
    """A string field as sent; a provider that sends another JSON type gets it as JSON text
    (tool-call arguments sent as an object, notably)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _reasoning_parts(source: Mapping[str, Any]) -> list[ReasoningPart]:
    for name in REASONING_FIELDS:
        text = source.get(name)
        if isinstance(text, str) and text:
            return [ReasoningPart(text=text, source_field=name)]
    return []


def reply_from_wire(data: Mapping[str, Any]) -> tuple[Message, FinishReason]:
    """The reply of a non-streamed completion: its first choice, or an empty reply when it has
    none; `ProviderError` when the body is an error."""
    if data.get("error"):
        raise ProviderError(data["error"])
    choices = data.get("choices") or []
    return message_from_wire(choices[0]) if choices else (assistant_message(), "stop")


def message_from_wire(choice: Mapping[str, Any]) -> tuple[Message, FinishReason]:
    """The canonical message and finish reason of a non-streamed choice."""
    if choice.get("finish_reason") == PROVIDER_ERROR_FINISH:
        raise ProviderError(choice.get("error") or "the choice finished with 'error'")
    wire = as_mapping(choice.get("message"))
    refusal = wire.get("refusal") or None
    for value in (refusal, wire.get("content")):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"message text is a {type(value).__name__}, not a string")
    calls = [ToolCallPart.parse(_text(c.get("id")), _text(as_mapping(c.get("function")).get("name")),
                                _text(as_mapping(c.get("function")).get("arguments")))
             for c in wire.get("tool_calls") or ()]
    message = assistant_message(refusal or wire.get("content"), calls, _reasoning_parts(wire),
                                refusal=refusal is not None)
    reason = finish_reason(choice.get("finish_reason"), has_calls=bool(calls),
                           refusal=refusal is not None)
    return message, reason


@dataclass
class _CallBuffer:
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class StreamAssembler:
    """Accumulates streamed chunks (as dicts) into one canonical reply."""

    started: float = field(default_factory=time.monotonic)
    ttft_s: float | None = None
    received: bool = False
    """A chunk arrived: the provider answered, whatever became of the answer."""
    saw_choice: bool = False
    text: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    reasoning: dict[ReasoningField, list[str]] = field(default_factory=dict)
    calls: list[_CallBuffer] = field(default_factory=list)
    """In order of first appearance."""
    calls_by_index: dict[int, _CallBuffer] = field(default_factory=dict)
    calls_by_id: dict[str, _CallBuffer] = field(default_factory=dict)
    raw_finish: str | None = None
    usage: dict[str, Any] | None = None

    @property
    def complete(self) -> bool:
        """The stream ended as providers end a reply: with a finish reason, or (an empty reply)
        with no choice at all but the closing usage chunk. Anything else was cut off."""
        return self.raw_finish is not None or (not self.saw_choice and self.usage is not None)

    def add(self, chunk: Mapping[str, Any]) -> None:
        self.received = True
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            self.saw_choice = True
            delta = as_mapping(choice.get("delta"))
            got = False
            if delta.get("content"):
                self.text.append(delta["content"])
                got = True
            if delta.get("refusal"):
                self.refusal.append(delta["refusal"])
                got = True
            for name in REASONING_FIELDS:
                piece = delta.get(name)
                if isinstance(piece, str) and piece:
                    self.reasoning.setdefault(name, []).append(piece)
                    got = True
            for call in delta.get("tool_calls") or ():
                self._add_call(call)
                got = True
            if got and self.ttft_s is None:
                self.ttft_s = time.monotonic() - self.started
            if choice.get("finish_reason"):
                self.raw_finish = choice["finish_reason"]
                if self.raw_finish == PROVIDER_ERROR_FINISH:
                    raise ProviderError(choice.get("error") or "the stream finished with 'error'")

    def _add_call(self, delta: Mapping[str, Any]) -> None:
        buffer = self._call_for(delta)
        function = as_mapping(delta.get("function"))
        name = _text(function.get("name"))
        if name and name != buffer.name:
            buffer.name += name
        if function.get("arguments"):
            buffer.arguments.append(_text(function["arguments"]))

    def _call_for(self, delta: Mapping[str, Any]) -> _CallBuffer:
        """The call a tool-call delta belongs to: the one at its `index`; without an index, the
        one with its `id`, else the latest. A new id under a used index starts a new call too:
        providers that omit `index`, or send 0 for every call, still get their calls apart."""
        index = delta.get("index")
        if isinstance(index, bool) or not isinstance(index, int):
            index = None
        call_id = _text(delta.get("id")) or None
        if index is not None:
            buffer = self.calls_by_index.get(index)
            if buffer is not None and call_id not in (None, buffer.call_id) and buffer.call_id:
                buffer = None
        elif call_id is not None:
            buffer = self.calls_by_id.get(call_id)
        else:
            buffer = self.calls[-1] if self.calls else None
        if buffer is None:
            buffer = _CallBuffer()
            self.calls.append(buffer)
        if index is not None:
            self.calls_by_index[index] = buffer
        if call_id is not None and not buffer.call_id:
            buffer.call_id = call_id
            self.calls_by_id.setdefault(call_id, buffer)
        return buffer

    def message(self) -> tuple[Message, FinishReason]:
        calls = [ToolCallPart.parse(b.call_id, b.name, join_surrogate_pairs("".join(b.arguments)))
                 for b in self.calls]
        joined: dict[str, Any] = {name: join_surrogate_pairs("".join(pieces))
                                  for name, pieces in self.reasoning.items()}
        reasoning = _reasoning_parts(joined)
        refusal = join_surrogate_pairs("".join(self.refusal)) or None
        message = assistant_message(refusal or join_surrogate_pairs("".join(self.text)), calls,
                                    reasoning, refusal=refusal is not None)
        reason = finish_reason(self.raw_finish, has_calls=bool(calls), refusal=refusal is not None)
        return message, reason
