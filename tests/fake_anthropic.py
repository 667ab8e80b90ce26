"""A fake Anthropic Messages API on 127.0.0.1, and the pytest fixture `fake_anthropic`.

Loaded as a plugin of the test suite (tests/conftest.py). Tests queue replies
(`fake_anthropic.push(...)`), point a real SDK client at `fake_anthropic.base_url` (the
`make_anthropic` fixture makes them, with recorded instead of real waits), and inspect the JSON
bodies it received in `fake_anthropic.requests`. Each reply answers one request, as JSON or as
SSE (named events, as the API sends them) when the request asked for `stream: true`. With the
queue empty the server answers 400. A reply's usage is by default *measured*: its input tokens
are counted over the request's system prompt, messages and tools (cl100k_base over their
JSON), as a provider counts the prompt it read.
"""

from __future__ import annotations

import asyncio
import collections
import email.utils
import json
import random
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

import pytest
import pytest_asyncio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from loca.core.tokens import count_tokens
from scaffolds.clients import AnthropicClient
from tests.fake_llm import FIXED_NOW, ServerThread, SleepRecorder

_SSE = "text/event-stream"


@dataclass(frozen=True)
class Reply:
    """A normal message: content blocks as the API returns them."""

    blocks: tuple[dict[str, Any], ...]
    stop_reason: str | None = None
    """Defaults to `tool_use` when a block is a tool use, else `end_turn`."""
    usage: dict[str, Any] | Literal["measured"] | None = "measured"
    """The usage block: as given, measured from the request, or none at all."""


@dataclass(frozen=True)
class Fault:
    """An HTTP error status, an error in a 200 response (an `error` event in a stream, an error
    body otherwise), a stream cut off before `message_stop`, a body that is not JSON, a stall."""

    kind: Literal["http", "error_event", "cut_off", "reset", "malformed", "stall"]
    status: int = 500
    error_type: str = "api_error"
    message: str = "fake failure"
    headers: dict[str, str] = field(default_factory=dict)
    stall_s: float = 0.0
    after_headers: bool = False
    """`stall`: send the response headers first (streamed requests), then stay silent."""


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(name: str, arguments: dict[str, Any] | str | None = None,
             call_id: str | None = None) -> dict[str, Any]:
    """A tool use; without `call_id` the server gives one unique to the reply. A `str` is the
    input's JSON as streamed, possibly cut off (sent as is when not streamed)."""
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments or {}}


def thinking(value: str, signature: str = "sig-abc") -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": signature}


def redacted_thinking(data: str) -> dict[str, Any]:
    return {"type": "redacted_thinking", "data": data}


def message(*blocks: dict[str, Any], stop_reason: str | None = None,
            usage: dict[str, Any] | Literal["measured"] | None = "measured") -> Reply:
    return Reply(blocks, stop_reason, usage)


def measured_usage(body: dict[str, Any]) -> dict[str, Any]:
    """Usage whose input count is that of the request's system prompt, messages and tools."""
    sent = [body.get(key, []) for key in ("system", "messages", "tools")]
    return {"input_tokens": count_tokens("".join(json.dumps(part) for part in sent)),
            "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def http_error(status: int, message: str = "fake failure", *, error_type: str = "api_error",
               retry_after: float | None = None, retry_after_date: datetime | None = None) -> Fault:
    headers: dict[str, str] = {}
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
    if retry_after_date is not None:
        headers["retry-after"] = email.utils.format_datetime(retry_after_date, usegmt=True)
    return Fault("http", status=status, error_type=error_type, message=message, headers=headers)


def overloaded() -> Fault:
    return http_error(529, "Overloaded", error_type="overloaded_error")


def error_event(error_type: str = "overloaded_error", message: str = "Overloaded") -> Fault:
    """HTTP 200 with an error: streamed, an `error` event after `message_start`; else the
    body `{"type": "error", "error": {...}}`."""
    return Fault("error_event", status=200, error_type=error_type, message=message)


def cut_off() -> Fault:
    """Streamed: the start of a reply, then the connection closes cleanly before
    `message_stop`; not streamed: a body cut off mid-JSON."""
    return Fault("cut_off")


def reset() -> Fault:
    """Streamed: the start of a reply, then the connection drops mid-body (no clean end of the
    chunked body); not streamed, the same with the JSON body unfinished."""
    return Fault("reset")


