"""The servers are real MCP servers: the official MCP SDK client talks to `loca serve` over
stdio, and a FastMCP client over streamable HTTP, with the same tool outputs as in-process."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastmcp import Client
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from envs.core.registry import Task
from loca.core.world import World
from mock_servers.gateway import Gateway
from tests.conftest import small_params


@pytest.fixture(scope="module")
def task(any_task: Task) -> Task:
    return any_task


@pytest.fixture(scope="module")
def world_dir(task: Task, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mcp") / "world"
    task.generate(root, small_params(task), 0)
    return root


def _gateway(task: Task, world_dir: Path) -> Gateway:
    return Gateway(World.load(world_dir), task.spec.servers)


async def _in_process(task: Task, world_dir: Path, name: str, args: dict) -> str:
    gateway = _gateway(task, world_dir)
    try:
        return (await gateway.call(name, args)).text
    finally:
        gateway.close()


def _read_tool(task: Task, world_dir: Path, server_key: str | None = None) -> tuple[str, str, str]:
    """(key, local name, exposed name) of a read tool that needs no arguments."""
    gateway = _gateway(task, world_dir)
    try:
        spec = next(s for s in gateway.specs if s.read_only and not s.parameters["required"]
                    and (server_key is None or s.server == server_key) and s.server != "claim_done")
        return spec.server, spec.tool, spec.name
    finally:
        gateway.close()


@pytest.mark.slow
def test_official_sdk_client_over_stdio(task, world_dir):
    key, tool, exposed = _read_tool(task, world_dir)
    server = task.spec.servers[key]
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "loca", "serve", server, "--world", str(world_dir)])

    async def session() -> tuple[list[str], str, bool, str]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            tools = (await client.list_tools()).tools
            result = await client.call_tool(tool, {})
            bad = await client.call_tool(tool, {"no_such_parameter": 1})
            return [t.name for t in tools], result.content[0].text, bad.is_error, bad.content[0].text

    names, text, bad_is_error, bad_text = asyncio.run(session())
    assert tool in names and not text.startswith("Error")
    assert text == asyncio.run(_in_process(task, world_dir, exposed, {}))
    assert bad_is_error and bad_text.startswith(f"Error [INVALID_ARGUMENT]: {tool}: unknown parameter")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_gateway_over_streamable_http(task, world_dir):
    _, _, exposed = _read_tool(task, world_dir)
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "loca.cli", "serve", "--world", str(world_dir),
                             "--transport", "http", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        async def session() -> tuple[list[str], str, str]:
            deadline = time.monotonic() + 30
            while True:
                try:
                    async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                        tools = await client.list_tools()
                        result = await client.call_tool(exposed, {})
                        instructions = client.instructions
                        return [t.name for t in tools], result.content[0].text, instructions
                except Exception:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise
                    await asyncio.sleep(0.2)

        names, text, instructions = asyncio.run(session())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert {exposed, "claim_done_claim_done"} <= set(names)
    assert text == asyncio.run(_in_process(task, world_dir, exposed, {}))
    assert instructions == task.spec.instruction(World.load(world_dir))
