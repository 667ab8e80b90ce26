"""Conversion between canonical messages and the Anthropic Messages API (see docs/concepts/model-clients.md).

Requests: system messages become the `system` blocks; the results of one assistant turn form one
user message, `tool_result` blocks first in call order, then that turn's notes as `text` blocks;
thinking and redacted thinking blocks go back exactly as received, signature included, in their
place among the assistant's blocks. Responses (plain dicts, from the SDK objects' `model_dump()`)
become canonical messages with their blocks in order.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from scaffolds.clients.base import FinishReason, Usage
from scaffolds.clients.wire import ProviderError, as_mapping, token_count
from scaffolds.messages import (
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    join_surrogate_pairs,
    utf8_safe,
)

PromptCaching = Literal["auto", "off"]
CACHE_MARK = {"type": "ephemeral"}
_STOP_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls",
    "max_tokens": "length", "model_context_window_exceeded": "length",
    "pause_turn": "pause", "refusal": "refusal",
}
_UNMARKABLE = frozenset({"thinking", "redacted_thinking"})
ERROR_TYPE_STATUS = {
    "invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
    "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
    "rate_limit_error": 429, "api_error": 500, "timeout_error": 504, "overloaded_error": 529,
}
"""HTTP status of each error type, for errors that arrive inside a 200 response."""


# ---------------------------------------------------------------- requests


def wire_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        wire: dict[str, Any] = {"name": tool["name"],
                                "input_schema": tool.get("parameters") or {"type": "object",
                                                                           "properties": {}}}
        if tool.get("description"):
            wire["description"] = tool["description"]
        out.append(wire)
    return out


def stub_tools(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Definitions of the tools the history called, without schemas: the API rejects a request
    whose history holds tool blocks but defines no tools (a summary call sent without tools);
    sent with `tool_choice: none`, they let the history stand and call nothing."""
    names = dict.fromkeys(c.name for m in messages for c in m.tool_calls)
    return [{"name": utf8_safe(name), "input_schema": {"type": "object", "properties": {}}}
            for name in names]


def wire_messages(messages: Sequence[Message]) -> tuple[list[dict[str, Any]],
                                                        list[dict[str, Any]]]:
    """The `system` blocks and the `messages` of a request. Consecutive messages of one role
    are merged (the API wants roles to alternate); messages left with no block are dropped (an
    empty reply, an assistant message with only reasoning from another provider)."""
    system: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            system.extend(_text_blocks(message.parts))
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _assistant_blocks(message) if role == "assistant" else _user_blocks(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    for wire in out:
        if wire["role"] == "user":  # results first, in call order; then the notes
            wire["content"].sort(key=lambda block: block["type"] != "tool_result")
    return system, out


def _text_blocks(parts: Sequence[Part]) -> list[dict[str, Any]]:
    """Text parts as blocks; the API rejects blocks with no visible text."""
    return [{"type": "text", "text": utf8_safe(p.text)} for p in parts
            if isinstance(p, TextPart) and p.text.strip()]


def _user_blocks(message: Message) -> list[dict[str, Any]]:
    if message.role != "tool":
        return _text_blocks(message.parts)
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": utf8_safe(message.call_id or "")}
    if (message.content or "").strip():
        block["content"] = utf8_safe(message.content or "")
    if message.is_error:
        block["is_error"] = True
    return [block]


def _assistant_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, ReasoningPart):
            if part.source_field == "redacted_thinking":
                blocks.append({"type": "redacted_thinking", "data": part.text})
            elif part.source_field == "thinking" and part.signature is not None:
                blocks.append({"type": "thinking", "thinking": part.text,
                               "signature": part.signature})
        elif isinstance(part, TextPart):
            blocks.extend(_text_blocks((part,)))
        else:
            blocks.append({"type": "tool_use", "id": utf8_safe(part.call_id),
                           "name": utf8_safe(part.name),
                           "input": part.arguments if part.arguments is not None else {}})
    if not any(b["type"] in ("text", "tool_use") for b in blocks):
        return []  # reasoning alone is no reply the API would take back
    return blocks


def mark_cache(params: dict[str, Any]) -> None:
    """Cache breakpoints on the last tool, the system prompt and the newest message's last
    block that may carry one (3 of the 4 the API allows)."""
    for key in ("tools", "system"):
        if params.get(key):
            params[key][-1]["cache_control"] = CACHE_MARK
    messages = params["messages"]
    if messages:
        for block in reversed(messages[-1]["content"]):
            if block["type"] not in _UNMARKABLE:
                block["cache_control"] = CACHE_MARK
                break


# ---------------------------------------------------------------- responses


def usage_from_wire(data: Any) -> Usage:
    """Normalised usage: the prompt size is `input_tokens` + cache writes + cache reads. When
    `input_tokens` or `output_tokens` is not a count, the usage counts as not reported."""
    data = as_mapping(data)
    fresh, output = token_count(data.get("input_tokens")), token_count(data.get("output_tokens"))
    read = token_count(data.get("cache_read_input_tokens")) or 0
    written = token_count(data.get("cache_creation_input_tokens")) or 0
    thinking = token_count(as_mapping(data.get("output_tokens_details")).get("thinking_tokens"))
    return Usage(input_tokens=(fresh or 0) + read + written, cached_input_tokens=read,
                 cache_write_tokens=written, output_tokens=output or 0,
                 reasoning_tokens=thinking or 0,
                 reported=fresh is not None and output is not None)


