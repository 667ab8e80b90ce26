"""The shared server toolkit: schema rules, error format, output cap, naming, one transaction
per call."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from mock_servers.core.errors import invalid
from mock_servers.core.models import ClaimRecord, ClockState
from mock_servers.core.output import cap_json, cap_text
from mock_servers.core.schema import normalize_schema
from mock_servers.core.toolkit import Call, ServerRuntime, Toolbox
from mock_servers.core.types import CellValue, Int
from mock_servers.gateway import Gateway, exposed_name


class Edit(BaseModel):
    old: str = Field(description="old")


toolbox = Toolbox("demo")


@toolbox.tool(rw="read")
def demo_echo(call: Call,
              count: Annotated[Int, Field(ge=1, le=10, description="how many")] = 2,
              title: Annotated[str | None, Field(description="a parameter named title")] = None,
              cells: Annotated[list[CellValue] | None, Field(description="cells")] = None,
              edits: Annotated[list[Edit] | None, Field(description="edits")] = None) -> dict:
    """Echo the arguments."""
    return {"count": count, "title": title, "items": list(range(count))}


@toolbox.tool(rw="write")
def demo_write_then_fail(call: Call) -> str:
    """Write a claim row, then fail: the write must roll back."""
    call.session.add(ClaimRecord(id=1, claimed_at="x"))
    call.session.flush()
    raise invalid("refused on purpose", hint="do not call this")


@toolbox.tool(rw="write")
def demo_tick(call: Call) -> str:
    """Advance the clock."""
    return call.now.isoformat()


@toolbox.tool(rw="read")
def demo_crash(call: Call) -> str:
    """A bug."""
    raise KeyError("/home/someone/secret/path")


@pytest.fixture
def runtime(make_world) -> ServerRuntime:
    world, _ = make_world(["claim_done"])
    return ServerRuntime(toolbox, world, {})


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def test_schema_rules(runtime):
    params = runtime.tools["demo_echo"].parameters
    props = params["properties"]
    assert set(props) == {"count", "title", "cells", "edits"}
    assert props["count"] == {"default": 2, "description": "how many", "maximum": 10, "minimum": 1,
                              "type": "integer"}
    assert props["title"] == {"description": "a parameter named title", "type": "string"}
    assert props["cells"]["items"] == {"type": ["string", "number", "boolean", "null"]}
    assert props["edits"]["items"]["additionalProperties"] is False
    assert "$defs" not in json.dumps(params) and params["required"] == []


def test_normalize_is_idempotent():
    schema = {"type": "object", "properties": {"a": {"anyOf": [{"type": "integer"}, {"type": "null"}],
                                                      "default": None, "title": "A"}}}
    once = normalize_schema(schema)
    assert once == normalize_schema(once)
    assert once["properties"]["a"] == {"type": "integer"}


def test_errors_have_one_format(runtime):
    out = run(runtime.call("demo_echo", {"count": 11}))
    assert out.is_error and out.text.startswith("Error [INVALID_ARGUMENT]: demo_echo: parameter 'count'")
    assert "allowed 1..10" in out.text and "received 11" in out.text
    out = run(runtime.call("demo_echo", {"count": True}))
    assert out.is_error and "boolean" in out.text
    out = run(runtime.call("demo_echo", {"count": "3"}))
    assert not out.is_error and json.loads(out.text)["count"] == 3
    out = run(runtime.call("demo_echo", {"limit": 3}))
    assert out.text.startswith("Error [INVALID_ARGUMENT]: demo_echo: unknown parameter 'limit'; "
                               "allowed: cells, count, edits, title")
    out = run(runtime.call("demo_crash", {}))
    assert out.is_error and out.text.startswith("Error [INTERNAL]: demo_crash: KeyError")
    assert "/home/someone" not in out.text


@pytest.mark.parametrize("arguments", [
    {}, {"count": 3}, {"count": "3"}, {"count": 11}, {"count": True}, {"count": 2.5}, {"count": None},
    {"limit": 3}, {"title": 7}, {"cells": [1, "a", None, True]}, {"cells": [[1]]},
    {"edits": [{"old": "x"}]}, {"edits": [{"old": "x", "new": "y"}]}, {"edits": "x"}])
def test_both_paths_check_arguments_alike(runtime, arguments):
    """The in-process fast path validates without FastMCP's wrapper: its answers must be the
    MCP app's, text for text."""
    from fastmcp import Client

    async def over_mcp() -> tuple[str, bool]:
        async with Client(runtime.app) as client:
            result = await client.call_tool("demo_echo", arguments, raise_on_error=False)
            return result.content[0].text, result.is_error

    fast = run(runtime.call("demo_echo", arguments))
    assert (fast.text, fast.is_error) == run(over_mcp())


def test_failed_write_rolls_back_and_successful_writes_tick(runtime):
    out = run(runtime.call("demo_write_then_fail", {}))
    assert out.text == "Error [INVALID_ARGUMENT]: demo_write_then_fail: refused on purpose\nHint: do not call this"
    with runtime.db.read() as s:
        assert s.get(ClaimRecord, 1) is None and s.get(ClockState, 1).writes == 0
    first = run(runtime.call("demo_tick", {})).text
    second = run(runtime.call("demo_tick", {})).text
    assert first == "2025-01-15T09:00:01+00:00" and second == "2025-01-15T09:00:02+00:00"


