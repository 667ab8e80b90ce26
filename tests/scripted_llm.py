"""A fake OpenAI chat-completions server whose replies are a task's scripted agent: each request
feeds the agent the tool results since its last turn and answers with its next calls (text
once the script ends). One conversation at a time; a request without an assistant message
starts a new one."""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from loca.core.script import ToolReply
from scaffolds.oracles import agents
from tests.fake_llm import Completion, FakeLLM, ServerThread, completion, tool_call

ERROR_PREFIX = "Error ["  # how the gym's tools word an error result (chat tool messages carry text only)


def _text(content: Any) -> str:
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content or [])


class ScriptedLLM(FakeLLM):
    """Plays `agent` of `task` (set them before each conversation)."""

    def __init__(self) -> None:
        super().__init__()
        self.task = ""
        self.agent = ""
        self.conversations = 0
        self._script: Generator[Any, list[ToolReply], Any] | None = None

    async def handle(self, request: Request) -> Response:
        self.push(self._next(await request.json()))
        return await super().handle(request)

    def _next(self, body: dict[str, Any]) -> Completion:
        messages = body["messages"]
        try:
            if self._script is None or not any(m["role"] == "assistant" for m in messages):
                self.conversations += 1
                instruction = next(_text(m["content"]) for m in messages if m["role"] == "user")
                tools = [{"name": t["function"]["name"]} for t in body.get("tools", [])]
                self._script = agents(self.task).script(self.agent)(instruction, tools)
                step = next(self._script)
            else:
                step = self._script.send(_replies(messages))
            while isinstance(step, str):  # a plain-text turn gets no replies: go on to the next calls
                step = self._script.send([])
        except StopIteration:
            return completion("Done.")
        calls = step if isinstance(step, list) else [step]
        stamp = time.monotonic_ns()
        return completion(None, *[tool_call(c.name, c.arguments, f"call_{stamp}_{i}") for i, c in enumerate(calls)])


def _replies(messages: list[dict[str, Any]]) -> list[ToolReply]:
    replies = []
    for message in reversed(messages):
        if message["role"] == "assistant":
            break
        if message["role"] == "tool":
            text = _text(message["content"])
            replies.append(ToolReply(text, text.startswith(ERROR_PREFIX)))
    return replies[::-1]


def serve_scripted() -> tuple[ScriptedLLM, ServerThread]:
    """The scripted server, started; its base URL in `.base_url`."""
    fake = ScriptedLLM()
    server = ServerThread(Starlette(routes=[Route("/v1/chat/completions", fake.handle, methods=["POST"])]))
    fake.base_url = f"http://127.0.0.1:{server.port}/v1"
    server.start()
    return fake, server
