"""Hostile input at the transports: HTTP requests with a forged `Host` or `Origin` are refused
before any tool runs (DNS rebinding), a request past the connection limit is answered 503
(`test_http_limits` covers the limits), and over stdio every malformed line gets a JSON-RPC error
while the server keeps answering."""

from __future__ import annotations

import json
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from envs.core.registry import Task
from loca.core.http_limits import HttpLimits
from loca.core.world import World, content_hash
from mock_servers.serve import check_bind, http_guard, remote_names
from mock_servers.stdio import MAX_LINE_BYTES, check_line, request_id
from tests.conftest import small_params
from tests.http_probe import refused_past

PROTOCOL = "2025-06-18"
INIT_PARAMS = {"protocolVersion": PROTOCOL, "capabilities": {},
               "clientInfo": {"name": "test", "version": "1"}}


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory: pytest.TempPathFactory, any_task: Task) -> Path:
    task = any_task
    root = tmp_path_factory.mktemp("guards") / "world"
    task.generate(root, small_params(task), 0)
    return root


# ---------------------------------------------------------------- HTTP


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def _http_server(*argv: str) -> Iterator[int]:
    """Run a server over HTTP on a free loopback port until it accepts connections."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, *argv, "--transport", "http", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "server did not start"
                time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


class McpHttp:
    """A bare streamable-HTTP MCP client whose requests may carry any headers."""

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.http = httpx.Client(timeout=30)
        self.session: str | None = None
        self.last_id = 0

    def post(self, method: str, params: dict[str, Any] | None = None, *, notify: bool = False,
             headers: dict[str, str] | None = None) -> httpx.Response:
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            body["params"] = params
        if not notify:
            self.last_id += 1
            body["id"] = self.last_id
        sent = {"accept": "application/json, text/event-stream",
                "content-type": "application/json", "mcp-protocol-version": PROTOCOL}
        if self.session:
            sent["mcp-session-id"] = self.session
        return self.http.post(self.url, content=json.dumps(body), headers={**sent, **(headers or {})})

    def open(self, headers: dict[str, str] | None = None) -> httpx.Response:
        response = self.post("initialize", INIT_PARAMS, headers=headers)
        if response.status_code == 200:
            self.session = response.headers["mcp-session-id"]
            self.post("notifications/initialized", notify=True, headers=headers)
        return response


def _message(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response, sent as JSON or as one SSE event."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return response.json()


@pytest.fixture(scope="module")
def gateway_port(world_dir: Path) -> Iterator[int]:
    """`loca serve` with its defaults: all of the task's servers, loopback only."""
    with _http_server("-m", "loca", "serve", "--world", str(world_dir)) as port:
        yield port


@pytest.mark.slow
def test_a_forged_host_or_origin_cannot_write(gateway_port: int, world_dir: Path) -> None:
    port = gateway_port
    mcp = McpHttp(port)
    assert mcp.open().status_code == 200
    before = content_hash(World.load(world_dir))
    forged = [({"host": "evil.example"}, 421), ({"host": f"evil.example:{port}"}, 421),
              ({"host": f"127.0.0.1.evil.example:{port}"}, 421),
              ({"origin": "http://evil.example"}, 403), ({"origin": f"http://evil.example:{port}"}, 403),
              ({"origin": "null"}, 403), ({"host": "evil.example", "origin": "http://evil.example"}, 421)]
    for headers, status in forged:
        response = mcp.post("tools/call", {"name": "filesystem_write_file",
                                           "arguments": {"path": "forged.txt", "content": "x"}},
                            headers=headers)
        assert response.status_code == status, (headers, response.text)
    assert McpHttp(port).open({"host": "evil.example"}).status_code == 421  # no session either
    assert not (world_dir / "workspace" / "forged.txt").exists()
    assert content_hash(World.load(world_dir)) == before
    # the same call under the server's own names goes through: the refusals were the guard's
    for n, headers in enumerate([{}, {"host": f"localhost:{port}"}, {"host": f"[::1]:{port}"},
                                 {"origin": "http://localhost:3000"},
                                 {"origin": f"http://127.0.0.1:{port}"}]):
        response = mcp.post("tools/call", {"name": "filesystem_write_file",
                                           "arguments": {"path": f"own-{n}.txt", "content": "x"}},
                            headers=headers)
        assert response.status_code == 200 and not _message(response)["result"]["isError"]
        assert (world_dir / "workspace" / f"own-{n}.txt").read_text() == "x"


@pytest.mark.slow
def test_allow_remote_names_the_other_hosts_clients_may_use(world_dir: Path) -> None:
    with _http_server("-m", "mock_servers", "filesystem", "--world", str(world_dir),
                      "--allow-remote", "gateway.test,10.1.2.3") as port:
        assert McpHttp(port).open({"host": f"gateway.test:{port}"}).status_code == 200
        assert McpHttp(port).open({"host": "10.1.2.3"}).status_code == 200
        assert McpHttp(port).open({"origin": "https://gateway.test:8443"}).status_code == 200
        assert McpHttp(port).open({"host": "other.test"}).status_code == 421
        assert McpHttp(port).open({"origin": "http://other.test"}).status_code == 403


