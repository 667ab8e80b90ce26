"""`loca env-server`: sessions opened over HTTP, their tools called as plain JSON and through the
official MCP SDK client and FastMCP's, graded by the task's checker (the oracle earns 1, the
no-op agent 0), deleted; bounded, guarded, expired when idle, and clean after a kill -9."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastmcp import Client
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from envs.core.registry import Task, tasks
from loca.core.dirlock import hold
from loca.core.errors import BadInput
from loca.envserver import ServerSettings, SessionPool, build_app
from loca.envserver.models import SessionRequest
from tests.env_server_support import LiveServer, free_port, play

TOKEN = "a-test-token-of-some-length"


@pytest.fixture(scope="module", autouse=True)
def world_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A world cache of this module's own: a task's world is built once, then copied."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOCA_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        patch.setenv("LOCA_WORLD_CACHE_MB", "512")
        yield


def _serve(root: Path, capacity: int = 4, idle_timeout_s: float = 600, token: str | None = None) -> LiveServer:
    root.mkdir(parents=True, exist_ok=True)
    (root / ".lock").touch()
    return LiveServer(build_app(SessionPool(root, capacity, idle_timeout_s), token))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with _serve(tmp_path_factory.mktemp("sessions")) as live:
        yield live


def _open(client: httpx.Client, task: Task, seed: int = 0) -> dict[str, Any]:
    reply = client.post("/sessions", json={"task": task.name, "length": "8k", "seed": seed})
    assert reply.status_code == 201, reply.text
    return reply.json()


def _http_dispatch(client: httpx.AsyncClient, session_id: str):
    async def dispatch(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        reply = await client.post(f"/sessions/{session_id}/call", json={"name": name, "arguments": arguments})
        assert reply.status_code == 200, reply.text
        return reply.json()["output"], reply.json()["is_error"]

    return dispatch


@pytest.mark.parametrize("agent, reward", [("oracle", 1.0), ("noop", 0.0)])
def test_plain_http_session_is_played_graded_and_deleted(server, any_task, agent, reward):
    with httpx.Client(base_url=server.url, timeout=120) as client:
        opened = _open(client, any_task)
        session_id = opened["session_id"]
        assert opened["world"]["task"] == any_task.name and opened["world"]["target_tokens"] == 8000
        assert opened["instruction"] and {"name", "description", "parameters"} <= set(opened["tools"][0])
        assert opened["mcp_url"] == f"{server.url}/sessions/{session_id}/mcp/"

        async def replay() -> int:
            async with httpx.AsyncClient(base_url=server.url, timeout=120) as aclient:
                return await play(any_task.name, agent, opened["instruction"], opened["tools"],
                                  _http_dispatch(aclient, session_id))

        assert asyncio.run(replay()) > 0
        grade = client.post(f"/sessions/{session_id}/grade").json()
        assert grade["reward"] == reward and grade["passed"] is (reward == 1.0)
        assert grade["checks"] and all(c["passed"] for c in grade["checks"]) is (reward == 1.0)

        assert client.delete(f"/sessions/{session_id}").status_code == 204
        gone = client.post(f"/sessions/{session_id}/call", json={"name": "x"})
        assert gone.status_code == 404 and "no open session" in gone.json()["error"]
        assert client.get("/health").json()["sessions"] == 0


@pytest.mark.parametrize("agent, reward", [("oracle", 1.0), ("noop", 0.0)])
def test_official_mcp_sdk_client_plays_a_session(server, any_task, agent, reward):
    with httpx.Client(base_url=server.url, timeout=120) as client:
        opened = _open(client, any_task)

        async def replay() -> list[str]:
            async with streamable_http_client(opened["mcp_url"]) as (read, write, *_), \
                    ClientSession(read, write) as session:
                await session.initialize()
                listed = [tool.name for tool in (await session.list_tools()).tools]

                async def dispatch(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
                    result = await session.call_tool(name, arguments)
                    return result.content[0].text, result.is_error

                await play(any_task.name, agent, opened["instruction"], opened["tools"], dispatch)
                return listed

        assert sorted(asyncio.run(replay())) == sorted(t["name"] for t in opened["tools"])
        assert client.post(f"/sessions/{opened['session_id']}/grade").json()["reward"] == reward
        assert client.delete(f"/sessions/{opened['session_id']}").status_code == 204


def test_fastmcp_client_gets_the_same_outputs_as_plain_calls(server, any_task):
    with httpx.Client(base_url=server.url, timeout=120) as client:
        opened = _open(client, any_task)
        session_id = opened["session_id"]
        tool = next(t["name"] for t in opened["tools"] if not t["parameters"].get("required")
                    and "claim_done" not in t["name"])
        plain = client.post(f"/sessions/{session_id}/call", json={"name": tool}).json()

        async def over_mcp() -> tuple[str, bool]:
            async with Client(opened["mcp_url"]) as mcp:
                result = await mcp.call_tool(tool, {}, raise_on_error=False)
                return result.content[0].text, result.is_error

        assert asyncio.run(over_mcp()) == (plain["output"], plain["is_error"]) and not plain["is_error"]
        unknown = client.post(f"/sessions/{session_id}/call", json={"name": "no_such_tool"}).json()
        assert unknown["is_error"] and "no_such_tool" in unknown["output"]
        client.delete(f"/sessions/{session_id}")


def test_a_long_call_holds_up_no_other_session(server, any_task):
    with httpx.Client(base_url=server.url, timeout=120) as client:
        slow, quick = _open(client, any_task, seed=0), _open(client, any_task, seed=1)
    runner = next(t["name"] for t in slow["tools"] if t["name"].endswith("python_execute"))
    cheap = next(t["name"] for t in quick["tools"] if not t["parameters"].get("required")
                 and "claim_done" not in t["name"])

    async def both() -> tuple[float, float, dict[str, Any]]:
        async with httpx.AsyncClient(base_url=server.url, timeout=120) as aclient:
            async def timed(session: dict[str, Any], name: str, arguments: dict[str, Any]) -> tuple[float, Any]:
                started = time.monotonic()
                reply = await aclient.post(f"/sessions/{session['session_id']}/call",
                                           json={"name": name, "arguments": arguments})
                return time.monotonic() - started, reply.json()

            long_call = asyncio.create_task(timed(slow, runner, {"code": "import time; time.sleep(3)"}))
            await asyncio.sleep(0.5)
            quick_s, _ = await timed(quick, cheap, {})
            slow_s, slow_reply = await long_call
            return quick_s, slow_s, slow_reply

    quick_s, slow_s, slow_reply = asyncio.run(both())
    assert not slow_reply["is_error"] and slow_s >= 3, slow_reply
    assert quick_s < 1.5
    with httpx.Client(base_url=server.url) as client:
        for session in (slow, quick):
            client.delete(f"/sessions/{session['session_id']}")


def test_deleting_a_session_ends_its_open_mcp_connection(server, any_task):
    with httpx.Client(base_url=server.url, timeout=120) as client:
        opened = _open(client, any_task)

    async def delete_while_connected() -> int:
        async with streamable_http_client(opened["mcp_url"], terminate_on_close=False) as (read, write, *_), \
                ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            async with httpx.AsyncClient(base_url=server.url) as aclient:
                deleted = await asyncio.wait_for(aclient.delete(f"/sessions/{opened['session_id']}"), 20)
            return deleted.status_code

    assert asyncio.run(delete_while_connected()) == 204
    with httpx.Client(base_url=server.url) as client:
        assert client.get("/health").json()["sessions"] == 0
        assert client.post(opened["mcp_url"], json={}).status_code == 404


@pytest.mark.parametrize("body, message", [
    ({"task": "no_such_task", "length": "8k", "seed": 0}, "task: unknown task 'no_such_task'"),
    ({"task": "{task}", "length": "eight", "seed": 0}, "length:"),
    ({"task": "{task}", "length": "8k", "seed": -1}, "seed:"),
    ({"task": "{task}", "length": "8k", "seed": 0, "naming": "odd"}, "naming:"),
    ({"task": "{task}", "length": "8k"}, "seed: Field required"),
])
def test_bad_session_requests_are_one_line_400s(server, any_task, body, message):
    body = {k: v.replace("{task}", any_task.name) if isinstance(v, str) else v for k, v in body.items()}
    with httpx.Client(base_url=server.url) as client:
        reply = client.post("/sessions", json=body)
        assert reply.status_code == 400 and reply.json()["error"].startswith(message), reply.text
        assert "\n" not in reply.json()["error"]
        assert client.post("/sessions", content=b"{not json").status_code == 400
        listed = client.get("/tasks").json()["tasks"]
        assert [t["name"] for t in listed] == list(tasks()) and listed[0]["lengths"][0] == "8k"


def test_past_capacity_a_session_is_refused_with_503(tmp_path, any_task):
    with _serve(tmp_path / "sessions", capacity=1) as live, httpx.Client(base_url=live.url, timeout=120) as client:
        first = _open(client, any_task)
        refused = client.post("/sessions", json={"task": any_task.name, "length": "8k", "seed": 0})
        assert refused.status_code == 503 and refused.headers["retry-after"]
        assert refused.json()["error"].startswith("at capacity: 1 sessions open")
        assert client.get("/health").json() == {"status": "ok", "sessions": 1, "capacity": 1, "idle_timeout_s": 600.0}
        client.delete(f"/sessions/{first['session_id']}")
        _open(client, any_task)


def test_host_and_origin_are_checked_as_loca_serve_does(server):
    with httpx.Client(base_url=server.url) as client:
        assert client.get("/health").status_code == 200
        assert client.get("/health", headers={"Host": "evil.example"}).status_code == 421
        assert client.get("/health", headers={"Origin": "http://evil.example"}).status_code == 403
        assert client.get("/health", headers={"Origin": "http://localhost:3000"}).status_code == 200


def test_a_token_is_required_off_loopback_and_checked_when_set(tmp_path, any_task):
    with pytest.raises(BadInput, match="--allow-remote"):
        ServerSettings(host="0.0.0.0").check()
    with pytest.raises(BadInput, match="without a bearer token"):
        ServerSettings(host="0.0.0.0", allow_remote=("gym.example",)).check()
    ServerSettings(host="0.0.0.0", allow_remote=("gym.example",), token=TOKEN).check()
    with _serve(tmp_path / "sessions", token=TOKEN) as live, httpx.Client(base_url=live.url, timeout=120) as client:
        assert client.get("/health").status_code == 401
        assert client.get("/health", headers={"Authorization": "Bearer wrong"}).status_code == 401
        auth = {"Authorization": f"Bearer {TOKEN}"}
        opened = client.post("/sessions", headers=auth, json={"task": any_task.name, "length": "8k", "seed": 0}).json()
        assert httpx.post(opened["mcp_url"], json={}).status_code == 401

        async def tools() -> int:
            async with Client(opened["mcp_url"], auth=TOKEN) as mcp:
                return len(await mcp.list_tools())

        assert asyncio.run(tools()) == len(opened["tools"])


def test_the_cli_refuses_a_remote_bind_without_a_token(capsys, monkeypatch):
    from loca.cli import main

    monkeypatch.delenv("LOCA_ENV_SERVER_TOKEN", raising=False)
    with pytest.raises(SystemExit) as exit_:
        main(["env-server", "--host", "0.0.0.0", "--allow-remote", "gym.example"])
    assert exit_.value.code == 2 and "LOCA_ENV_SERVER_TOKEN" in capsys.readouterr().err


def test_an_idle_session_is_closed_and_its_folder_removed(tmp_path, any_task):
    root = tmp_path / "sessions"
    with _serve(root, idle_timeout_s=0.5) as live, httpx.Client(base_url=live.url, timeout=120) as client:
        opened = _open(client, any_task)
        assert (root / opened["session_id"] / "world" / "world.json").is_file()
        deadline = time.monotonic() + 10
        while client.get("/health").json()["sessions"] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert client.post(f"/sessions/{opened['session_id']}/grade").status_code == 404
        assert [p.name for p in root.iterdir()] == [".lock"]


def test_a_session_in_use_does_not_expire(tmp_path, any_task):
    now = [0.0]
    root = tmp_path / "sessions"
    with hold(root, "sessions folder"):
        pool = SessionPool(root, 2, idle_timeout_s=10, clock=lambda: now[0])

        async def scenario() -> tuple[list[str], list[str], list[str]]:
            async with pool.running():
                session = await pool.open(SessionRequest(task=any_task.name, length="8k", seed=0))
                now[0] = 11
                async with pool.using(session.id):
                    busy = await pool.expire()
                now[0] = 15
                early = await pool.expire()
                now[0] = 22
                return busy, early, await pool.expire()

        busy, early, late = asyncio.run(scenario())
    assert busy == [] and early == [] and len(late) == 1
    assert [p.name for p in root.iterdir()] == [".lock"]


def _start(root: Path, port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([sys.executable, "-m", "loca", "env-server", "--port", str(port), "--root", str(root)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"env-server did not start: {process.communicate()[1].decode()[-500:]}")


@pytest.mark.slow
def test_a_killed_server_leaves_nothing_a_restart_trips_over(tmp_path, any_task):
    root = tmp_path / "sessions"
    port = free_port()
    process = _start(root, port)
    try:
        opened = httpx.post(f"http://127.0.0.1:{port}/sessions", timeout=120,
                            json={"task": any_task.name, "length": "8k", "seed": 0}).json()
        assert (root / opened["session_id"]).is_dir()
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    restarted = _start(root, port)
    try:
        assert httpx.get(f"http://127.0.0.1:{port}/health").json()["sessions"] == 0
        assert [p.name for p in root.iterdir()] == [".lock"]
    finally:
        restarted.send_signal(signal.SIGINT)
        restarted.wait(timeout=30)
    assert [p.name for p in root.iterdir()] == [".lock"]


def test_a_folder_that_is_not_a_sessions_folder_is_never_cleared(tmp_path, capsys):
    from loca.cli import main

    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(SystemExit) as exit_:
        main(["env-server", "--root", str(tmp_path)])
    assert exit_.value.code == 2 and "not a sessions folder" in capsys.readouterr().err
    assert (tmp_path / "keep.txt").read_text() == "mine"
