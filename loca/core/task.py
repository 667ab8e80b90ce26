"""The task specification: one `TaskSpec` per task, declared in `envs/<task>.py`, is the single
source of the task's facts. It is light on purpose (it imports only this layer), so listing tasks
and registering their gym ids costs no server or generator imports; the task's generator
(`generators/<task>`), checker (`checkers/<task>.py`) and scripted agents
(`scaffolds/oracles/<task>.py`) are found by name."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loca.core.outputs import Output, Rows
from loca.core.script import ScriptFn

if TYPE_CHECKING:
    from loca.core.world import World


@dataclass(frozen=True)
class Scale:
    """The length knob: `primary` is searched by calibration; `fine` is an optional secondary
    count, derived from the primary by default, that calibration may set to land within the
    tolerance when one primary step is coarser than it."""

    primary: str
    lo: int
    hi: int
    fine: str | None = None


@dataclass(frozen=True)
class TaskSpec:
    name: str
    version: int
    summary: str  # one line: what the agent must do
    servers: Mapping[str, str]  # namespace key -> server type
    scale: Scale
    instruction: Callable[[World], str]
    read_set: ScriptFn  # every record the task needs, all pages, each once
    outputs: tuple[Output, ...]
    tools: tuple[tuple[str, str], ...]  # the allow-list of `--tool-filter task`: (key, tool)
    extra_writable: tuple[str, ...] = ()  # workspace globs the agent may change besides outputs
    extra_rows: tuple[Rows, ...] = ()  # state rows producing the outputs touches besides theirs
    terminal_tool: tuple[str, str] = ("claim_done", "claim_done")

    def __post_init__(self) -> None:
        unknown = sorted({key for key, _ in self.tools} - set(self.servers))
        if unknown:
            raise ValueError(f"{self.name}: the tool allow-list names servers it does not have: {unknown}")
        partial = [rows.table for rows in self.footprint if rows.partial]
        twice = sorted({table for table in partial if partial.count(table) > 1})
        if twice:
            raise ValueError(f"{self.name}: more than one `Rows` with columns for the tables {twice}")
        if self.terminal_tool not in self.tools:
            object.__setattr__(self, "tools", (*self.tools, self.terminal_tool))

    @property
    def env_id(self) -> str:
        camel = "".join(part.capitalize() for part in self.name.split("_"))
        return f"loca/{camel}-v{self.version}"

    @property
    def writable_files(self) -> tuple[str, ...]:
        """Workspace files (globs) the agent may change: its outputs and `extra_writable`."""
        return tuple(dict.fromkeys([f for o in self.outputs for f in o.files] + list(self.extra_writable)))

    @property
    def input_copies(self) -> tuple[str, ...]:
        """Workspace files the checker reads as generated (the mail templates of the outputs)."""
        return tuple(dict.fromkeys(t.file for o in self.outputs if (t := getattr(o, "template", None)) is not None))

    @property
    def footprint(self) -> tuple[Rows, ...]:
        """The state rows the agent may touch: its outputs' and `extra_rows`."""
        return tuple(dict.fromkeys([rows for o in self.outputs for rows in o.rows] + list(self.extra_rows)))
