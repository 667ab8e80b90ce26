"""The servers are real MCP servers: the official MCP SDK client talks to `loca serve` over
stdio, and a FastMCP client over streamable HTTP, with the same tool outputs as in-process."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastmcp import Client
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from envs.canvas_arrange_exam import TASK
from mock_servers.gateway import Gateway


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mcp") / "world"
    TASK.generate(root, {"num_courses": 4}, 0, None)
    return root


async def _in_process(world_dir: Path, name: str, args: dict) -> str:
    from loca.core.world import World

    gateway = Gateway(World.load(world_dir), TASK.servers)
    try:
        return (await gateway.call(name, args)).text
    finally:
        gateway.close()


def test_official_sdk_client_over_stdio(world_dir):
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "loca", "serve", "canvas", "--world", str(world_dir)])

    async def session() -> tuple[list[str], str, bool, str]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            tools = (await client.list_tools()).tools
            result = await client.call_tool("canvas_list_courses", {"per_page": 2})
            bad = await client.call_tool("canvas_get_course", {"course_id": "nope"})
            return [t.name for t in tools], result.content[0].text, bad.is_error, bad.content[0].text

    names, text, bad_is_error, bad_text = asyncio.run(session())
    assert "canvas_list_courses" in names and len(names) >= 20
    assert json.loads(text)["per_page"] == 2
    assert text == asyncio.run(_in_process(world_dir, "canvas_canvas_list_courses", {"per_page": 2}))
    assert bad_is_error and bad_text.startswith("Error [INVALID_ARGUMENT]: canvas_get_course:")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_gateway_over_streamable_http(world_dir):
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
                        result = await client.call_tool("email_get_emails", {"page_size": 3})
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
    assert {"canvas_canvas_list_courses", "email_get_emails", "claim_done_claim_done"} <= set(names)
    assert text == asyncio.run(_in_process(world_dir, "email_get_emails", {"page_size": 3}))
    assert instructions.startswith("Today is") and "exam_schedule.xlsx" in instructions
