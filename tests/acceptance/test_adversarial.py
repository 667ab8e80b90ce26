"""Hostile arguments for every tool of every server: out-of-range integers, control characters,
unpaired surrogates, non-characters, 1 MB strings, deep nesting and extreme ranges, each put in
every parameter of an otherwise plausible call (values the task's read set used, else simple
ones). One subprocess per server plays them all under an address-space limit and a timeout.

Every call must answer within its budget with a result or a readable error (never INTERNAL);
what the core refuses (everything but extreme ranges) must be INVALID_ARGUMENT naming the
parameter; and the world must still open and grade afterwards (its checker runs without a
checker error). Nothing here names a task or a server: each one registered gets all of it."""

from __future__ import annotations

import asyncio
import json
import resource
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from envs.core.registry import Task, tasks
from generators.common import create_world
from loca.core.world import World, WorldMeta
from mock_servers.catalog import load
from tests.acceptance.conftest import smallest_params

pytestmark = pytest.mark.slow  # the acceptance matrix: every registered task

CALL_SECONDS = 2.0  # the per-call budget the plays run under (server config)
SLACK_SECONDS = 1.5  # on top of it: stopping, rolling back, answering
MEMORY_BYTES = 3 << 29  # 1.5 GiB of address space for the playing process
CHILD_TIMEOUT = 900
PLAY_CONFIG = {"max_call_seconds": CALL_SECONDS}


def _deep(levels: int) -> list[Any]:
    root: list[Any] = []
    node = root
    for _ in range(levels):
        node.append([])
        node = node[0]
    return root


# class -> values; every class but "extreme" is refused by the core before any tool runs
HOSTILE: dict[str, list[Any]] = {
    "int_range": [2**63, -(2**63) - 1, 10**30],
    "control": ["a\x00b", "\x0b", "x\x1fy"],
    "surrogate": ["\ud800", "ok\udfff"],
    "nonchar": ["\ufffe", "x\uffff"],
    "huge_string": ["x" * 1_000_000],
    "deep": [_deep(200)],
    "extreme": ["A1:XFD1048576", "XFD1048576", "A1048576:XFD1048576", 1e30, -1, 0, 2**62,
                "*" * 5000, "../" * 50],
}
UNKNOWN = "hostile"  # a parameter no tool has: every tool, even one without any, gets plays
TEXT_CLASSES = {"control", "nonchar"}  # what a parameter declared raw may carry
def _users(server: str) -> list[Task]:
    return [t for _, t in sorted(tasks().items()) if server in t.spec.servers.values()]


# ---- the playing process -------------------------------------------------------------------

def _base_value(schema: dict[str, Any]) -> Any:
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind in ("integer", "number"):
        return max(1, schema.get("minimum", 1))
    if kind == "boolean":
        return False
    if kind == "array":
        return [_base_value(schema.get("items", {}))]
    if kind == "object":
        return {k: _base_value(v) for k, v in schema.get("properties", {}).items()
                if k in schema.get("required", [])}
    return "A1"


def _seen_values(gateway: Any, user: Task, server: str) -> dict[str, Any]:
    """The first value the read set gave each parameter name (real paths, ids, sheet names);
    empty when the read set calls no tool of `server`."""
    from envs.core.build import drive, tool_list
    from loca.core.script import ToolReply, ToolRequest

    seen: dict[str, Any] = {}
    servers = {spec.name: gateway.runtimes[spec.server].toolbox.server for spec in gateway.specs}
    used = False

    async def record(request: ToolRequest) -> ToolReply:
        nonlocal used
        used = used or servers.get(request.name) == server
        arguments = dict(request.arguments)  # type: ignore[arg-type]
        for key, value in arguments.items():
            seen.setdefault(key, value)
        outcome = await gateway.call(request.name, arguments)
        return ToolReply(outcome.text, outcome.is_error)

    asyncio.run(drive(user.spec.read_set("", tool_list(gateway)), record))
    return seen if used else {}


def _world_to_play(server: str, base: Path) -> tuple[Any, Task | None, dict[str, Any]]:
    """The gateway over the smallest world of the first task whose read set uses `server` (its
    argument values make plausible calls), else of the last task using it, else an empty world
    with the server's tables."""
    from mock_servers.gateway import Gateway

    users = _users(server)
    for n, user in enumerate(users):
        world = user.generate(base / f"world{n}", smallest_params(user), 0)
        gateway = Gateway(world, user.spec.servers, config=PLAY_CONFIG)
        seen = _seen_values(gateway, user, server)
        if seen or n == len(users) - 1:
            return gateway, user, seen
        gateway.close()
    meta = WorldMeta(task="none", seed=0, params={}, now="2025-01-15T09:00:00Z", generator_version="0")
    world, db = create_world(base / "world", meta, [server])
    db.dispose()
    return Gateway(world, {server: server}, config=PLAY_CONFIG), None, {}


