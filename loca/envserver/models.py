"""What the environment server takes and answers, as typed models (the JSON of its HTTP API)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from checkers.verdict import Check
from loca.core.lengths import parse_length
from mock_servers.gateway import Naming, ToolFilter


class SessionRequest(BaseModel):
    """`POST /sessions`: the episode to open."""

    model_config = ConfigDict(extra="forbid")

    task: str
    length: int = Field(description="target tokens; '32k' or a count")
    seed: int = Field(ge=0, lt=2**31)
    tool_filter: ToolFilter = "all"
    naming: Naming = "prefixed"

    @field_validator("task")
    @classmethod
    def _registered(cls, name: str) -> str:
        from envs.core.registry import get_task, tasks

        try:
            get_task(name)
        except KeyError:
            raise ValueError(f"unknown task {name!r}; known: {', '.join(tasks())}") from None
        return name

    @field_validator("length", mode="before")
    @classmethod
    def _length(cls, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise ValueError("length is a string such as '32k' or a token count")
        return parse_length(value)


class ToolInfo(BaseModel):
    """A tool as a model sees it: its name, description and JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


class WorldInfo(BaseModel):
    """What the session's world is: enough to rebuild it, and its measured size."""

    task: str
    task_version: int
    seed: int
    target_tokens: int
    env_description_tokens: int | None
    params: dict[str, Any]
    world_hash: str
    world_cache: str = Field(description="hit, built or off: where the world came from")
    terminal_tool: str


class SessionCreated(BaseModel):
    """The answer to `POST /sessions`."""

    session_id: str
    instruction: str
    tools: list[ToolInfo]
    mcp_url: str
    world: WorldInfo


class CallRequest(BaseModel):
    """`POST /sessions/{id}/call`: one tool call."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class CallResult(BaseModel):
    """A tool's output text; `is_error` when the tool refused or failed the call."""

    output: str
    is_error: bool


class Grade(BaseModel):
    """The verdict of the task's checker on the world as it stands: reward 1.0 only when every
    named check passes."""

    reward: float
    passed: bool
    checks: list[Check]


class TaskListing(BaseModel):
    name: str
    summary: str
    servers: list[str]
    lengths: list[str]


class Health(BaseModel):
    status: str = "ok"
    sessions: int
    capacity: int
    idle_timeout_s: float