def malformed() -> Fault:
    return Fault("malformed")


def stall(seconds: float, *, after_headers: bool = False) -> Fault:
    """Say nothing for `seconds` (then answer 504), as a hung provider does; with
    `after_headers`, a streamed request gets its headers first."""
    return Fault("stall", status=504, stall_s=seconds, after_headers=after_headers)


class FakeAnthropic:
    """Script and records of the fake server."""

    def __init__(self) -> None:
        self.base_url = ""
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._replies: collections.deque[Reply | Fault] = collections.deque()
        self._served = 0

    def push(self, *replies: Reply | Fault) -> None:
        self._replies.extend(replies)

    def reset(self) -> None:
        self.requests.clear()
        self.headers.clear()
        self._replies.clear()
        self._served = 0

    @property
    def pending(self) -> int:
        return len(self._replies)

    async def handle(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        self._served += 1
        headers = {"request-id": f"req_fake_{self._served}", "connection": "close"}
        if not self._replies:
            return _error(400, "invalid_request_error", "fake server: no scripted reply left",
                          headers)
        reply = self._replies.popleft()
        stream = bool(body.get("stream"))
        if isinstance(reply, Fault):
            return await _fault_response(reply, stream, headers)
        if reply.usage == "measured":
            reply = replace(reply, usage=measured_usage(body))
        whole = _whole(reply, body.get("model", "fake"), self._served)
        if stream:
            return StreamingResponse(_sse(_events(whole)), media_type=_SSE, headers=headers)
        return _json(whole, headers=headers)


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(body), status_code=status, headers=headers,
                    media_type="application/json")


def _error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


def _error(status: int, error_type: str, message: str, headers: dict[str, str]) -> Response:
    return _json(_error_body(error_type, message), status, headers)


_START = {"type": "message_start",
          "message": {"id": "msg_cut", "type": "message", "role": "assistant", "model": "fake",
                      "content": [], "stop_reason": None, "stop_sequence": None,
                      "usage": {"input_tokens": 100, "output_tokens": 1}}}


