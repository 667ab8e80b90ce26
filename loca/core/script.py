"""The action format shared by the env, scripted agents and the scaffold: one tool call, and
what comes back from it."""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolRequest:
    """One tool call; a `str` as arguments is sent raw (it may be invalid JSON)."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)


@dataclass(frozen=True)
class ToolReply:
    """What a script receives for each call of its last turn, in call order."""

    text: str
    is_error: bool


# A scripted agent: yields one call, a list of calls (one turn) or a plain-text reply, and
# receives the replies of that turn.
Script = Generator["ToolRequest | list[ToolRequest] | str", "list[ToolReply]", Any]
ScriptFn = Callable[[str, list[dict[str, Any]]], Script]  # (instruction, tools) -> script


def resolve_tool(tools: list[dict[str, Any]], key: str, tool: str) -> str:
    """The exposed name of server `key`'s `tool` under any naming mode (`<key>_<tool>` when
    prefixed, else the bare name)."""
    names = {t["name"] for t in tools}
    for candidate in (f"{key}_{tool}", tool):
        if candidate in names:
            return candidate
    raise KeyError(f"tool {tool} of server {key} is not exposed")
