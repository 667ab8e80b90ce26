"""The context pipeline (see docs/concepts/context.md): before every main call, the strategies decide in order,
the awareness note is added, and the view is rendered with hard truncation.

Each decision is recorded as a `strategy` event `{name, decision, turn, tokens_before,
tokens_after, changes, ...}` and applied through the renderer, so a replay of the ledger gives
the same views (`view.render`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scaffolds.clients.base import ModelClient, Sampling
from scaffolds.context import awareness, clear_thinking, clear_tool_results, memory, truncate
from scaffolds.context.compaction import Compactor
from scaffolds.context.config import ContextConfig
from scaffolds.context.view import Renderer
from scaffolds.ledger import Ledger
from scaffolds.messages import Message, user_message
from scaffolds.prompts import PROMPTS

FIRINGS = frozenset({"clear", "strip", "compact", "truncate"})
"""Decisions that count as a strategy firing (not `failed` summaries, not awareness `note`s)."""


@dataclass(frozen=True)
class Prepared:
    """What the next main call sends, and how it was decided."""

    messages: tuple[Message, ...]
    predicted: int
    refs: tuple[list[Any], ...]
    view_hash: str
    fired: tuple[str, ...]


class ContextPipeline:
    """The strategies of one episode and the view they leave."""

    def __init__(self, config: ContextConfig, sampling: Sampling, client: ModelClient,
                 tools: Sequence[Mapping[str, Any]], terminal_tool: str, *,
                 context_blind: bool = False) -> None:
        self.config = config
        self.budget = config.budget(sampling.max_output_tokens)
        self.renderer = Renderer()
        s = config.strategies
        self.compactor = Compactor(s.compaction, client, sampling, tools,
                                   scripted=context_blind) if s.compaction else None
        self.protected = frozenset({terminal_tool, *(s.clear_tool_results.exclude_tools
                                                     if s.clear_tool_results else ()),
                                    *memory.protected_tools(s.memory)})
        self.shown = awareness.budget_shown(s.awareness, self.budget, s) if s.awareness else 0
        self.warning = memory.NearLimitWarning(s, self.budget) if s.memory_warning() else None
        self._fired: list[str] = []

    def suffixes(self, placement: str) -> list[str]:
        """Texts appended to the task message (`task_message`) or the system prompt (`system`)."""
        s = self.config.strategies
        out = [memory.protocol(s.memory)] if s.memory and placement == "task_message" else []
        if s.awareness is not None and s.awareness.placement == placement:
            out.append(awareness.budget_notice(self.shown))
        return out

    async def prepare(self, ledger: Ledger, turn: int) -> Prepared:
        """Decide, note, render; raises `truncate.Overflow` when the request cannot fit."""
        self._fired = []
        renderer = self.renderer.sync(ledger.events, ledger.messages)
        s = self.config.strategies
        for name in self.config.enabled():
            if name == "clear_thinking" and s.clear_thinking:
                self._maybe(ledger, name, "strip", turn,
                            clear_thinking.decide(renderer, self.budget, s.clear_thinking))
            elif name == "clear_tool_results" and s.clear_tool_results:
                self._maybe(ledger, name, "clear", turn, clear_tool_results.decide(
                    renderer, self.budget, s.clear_tool_results, self.protected))
            elif name == "compaction" and self.compactor is not None \
                    and self.compactor.wants(renderer, self.budget, turn):
                await self.compactor.run(ledger, renderer, self.budget, turn,
                                         lambda *a, **k: self._record(ledger, *a, **k))
        if self.warning is not None and _after_tool_batch(ledger.messages):
            self._warn(ledger, turn, self.warning)
        if s.awareness and _after_tool_batch(ledger.messages):
            self._note(ledger, turn, s.awareness.keep_notes)
        self._maybe(ledger, "truncate", "truncate", turn,
                    truncate.plan(renderer, self.budget, s.truncate))
        return Prepared(renderer.messages(), renderer.predicted, renderer.refs(),
                        renderer.view_hash(), tuple(self._fired))

    def _maybe(self, ledger: Ledger, name: str, decision: str, turn: int,
               changes: dict[str, Any] | None) -> None:
        if changes:
            self._record(ledger, name, decision, turn, changes)

    def _record(self, ledger: Ledger, name: str, decision: str, turn: int,
                changes: Mapping[str, Any], before: int | None = None, **extra: Any) -> None:
        """Apply a decision to the view and record it with the tokens it freed; `before` is P
        before the decision when messages it added (a summary) are already in the ledger."""
        renderer = self.renderer.sync(ledger.events, ledger.messages)
        before = renderer.predicted if before is None else before
        renderer.apply(changes)
        ledger.record("strategy", {"name": name, "decision": decision, "turn": turn,
                                   "tokens_before": before, "tokens_after": renderer.predicted,
                                   "changes": dict(changes), **extra})
        renderer.mark_seen(len(ledger.events))
        if decision in FIRINGS:
            self._fired.append(name)
            if self.warning is not None:
                self.warning.fired(name)

    def _warn(self, ledger: Ledger, turn: int, warning: memory.NearLimitWarning) -> None:
        """The memory near-limit warning, when armed and P lies in its band."""
        used = self.renderer.predicted
        text = warning.due(self.renderer, used)
        if text is None:
            return
        message = ledger.append_message(user_message([text], "harness.warning"), turn=turn - 1)
        warning.shown(message.mid)
        self._record(ledger, "memory", "warn", turn, {}, used=used, trigger=warning.trigger)

    def _note(self, ledger: Ledger, turn: int, keep_notes: str) -> None:
        used = self.renderer.predicted
        older = list(self.renderer.note_mids) if keep_notes == "last" else []
        ledger.append_message(user_message([awareness.usage_note(used, self.shown)],
                                           "harness.note"), turn=turn - 1)
        self._record(ledger, "awareness", "note", turn, {"hide": older} if older else {},
                     used=used)


def prompt_ids(config: ContextConfig) -> list[str]:
    """The registered prompts a context configuration may inject."""
    s = config.strategies
    ids = [truncate.MARKER] if s.truncate.enabled else []
    if s.clear_tool_results and s.clear_tool_results.placeholder in PROMPTS:
        ids.append(s.clear_tool_results.placeholder)
    if s.compaction:
        ids += [s.compaction.prompt, s.compaction.preamble]
    if s.awareness:
        ids += [awareness.BUDGET_PROMPT, awareness.USAGE_PROMPT]
    if s.memory:
        ids.append(s.memory.protocol)
        if s.memory_warning():
            ids.append(s.memory.warning_prompt)
    if s.ptc:
        ids.append(s.ptc.description)
    return ids


def _after_tool_batch(messages: Sequence[Message]) -> bool:
    """The latest turn ended with tool results (a compaction summary or a memory warning after
    them aside)."""
    for message in reversed(messages):
        if message.origin not in ("strategy.compaction", "harness.warning") \
                and message.parent_call_id is None:
            return message.role == "tool"
    return False
