"""Mock MCP servers over a world's SQLite state. `SERVERS` maps a server type to its module;
each module exposes `toolbox` (its tool definitions) and `build(world, config=None) -> FastMCP`."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loca.core.outputs import Rows
    from loca.core.world import World
    from mock_servers.core.snapshot import Rules
    from mock_servers.core.toolkit import Toolbox

SERVERS: dict[str, str] = {
    "canvas": "mock_servers.canvas",
    "email": "mock_servers.email",
    "excel": "mock_servers.excel",
    "filesystem": "mock_servers.filesystem",
    "pdf_tools": "mock_servers.pdf_tools",
    "memory": "mock_servers.memory",
    "calendar": "mock_servers.calendar",
    "google_sheet": "mock_servers.google_sheet",
    "python_execute": "mock_servers.python_execute",
    "terminal": "mock_servers.terminal",
    "claim_done": "mock_servers.claim_done",
    "snowflake": "mock_servers.snowflake",
    "google_cloud": "mock_servers.google_cloud",
    "woocommerce": "mock_servers.woocommerce",
}


def load_toolbox(server: str) -> Toolbox:
    if server not in SERVERS:
        raise KeyError(f"unknown server '{server}'; known: {', '.join(sorted(SERVERS))}")
    toolbox: Toolbox = importlib.import_module(SERVERS[server]).toolbox
    return toolbox


def snapshot_rules(servers: list[str], footprint: Sequence[Rows] = (), files: Sequence[str] = ()) -> Rules:
    """What a snapshot of a world served by `servers` compares: the rules every one of them
    declares (see `core.snapshot`), with a task's footprint and writable workspace files."""
    from mock_servers.core.snapshot import Rules

    ignored: dict[str, frozenset[str] | None] = {}
    unordered: set[str] = set()
    for server in servers:
        toolbox = load_toolbox(server)
        ignored.update(toolbox.snapshot_ignore)
        unordered.update(toolbox.snapshot_unordered)
    return Rules(ignored, frozenset(unordered), tuple(footprint), tuple(files))


def prepare_world(world: World, servers: list[str]) -> None:
    """Run the `prepare` step of each of `servers` that has one on a world its generator has
    just filled (in one transaction)."""
    from mock_servers.core.db import Database

    steps = [step for server in dict.fromkeys(servers) if (step := load_toolbox(server).prepare) is not None]
    if not steps:
        return
    db = Database(world.state_path)
    try:
        with db.write() as session:
            for step in steps:
                step(session, world)
    finally:
        db.dispose()
