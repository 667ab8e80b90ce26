"""Scripted agents per task: `oracle`, `noop` and `mutant:<name>`. A task's module here is named
after the task and exports `SCRIPTS` (agent name -> script function) and `EXPECTED_FAILURES`
(every agent but the oracle -> the check it must fail: how the checker is validated)."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from loca.core.script import Script, ScriptFn, ToolRequest, resolve_tool


def noop(instruction: str, tools: list[dict[str, Any]]) -> Script:
    """Claims the task done at once."""
    yield ToolRequest(resolve_tool(tools, "claim_done", "claim_done"), {})


def _module(task: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"scaffolds.oracles.{task}")
    except ModuleNotFoundError as exc:
        if exc.name != f"scaffolds.oracles.{task}":
            raise
        return None


def scripts_for(task: str) -> dict[str, ScriptFn]:
    """Every scripted agent of `task`, by agent name."""
    module = _module(task)
    return {"noop": noop, **(module.SCRIPTS if module else {})}


def expected_failures(task: str) -> dict[str, str]:
    """The check each non-oracle scripted agent of `task` must fail."""
    module = _module(task)
    return dict(module.EXPECTED_FAILURES) if module else {}
