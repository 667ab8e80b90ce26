"""Canonical, provider-neutral messages (spec §1.1).

Messages are immutable. Drafts (from clients, scripts or the loop) carry `mid=-1`; the ledger
assigns `mid`, `turn` and `tokens` when it appends them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]
Origin = Literal[
    "task",
    "harness.prompt",
    "harness.note",
    "harness.nudge",
    "harness.warning",
    "strategy.compaction",
    "model",
    "tool",
]
ReasoningField = Literal[
    "reasoning_content", "reasoning", "reasoning_details", "thinking", "redacted_thinking"
]


@dataclass(frozen=True, slots=True)
class TextPart:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningPart:
    """Model reasoning, kept with the wire field it came from so it is echoed back unchanged."""

    text: str
    source_field: ReasoningField = "reasoning_content"
    signature: str | None = None
    redacted: bool = False


@dataclass(frozen=True, slots=True)
class ToolCallPart:
    """One tool call as emitted; `arguments` is None when `arguments_raw` is not a JSON object."""

    call_id: str
    name: str
    arguments_raw: str
    arguments: dict[str, Any] | None
    parse_error: str | None = None
    provider_call_id: str | None = None
    """The id the provider sent, recorded when it was missing or duplicated and got replaced."""

    @classmethod
    def parse(cls, call_id: str, name: str, arguments_raw: str) -> ToolCallPart:
        arguments, error = parse_arguments(arguments_raw)
        return cls(call_id=call_id, name=name, arguments_raw=arguments_raw,
                   arguments=arguments, parse_error=error)


Part = TextPart | ReasoningPart | ToolCallPart


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    origin: Origin
    parts: tuple[Part, ...] = ()
    mid: int = -1
    turn: int = 0
    tokens: int = 0
    # tool results only
    call_id: str | None = None
    name: str | None = None
    content: str | None = None
    is_error: bool = False
    parent_call_id: str | None = None
    # assistant only
    refusal: bool = False
    provider_extra: Mapping[str, Any] | None = None

    @property
    def text(self) -> str:
        """The text parts joined by blank lines (the content of a tool message)."""
        if self.role == "tool":
            return self.content or ""
        return "\n\n".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> tuple[ToolCallPart, ...]:
        return tuple(p for p in self.parts if isinstance(p, ToolCallPart))

    @property
    def reasoning(self) -> tuple[ReasoningPart, ...]:
        return tuple(p for p in self.parts if isinstance(p, ReasoningPart))

    @property
    def is_empty(self) -> bool:
        """An assistant reply with neither text nor tool calls."""
        return not self.tool_calls and not self.text.strip()


_SURROGATE = re.compile("[\ud800-\udfff]")


def join_surrogate_pairs(text: str) -> str:
    """`text` with surrogate pairs made whole again (a pair split across streamed chunks arrives
    as two lone surrogates); a surrogate without its partner is kept."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def utf8_safe(text: str) -> str:
    """`text` as it can be sent in UTF-8: each lone surrogate becomes U+FFFD. (Runs on every
    message of every request: the common cases are checked at C speed before any regex.)"""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def parse_arguments(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """Parse tool-call arguments: empty means `{}`; anything but a JSON object is an error."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


def system_message(*texts: str) -> Message:
    return Message(role="system", origin="harness.prompt", parts=tuple(TextPart(t) for t in texts))


def user_message(texts: Sequence[str], origin: Origin) -> Message:
    return Message(role="user", origin=origin, parts=tuple(TextPart(t) for t in texts))


def assistant_message(text: str | None = None, tool_calls: Iterable[ToolCallPart] = (),
                      reasoning: Iterable[ReasoningPart] = (), *, refusal: bool = False) -> Message:
    parts: list[Part] = list(reasoning)
    if text:
        parts.append(TextPart(text))
    parts.extend(tool_calls)
    return Message(role="assistant", origin="model", parts=tuple(parts), refusal=refusal)


def tool_message(call_id: str, name: str, content: str, *, is_error: bool = False,
                 origin: Origin = "tool", parent_call_id: str | None = None) -> Message:
    return Message(role="tool", origin=origin, call_id=call_id, name=name, content=content,
                   is_error=is_error, parent_call_id=parent_call_id)


def normalize_call_ids(message: Message, turn: int, seen: set[str]) -> Message:
    """Replace missing or already used call ids by `call_<turn>_<index>`; updates `seen`."""
    if not message.tool_calls:
        return message
    parts: list[Part] = []
    index = 0
    for part in message.parts:
        if isinstance(part, ToolCallPart):
            if not part.call_id or part.call_id in seen:
                new_id = f"call_{turn}_{index}"
                while new_id in seen:
                    new_id += "_"
                part = replace(part, call_id=new_id, provider_call_id=part.call_id or None)
            seen.add(part.call_id)
            index += 1
        parts.append(part)
    return replace(message, parts=tuple(parts))


# ---------------------------------------------------------------- serialisation


def _part_to_dict(part: Part) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ReasoningPart):
        out: dict[str, Any] = {"type": "reasoning", "text": part.text,
                               "source_field": part.source_field}
        if part.signature is not None:
            out["signature"] = part.signature
        if part.redacted:
            out["redacted"] = True
        return out
    out = {"type": "tool_call", "call_id": part.call_id, "name": part.name,
           "arguments_raw": part.arguments_raw, "arguments": part.arguments}
    if part.parse_error is not None:
        out["parse_error"] = part.parse_error
    if part.provider_call_id is not None:
        out["provider_call_id"] = part.provider_call_id
    return out


def _part_from_dict(data: Mapping[str, Any]) -> Part:
    kind = data["type"]
    if kind == "text":
        return TextPart(data["text"])
    if kind == "reasoning":
        return ReasoningPart(text=data["text"], source_field=data["source_field"],
                             signature=data.get("signature"), redacted=data.get("redacted", False))
    if kind == "tool_call":
        return ToolCallPart(call_id=data["call_id"], name=data["name"],
                            arguments_raw=data["arguments_raw"], arguments=data["arguments"],
                            parse_error=data.get("parse_error"),
                            provider_call_id=data.get("provider_call_id"))
    raise ValueError(f"unknown message part type {kind!r}")


_OPTIONAL_FIELDS = ("call_id", "name", "content", "parent_call_id", "provider_extra")


def message_to_dict(message: Message) -> dict[str, Any]:
    """JSON-ready form; fields at their empty default are left out."""
    out: dict[str, Any] = {"mid": message.mid, "turn": message.turn, "role": message.role,
                           "origin": message.origin, "tokens": message.tokens}
    if message.parts:
        out["parts"] = [_part_to_dict(p) for p in message.parts]
    for name in _OPTIONAL_FIELDS:
        value = getattr(message, name)
        if value is not None:
            out[name] = dict(value) if name == "provider_extra" else value
    if message.is_error:
        out["is_error"] = True
    if message.refusal:
        out["refusal"] = True
    return out


def message_from_dict(data: Mapping[str, Any]) -> Message:
    return Message(
        role=data["role"], origin=data["origin"],
        parts=tuple(_part_from_dict(p) for p in data.get("parts", ())),
        mid=data["mid"], turn=data["turn"], tokens=data["tokens"],
        call_id=data.get("call_id"), name=data.get("name"), content=data.get("content"),
        is_error=data.get("is_error", False),
        parent_call_id=data.get("parent_call_id"), refusal=data.get("refusal", False),
        provider_extra=data.get("provider_extra"),
    )
