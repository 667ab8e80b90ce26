"""The HTTP servers' limits (`loca.core.http_limits`): clients that send a request slowly, or
nothing, and idle keep-alive connections are closed; a head over the size limit is answered 400;
past the connection limit a request is answered 503; answering itself is not hurried. Timeouts
are short here and every bound generous: nothing depends on the machine's speed."""

from __future__ import annotations

import asyncio
import http.client
import socket
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest
import uvicorn
from starlette.types import Receive, Scope, Send

from loca.core.http_limits import MAX_HEAD_BYTES, HttpLimits
from tests.http_probe import BOUND_S, closed_by_server, eventually, refused_past, status

LONG_S = int(BOUND_S * 4)  # a limit that never strikes within a test
SHORT_REQUEST = HttpLimits(request_timeout_s=1.0, keep_alive_s=LONG_S)
SHORT_IDLE = HttpLimits(request_timeout_s=LONG_S, keep_alive_s=1)
FEW = HttpLimits(request_timeout_s=LONG_S, keep_alive_s=LONG_S, max_connections=3)
SLOW_ANSWER_S = 3.0  # longer than SHORT_REQUEST's request timeout


async def _app(scope: Scope, receive: Receive, send: Send) -> None:
    """Reads the whole request body, then answers 200 (`/slow`: after SLOW_ANSWER_S)."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    if scope["path"] == "/slow":
        await asyncio.sleep(SLOW_ANSWER_S)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


@contextmanager
def _server(limits: HttpLimits) -> Iterator[int]:
    """`_app` served with `limits` on a free loopback port, in a thread."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(_app, lifespan="off", log_level="warning", **limits.uvicorn_settings()))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        assert eventually(lambda: server.started), "the server did not start"
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(BOUND_S)
        sock.close()


def _connect(port: int, first: bytes = b"") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(first)
    return sock


def test_clients_sending_a_request_slowly_or_nothing_are_closed() -> None:
    head = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    with _server(SHORT_REQUEST) as port, ExitStack() as open_:
        silent = [open_.enter_context(_connect(port)) for _ in range(10)]
        slow_head = [open_.enter_context(_connect(port, head + b"X-Slow: ")) for _ in range(10)]
        slow_body = [open_.enter_context(_connect(port, head + b"Content-Length: 100000\r\n\r\n"))
                     for _ in range(10)]
        assert closed_by_server(silent) == 10
        assert closed_by_server(slow_head, drip=b"a") == 10  # a byte each 0.1 s, on and on
        assert closed_by_server(slow_body, drip=b"a") == 10


def test_an_idle_keep_alive_connection_is_closed() -> None:
    with _server(SHORT_IDLE) as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=BOUND_S)
        assert status(port, conn=conn) == 200
        assert conn.sock is not None and closed_by_server([conn.sock]) == 1


@pytest.mark.slow
def test_answering_may_take_longer_than_the_request_timeout() -> None:
    with _server(SHORT_REQUEST) as port:
        assert status(port, "/slow") == 200


def test_an_unfinished_head_over_the_size_limit_is_answered_400() -> None:
    with _server(FEW) as port:
        assert status(port, headers={"x-pad": "a" * (MAX_HEAD_BYTES // 2)}) == 200
        with _connect(port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * MAX_HEAD_BYTES) as sock:
            sock.settimeout(BOUND_S)
            assert sock.recv(65536).startswith(b"HTTP/1.1 400 ")


def test_past_the_connection_limit_a_request_is_answered_503() -> None:
    with _server(FEW) as port:
        served = [http.client.HTTPConnection("127.0.0.1", port, timeout=BOUND_S) for _ in range(3)]
        assert [status(port, conn=conn) for conn in served] == [200, 200, 200]  # and kept open
        extra = http.client.HTTPConnection("127.0.0.1", port, timeout=BOUND_S)
        extra.request("GET", "/")
        refusal = extra.getresponse()
        assert (refusal.status, refusal.getheader("connection"), refusal.read()) == (
            503, "close", b"Service Unavailable")
        assert status(port, conn=served[0]) == 200  # those served go on
        served[0].close()
        assert eventually(lambda: status(port) == 200)
        assert refused_past(port, 3)