def test_remote_names_are_names_and_needed_beyond_loopback() -> None:
    assert remote_names(["Gateway.Test,10.1.2.3", "[FE80::1]", "gateway.test"]) == (
        "gateway.test", "10.1.2.3", "fe80::1")
    for bad in ("*", "*.example", "host:8080", "http://host", "a..b", "-a.example"):
        with pytest.raises(ValueError, match="host names or addresses"):
            remote_names([bad])
    check_bind("http", "127.0.0.1")
    check_bind("http", "0.0.0.0", ("gateway.test",))
    with pytest.raises(ValueError, match="--allow-remote NAME"):
        check_bind("http", "0.0.0.0")
    guard = http_guard(("fe80::1",))
    assert guard["host_origin_protection"] is True
    assert "http://[[]fe80::1]:*" in guard["allowed_origins"]  # brackets escaped for the glob


def test_past_its_connection_limit_a_request_is_answered_503(gateway_port: int) -> None:
    assert refused_past(gateway_port, HttpLimits().max_connections, "/mcp")


# ---------------------------------------------------------------- stdio


class StdioPeer:
    """A server process spoken to line by line."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.last_id = 100
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 30) -> dict[str, Any]:
        return json.loads(self.lines.get(timeout=timeout))

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.last_id += 1
        body = {"jsonrpc": "2.0", "id": self.last_id, "method": method}
        self.send(json.dumps({**body, **({"params": params} if params else {})}).encode())
        reply = self.reply()
        assert reply["id"] == self.last_id, reply
        return reply

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def stdio_peer(world_dir: Path) -> Iterator[StdioPeer]:
    peer = StdioPeer([sys.executable, "-m", "mock_servers", "filesystem", "--world", str(world_dir)])
    try:
        assert "result" in peer.request("initialize", INIT_PARAMS)
        peer.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        yield peer
    finally:
        peer.close()


PARSE, INVALID = -32700, -32600
BAD_LINES = {
    "lone-surrogate escape": (rb'{"jsonrpc":"2.0","id":"s1","method":"ping","params":{"x":"\ud800"}}',
                              PARSE, "s1"),
    "5000-digit number": (b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":' + b"9" * 5000
                          + b"}}", PARSE, 2),
    "5000-digit id": (b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"ping"}', PARSE, None),
    "10K-deep nesting": (b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":' + b"[" * 10_000
                         + b"]" * 10_000 + b"}}", PARSE, None),
    "not JSON": (b"hello", PARSE, None),
    "cut-off JSON": (b'{"jsonrpc":"2.0","id":4,"method":"pi', PARSE, None),
    "jsonrpc 1.0": (b'{"jsonrpc":"1.0","id":5,"method":"ping"}', INVALID, 5),
    "no method": (b'{"jsonrpc":"2.0","id":6}', INVALID, 6),
    "params not an object": (b'{"jsonrpc":"2.0","id":7,"method":"ping","params":[1]}', INVALID, 7),
    "a batch": (b'[{"jsonrpc":"2.0","id":8,"method":"ping"}]', INVALID, None),
    "null id": (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID, None),
    "boolean id": (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID, None),
    "fractional id": (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', INVALID, None),
    "line over the size limit": (b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"'
                                 + b"a" * MAX_LINE_BYTES + b'"}}', INVALID, None),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BAD_LINES))
def test_every_malformed_line_gets_an_error_and_the_server_goes_on(stdio_peer: StdioPeer,
                                                                   name: str) -> None:
    line, code, ident = BAD_LINES[name]
    stdio_peer.send(line)
    reply = stdio_peer.reply()
    assert reply["jsonrpc"] == "2.0" and reply["id"] == ident and reply["error"]["code"] == code
    assert stdio_peer.request("ping")["result"] == {}


def test_blank_lines_and_bad_bytes_are_no_obstacle(stdio_peer: StdioPeer) -> None:
    stdio_peer.send(b"")
    stdio_peer.send(b"   ")
    stdio_peer.send(b'{"jsonrpc":"2.0","id":"bytes","method":"ping","params":{"x":"\xff\xfe"}}')
    assert stdio_peer.reply() == {"jsonrpc": "2.0", "id": "bytes", "result": {}}
    listing = stdio_peer.request("tools/call", {"name": "list_allowed_directories", "arguments": {}})
    assert not listing["result"]["isError"] and stdio_peer.proc.poll() is None


def test_the_checks_in_process() -> None:
    assert check_line('{"jsonrpc":"2.0","id":1,"method":"ping"}') is None
    assert check_line('{"jsonrpc":"2.0","method":"notifications/initialized"}') is None
    assert request_id('{"id":"\\ud800"}') is None  # an id that could not be written back
    assert request_id('{"id":-12,"x":' + "1" * 5000 + "}") == -12
    error = check_line('{"jsonrpc":"2.0","id":"a","method":"ping","params":"x"}')
    assert error is not None and (error.id, error.error.code) == ("a", INVALID)
