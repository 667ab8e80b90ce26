"""The tools of a rollout's LOCA session, served to the harness over verifiers' MCP boundary:
one shared server whose catalogue and calls follow each rollout's state (its session)."""

from __future__ import annotations

from typing import Any, cast

import verifiers.v1 as vf
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, Tool
from pydantic import Field

from loca_verifiers.client import EnvServer


class LocaState(vf.State):
    """What a rollout's tool calls need: its server and session, and the session's tools."""

    server_url: str = ""
    timeout_s: float = 600.0
    session_id: str = ""
    tools: list[dict[str, Any]] = Field(default_factory=list)


class LocaToolset(vf.Toolset[vf.SharedToolsetConfig, LocaState]):
    """Lists the session's tools under their own names; a call goes to the server's
    `/sessions/{id}/call`, its error results staying error results."""

    TOOL_PREFIX = None

    def register(self, mcp: MCPServer) -> None:
        server = cast(Any, mcp)  # the catalogue differs per rollout: replace the handlers themselves
        server.list_tools = self._with_state(self.list_tools)
        server.call_tool = self._with_state(self.call_tool)

    async def list_tools(self) -> list[Tool]:
        return [Tool(name=t["name"], description=t["description"], input_schema=t["parameters"])
                for t in self.state.tools]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context | None = None) -> CallToolResult:
        server = EnvServer(self.state.server_url, self.state.timeout_s)
        output, is_error = await server.call(self.state.session_id, name, arguments or {})
        return CallToolResult(content=[TextContent(type="text", text=output)], is_error=is_error)


if __name__ == "__main__":
    LocaToolset.run()
