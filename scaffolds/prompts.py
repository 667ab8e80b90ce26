"""Registry of every text the harness injects (see docs/concepts/agent-loop.md).

A prompt is addressed as `name@version`. Texts never change in place: a new wording is a new
version. Placeholders use `str.format` fields and are filled by `Prompt.render`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    version: int
    text: str

    @property
    def id(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def render(self, **fields: Any) -> str:
        return self.text.format(**fields) if fields else self.text

    def describe(self) -> dict[str, Any]:
        """What the trajectory header and `run.json` record about a prompt."""
        return {"id": self.id, "version": self.version, "sha256": self.sha256}


_PROMPTS = (
    Prompt("system/react", 1, (
        "You are an agent that completes a task by calling the tools provided to you. "
        "Work step by step: call tools to inspect the environment, then call tools to make "
        "the required changes. Only the final state of the environment is graded; what you "
        "write in plain text is not. When, and only when, the task is complete, call the "
        "task's completion tool."
    )),
    Prompt("system/none", 1, ""),
    Prompt("nudge/text_reply", 1, (
        "You replied without calling a tool. If the task is complete, call `{terminal_tool}` "
        "now. Otherwise, continue working with the tools."
    )),
    Prompt("limit/tool_calls", 1, (
        "Not executed: this episode has reached its limit of {limit} tool calls."
    )),
    Prompt("clearing/placeholder", 1, (
        "[Tool result cleared to save context. Call the tool again if you need it.]"
    )),
    Prompt("truncation/marker", 1, "\n[... {omitted} characters omitted to fit the context ...]\n"),
    Prompt("compaction/request", 1, (
        "Your context is about to be reset: everything above will be gone, except this task. "
        "Write a summary that lets you continue the work without it: the progress on the task, "
        "every fact gathered so far with its exact values (names, ids, dates, numbers), the "
        "files written and what they hold, and the remaining steps. Reply with the summary "
        "only, as plain text; do not call tools."
    )),
    Prompt("compaction/preamble", 1, (
        "This conversation continues earlier work whose context was reset. Below is the "
        "summary written before the reset."
    )),
    Prompt("awareness/budget", 1, (
        "<budget:token_budget>{budget}</budget:token_budget>\n"
        "Your context window is managed automatically, so keep working until the task is "
        "complete; do not stop early because of the token budget."
    )),
    Prompt("awareness/usage", 1, (
        "Current token usage:\n<system_warning>Token usage: {used}/{budget}; {remaining} "
        "remaining</system_warning>"
    )),
    Prompt("memory/protocol", 1, (
        "You have a memory directory, /memories, that you reach with the memory tools "
        "({tools}). Before anything else, view /memories to see what earlier work recorded. "
        "As you work, record your progress and the findings you will need (exact names, ids, "
        "values, files written, remaining steps) in files there. Assume that your context can "
        "be reset at any moment: whatever is not in memory may be lost."
    )),
    Prompt("memory/warning", 1, (
        "You are nearing the context window limit. Token usage: {used}/{trigger} before older "
        "context is cleared. Save your progress and the findings you still need to /memories "
        "now."
    )),
    Prompt("ptc/description", 1, (
        "Run Python 3 code in a fresh sandboxed process (no network; the working directory is "
        "the workspace, also in the variable WORKSPACE; /tmp is private scratch). The code can "
        "call tools: `tools.<name>(**arguments)` or `tools.call(name, **arguments)` runs one "
        "call live, in program order, and returns its result (parsed JSON when the tool "
        "returns JSON, else the text); a tool error raises `ToolCallError` (attributes `code`, "
        "`message`, `text`). `tools.list()` gives the callable names. At most {max_calls} tool "
        "calls per run; the timeout covers them. Only what the code prints or assigns to the "
        "variable `result` comes back, as JSON: success, stdout, stderr, result, error, "
        "nested_calls, duration_s, timed_out.\nCallable tools: {tools}"
    )),
)

PROMPTS: dict[str, Prompt] = {p.id: p for p in _PROMPTS}


def get_prompt(prompt_id: str) -> Prompt:
    """Look up `name@version`; an unknown id raises `KeyError` naming the known ones."""
    try:
        return PROMPTS[prompt_id]
    except KeyError:
        raise KeyError(f"unknown prompt {prompt_id!r}; known: {sorted(PROMPTS)}") from None
