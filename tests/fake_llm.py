"""A fake OpenAI chat-completions server on 127.0.0.1, and the pytest fixture `fake_llm`.

Register it in a test module with `pytest_plugins = ["tests.fake_llm"]`. Tests queue replies
(`fake_llm.push(...)`), point a real SDK client at `fake_llm.base_url` (the `make_client`
fixture makes them, with recorded instead of real waits), and inspect the JSON bodies it
received in `fake_llm.requests`. Each reply answers one request, as JSON or as SSE
when the request asked for `stream: true`. A reply's usage is by default *measured*: its prompt
tokens are counted over the request's messages and tools (cl100k_base over their JSON), as a
provider counts the prompt it read. With the queue empty the server answers 400. Bodies
are written with JSON escapes for anything outside ASCII, so replies may carry lone surrogates.
"""

from __future__ import annotations

import asyncio
import collections
import email.utils
import json
import random
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

import pytest
import pytest_asyncio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from loca.core.tokens import count_tokens
from scaffolds.clients import OpenAICompatClient

FIXED_NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z, the wall clock seen by Retry-After dates


@dataclass(frozen=True)
class Completion:
    """A normal reply: text and/or tool calls."""

    text: str | None = None
    tool_calls: tuple[dict[str, Any], ...] = ()
    finish_reason: str | None = None
    """Defaults to `tool_calls` when there are calls, else `stop`."""
    usage: dict[str, Any] | Literal["measured"] | None = "measured"
    """The usage block: as given, measured from the request, or none at all."""
    reasoning: str | None = None
    reasoning_field: str = "reasoning_content"
    call_index: bool = True
    """Streamed tool-call deltas carry `index`; False leaves it out, as some providers do."""


@dataclass(frozen=True)
class Fault:
    """A failure: an HTTP error status, a body that is not JSON, a reply without choices, an
    error inside a 200 response, a stream cut off before its finish reason, or a stall."""

    kind: Literal["http", "malformed", "empty_choices", "error_body", "cut_off", "stall"]
    status: int = 500
    """HTTP status; for `error_body`, the `code` inside the body (0: no code)."""
    message: str = "fake failure"
    headers: dict[str, str] = field(default_factory=dict)
    stall_s: float = 0.0
    after_headers: bool = False
    """`stall`: send the response headers first (streamed requests), then stay silent."""


Reply = Completion | Fault


def tool_call(name: str, arguments: dict[str, Any] | str | None = None,
              call_id: str | None = None) -> dict[str, Any]:
    """A tool call for `completion`; a `str` is sent as the raw (possibly invalid) arguments."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return {"id": call_id, "name": name, "arguments": raw}


def completion(text: str | None = None, *calls: dict[str, Any], finish_reason: str | None = None,
               usage: dict[str, Any] | Literal["measured"] | None = "measured",
               reasoning: str | None = None, reasoning_field: str = "reasoning_content",
               call_index: bool = True) -> Completion:
    return Completion(text=text, tool_calls=calls, finish_reason=finish_reason, usage=usage,
                      reasoning=reasoning, reasoning_field=reasoning_field, call_index=call_index)


def measured_usage(body: dict[str, Any]) -> dict[str, Any]:
    """Usage whose prompt count is that of the request's messages and tools, 10 output tokens."""
    prompt = count_tokens(json.dumps(body.get("messages", [])) + json.dumps(body.get("tools", [])))
    return {"prompt_tokens": prompt, "completion_tokens": 10, "total_tokens": prompt + 10}


def http_error(status: int, message: str = "fake failure", *, retry_after: float | None = None,
               retry_after_ms: float | None = None,
               retry_after_date: datetime | None = None) -> Fault:
    headers: dict[str, str] = {}
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
    if retry_after_ms is not None:
        headers["retry-after-ms"] = f"{retry_after_ms:g}"
    if retry_after_date is not None:
        headers["retry-after"] = email.utils.format_datetime(retry_after_date, usegmt=True)
    return Fault("http", status=status, message=message, headers=headers)


def malformed() -> Fault:
    return Fault("malformed")


def empty_choices() -> Fault:
    return Fault("empty_choices")


def error_body(message: str = "upstream model failed", code: int | None = 502) -> Fault:
    """HTTP 200 whose body (or, streamed, whose second event) is `{"error": {message, code}}`."""
    return Fault("error_body", status=code or 0, message=message)