def test_output_cap_cuts_lists_at_item_boundaries():
    obj = {"items": [{"n": i, "text": "x" * 50} for i in range(100)], "page": 1, "has_more": False}
    text = cap_json(obj, 1000)
    data = json.loads(text)
    assert len(text) <= 1000 and 0 < len(data["items"]) < 100 and data["has_more"] is True
    assert data["notice"].startswith(f"output cap reached after {len(data['items'])} items")
    big = cap_json({"body": "y" * 5000}, 500)
    assert len(big) <= 500 and "[truncated" in json.loads(big)["body"]
    capped = cap_text("line\n" * 1000, 300, "use head or tail")
    assert len(capped) <= 300 + 120 and capped.endswith("use head or tail]")


def test_naming_modes_and_claim_done(make_world):
    world, _ = make_world(["claim_done"])
    assert exposed_name("canvas", "canvas_list_courses", "prefixed") == "canvas_canvas_list_courses"
    assert exposed_name("canvas", "canvas_list_courses", "dedup") == "canvas_list_courses"
    assert exposed_name("email", "send_email", "dedup") == "email_send_email"
    assert exposed_name("email", "send_email", "bare") == "send_email"
    gateway = Gateway(world, {"claim_done": "claim_done"}, naming="dedup")
    try:
        assert [s.name for s in gateway.specs] == ["claim_done"]
        assert run(gateway.call("claim_done", {})).text == "you have claimed the task is done!"
        assert run(gateway.call("claim_done", {})).text == "you have claimed the task is done!"
        with gateway.db.read() as s:
            assert s.get(ClaimRecord, 1).claimed_at == "2025-01-15T09:00:01Z"
    finally:
        gateway.close()


def test_read_only_view_keeps_only_reads_and_logins(make_world):
    world, _ = make_world(["email"])
    gateway = Gateway(world, {"email": "email"}, read_only=True)
    try:
        kept = {s.tool for s in gateway.specs}
        assert {"login", "logout", "get_emails", "search_emails"} <= kept
        assert not kept & {"send_email", "read_email", "move_emails", "create_user", "save_draft"}
        assert {s.tool for s in gateway.specs if not s.read_only} == {"login", "logout"}
    finally:
        gateway.close()
    with pytest.raises(ValueError, match="auth_only"):
        toolbox.tool(rw="read", auth_only=True)
    with pytest.raises(ValueError, match="guarded"):
        toolbox.tool(rw="read", guarded=True)


@pytest.mark.parametrize("tool_filter", ["all", "core", "task"])
def test_an_allow_list_is_checked_against_every_tool_whatever_the_filter(make_world, tool_filter) -> None:
    world, _ = make_world(["email"])
    servers = {"email": "email", "claim_done": "claim_done"}
    allow = [("email", "get_emails"), ("email", "save_draft"), ("claim_done", "claim_done")]  # save_draft: not core
    gateway = Gateway(world, servers, tool_filter=tool_filter, allow=allow)
    gateway.close()
    with pytest.raises(ValueError, match=r"names tools the servers do not have: \[\('email', 'no_such_tool'\)\]"):
        Gateway(world, servers, tool_filter=tool_filter, allow=[*allow, ("email", "no_such_tool")])


def _audit_rows(runtime: ServerRuntime) -> list[tuple]:
    import sqlite3

    conn = sqlite3.connect(runtime.db.audit_path)
    try:
        return conn.execute("SELECT server, tool, arguments, is_error, output_chars, duration_ms "
                            "FROM core_audit ORDER BY seq").fetchall()
    finally:
        conn.close()


def test_every_call_is_audited_once_in_process_and_over_mcp(runtime):
    from fastmcp import Client

    ok = run(runtime.call("demo_echo", {"count": 3}))
    bad = run(runtime.call("demo_echo", {"count": 99}))

    async def over_mcp() -> None:
        async with Client(runtime.app) as client:
            await client.call_tool("demo_echo", {"count": 1})
            await client.call_tool("demo_write_then_fail", {}, raise_on_error=False)
            await client.call_tool("demo_echo", {"count": "many"}, raise_on_error=False)

    run(over_mcp())
    rows = _audit_rows(runtime)
    assert [(r[1], bool(r[3])) for r in rows] == [
        ("demo_echo", False), ("demo_echo", True), ("demo_echo", False), ("demo_write_then_fail", True),
        ("demo_echo", True)]
    assert rows[0][0] == "demo" and json.loads(rows[0][2]) == {"count": 3}
    assert rows[0][4] == len(ok.text) and rows[1][4] == len(bad.text)
    assert all(r[5] >= 0 for r in rows)


def test_the_audit_log_is_a_file_of_its_own_so_a_read_leaves_the_state_untouched(runtime):
    """Appending to the state's file would make every connection to it drop its page cache."""
    from pathlib import Path

    def state_files() -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in Path(runtime.world.root).glob("state.sqlite*")}

    run(runtime.call("demo_echo", {"count": 1}))
    before = state_files()
    for count in range(2, 6):
        run(runtime.call("demo_echo", {"count": count}))
    assert state_files() == before
    assert [json.loads(r[2])["count"] for r in _audit_rows(runtime)] == [1, 2, 3, 4, 5]
    assert runtime.db.audit_path.parent == runtime.world.root


def test_the_audit_log_is_no_side_effect_and_keeps_odd_arguments(runtime):
    from mock_servers.core import snapshot

    before = snapshot.take(runtime.world, snapshot.Rules({}))
    run(runtime.call("demo_echo", {"title": "\ud800 lone surrogate", "count": 2}))
    assert snapshot.changes(runtime.world, before, snapshot.Rules({})) == []
    assert "\\ud800" in _audit_rows(runtime)[-1][2]
