"""A model client without a model: fixed replies or a policy (see docs/concepts/model-clients.md).

Oracles, failure-mode mutants and the no-op agent are *scripts*: generator functions
`script(instruction, tools)` that yield a `ToolRequest`, a list of them (one turn with parallel
calls) or a `str` (a plain-text reply), and receive the `ToolReply` list of that turn back.
`GeneratorPolicy` turns such a script into a policy; `ScriptedClient.from_script` wraps it.

Usage is synthesised: input tokens are the request's `predicted_input_tokens` (the ledger keeps
that sum incrementally), output tokens the reply counted with the tokenizer.
"""

from __future__ import annotations

import json
from collections.abc import (
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from typing import Any

from loca.core.script import ScriptFn, ToolReply, ToolRequest
from scaffolds.clients.base import (
    Attempt,
    GenerateRequest,
    GenerateResult,
    LLMCallError,
    estimated_usage,
)
from scaffolds.messages import Message, TextPart, ToolCallPart, assistant_message

Policy = Callable[[Sequence[Message], Sequence[Mapping[str, Any]]], Awaitable[Message]]


ScriptItem = ToolRequest | Sequence[ToolRequest] | str

class GeneratorPolicy:
    """Adapts a script into a policy; one instance drives one episode."""

    def __init__(self, script: ScriptFn, *, final_text: str = "Done.") -> None:
        self._script = script
        self._final_text = final_text
        self._generator: Generator[ScriptItem, list[ToolReply], Any] | None = None
        self._finished = False

    async def __call__(self, view: Sequence[Message],
                       tools: Sequence[Mapping[str, Any]]) -> Message:
        if self._finished:
            return assistant_message(self._final_text)
        item: ScriptItem
        try:
            if self._generator is None:
                self._generator = self._script(_instruction(view), [dict(t) for t in tools])
                item = next(self._generator)
            else:
                item = self._generator.send(_last_replies(view))
        except StopIteration:
            self._finished = True
            return assistant_message(self._final_text)
        return _to_message(item)


def _instruction(view: Sequence[Message]) -> str:
    """The env's instruction: the first text part of the task message."""
    for message in view:
        if message.origin == "task":
            return next(p.text for p in message.parts if isinstance(p, TextPart))
    raise ValueError("the view has no task message")


def _last_replies(view: Sequence[Message]) -> list[ToolReply]:
    """Results of the latest assistant turn, read backwards from the end of the view."""
    replies: list[ToolReply] = []
    for message in reversed(view):
        if message.role == "assistant":
            break
        if message.role == "tool":
            replies.append(ToolReply(message.content or "", message.is_error))
    replies.reverse()
    return replies


def _call_part(request: ToolRequest) -> ToolCallPart:
    arguments = request.arguments
    raw = arguments if isinstance(arguments, str) else json.dumps(dict(arguments),
                                                                   ensure_ascii=False)
    return ToolCallPart.parse("", request.name, raw)


def _to_message(item: object) -> Message:
    if isinstance(item, str):
        return assistant_message(item)
    if isinstance(item, ToolRequest):
        return assistant_message(tool_calls=[_call_part(item)])
    if isinstance(item, Sequence) and item and all(isinstance(request, ToolRequest) for request in item):
        return assistant_message(tool_calls=[_call_part(request) for request in item])
    raise TypeError(f"a script must yield a ToolRequest, a non-empty list of them or a str; "
                    f"got {item!r}")


class ScriptedClient:
    """`sequence` mode replays fixed assistant messages; `policy` mode asks a policy each call."""

    def __init__(self, *, sequence: Iterable[Message] | None = None,
                 policy: Policy | None = None) -> None:
        if (sequence is None) == (policy is None):
            raise ValueError("give exactly one of `sequence` or `policy`")
        self._sequence: Iterator[Message] = iter(sequence or ())
        self._policy = policy

    @classmethod
    def from_script(cls, script: ScriptFn, *, final_text: str = "Done.") -> ScriptedClient:
        """A fresh client for one episode of `script`."""
        return cls(policy=GeneratorPolicy(script, final_text=final_text))

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        if self._policy is not None:
            message = await self._policy(request.messages, request.tools)
        else:
            scripted = next(self._sequence, None)
            if scripted is None:
                raise LLMCallError("fatal", "scripted sequence exhausted",
                                   attempts=(Attempt(1, "fatal", None, "sequence exhausted"),))
            message = scripted
        return GenerateResult(message=message,
                              finish_reason="tool_calls" if message.tool_calls else "stop",
                              usage=estimated_usage(request, message), attempts=(Attempt(1, "ok"),))