def play(server: str, base: str) -> None:
    """Play every hostile value in every parameter of every tool of `server`; write one JSON
    line per call to `report.jsonl` under `base`, after a first line naming the world."""
    gateway, user, seen = _world_to_play(server, Path(base))
    with open(Path(base) / "report.jsonl", "w", encoding="utf-8") as out:
        out.write(json.dumps({"world": str(gateway.world.root), "task": user.name if user else None}) + "\n")
        for spec in gateway.specs:
            toolbox = gateway.runtimes[spec.server].toolbox
            if toolbox.server != server:
                continue
            tdef = toolbox.defs[spec.tool]
            props = spec.parameters["properties"]
            base_args = {k: seen.get(k, _base_value(props[k])) for k in spec.parameters["required"]}
            for param, schema in [*props.items(), (UNKNOWN, {})]:
                for kind, values in HOSTILE.items():
                    for value in values:
                        started = time.monotonic()
                        outcome = asyncio.run(gateway.call(spec.name, {**base_args, param: value}))
                        out.write(json.dumps({
                            "tool": spec.tool, "param": param, "kind": kind,
                            "value": repr(value)[:40], "seconds": time.monotonic() - started,
                            "error": outcome.is_error, "text": outcome.text[:300],
                            "raw": param in tdef.raw_text,
                            "max_length": schema.get("maxLength", 0)}) + "\n")
                        out.flush()
    gateway.close()


# ---- the tests -----------------------------------------------------------------------------

def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


@pytest.fixture(scope="module")
def played() -> dict[str, Any]:
    """Per server: the world played on, its task, the report of every call, what went wrong."""
    return {}


def _play_server(server: str, base: Path) -> tuple[World | None, Task | None, list[dict[str, Any]], str]:
    code = f"from tests.acceptance.test_adversarial import play; play({server!r}, {str(base)!r})"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT, preexec_fn=_limit_memory)
    report = base / "report.jsonl"
    lines = report.read_text(encoding="utf-8").splitlines() if report.exists() else []
    if not lines:
        return None, None, [], f"exit {done.returncode}: {done.stderr[-3000:]}"
    head, rows = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    user = tasks()[head["task"]] if head["task"] else None
    problem = "" if done.returncode == 0 else f"exit {done.returncode}: {done.stderr[-3000:]}"
    return World.load(head["world"]), user, rows, problem


def _server_play(server: str, played: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Any:
    if server not in played:
        played[server] = _play_server(server, tmp_path_factory.mktemp(f"hostile-{server}"))
    return played[server]


TOOLS = [(server, tool) for server, defs in sorted(load().items()) for tool in sorted(defs)]


@pytest.mark.parametrize(("server", "tool"), TOOLS, ids=[f"{s}-{t}" for s, t in TOOLS])
def test_hostile_arguments(server: str, tool: str, played: dict[str, Any],
                           tmp_path_factory: pytest.TempPathFactory) -> None:
    _, _, rows, problem = _server_play(server, played, tmp_path_factory)
    assert not problem, f"the playing process failed ({problem})"
    mine = [r for r in rows if r["tool"] == tool]
    assert mine, "no call was played"
    broken = [(r["param"], r["kind"], r["value"], r["text"][:200]) for r in mine if _breaks(r)]
    assert not broken, broken


def _breaks(row: dict[str, Any]) -> bool:
    """Whether a call broke a rule: over its time, INTERNAL, an unreadable error, or a value
    the core must refuse that was not refused naming its parameter."""
    text = row["text"]
    if row["seconds"] > CALL_SECONDS + SLACK_SECONDS or text.startswith("Error [INTERNAL]"):
        return True
    if row["error"] and not (text.startswith("Error [") and "]: " in text):
        return True
    kind = row["kind"]
    allowed = (kind == "extreme" or (row["raw"] and kind in TEXT_CLASSES)
               or (kind == "huge_string" and row["max_length"] >= len(HOSTILE[kind][0])))
    if allowed:
        return False
    return not text.startswith("Error [INVALID_ARGUMENT]: ") or f"'{row['param']}" not in text


@pytest.mark.parametrize("server", sorted(load()))
def test_world_still_opens_and_grades(server: str, played: dict[str, Any],
                                      tmp_path_factory: pytest.TempPathFactory) -> None:
    world, user, _, problem = _server_play(server, played, tmp_path_factory)
    assert world is not None and not problem, f"the playing process failed ({problem})"
    with sqlite3.connect(world.state_path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    if user is not None:
        verdict = user.check(World.load(world.root))
        assert not verdict.errored, [c for c in verdict.checks if c.error]
