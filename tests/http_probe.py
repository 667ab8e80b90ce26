"""Raw HTTP/1.1 clients for the tests of the servers' limits (`loca.core.http_limits`)."""

from __future__ import annotations

import http.client
import select
import socket
import time
from collections.abc import Callable
from contextlib import ExitStack

BOUND_S = 15.0
"""Within this every expected closing or refusal happens (the limits under test are far shorter)."""


def closed_by_server(socks: list[socket.socket], drip: bytes = b"", bound_s: float = BOUND_S) -> int:
    """How many of `socks` the server closes within `bound_s`, while the client sends `drip` (if
    any) on each ten times a second and reads whatever comes back."""
    waiting = set(socks)
    deadline = time.monotonic() + bound_s
    while waiting and time.monotonic() < deadline:
        for sock in list(waiting):
            try:
                if drip:
                    sock.sendall(drip)
            except (ConnectionResetError, BrokenPipeError):
                waiting.discard(sock)
        readable, _, _ = select.select(list(waiting), [], [], 0.1)
        for sock in readable:
            try:
                if sock.recv(65536) == b"":
                    waiting.discard(sock)
            except ConnectionResetError:
                waiting.discard(sock)
    return len(socks) - len(waiting)


def status(port: int, path: str = "/", conn: http.client.HTTPConnection | None = None,
           headers: dict[str, str] | None = None) -> int:
    """The status of a GET of `path`, on `conn` (left open) when given, else on a new connection."""
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=BOUND_S)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        if own:
            conn.close()


def eventually(condition: Callable[[], bool], bound_s: float = BOUND_S) -> bool:
    """Whether `condition` holds within `bound_s` (what the server does in its own time)."""
    deadline = time.monotonic() + bound_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def refused_past(port: int, limit: int, path: str = "/") -> bool:
    """Whether, with `limit` idle connections open, a request on a further one is answered 503,
    and once they are closed, answered again."""
    with ExitStack() as idle:
        for _ in range(limit):
            idle.enter_context(socket.create_connection(("127.0.0.1", port)))
        refused = eventually(lambda: status(port, path) == 503)
    return refused and eventually(lambda: status(port, path) != 503)
