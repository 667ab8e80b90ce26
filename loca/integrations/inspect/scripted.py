"""The gym's scripted agents (the oracle, the no-op agent, the mutants) as an inspect model:
inspect's `mockllm` provider replays the script's tool calls as model outputs, so a whole eval,
solver and scorer included, runs offline; the oracle must score 1, the others 0."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

from loca.core.script import Script, ScriptFn, ToolReply, ToolRequest
from loca.core.tokens import count_tokens, schema_tokens
from scaffolds.oracles import agents

FINAL_TEXT = "Done."


class ScriptReplay:
    """mockllm outputs of one script. An input without an assistant message starts the script
    afresh (its instruction: the first user message), so samples run one at a time each get
    their own run of it; each later call sends the script the tool results of its last turn."""

    def __init__(self, script: ScriptFn) -> None:
        self.script = script
        self.running: Script | None = None
        self.calls = 0  # call ids stay unique across the whole replay

    def __call__(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                 config: GenerateConfig) -> ModelOutput:
        output = self._reply(input, tools)
        output.usage = _usage(input, tools, output)
        return output

    def _reply(self, input: list[ChatMessage], tools: list[ToolInfo]) -> ModelOutput:
        try:
            if not any(isinstance(m, ChatMessageAssistant) for m in input):
                instruction = next(m.text for m in input if isinstance(m, ChatMessageUser))
                self.running = self.script(instruction, [{"name": t.name} for t in tools])
                item = next(self.running)
            elif self.running is None:
                return _text("the script has not started")
            else:
                item = self.running.send(_last_replies(input))
        except StopIteration:
            self.running = None
            return _text(FINAL_TEXT)
        if isinstance(item, str):
            return _text(item)
        requests = item if isinstance(item, list) else [item]
        self.calls += len(requests)
        return _calls(requests, self.calls - len(requests))


def scripted_model(task: str, agent: str = "oracle") -> Model:
    """A mockllm model that plays `agent` (`oracle`, `noop`, `mutant:NAME`) of `task`."""
    return get_model("mockllm/model", custom_outputs=ScriptReplay(agents(task).script(agent)), memoize=False)


def _usage(input: list[ChatMessage], tools: list[ToolInfo], output: ModelOutput) -> ModelUsage:
    """The gym's own counts of the request and the reply (cl100k_base, offline), as a provider
    would report them."""
    prompt = schema_tokens([t.model_dump(exclude_none=True) for t in tools]) + sum(count_tokens(m.text) for m in input)
    calls = output.message.tool_calls or []
    reply = count_tokens(output.completion) + sum(schema_tokens([c.arguments]) for c in calls)
    return ModelUsage(input_tokens=prompt, output_tokens=reply, total_tokens=prompt + reply)


def _last_replies(input: Sequence[ChatMessage]) -> list[ToolReply]:
    replies: list[ToolReply] = []
    for message in reversed(input):
        if isinstance(message, ChatMessageAssistant):
            break
        if isinstance(message, ChatMessageTool):
            text = message.error.message if message.error else message.text
            replies.append(ToolReply(text, message.error is not None))
    replies.reverse()
    return replies


def _text(text: str) -> ModelOutput:
    return ModelOutput.from_content(model="mockllm/model", content=text)


def _calls(requests: Sequence[ToolRequest], first_id: int) -> ModelOutput:
    output = ModelOutput.from_content(model="mockllm/model", content="", stop_reason="tool_calls")
    output.choices[0].message.tool_calls = [
        ToolCall(id=f"call_{i}", function=r.name, arguments=_arguments(r)) for i, r in enumerate(requests, first_id)]
    return output


def _arguments(request: ToolRequest) -> dict[str, Any]:
    if isinstance(request.arguments, str):
        raise ValueError(f"{request.name}: a scripted call with raw arguments cannot be replayed")
    return dict(request.arguments)
