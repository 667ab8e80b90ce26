"""The task registry: every module of `envs/` that defines `TASK` is a task, found by name."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from checkers.verdict import Verdict
    from loca.core.script import ScriptFn
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
    env_id: str
    version: int
    servers: dict[str, str]  # namespace key -> server type
    generate: Callable[[Path, dict[str, Any], int, int | None], World]
    resolve_params: Callable[[dict[str, Any]], dict[str, int]]  # fills derived parameters
    generator_version: str
    check: Callable[[World], Verdict]
    instruction: Callable[[World], str]
    read_script: ScriptFn  # the read set: every record the task needs, all pages, each once
    scale: Scale
    terminal_tool: tuple[str, str] = ("claim_done", "claim_done")


@lru_cache(maxsize=1)
def tasks() -> dict[str, TaskSpec]:
    import envs

    found: dict[str, TaskSpec] = {}
    for info in pkgutil.iter_modules(envs.__path__):
        module = importlib.import_module(f"envs.{info.name}")
        spec = getattr(module, "TASK", None)
        if isinstance(spec, TaskSpec):
            found[spec.name] = spec
    return dict(sorted(found.items()))


def get_task(name: str) -> TaskSpec:
    registry = tasks()
    if name not in registry:
        raise KeyError(f"unknown task '{name}'; known: {', '.join(registry) or 'none'}")
    return registry[name]
