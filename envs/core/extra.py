"""Extra tasks: task packages outside the shipped tree (see `envs.core.registry`), and where
any task's generator, checker and scripted agents live. Kept apart from the registry so that
the scripted agents' lookup imports no checker."""

from __future__ import annotations

import importlib
import importlib.util
import os
from typing import Literal

from loca.core.task import TaskSpec

EXTRA_TASKS_ENV = "LOCA_EXTRA_TASKS"
Part = Literal["generator", "checker", "agents"]
SHIPPED_PARTS: dict[Part, str] = {"generator": "generators", "checker": "checkers", "agents": "scaffolds.oracles"}

_added: dict[str, tuple[str, TaskSpec]] = {}  # task name -> (package, spec)


def module_name(task: str, package: str | None, part: Part) -> str:
    """A task's generator, checker or scripted agents module: `generators.<task>`,
    `checkers.<task>`, `scaffolds.oracles.<task>` when shipped, an extra task's `<package>.<part>`."""
    return f"{SHIPPED_PARTS[part]}.{task}" if package is None else f"{package}.{part}"


def add_extra(package: str) -> TaskSpec:
    """The `TASK` of `package`, added to this process's extra tasks (again: a no-op). A name
    another extra task or a shipped one (`envs/<name>.py`) has is refused."""
    known = next((spec for added, spec in _added.values() if added == package), None)
    if known is not None:
        return known
    spec = getattr(importlib.import_module(package), "TASK", None)
    if not isinstance(spec, TaskSpec):
        raise ValueError(f"{package} declares no TASK = TaskSpec(...)")
    if spec.name in _added or importlib.util.find_spec(f"envs.{spec.name}") is not None:
        owner = _added[spec.name][0] if spec.name in _added else "a shipped task"
        raise ValueError(f"{package} declares task {spec.name!r}, the name of {owner}")
    _added[spec.name] = (package, spec)
    return spec


def extras() -> dict[str, tuple[str, TaskSpec]]:
    """This process's extra tasks by name, those named in `LOCA_EXTRA_TASKS` added first."""
    for package in os.environ.get(EXTRA_TASKS_ENV, "").split(","):
        if package.strip():
            add_extra(package.strip())
    return dict(_added)


def task_module(task: str, part: Part) -> str:
    """The module of task `task`'s generator, checker or scripted agents, extra or shipped."""
    found = extras().get(task)
    return module_name(task, found[0] if found else None, part)