async def _fault_response(fault: Fault, stream: bool, headers: dict[str, str]) -> Response:
    if fault.kind == "http":
        return _error(fault.status, fault.error_type, fault.message,
                      {**headers, **fault.headers})
    if fault.kind == "error_event":
        if stream:
            return StreamingResponse(_sse([_START, _error_body(fault.error_type, fault.message)]),
                                     media_type=_SSE, headers=headers)
        return _json(_error_body(fault.error_type, fault.message), headers=headers)
    if fault.kind == "cut_off":
        if stream:
            events = [_START,
                      {"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}},
                      {"type": "content_block_delta", "index": 0,
                       "delta": {"type": "text_delta", "text": "The answer is"}}]
            return StreamingResponse(_sse(events), media_type=_SSE, headers=headers)
        body = json.dumps(_whole(message(text("The answer is 12.")), "fake", 0))
        return Response(body[:60], media_type="application/json", headers=headers)
    if fault.kind == "reset":
        media = _SSE if stream else "application/json"
        return StreamingResponse(_dropped(stream), media_type=media, headers=headers)
    if fault.kind == "malformed":
        if stream:
            return StreamingResponse(_raw_sse([("message_start", '{"type": "message_start", ')]),
                                     media_type=_SSE, headers=headers)
        return Response('{"id": "msg_fake", "content": [', media_type="application/json",
                        headers=headers)
    if stream and fault.after_headers:
        return StreamingResponse(_silence(fault.stall_s), media_type=_SSE, headers=headers)
    await asyncio.sleep(fault.stall_s)
    return _error(fault.status, "timeout_error", "stalled", headers)


def _whole(reply: Reply, model: str, served: int) -> dict[str, Any]:
    blocks = [{**b, "id": b["id"] or f"toolu_{served}_{i}"} if b["type"] == "tool_use" else b
              for i, b in enumerate(reply.blocks)]
    has_calls = any(b["type"] == "tool_use" for b in blocks)
    body: dict[str, Any] = {
        "id": f"msg_fake_{served}", "type": "message", "role": "assistant", "model": model,
        "content": blocks, "stop_reason": reply.stop_reason or ("tool_use" if has_calls
                                                                 else "end_turn"),
        "stop_sequence": None,
    }
    if reply.usage is not None:
        body["usage"] = reply.usage
    return body


def _halves(value: str) -> list[str]:
    middle = len(value) // 2
    return [piece for piece in (value[:middle], value[middle:]) if piece]


def _input_json(value: dict[str, Any] | str) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _block_events(index: int, block: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """One content block streamed as the API streams it: an empty shell, then deltas."""
    kind = block["type"]
    shells = {"text": {"type": "text", "text": ""},
              "thinking": {"type": "thinking", "thinking": "", "signature": ""},
              "tool_use": {**block, "input": {}}}
    yield {"type": "content_block_start", "index": index,
           "content_block": shells.get(kind, block)}
    if kind == "text":
        deltas = [{"type": "text_delta", "text": p} for p in _halves(block["text"])]
    elif kind == "thinking":
        deltas = [*({"type": "thinking_delta", "thinking": p} for p in _halves(block["thinking"])),
                  {"type": "signature_delta", "signature": block["signature"]}]
    elif kind == "tool_use":
        deltas = [{"type": "input_json_delta", "partial_json": p}
                  for p in ["", *_halves(_input_json(block["input"]))]]
    else:
        deltas = []
    for delta in deltas:
        yield {"type": "content_block_delta", "index": index, "delta": delta}
    yield {"type": "content_block_stop", "index": index}


def _events(whole: dict[str, Any]) -> Iterator[dict[str, Any]]:
    usage = whole.get("usage") or {}
    start_usage = {k: v for k, v in usage.items() if k != "output_tokens"}
    yield {"type": "message_start",
           "message": {**whole, "content": [], "stop_reason": None,
                       "usage": {**start_usage, "output_tokens": 1}}}
    yield {"type": "ping"}
    for index, block in enumerate(whole["content"]):
        yield from _block_events(index, block)
    yield {"type": "message_delta",
           "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
           "usage": {"output_tokens": usage.get("output_tokens", 0)}}
    yield {"type": "message_stop"}


async def _sse(events: Iterator[dict[str, Any]] | list[dict[str, Any]]) -> AsyncIterator[bytes]:
    async for line in _raw_sse([(e["type"], json.dumps(e)) for e in events]):
        yield line


async def _raw_sse(events: list[tuple[str, str]]) -> AsyncIterator[bytes]:
    for name, data in events:
        yield f"event: {name}\ndata: {data}\n\n".encode()
        await asyncio.sleep(0)


async def _silence(seconds: float) -> AsyncIterator[bytes]:
    await asyncio.sleep(seconds)
    yield b""


class _Dropped(Exception):
    """Raised inside a streamed body: the server drops the connection mid-response."""


async def _dropped(stream: bool) -> AsyncIterator[bytes]:
    if stream:
        async for line in _sse([_START]):
            yield line
    else:
        yield b'{"id": "msg_fake", "type": "message", "content": ['
    await asyncio.sleep(0)
    raise _Dropped("connection dropped")


@pytest.fixture(scope="session")
def _fake_anthropic_server() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic()
    server = ServerThread(Starlette(routes=[Route("/v1/messages", fake.handle,
                                                   methods=["POST"])]))
    fake.base_url = f"http://127.0.0.1:{server.port}"
    server.start()
    try:
        yield fake
    finally:
        server.stop()


@pytest.fixture
def fake_anthropic(_fake_anthropic_server: FakeAnthropic) -> Iterator[FakeAnthropic]:
    """The shared fake server with an empty script and no recorded requests."""
    _fake_anthropic_server.reset()
    yield _fake_anthropic_server
    _fake_anthropic_server.reset()


MakeAnthropic = Callable[..., AnthropicClient]


@pytest_asyncio.fixture
async def make_anthropic(fake_anthropic: FakeAnthropic) -> AsyncIterator[MakeAnthropic]:
    """Makes real SDK clients against the fake server (closed after the test)."""
    clients: list[AnthropicClient] = []

    def make(*, stream: bool = True, sleep: SleepRecorder | None = None,
             **options: Any) -> AnthropicClient:
        client = AnthropicClient("claude-fake", api_key="sk-ant-test",
                                 base_url=fake_anthropic.base_url, stream=stream,
                                 sleep=sleep or SleepRecorder(), rng=random.Random(7),
                                 wall_clock=lambda: FIXED_NOW, **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()
