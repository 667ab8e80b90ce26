"""A server runtime over a test world, with call helpers that also check no host path leaks."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from loca.core.world import World
from mock_servers.core.toolkit import ServerRuntime, Toolbox


class ServerHarness:
    def __init__(self, toolbox: Toolbox, world: World, config: dict[str, Any] | None = None) -> None:
        self.world = world
        self.ws = world.workspace
        self.runtime = ServerRuntime(toolbox, world, config or {})

    def call(self, tool: str, **args: Any) -> tuple[str, bool]:
        outcome = asyncio.run(self.runtime.call(tool, args))
        if str(self.world.root) not in json.dumps(args):
            assert str(self.world.root) not in outcome.text  # never a host path
        return outcome.text, outcome.is_error

    def ok_text(self, tool: str, **args: Any) -> str:
        text, is_error = self.call(tool, **args)
        assert not is_error, text
        return text

    def fails(self, tool: str, code: str, **args: Any) -> str:
        text, is_error = self.call(tool, **args)
        assert is_error, text
        assert text.startswith(f"Error [{code}]: {tool}: "), text
        return text
