"""The episode ledger: an append-only event log streamed to `trajectory.jsonl` (see
docs/concepts/context.md and docs/concepts/runs.md).

Each event is `{seq, t_wall, t_mono, type, payload}`; the times are diagnostics only. The first
event is the header. Events are flushed to the OS as they are written, one JSON line each in
UTF-8; text UTF-8 cannot carry (a lone surrogate a model emitted) is written as a JSON `\\u`
escape, so the event reads back exactly as it was. `commit` (once per turn) starts an fsync in
a background thread unless the previous one is still running, so the disk flush overlaps the
next model call instead of adding to every turn; `close` waits for it and fsyncs a last time.
Nothing is rewritten or deleted.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from scaffolds.accounting import message_tokens
from scaffolds.messages import Message, message_from_dict, message_to_dict, normalize_call_ids

TRAJECTORY_FILE = "trajectory.jsonl"


@cache
def _fsync_pool(pid: int) -> ThreadPoolExecutor:
    """One fsync thread per process; keyed by pid so that a forked child makes its own."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"ledger-fsync-{pid}")


class Ledger:
    """Events and canonical messages of one episode, in memory and on disk."""

    def __init__(self, path: Path, header: Mapping[str, Any]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.events: list[dict[str, Any]] = []
        self.messages: list[Message] = []
        self.message_tokens_total = 0
        """Running sum of `tokens` over `messages`, kept so request sizes are O(1) to predict."""
        self._seen_call_ids: set[str] = set()
        self._sync: Future[None] | None = None
        self._file = path.open("wb")
        self.record("header", header)

    def record(self, type_: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Append one event and flush it to the file."""
        event = {"seq": len(self.events), "t_wall": time.time(), "t_mono": time.monotonic(),
                 "type": type_, "payload": payload}
        self._file.write(_encoded(event))
        self._file.flush()
        self.events.append(event)
        return event

    def record_retries(self, turn: int, attempts: Iterable[Any]) -> None:
        """One `llm_retry` event per failed attempt of a model call."""
        for attempt in attempts:
            self.record("llm_retry", {"turn": turn, **attempt.to_dict()})

    def append_message(self, message: Message, *, turn: int, tokens: int | None = None) -> Message:
        """Assign mid, turn and token count (computed here unless given), then record it.

        Assistant messages get missing or duplicated call ids replaced (`call_<turn>_<index>`).
        """
        if message.role == "assistant":
            message = normalize_call_ids(message, turn, self._seen_call_ids)
        count = message_tokens(message) if tokens is None else tokens
        message = replace(message, mid=len(self.messages), turn=turn, tokens=count)
        self.messages.append(message)
        self.message_tokens_total += count
        self.record("message", message_to_dict(message))
        return message

    def commit(self) -> None:
        """Start making everything written so far durable (see the module docstring)."""
        if self._file.closed:
            return
        self._file.flush()
        if self._sync is None or self._sync.done():
            self._settle()
            self._sync = _fsync_pool(os.getpid()).submit(os.fsync, self._file.fileno())

    def close(self) -> None:
        """Wait for the background fsync, fsync once more and close; idempotent."""
        if self._file.closed:
            return
        self._file.flush()
        self._settle()
        os.fsync(self._file.fileno())
        self._file.close()

    def _settle(self) -> None:
        """Wait for the pending fsync, if any; its failure is raised here."""
        if self._sync is not None:
            sync, self._sync = self._sync, None
            sync.result()


def _encoded(event: Mapping[str, Any]) -> bytes:
    """One ledger line; non-ASCII text stays readable unless the event holds a lone surrogate."""
    try:
        return (json.dumps(event, ensure_ascii=False, default=str) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(event, default=str) + "\n").encode("ascii")


@dataclass(frozen=True)
class Trajectory:
    """A ledger read back from disk."""

    header: dict[str, Any]
    events: list[dict[str, Any]]
    messages: list[Message]
    truncated: bool
    """True when the last line was cut off (the episode was interrupted mid-write)."""

    def of_type(self, type_: str) -> list[dict[str, Any]]:
        return [e["payload"] for e in self.events if e["type"] == type_]


def read_trajectory(path: Path) -> Trajectory:
    """Parse a `trajectory.jsonl`; a truncated last line is dropped, any other bad line raises."""
    lines = path.read_text(encoding="utf-8").splitlines()
    events: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if number == len(lines):
                return _trajectory(path, events, truncated=True)
            raise ValueError(f"{path}:{number}: corrupt ledger line") from exc
    return _trajectory(path, events, truncated=False)


def _trajectory(path: Path, events: list[dict[str, Any]], *, truncated: bool) -> Trajectory:
    if not events or events[0]["type"] != "header":
        raise ValueError(f"{path}: the ledger does not start with a header event")
    messages = [message_from_dict(e["payload"]) for e in events if e["type"] == "message"]
    return Trajectory(header=events[0]["payload"], events=events, messages=messages,
                      truncated=truncated)
