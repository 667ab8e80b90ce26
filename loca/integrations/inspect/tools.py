"""The task's tools as inspect tools: each calls the sample's env in process (the gym's own tool
runtime, the same one `loca run` drives), with the names, descriptions and JSON schemas the env
exposes, and with no output truncation of inspect's own (the gym's outputs are what the agent
must read)."""

from __future__ import annotations

from typing import Any

from inspect_ai.tool import ToolDef, ToolError, ToolParams

from loca.integrations.inspect.episodes import LiveEpisode


def tool_params(schema: dict[str, Any]) -> ToolParams:
    """A tool's JSON schema as inspect's parameters (an object schema; an empty one when the
    tool takes no arguments)."""
    return ToolParams.model_validate({"type": "object", "properties": {}, **schema})


def tool_def(live: LiveEpisode, spec: dict[str, Any]) -> ToolDef:
    """The exposed tool `spec` (`{"name", "description", "parameters"}`) of `live`'s env. An
    error result of the gym is an inspect tool error: the model reads it and goes on."""
    name = str(spec["name"])

    async def execute(**kwargs: Any) -> str:
        text, is_error = await live.call(name, kwargs)
        if is_error:
            raise ToolError(text)
        return text

    return ToolDef(execute, name=name, description=str(spec.get("description") or name),
                   parameters=tool_params(spec.get("parameters") or {}), max_output=0)


def tool_defs(live: LiveEpisode) -> list[ToolDef]:
    """Every exposed tool of `live`'s env, the completion tool included, in the env's order."""
    return [tool_def(live, spec) for spec in live.tools]
