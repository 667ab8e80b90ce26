"""Scripted agents per task: `scaffolds/oracles/<task>.py` (an extra task's `<package>.agents`)
declares `AGENTS`, a `loca.core.script.ScriptedAgents` (the oracle, the no-op agent and the failure-mode mutants,
each naming the check it must fail): how the task's checker is validated."""

from __future__ import annotations

import importlib

from envs.core.extra import task_module
from loca.core.script import ScriptedAgents


def agents(task: str) -> ScriptedAgents:
    """The scripted agents of `task`."""
    name = task_module(task, "agents")
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        raise LookupError(f"task {task} has no scripted agents ({name})") from None
    found = getattr(module, "AGENTS", None)
    if not isinstance(found, ScriptedAgents):
        raise LookupError(f"{name} must declare AGENTS = ScriptedAgents(...)")
    return found
