"""Helpers of the environment server's tests: a real server on a free loopback port (uvicorn in
a thread, its lifespan on), and scripted agents played through any tool dispatcher."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import uvicorn
from starlette.types import ASGIApp

from envs.core.build import drive
from loca.core.script import ToolReply, ToolRequest
from scaffolds.oracles import agents

Dispatch = Callable[[str, dict[str, Any]], Awaitable[tuple[str, bool]]]


def free_port() -> int:
    """A loopback port no one listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LiveServer:
    """`app` served by uvicorn on 127.0.0.1 (a free port) in a daemon thread."""

    def __init__(self, app: ASGIApp) -> None:
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]},
                                        daemon=True)

    def __enter__(self) -> LiveServer:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the environment server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)
        self._socket.close()


async def play(task: str, agent: str, instruction: str, tools: list[dict[str, Any]], dispatch: Dispatch) -> int:
    """Play `task`'s scripted `agent` through `dispatch`; how many calls it made."""

    async def call(request: ToolRequest) -> ToolReply:
        raw = request.arguments
        arguments = json.loads(raw) if isinstance(raw, str) else dict(raw)
        text, is_error = await dispatch(request.name, arguments)
        return ToolReply(text, is_error)

    replies, _ = await drive(agents(task).script(agent)(instruction, tools), call)
    return len(replies)
