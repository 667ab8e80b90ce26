"""Render: the view of the ledger the model is shown (see docs/concepts/context.md).

A view is an ordered list of entries `(mid, variant)`. Strategies never edit messages: they record
*changes* in `strategy` events, and the renderer applies the changes recorded so far, so the same
events always give the same view (`render`). `Renderer` folds events in incrementally: a turn costs
what its new events cost, not the size of the ledger.

Changes (each key optional):
- `clear`: tool-result mids; `style` `placeholder` shows `placeholder` instead of the content,
  `remove` drops the result and strips its call from the assistant message (with the reasoning
  once no call is left; an assistant message left empty leaves the view). `arguments`: the calls
  are shown with `{}` arguments.
- `strip`: assistant mids whose reasoning leaves the view (`reasoning_placeholder` shown instead).
- `shorten`: `[mid, head_chars, tail_chars, marker]`: the middle of a tool result replaced.
- `hide`: mids that leave the view; `pin`: mids never truncated; `to_end`: mids moved, in order,
  to the end of the view (turn groups kept after a compaction summary).

Turn-0 messages (system prompt, task message) are pinned from the start. An empty assistant
reply (no text, no call) is never shown.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from loca.core.tokens import count_tokens
from scaffolds.messages import Message, ReasoningPart, TextPart, ToolCallPart


@lru_cache(maxsize=256)
def constant_tokens(text: str) -> int:
    """Token count of a harness constant (placeholders, markers), counted once."""
    return count_tokens(text)


def _call_tokens(part: ToolCallPart) -> int:
    return count_tokens(part.name) + count_tokens(part.arguments_raw)


@dataclass(frozen=True, slots=True)
class ViewEntry:
    """One message as shown: `message` is the rendered form, `tokens` its size."""

    mid: int
    turn: int
    variants: frozenset[str]
    message: Message
    tokens: int
    removed_calls: frozenset[str] = frozenset()
    cleared_arguments: frozenset[str] = frozenset()
    reasoning_placeholder: str | None = None

    @property
    def variant(self) -> str:
        return "+".join(sorted(self.variants)) or "full"


class Renderer:
    """The current view of one ledger, kept up to date by `sync`."""

    def __init__(self) -> None:
        self.entries: dict[int, ViewEntry] = {}
        """Visible messages by mid, in view order."""
        self.tokens = 0
        """Sum of the visible entries' tokens."""
        self.tools_tokens = 0
        self.pinned: set[int] = set()
        self.reasoning_mids: dict[int, None] = {}
        """Visible assistant messages whose reasoning is still shown, oldest first."""
        self.note_mids: dict[int, None] = {}
        """Visible harness notes (awareness), oldest first."""
        self._source: dict[int, Message] = {}
        self._owner: dict[str, int] = {}
        """Call id -> mid of the assistant message that made the call."""
        self._seen = 0
        self._refs: list[list[Any]] | None = []
        self._messages: list[Message] | None = []
        """The rendered messages, kept while only appends happen (None: rebuild)."""
        self._hasher = hashlib.sha256()
        self._hashed = 0
        """Runs of `_refs` already fed to `_hasher` (all but the last, which may still grow)."""

    @property
    def predicted(self) -> int:
        """P of the next request: tools plus the view (before any harness note is added)."""
        return self.tools_tokens + self.tokens

    # ------------------------------------------------------------ folding events

    def sync(self, events: Sequence[Mapping[str, Any]], messages: Sequence[Message]) -> Renderer:
        """Apply the events not seen yet; `messages[mid]` is the message of a `message` event."""
        for event in events[self._seen:]:
            kind = event["type"]
            if kind == "message":
                self.add(messages[event["payload"]["mid"]])
            elif kind == "tools":
                self.tools_tokens = event["payload"]["tokens"]
            elif kind == "strategy":
                self.apply(event["payload"].get("changes") or {})
        self._seen = len(events)
        return self

    def mark_seen(self, count: int) -> None:
        """Events up to `count` are already applied (a decision applied before it was recorded)."""
        self._seen = count

    def add(self, message: Message) -> None:
        if message.parent_call_id is not None or (message.role == "assistant"
                                                  and message.is_empty):
            return  # nested calls never enter the conversation; empty replies are never sent
        self._source[message.mid] = message
        self._put(ViewEntry(message.mid, message.turn, frozenset(), message, message.tokens))
        if message.turn == 0:
            self.pinned.add(message.mid)
        for call in message.tool_calls:
            self._owner[call.call_id] = message.mid
        if message.reasoning:
            self.reasoning_mids[message.mid] = None
        if message.origin == "harness.note" and message.role == "user":
            self.note_mids[message.mid] = None
        if self._refs is not None:
            _extend_refs(self._refs, message.mid, "full")
        if self._messages is not None:
            self._messages.append(message)

    def apply(self, changes: Mapping[str, Any]) -> None:
        self._refs = self._messages = None
        for mid in changes.get("clear", ()):
            self._clear(mid, changes)
        for mid in changes.get("strip", ()):
            if mid in self.entries:
                self._restyle(mid, add="reasoning_stripped",
                              reasoning_placeholder=changes.get("reasoning_placeholder"))
        for mid, head, tail, marker in changes.get("shorten", ()):
            self._shorten(mid, head, tail, marker)
        for mid in changes.get("hide", ()):
            self._drop(mid)
        self.pinned.update(changes.get("pin", ()))
        for mid in changes.get("to_end", ()):
            entry = self.entries.pop(mid)
            self.entries[mid] = entry

    def _clear(self, mid: int, changes: Mapping[str, Any]) -> None:
        entry = self.entries.get(mid)
        if entry is None:
            return
        call_id = entry.message.call_id or ""
        owner = self.entries.get(self._owner.get(call_id, -1))
        if changes.get("style") == "remove":
            self._drop(mid)
            if owner is not None:
                self._restyle(owner.mid, add="call_removed",
                              removed_calls=owner.removed_calls | {call_id})
            return
        self._restyle(mid, add="result_cleared", content=changes["placeholder"])
        if changes.get("arguments") and owner is not None:
            self._restyle(owner.mid, add="arguments_cleared",
                          cleared_arguments=owner.cleared_arguments | {call_id})

    def _shorten(self, mid: int, head: int, tail: int, marker: str) -> None:
        content = self._source[mid].content or ""
        self._restyle(mid, add="content_truncated",
                      content=content[:head] + marker + content[len(content) - tail:])

    def _restyle(self, mid: int, *, add: str, content: str | None = None,
                 **fields: Any) -> None:
        """Replace the entry of `mid` by one with variant `add` and the given fields."""
        old = self.entries[mid]
        entry = replace(old, variants=old.variants | {add}, **fields)
        source = self._source[mid]
        if source.role == "tool":
            text = content if content is not None else entry.message.content or ""
            message = replace(source, content=text)
            tokens = constant_tokens(text) if add == "result_cleared" else count_tokens(text)
        else:
            shown, tokens = _assistant_variant(source, entry)
            if shown is None:
                self._drop(mid)
                return
            message = shown
        if "reasoning_stripped" in entry.variants or not message.reasoning:
            self._forget_reasoning(mid)
        self.tokens += tokens - old.tokens
        self.entries[mid] = replace(entry, message=message, tokens=tokens)

    def _put(self, entry: ViewEntry) -> None:
        self.entries[entry.mid] = entry
        self.tokens += entry.tokens

    def _drop(self, mid: int) -> None:
        entry = self.entries.pop(mid, None)
        if entry is None:
            return
        self.tokens -= entry.tokens
        self._forget_reasoning(mid)
        self.note_mids.pop(mid, None)

    def _forget_reasoning(self, mid: int) -> None:
        self.reasoning_mids.pop(mid, None)

    # ------------------------------------------------------------ reading the view

    def original(self, mid: int) -> Message:
        """The message of `mid` as the ledger holds it."""
        return self._source[mid]

    def view(self) -> View:
        return View(tuple(self.entries.values()), self.tools_tokens)

    def messages(self) -> tuple[Message, ...]:
        """The view's messages as sent (cached between decisions)."""
        if self._messages is None:
            self._messages = [e.message for e in self.entries.values()]
        return tuple(self._messages)

    def groups(self) -> list[list[ViewEntry]]:
        """The unpinned visible entries as turn groups, in view order (O(view))."""
        out: list[list[ViewEntry]] = []
        for entry in self.entries.values():
            if entry.mid in self.pinned:
                continue
            if out and out[-1][0].turn == entry.turn:
                out[-1].append(entry)
            else:
                out.append([entry])
        return out

    def refs(self) -> tuple[list[Any], ...]:
        """The view as runs `[first_mid, last_mid]` (full) or `[first, last, variant]`."""
        return tuple(self._runs())

    def _runs(self) -> list[list[Any]]:
        if self._refs is None:
            self._refs = runs_of(self.entries.values())
            self._hasher, self._hashed = hashlib.sha256(), 0
        return self._refs

    def view_hash(self) -> str:
        """`view_hash(self.refs())`, computed incrementally: only new runs are hashed."""
        refs = self._runs()
        for run in refs[self._hashed:-1]:
            self._hasher.update(_run_bytes(run))
        self._hashed = max(self._hashed, len(refs) - 1)
        hasher = self._hasher.copy()
        if refs:
            hasher.update(_run_bytes(refs[-1]))
        return hasher.hexdigest()


