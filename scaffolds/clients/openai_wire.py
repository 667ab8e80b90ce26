"""Conversion between canonical messages and the OpenAI chat-completions wire format.

Responses are handled as plain dicts (the SDK objects' `model_dump()`), so provider-specific
extra fields such as `reasoning_content` or `reasoning` are seen wherever they appear.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from scaffolds.clients.base import FinishReason, Usage
from scaffolds.messages import (
    Message,
    ReasoningField,
    ReasoningPart,
    ToolCallPart,
    assistant_message,
)

ReasoningEcho = Literal["all", "current_turn", "none"]
REASONING_FIELDS: tuple[ReasoningField, ...] = ("reasoning_content", "reasoning")
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
            out.append({"role": "tool", "tool_call_id": message.call_id,
                        "content": message.content or ""})
        elif message.role == "assistant":
            out.append(_wire_assistant(message, echo=index >= echo_from))
        else:
            out.append({"role": message.role, "content": message.text})
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
    calls = message.tool_calls
    wire: dict[str, Any] = {"role": "assistant", "content": message.text or (None if calls else "")}
    if calls:
        wire["tool_calls"] = [{"id": c.call_id, "type": "function",
                               "function": {"name": c.name, "arguments": c.arguments_raw}}
                              for c in calls]
    if echo:
        for part in message.reasoning:
            wire[part.source_field] = wire.get(part.source_field, "") + part.text
    return wire


# ---------------------------------------------------------------- responses


def usage_from_wire(data: Mapping[str, Any] | None) -> Usage:
    if not data:
        return Usage()
    prompt_details = data.get("prompt_tokens_details") or {}
    completion_details = data.get("completion_tokens_details") or {}
    cached = prompt_details.get("cached_tokens") or data.get("prompt_cache_hit_tokens") or 0
    return Usage(
        input_tokens=data.get("prompt_tokens") or 0,
        cached_input_tokens=cached,
        output_tokens=data.get("completion_tokens") or 0,
        reasoning_tokens=completion_details.get("reasoning_tokens") or 0,
        reported=True,
    )


def provider_cost(data: Mapping[str, Any] | None) -> float | None:
    """Cost in USD when the provider reports it in the usage block (OpenRouter)."""
    cost = (data or {}).get("cost")
    return float(cost) if isinstance(cost, (int, float)) else None


def finish_reason(raw: str | None, *, has_calls: bool, refusal: bool) -> FinishReason:
    if refusal:
        return "refusal"
    if raw in _FINISH_REASONS:
        return _FINISH_REASONS[raw]
    return "tool_calls" if has_calls else "stop"


def _reasoning_parts(source: Mapping[str, Any]) -> list[ReasoningPart]:
    for name in REASONING_FIELDS:
        text = source.get(name)
        if isinstance(text, str) and text:
            return [ReasoningPart(text=text, source_field=name)]
    return []


def message_from_wire(choice: Mapping[str, Any]) -> tuple[Message, FinishReason]:
    """The canonical message and finish reason of a non-streamed choice."""
    wire = choice.get("message") or {}
    refusal = wire.get("refusal") or None
    calls = [ToolCallPart.parse(c.get("id") or "", (c.get("function") or {}).get("name") or "",
                                (c.get("function") or {}).get("arguments") or "")
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
    text: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    reasoning: dict[ReasoningField, list[str]] = field(default_factory=dict)
    calls: dict[int, _CallBuffer] = field(default_factory=dict)
    raw_finish: str | None = None
    usage: dict[str, Any] | None = None

    def add(self, chunk: Mapping[str, Any]) -> None:
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
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

    def _add_call(self, delta: Mapping[str, Any]) -> None:
        buffer = self.calls.setdefault(delta.get("index", 0), _CallBuffer())
        if delta.get("id") and not buffer.call_id:
            buffer.call_id = delta["id"]
        function = delta.get("function") or {}
        name = function.get("name")
        if name and name != buffer.name:
            buffer.name += name
        if function.get("arguments"):
            buffer.arguments.append(function["arguments"])

    def message(self) -> tuple[Message, FinishReason]:
        calls = [ToolCallPart.parse(b.call_id, b.name, "".join(b.arguments))
                 for _, b in sorted(self.calls.items())]
        joined: dict[str, Any] = {name: "".join(pieces) for name, pieces in self.reasoning.items()}
        reasoning = _reasoning_parts(joined)
        refusal = "".join(self.refusal) or None
        message = assistant_message(refusal or "".join(self.text), calls, reasoning,
                                    refusal=refusal is not None)
        reason = finish_reason(self.raw_finish, has_calls=bool(calls), refusal=refusal is not None)
        return message, reason