def finish_reason(raw: Any, *, has_calls: bool) -> FinishReason:
    if isinstance(raw, str) and raw in _STOP_REASONS:
        return _STOP_REASONS[raw]
    return "tool_calls" if has_calls else "stop"


def _part(block: Mapping[str, Any]) -> Part | None:
    """The canonical part of one content block; None for a block with nothing to keep (empty
    text, a type this client never asks for)."""
    kind = block.get("type")
    if kind == "text":
        text = _string(block.get("text"))
        return TextPart(text) if text else None
    if kind == "thinking":
        signature = block.get("signature")
        return ReasoningPart(text=_string(block.get("thinking")), source_field="thinking",
                             signature=_string(signature) if signature is not None else None)
    if kind == "redacted_thinking":
        return ReasoningPart(text=_string(block.get("data")), source_field="redacted_thinking",
                             redacted=True)
    if kind == "tool_use":
        raw = block.get("input")
        arguments = raw if isinstance(raw, str) else json.dumps(raw if raw is not None else {},
                                                                ensure_ascii=False)
        return ToolCallPart.parse(_string(block.get("id")), _string(block.get("name")), arguments)
    return None


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _message(parts: Sequence[Part | None], stop_reason: Any) -> tuple[Message, FinishReason]:
    kept = tuple(p for p in parts if p is not None)
    reason = finish_reason(stop_reason, has_calls=any(isinstance(p, ToolCallPart) for p in kept))
    return Message(role="assistant", origin="model", parts=kept,
                   refusal=reason == "refusal"), reason


def reply_from_wire(data: Mapping[str, Any]) -> tuple[Message, FinishReason]:
    """The reply of a non-streamed call; `ProviderError` when the body is an error."""
    if data.get("type") == "error":
        raise ProviderError(data.get("error") or data)
    content = data.get("content")
    if not isinstance(content, list):
        raise TypeError(f"content is a {type(content).__name__}, not a list of blocks")
    return _message([_part(as_mapping(b)) for b in content], data.get("stop_reason"))


@dataclass
class _Block:
    start: Mapping[str, Any]
    pieces: list[str] = field(default_factory=list)
    """Text, thinking or tool-input JSON, as streamed."""
    signature: list[str] = field(default_factory=list)

    def done(self) -> Mapping[str, Any]:
        """The block as a non-streamed response would have it."""
        kind, joined = self.start.get("type"), join_surrogate_pairs("".join(self.pieces))
        if kind == "text":
            return {**self.start, "text": _string(self.start.get("text") or "") + joined}
        if kind == "thinking":
            signature = "".join(self.signature) or self.start.get("signature") or None
            return {**self.start, "thinking": _string(self.start.get("thinking") or "") + joined,
                    "signature": signature}
        if kind == "tool_use" and self.pieces:
            return {**self.start, "input": joined}
        return self.start


@dataclass
class StreamAssembler:
    """Accumulates streamed events (as dicts) into one canonical reply."""

    started: float = field(default_factory=time.monotonic)
    ttft_s: float | None = None
    received: bool = False
    """An event arrived: the provider answered, whatever became of the answer."""
    complete: bool = False
    """`message_stop` arrived; a stream without it was cut off."""
    request_id: str | None = None
    blocks: dict[int, _Block] = field(default_factory=dict)
    stop_reason: Any = None
    usage: dict[str, Any] = field(default_factory=dict)

    def add(self, event: Mapping[str, Any]) -> None:
        self.received = True
        kind = event.get("type")
        if kind == "message_start":
            message = as_mapping(event.get("message"))
            self.request_id = message.get("id")
            self.usage.update(as_mapping(message.get("usage")))
        elif kind == "content_block_start":
            self.blocks[event["index"]] = _Block(as_mapping(event.get("content_block")))
        elif kind == "content_block_delta":
            self._delta(self.blocks[event["index"]], as_mapping(event.get("delta")))
        elif kind == "message_delta":
            self.stop_reason = as_mapping(event.get("delta")).get("stop_reason")
            self.usage.update({k: v for k, v in as_mapping(event.get("usage")).items()
                               if v is not None})
        elif kind == "message_stop":
            self.complete = True

    def _delta(self, block: _Block, delta: Mapping[str, Any]) -> None:
        kind = delta.get("type")
        if kind == "signature_delta":
            block.signature.append(_string(delta.get("signature")))
            return
        field_name = {"text_delta": "text", "thinking_delta": "thinking",
                      "input_json_delta": "partial_json"}.get(_string(kind))
        if field_name is None:
            return  # citations and other annotations
        block.pieces.append(_string(delta.get(field_name)))
        if self.ttft_s is None:
            self.ttft_s = time.monotonic() - self.started

    def message(self) -> tuple[Message, FinishReason]:
        return _message([_part(self.blocks[i].done()) for i in sorted(self.blocks)],
                        self.stop_reason)