def cut_off() -> Fault:
    """Streamed: some text, then the connection closes cleanly with no finish reason and no
    `[DONE]`; not streamed: a body cut off mid-JSON."""
    return Fault("cut_off")


def stall(seconds: float, *, after_headers: bool = False) -> Fault:
    """Say nothing for `seconds` (then answer 504), as a hung provider does; with
    `after_headers`, a streamed request gets its headers first."""
    return Fault("stall", status=504, stall_s=seconds, after_headers=after_headers)


class FakeLLM:
    """Script and records of the fake server."""

    def __init__(self) -> None:
        self.base_url = ""
        self.requests: list[dict[str, Any]] = []
        self._replies: collections.deque[Reply] = collections.deque()
        self._served = 0

    def push(self, *replies: Reply) -> None:
        self._replies.extend(replies)

    def reset(self) -> None:
        self.requests.clear()
        self._replies.clear()

    @property
    def pending(self) -> int:
        return len(self._replies)

    async def handle(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        self._served += 1
        # One connection per request: keep-alive on loopback stalls ~40 ms per request on
        # delayed ACKs, which would dominate the suite's run time.
        headers = {"x-request-id": f"req_fake_{self._served}", "connection": "close"}
        if not self._replies:
            return _error_response(400, "fake server: no scripted reply left", headers)
        reply = self._replies.popleft()
        stream = bool(body.get("stream"))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        model = body.get("model", "fake")
        if isinstance(reply, Fault):
            return await _fault_response(reply, stream, model, headers, measured_usage(body))
        if reply.usage == "measured":
            reply = replace(reply, usage=measured_usage(body))
        if stream:
            return StreamingResponse(_sse(_chunks(reply, model, include_usage)),
                                     media_type="text/event-stream", headers=headers)
        return _json(_whole(reply, model), headers=headers)


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(body), status_code=status, headers=headers,
                    media_type="application/json")


def _error_response(status: int, message: str, headers: dict[str, str]) -> Response:
    return _json({"error": {"message": message, "type": "fake_error", "code": None}},
                 status, headers)


async def _fault_response(fault: Fault, stream: bool, model: str, headers: dict[str, str],
                          usage: dict[str, Any]) -> Response:
    if fault.kind == "http":
        return _error_response(fault.status, fault.message, {**headers, **fault.headers})
    if fault.kind == "error_body":
        error = {"message": fault.message, "code": fault.status or None}
        if stream:
            first = _chunk(model, [{"index": 0, "delta": {"role": "assistant"},
                                    "finish_reason": None}])
            return StreamingResponse(_sse([first, {"error": error}]),
                                     media_type="text/event-stream", headers=headers)
        return _json({"error": error}, headers=headers)
    if fault.kind == "cut_off":
        if stream:
            first = _chunk(model, [{"index": 0, "delta": {"content": "The answer is"},
                                    "finish_reason": None}])
            return StreamingResponse(_raw_sse([json.dumps(first)], done=False),
                                     media_type="text/event-stream", headers=headers)
        return Response(json.dumps(_whole(Completion("The answer is 12."), model))[:60],
                        media_type="application/json", headers=headers)
    if fault.kind == "stall":
        if stream and fault.after_headers:
            return StreamingResponse(_silence(fault.stall_s), media_type="text/event-stream",
                                     headers=headers)
        await asyncio.sleep(fault.stall_s)
        return _error_response(fault.status, "stalled", headers)
    if fault.kind == "malformed":
        if stream:
            return StreamingResponse(_raw_sse(['{"id": "chatcmpl-fake", "choices": [']),
                                     media_type="text/event-stream", headers=headers)
        return Response('{"id": "chatcmpl-fake", "choices": [', media_type="application/json",
                        headers=headers)
    if stream:
        return StreamingResponse(_sse([_chunk(model, [], usage=usage)]),
                                 media_type="text/event-stream", headers=headers)
    return _json({"id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                  "model": model, "choices": [], "usage": usage}, headers=headers)


def _finish_reason(reply: Completion) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def _call_id(call: dict[str, Any], index: int) -> str | None:
    return call["id"] if call["id"] is not None else f"call_fake_{index}"


def _whole(reply: Completion, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.reasoning is not None:
        message[reply.reasoning_field] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": _call_id(c, i), "type": "function",
             "function": {"name": c["name"], "arguments": c["arguments"]}}
            for i, c in enumerate(reply.tool_calls)]
    out: dict[str, Any] = {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply)}],
    }
    if reply.usage is not None:
        out["usage"] = reply.usage
    return out


