"""One world, many servers: the gateway mounts each enabled server under its key, maps exposed
tool names, and dispatches calls in-process (the gym's fast path) or serves them over MCP.
Tools are listed from `listing` and built on their first call, so a gateway costs no tool
building beyond the tools that are called."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from fastmcp import FastMCP
from fastmcp.tools import Tool

from loca.core.outcome import ToolOutcome
from loca.core.world import World
from mock_servers import load_toolbox
from mock_servers.core.db import Database
from mock_servers.core.errors import unknown_tool
from mock_servers.core.toolkit import ErrorFormatting, ServerRuntime, Toolbox
from mock_servers.listing import listings

Naming = Literal["prefixed", "dedup", "bare"]
ToolFilter = Literal["all", "core", "task"]
_NAME_RULE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass(frozen=True)
class ToolSpec:
    """A tool as a model sees it."""

    name: str
    description: str
    parameters: dict[str, Any]
    server: str
    tool: str
    read_only: bool


def exposed_name(key: str, tool: str, naming: Naming) -> str:
    if naming == "prefixed":
        return f"{key}_{tool}"
    if naming == "dedup" and not (tool == key or tool.startswith(f"{key}_")):
        return f"{key}_{tool}"
    return tool


class _ToolsOnDemand(dict[str, Tool]):
    """A runtime's tools, each made on first lookup."""

    def __init__(self, runtime: ServerRuntime) -> None:
        super().__init__()
        self.runtime = runtime

    def __missing__(self, name: str) -> Tool:
        if name not in self.runtime.toolbox.defs:
            raise KeyError(name)
        tool = self[name] = self.runtime.make_tool(name)
        return tool

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default


class _LazyRuntime(ServerRuntime):
    """A `ServerRuntime` for the gateway: the same dispatch, audit and error formatting, but
    no FastMCP app of its own (the gateway builds one when asked) and tools made when first
    called."""

    def __init__(self, toolbox: Toolbox, world: World, config: dict[str, Any], db: Database) -> None:
        self.setup(toolbox, world, config, db)
        self.tools = _ToolsOnDemand(self)


class Gateway:
    """The servers of one world. `servers` maps a key (the namespace) to a server type."""

    def __init__(self, world: World, servers: Mapping[str, str], naming: Naming = "prefixed",
                 tool_filter: ToolFilter = "all", allow: Collection[tuple[str, str]] = (),
                 config: dict[str, Any] | None = None, read_only: bool = False) -> None:
        """`tool_filter`: `all` tools, the `core` (P1) ones, or the `task`'s allow-list `allow`
        of (server key, tool) pairs; `read_only` leaves out every write tool except those that
        only log in or out (they change no world data) and the guarded ones, which it tells
        (server config `read_only`) to refuse every change."""
        if tool_filter == "task" and not allow:
            raise ValueError("tool_filter 'task' needs the task's allow-list")
        allowed = set(allow)
        toolboxes = {key: load_toolbox(server_type) for key, server_type in servers.items()}
        missing = sorted(allowed - {(key, tool) for key, box in toolboxes.items() for tool in box.defs})
        if missing:
            raise ValueError(f"the tool allow-list names tools the servers do not have: {missing}")
        self.world = world
        self.db = Database(world.state_path)
        self.runtimes: dict[str, ServerRuntime] = {}
        self.routes: dict[str, tuple[str, str]] = {}
        self.specs: list[ToolSpec] = []
        settings = {**(config or {}), **({"read_only": True} if read_only else {})}
        for key, box in toolboxes.items():
            runtime = _LazyRuntime(box, world, dict(settings), self.db)
            self.runtimes[key] = runtime
            listed = listings(runtime.toolbox)
            for tool_name, tdef in runtime.toolbox.defs.items():
                if (tool_filter == "core" and not tdef.core) or \
                        (tool_filter == "task" and (key, tool_name) not in allowed) or \
                        (read_only and tdef.rw != "read" and not (tdef.auth_only or tdef.guarded)):
                    continue
                name = exposed_name(key, tool_name, naming)
                if name in self.routes:
                    raise ValueError(f"exposed tool name '{name}' is not unique (naming={naming})")
                if not _NAME_RULE.match(name):
                    raise ValueError(f"exposed tool name '{name}' breaks ^[a-zA-Z0-9_-]{{1,64}}$")
                self.routes[name] = (key, tool_name)
                listing = listed[tool_name]
                self.specs.append(ToolSpec(name, f"[{key}] {listing.description}", listing.parameters,
                                           key, tool_name, tdef.rw == "read"))
        self.specs.sort(key=lambda s: s.name)

    def spec(self, name: str) -> ToolSpec | None:
        return next((s for s in self.specs if s.name == name), None)

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        route = self.routes.get(name)
        if route is None:
            return ToolOutcome(unknown_tool(name), True)
        key, tool = route
        return await self.runtimes[key].call(tool, arguments)

    def mcp_app(self, instructions: str | None = None) -> FastMCP:
        """All exposed tools in one MCP app, under their exposed names and descriptions;
        `instructions` (the task) are sent to clients when they connect."""
        app = FastMCP("loca", instructions=instructions)
        routes: dict[str, ServerRuntime | tuple[ServerRuntime, str]] = {}
        for spec in self.specs:
            runtime = self.runtimes[spec.server]
            app.add_tool(runtime.make_tool(spec.tool, spec.name, prefix=f"[{spec.server}] "))
            routes[spec.name] = (runtime, spec.tool)
        app.add_middleware(ErrorFormatting(routes))
        return app

    def close(self) -> None:
        self.db.dispose()

