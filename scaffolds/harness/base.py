"""The shape of a harness tool (what every tool call returns is `loca.core.outcome.ToolOutcome`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from loca.core.outcome import ToolOutcome

Handler = Callable[[str, Mapping[str, Any], int], Awaitable[ToolOutcome]]
"""(call id, arguments, turn) -> outcome."""


@dataclass(frozen=True)
class HarnessTool:
    """A tool the scaffold serves itself (memory, code execution)."""

    name: str
    description: str
    parameters: dict[str, Any]
    handler: Handler
    server: str

    @property
    def schema(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "parameters": self.parameters}


def error_text(code: str, tool: str, message: str) -> str:
    """An error result in the env's format, `Error [CODE]: tool: message`."""
    return f"Error [{code}]: {tool}: {message}"


def string(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def integer(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "integer", "description": description, **extra}


def params(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required),
            "additionalProperties": False}
