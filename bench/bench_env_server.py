"""Benchmarks of `loca env-server`: sessions opened per second (worlds built, and copied from the
world cache), one tool call's latency over plain JSON and over MCP, and steps per second with
many sessions played at once (each replaying the task's oracle, then graded).

    python bench/bench_env_server.py                  # print the section
    python bench/bench_env_server.py --write          # also put it in bench/RESULTS.md

The server runs in a process of its own (uvicorn, one event loop) with a world cache of its own;
the clients run in this process."""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from results import put_section  # a sibling script

from envs.core.build import drive
from loca.core.script import ToolReply, ToolRequest
from scaffolds.oracles import agents

SECTION = "## Environment server"
REPO = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start(cache: Path, root: Path, capacity: int) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    env = {**os.environ, "LOCA_CACHE_DIR": str(cache), "LOCA_WORLD_CACHE_MB": "4096", "PYTHONPATH": str(REPO)}
    process = subprocess.Popen([sys.executable, "-m", "loca", "env-server", "--port", str(port), "--root", str(root),
                                "--max-sessions", str(capacity)], env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            httpx.get(f"{url}/health")
            return process, url
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError("the env-server did not start")


async def _open(client: httpx.AsyncClient, task: str, length: str, seed: int) -> dict[str, Any]:
    reply = await client.post("/sessions", json={"task": task, "length": length, "seed": seed})
    reply.raise_for_status()
    return reply.json()


async def _opened_per_s(client: httpx.AsyncClient, task: str, length: str, seeds: list[int],
                        concurrency: int) -> tuple[float, list[dict[str, Any]]]:
    gate = asyncio.Semaphore(concurrency)

    async def one(seed: int) -> dict[str, Any]:
        async with gate:
            return await _open(client, task, length, seed)

    started = time.perf_counter()
    opened = await asyncio.gather(*(one(seed) for seed in seeds))
    return len(seeds) / (time.perf_counter() - started), list(opened)


async def _close(client: httpx.AsyncClient, sessions: list[dict[str, Any]]) -> None:
    await asyncio.gather(*(client.delete(f"/sessions/{s['session_id']}") for s in sessions))


def _cheap_tool(session: dict[str, Any]) -> str:
    """A read tool that needs no arguments (not the terminal one)."""
    return next(t["name"] for t in session["tools"] if not t["parameters"].get("required")
                and "list" in t["name"] and "claim_done" not in t["name"])


async def _latencies(client: httpx.AsyncClient, session: dict[str, Any],
                     calls: int) -> tuple[list[float], float, list[float]]:
    """Latencies of one cheap call via `/call` and via MCP, interleaved (the load of a shared
    machine falls on both alike), and the session's first MCP request."""
    tool = _cheap_tool(session)
    plain: list[float] = []
    over_mcp: list[float] = []
    async with streamable_http_client(session["mcp_url"]) as (read, write, *_), ClientSession(read, write) as mcp:
        started = time.perf_counter()
        await mcp.initialize()  # the session's first MCP request: its MCP app starts
        first = time.perf_counter() - started
        for _ in range(calls):
            started = time.perf_counter()
            (await client.post(f"/sessions/{session['session_id']}/call", json={"name": tool})).raise_for_status()
            plain.append(time.perf_counter() - started)
            started = time.perf_counter()
            await mcp.call_tool(tool, {})
            over_mcp.append(time.perf_counter() - started)
    return plain, first, over_mcp


async def _play_all(client: httpx.AsyncClient, task: str, sessions: list[dict[str, Any]]) -> tuple[float, int, float]:
    """Every session replays the oracle at once, then is graded: (steps/s, steps, mean reward)."""

    async def play(session: dict[str, Any]) -> tuple[int, float]:
        async def call(request: ToolRequest) -> ToolReply:
            reply = await client.post(f"/sessions/{session['session_id']}/call",
                                      json={"name": request.name, "arguments": dict(request.arguments)})
            body = reply.json()
            return ToolReply(body["output"], body["is_error"])

        replies, _ = await drive(agents(task).script("oracle")(session["instruction"], session["tools"]), call)
        grade = (await client.post(f"/sessions/{session['session_id']}/grade")).json()
        return len(replies), grade["reward"]

    started = time.perf_counter()
    played = await asyncio.gather(*(play(s) for s in sessions))
    elapsed = time.perf_counter() - started
    steps = sum(n for n, _ in played)
    return steps / elapsed, steps, statistics.mean(r for _, r in played)


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    return f"{statistics.median(ordered) * 1000:.2f} / {ordered[int(len(ordered) * 0.95)] * 1000:.2f}"


async def measure(url: str, task: str, builds: int, calls: int, concurrent: int) -> list[str]:
    rows = ["| what | figure |", "|---|---|"]
    limits = httpx.Limits(max_connections=concurrent, max_keepalive_connections=concurrent)
    async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as client:
        await _close(client, (await _opened_per_s(client, task, "8k", [99], 1))[1])  # one-time work out of the way
        for length in ("8k", "256k"):
            seeds = list(range(100, 100 + builds))
            rate, opened = await _opened_per_s(client, task, length, seeds, 1)
            rows.append(f"| sessions/s at {length}, world built (new seeds, one client) | {rate:.2f} |")
            await _close(client, opened)
            rate, opened = await _opened_per_s(client, task, length, seeds * 4, 4)
            rows.append(f"| sessions/s at {length}, world from the cache (4 clients) | {rate:.2f} |")
            await _close(client, opened)
        _, [session] = await _opened_per_s(client, task, "8k", [100], 1)
        plain, first, over_mcp = await _latencies(client, session, calls)
        await _close(client, [session])
        rows.append(f"| tool call via `/call`, median / p95 ms ({_cheap_tool(session)}, {calls} calls) | "
                    f"{_ms(plain)} |")
        rows.append(f"| a session's first MCP request (its MCP app starts: {len(session['tools'])} tools), ms | "
                    f"{first * 1000:.0f} |")
        rows.append(f"| tool call via MCP (official SDK client), median / p95 ms | {_ms(over_mcp)} |")
        _, sessions = await _opened_per_s(client, task, "8k", [100 + i % builds for i in range(concurrent)], 8)
        rate, steps, reward = await _play_all(client, task, sessions)
        await _close(client, sessions)
        rows.append(f"| steps/s, {concurrent} sessions replaying the oracle at once (8k; {steps} steps, "
                    f"mean reward {reward:.2f}) | {rate:.1f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="ab_testing")
    parser.add_argument("--builds", type=int, default=4, help="worlds built per length")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--concurrent", type=int, default=64)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        capacity = max(args.concurrent, 4 * args.builds)
        process, url = _start(Path(scratch) / "cache", Path(scratch) / "sessions", capacity)
        try:
            rows = asyncio.run(measure(url, args.task, args.builds, args.calls, args.concurrent))
        finally:
            process.terminate()
            process.wait(timeout=60)
    lines = [SECTION, "",
             f"`python bench/bench_env_server.py` ({args.task}): the server in one process (one event loop; worlds "
             f"built and graded in worker threads), clients in another, on loopback. Machine: {platform.machine()}, "
             f"{os.cpu_count()} cores, Python {platform.python_version()}, shared with another long job while "
             f"measured, so the figures are lower bounds (they moved by about 2x between runs minutes apart).", "",
             *rows]
    print("\n".join(lines))
    if args.write:
        put_section(lines)


if __name__ == "__main__":
    main()