def _chunk(model: str, choices: list[dict[str, Any]],
           usage: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                           "created": 0, "model": model, "choices": choices}
    if usage is not None:
        out["usage"] = usage
    return out


def _halves(text: str) -> list[str]:
    middle = len(text) // 2
    return [piece for piece in (text[:middle], text[middle:]) if piece]


def _chunks(reply: Completion, model: str, include_usage: bool) -> Iterator[dict[str, Any]]:
    """The reply cut into deltas the way providers stream: text and arguments in pieces."""

    def delta(**fields: Any) -> dict[str, Any]:
        return _chunk(model, [{"index": 0, "delta": fields, "finish_reason": None}])

    yield delta(role="assistant")
    for piece in _halves(reply.reasoning or ""):
        yield delta(**{reply.reasoning_field: piece})
    for piece in _halves(reply.text or ""):
        yield delta(content=piece)
    for index, call in enumerate(reply.tool_calls):
        where = {"index": index} if reply.call_index else {}
        yield delta(tool_calls=[{**where, "id": _call_id(call, index), "type": "function",
                                 "function": {"name": call["name"], "arguments": ""}}])
        for piece in _halves(call["arguments"]):
            yield delta(tool_calls=[{**where, "function": {"arguments": piece}}])
    yield _chunk(model, [{"index": 0, "delta": {}, "finish_reason": _finish_reason(reply)}])
    if include_usage and reply.usage is not None:
        yield _chunk(model, [], usage=reply.usage)


async def _sse(chunks: Iterator[dict[str, Any]] | list[dict[str, Any]]) -> AsyncIterator[bytes]:
    async for line in _raw_sse([json.dumps(c) for c in chunks]):
        yield line


async def _raw_sse(datas: list[str], *, done: bool = True) -> AsyncIterator[bytes]:
    for data in [*datas, "[DONE]"] if done else datas:
        yield f"data: {data}\n\n".encode()
        await asyncio.sleep(0)


async def _silence(seconds: float) -> AsyncIterator[bytes]:
    await asyncio.sleep(seconds)
    yield b""


class ServerThread:
    """Uvicorn serving an app on a free loopback port, in a daemon thread."""

    def __init__(self, app: Starlette) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run,
                                        kwargs={"sockets": [self._socket]}, daemon=True)

    def start(self) -> None:
        self._thread.start()
        deadline = time.monotonic() + 10.0
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the fake LLM server did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10.0)
        self._socket.close()


@pytest.fixture(scope="session")
def _fake_llm_server() -> Iterator[FakeLLM]:
    fake = FakeLLM()
    server = ServerThread(Starlette(routes=[
        Route("/v1/chat/completions", fake.handle, methods=["POST"])]))
    fake.base_url = f"http://127.0.0.1:{server.port}/v1"
    server.start()
    try:
        yield fake
    finally:
        server.stop()


@pytest.fixture
def fake_llm(_fake_llm_server: FakeLLM) -> Iterator[FakeLLM]:
    """The shared fake server with an empty script and no recorded requests."""
    _fake_llm_server.reset()
    yield _fake_llm_server
    _fake_llm_server.reset()


class SleepRecorder:
    """Stands in for `asyncio.sleep`: records waits, never sleeps."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


MakeClient = Callable[..., OpenAICompatClient]


@pytest_asyncio.fixture
async def make_client(fake_llm: FakeLLM) -> AsyncIterator[MakeClient]:
    """Makes real SDK clients against the fake server (closed after the test)."""
    clients: list[OpenAICompatClient] = []

    def make(*, stream: bool = True, sleep: SleepRecorder | None = None,
             **options: Any) -> OpenAICompatClient:
        client = OpenAICompatClient("fake-model", api_key="sk-test", base_url=fake_llm.base_url,
                                    stream=stream, sleep=sleep or SleepRecorder(),
                                    rng=random.Random(7), wall_clock=lambda: FIXED_NOW,
                                    **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()
