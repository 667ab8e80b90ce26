"""Scripted agents per task: `scaffolds/oracles/<task>.py` declares `AGENTS`, a
`loca.core.script.ScriptedAgents` (the oracle, the no-op agent and the failure-mode mutants,
each naming the check it must fail): how the task's checker is validated."""

from __future__ import annotations

import importlib

from loca.core.script import ScriptedAgents


def agents(task: str) -> ScriptedAgents:
    """The scripted agents of `task`."""
    try:
        module = importlib.import_module(f"scaffolds.oracles.{task}")
    except ModuleNotFoundError as exc:
        if exc.name != f"scaffolds.oracles.{task}":
            raise
        raise LookupError(f"task {task} has no scripted agents (scaffolds/oracles/{task}.py)") from None
    found = getattr(module, "AGENTS", None)
    if not isinstance(found, ScriptedAgents):
        raise LookupError(f"scaffolds/oracles/{task}.py must declare AGENTS = ScriptedAgents(...)")
    return found
