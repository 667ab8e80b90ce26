"""Generic scripted agents: made from a task's typed outputs, footprint and servers, for every
task, beside its own mutants. Each is the oracle with one thing changed: the world it leaves
altered afterwards (`after`, on a copy of the oracle's finished world), or its tool calls
rewritten as it plays (`during`). Mutants must fail (their named check, or any check); allowed
variants must pass. Where a world offers nothing to change (no data row, no second value), the
agent is not applicable there (`NotApplicable`), which is reported, not counted as a pass."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loca.core.script import Script, ToolRequest, Tools

if TYPE_CHECKING:
    from envs.core.registry import Task
    from loca.core.world import World

ANY = "*"  # a mutant that must fail some check, whichever the task names it
PREFIX = "generic:"


class NotApplicable(Exception):
    """The world offers nothing this agent could change."""


Calls = ToolRequest | list[ToolRequest]
Rewrite = Callable[[ToolRequest], Calls]  # a call made as it is, changed, or made as several calls


@dataclass(frozen=True)
class Generic:
    """One generic agent. `must_fail`: the check it must fail, `ANY`, or None for an allowed
    variant (it must pass). Exactly one of `after` (alter the oracle's finished world),
    `during` (a fresh rewriter of the oracle's tool calls per play) and `then` (calls the oracle
    makes once its work is done, before it claims done) is set."""

    name: str
    must_fail: str | None
    about: str
    after: Callable[[Task, World], None] | None = None
    during: Callable[[Task, World], Rewrite] | None = None
    then: Callable[[Task, Tools], Script] | None = None  # more calls once the oracle's work is done

    @property
    def agent(self) -> str:
        return PREFIX + self.name


class Once:
    """A rewriter that changes the first request `change` accepts (it returns None for the
    others) and passes every other request on; `done` says whether it changed one."""

    def __init__(self, change: Callable[[ToolRequest], Calls | None]) -> None:
        self.change = change
        self.done = False

    def __call__(self, request: ToolRequest) -> Calls:
        if self.done:
            return request
        changed = self.change(request)
        if changed is None:
            return request
        self.done = True
        return changed


def rewritten(script: Script, rewrite: Rewrite) -> Script:
    """`script` with every tool call it makes passed through `rewrite` first; where one call
    becomes several, the script gets the reply of the last of them."""
    step = next(script)
    while True:
        if isinstance(step, ToolRequest | list):
            groups = [made if isinstance(made := rewrite(r), list) else [made]
                      for r in (step if isinstance(step, list) else [step])]
            replies = yield [r for group in groups for r in group]
            ends = [sum(len(g) for g in groups[:i + 1]) - 1 for i in range(len(groups))]
            answer = [replies[end] for end in ends]
        else:
            answer = yield step
        try:
            step = script.send(answer)
        except StopIteration as stop:
            return stop.value


def then_claim(script: Script, more: Script, claim: str) -> Script:
    """`script` with the calls of `more` made just before its call of `claim` (the terminal tool)."""
    step = next(script)
    while True:
        if isinstance(step, ToolRequest) and step.name == claim:
            yield from more
        try:
            step = script.send((yield step))
        except StopIteration as stop:
            return stop.value
