"""Scripted agents per task: `oracle`, `noop` and `mutant:<name>`. A task's module here is named
after the task and exports `SCRIPTS` (agent name -> script function)."""

from __future__ import annotations

import importlib
from typing import Any

from envs.actions import Script, ScriptFn, ToolRequest, resolve_tool


def noop(instruction: str, tools: list[dict[str, Any]]) -> Script:
    """Claims the task done at once."""
    yield ToolRequest(resolve_tool(tools, "claim_done", "claim_done"), {})


def scripts_for(task: str) -> dict[str, ScriptFn]:
    """Every scripted agent of `task`, by agent name."""
    try:
        module = importlib.import_module(f"scaffolds.oracles.{task}")
    except ModuleNotFoundError as exc:
        if exc.name != f"scaffolds.oracles.{task}":
            raise
        return {"noop": noop}
    return {"noop": noop, **module.SCRIPTS}