def runs_of(entries: Iterable[ViewEntry]) -> list[list[Any]]:
    """View references of entries, in order: consecutive mids of one variant make one run."""
    runs: list[list[Any]] = []
    for entry in entries:
        _extend_refs(runs, entry.mid, entry.variant)
    return runs


def _extend_refs(refs: list[list[Any]], mid: int, variant: str) -> None:
    """Append `mid` to the runs; a run is replaced, never changed, so snapshots stay valid."""
    last = refs[-1] if refs else None
    if last is not None and last[1] == mid - 1 and (last[2] if len(last) > 2 else "full") == variant:
        refs[-1] = [last[0], mid, *last[2:]]
    else:
        refs.append([mid, mid] if variant == "full" else [mid, mid, variant])


def _assistant_variant(source: Message, entry: ViewEntry) -> tuple[Message | None, int]:
    """The assistant message as `entry` shows it and its tokens; None when nothing is left."""
    calls = [p for p in source.tool_calls if p.call_id not in entry.removed_calls]
    no_reasoning = "reasoning_stripped" in entry.variants or (source.tool_calls and not calls)
    tokens = source.tokens
    parts: list[Any] = []
    for part in source.parts:
        if isinstance(part, ReasoningPart) and no_reasoning:
            tokens -= count_tokens(part.text)
            continue
        if isinstance(part, ToolCallPart):
            if part.call_id in entry.removed_calls:
                tokens -= _call_tokens(part)
                continue
            if part.call_id in entry.cleared_arguments:
                tokens += constant_tokens("{}") - count_tokens(part.arguments_raw)
                part = replace(part, arguments_raw="{}", arguments={})
        parts.append(part)
    if no_reasoning and entry.reasoning_placeholder and source.reasoning:
        parts.insert(0, TextPart(entry.reasoning_placeholder))
        tokens += constant_tokens(entry.reasoning_placeholder)
    message = replace(source, parts=tuple(parts))
    if not message.tool_calls and not message.text.strip():
        return None, 0
    return message, tokens


@dataclass(frozen=True)
class View:
    entries: tuple[ViewEntry, ...]
    tools_tokens: int

    @property
    def messages(self) -> tuple[Message, ...]:
        return tuple(e.message for e in self.entries)

    @property
    def predicted(self) -> int:
        return self.tools_tokens + sum(e.tokens for e in self.entries)

    @property
    def pairs(self) -> list[tuple[int, str]]:
        return [(e.mid, e.variant) for e in self.entries]


def render(events: Sequence[Mapping[str, Any]], messages: Sequence[Message]) -> View:
    """The view that the recorded events give: pure, same ledger, same view."""
    return Renderer().sync(events, messages).view()


def _run_bytes(run: Sequence[Any]) -> bytes:
    """A run as compact JSON and `;` (variants are plain identifiers, so no escaping)."""
    if len(run) == 2:
        return f"[{run[0]},{run[1]}];".encode()
    return f'[{run[0]},{run[1]},"{run[2]}"];'.encode()


def view_hash(refs: Iterable[Sequence[Any]]) -> str:
    """sha256 over the runs of a view, each as compact JSON followed by `;`."""
    hasher = hashlib.sha256()
    for run in refs:
        hasher.update(_run_bytes(run))
    return hasher.hexdigest()
