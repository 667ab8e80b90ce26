"""One episode's `trajectory.jsonl` as the viewer shows it: a timeline of entries in ledger order
(turn requests, messages with their tool calls and results, strategy decisions, retries, the
verdict), each message annotated with what the strategies later did to it in the model's view.

The file is read tolerantly: a line that is not a ledger event is skipped and named in
`problems` (a cut-off last line means the episode was interrupted), so a damaged file still
shows everything it holds. The timeline is an index: texts longer than `FOLD_CHARS` are kept
as their first `PREVIEW_CHARS` only, with where their line lies in the file, and a whole message
is read back from there on demand; so a 2M-token episode costs memory in proportion to its
entries, not to its text. The per-call series is pooled to at most `SERIES_POINTS` points."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

FOLD_CHARS = 2000
"""Texts longer than this are folded in a page of entries."""
PREVIEW_CHARS = 600
"""What a folded text shows before it is expanded."""
GENERIC_MAX_CHARS = 4000
"""Events without a view of their own show their payload as JSON, cut to this size."""
CACHED_TRAJECTORIES = 4
"""Indexed trajectories kept in memory (a 2M-token episode indexes in well under a second)."""
SERIES_POINTS = 400
"""The most points of the context series an episode summary carries."""
SUMMARY_FIELDS = {"llm_retry": ("turn", "number", "outcome", "status", "message", "wait_s"),
                  "verdict": ("graded", "success", "reward"), "terminal": ("state", "error")}
"""Events with a line of their own in the page, and the payload fields it names."""
EFFECTS = {"clear": "cleared", "hide": "hidden", "strip": "reasoning stripped", "pin": "pinned",
           "to_end": "moved to the end"}
"""Strategy changes naming message ids, and how a message they touched is labelled."""
EXEC_FIELDS = ("status", "server", "latency_s", "output_tokens", "terminated")
"""What a tool result's entry shows of its execution."""


@dataclass
class Timeline:
    path: Path
    header: dict[str, Any]
    entries: list[dict[str, Any]] = field(default_factory=list)
    """As pages carry them: long texts folded (`folded`)."""
    spans: dict[int, tuple[int, int]] = field(default_factory=dict)
    """Message id -> (byte offset, byte length) of its line in the file."""
    by_mid: dict[int, int] = field(default_factory=dict)
    """Message id -> index of its entry."""
    series: list[dict[str, Any]] = field(default_factory=list)
    """Per main model call: turn, predicted tokens, messages in view, strategies fired, what they freed."""
    tools: dict[str, Any] = field(default_factory=dict)
    verdict: dict[str, Any] | None = None
    terminal: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)


def read_timeline(path: Path) -> Timeline:
    """The timeline of a trajectory file (cached while the file is unchanged)."""
    stat = path.stat()
    return _read(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=CACHED_TRAJECTORIES)
def _read(path: str, _mtime_ns: int, _size: int) -> Timeline:
    timeline = Timeline(path=Path(path), header={})
    builder = _Builder(timeline)
    # the last line that was not an event, reported once a next line shows it was not the last
    bad: tuple[int, str] | None = None
    offset = number = 0
    with open(path, "rb") as fh:
        for raw in fh:  # one line at a time: only the index outlives the line
            number += 1
            start, offset = offset, offset + len(raw)
            if bad is not None:
                timeline.problems.append(f"line {bad[0]} skipped: {bad[1]}")
                bad = None
            if not raw.strip():
                continue
            try:
                event = json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                event, why = None, str(exc)
            else:
                why = "not a ledger event"
            if isinstance(event, dict) and isinstance(event.get("type"), str) \
                    and isinstance(event.get("payload"), dict):
                builder.add(event, (start, len(raw)))
            else:
                bad = (number, why)
    if bad is not None:
        timeline.problems.append(f"line {bad[0]}: the last line is cut off (the episode was interrupted)")
    if not timeline.header:
        timeline.problems.insert(0, "the ledger does not start with a header event")
    builder.finish()
    return timeline


class _Builder:
    """Entries in ledger order, built as the events come; tool executions and model responses
    join their messages at the end (they may come on either side of them)."""

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self.first = True
        self.execs: dict[Any, dict[str, Any]] = {}
        self.exec_entries: list[tuple[Any, dict[str, Any]]] = []
        self.responses: dict[Any, dict[str, Any]] = {}
        self.effects: dict[int, list[dict[str, Any]]] = defaultdict(list)

    def add(self, event: dict[str, Any], span: tuple[int, int]) -> None:
        timeline = self.timeline
        kind, payload, seq = event["type"], event["payload"], event.get("seq")
        if self.first and kind == "header":
            timeline.header = payload
        self.first = False
        if kind == "message":
            entry = folded(_message(payload, seq))
            entry["effects"] = self.effects[entry["mid"]]
            timeline.spans[entry["mid"]] = span
            timeline.entries.append(entry)
        elif kind == "tool_exec":
            self.execs[payload.get("call_id")] = {k: payload.get(k) for k in EXEC_FIELDS}
            entry = _generic(kind, payload, seq)
            self.exec_entries.append((payload.get("call_id"), entry))
            timeline.entries.append(entry)
        elif kind == "llm_request":
            timeline.entries.append({"kind": "request", "seq": seq, **_request(payload)})
            if payload.get("purpose", "main") == "main":
                timeline.series.append(_request(payload))
        elif kind == "strategy":
            timeline.entries.append(_strategy(payload, seq, self.effects))
        elif kind == "tools":
            timeline.tools = {"count": len(payload.get("tools") or ()), "tokens": payload.get("tokens")}
        elif kind == "llm_response":
            self.responses[payload.get("mid")] = {
                "finish_reason": payload.get("finish_reason"), "latency_s": payload.get("latency_s"),
                "attempts": payload.get("attempts"), "usage": payload.get("usage")}
        elif kind != "header":
            timeline.entries.append(_generic(kind, payload, seq))
            if kind == "verdict":
                timeline.verdict = payload.get("verdict") if isinstance(payload.get("verdict"), dict) else None
            elif kind == "terminal":
                timeline.terminal = payload

    def finish(self) -> None:
        """Join executions and responses to their messages; an execution whose result message
        is in the ledger is shown with it, not on its own."""
        timeline = self.timeline
        results = set()
        for entry in timeline.entries:
            if entry["kind"] != "message":
                continue
            if entry["role"] == "tool" and entry["call_id"] is not None:
                results.add(entry["call_id"])
                if entry["call_id"] in self.execs:
                    entry["exec"] = self.execs[entry["call_id"]]
            if entry["mid"] in self.responses:
                entry["response"] = self.responses[entry["mid"]]
        joined = {id(entry) for call_id, entry in self.exec_entries if call_id in results}
        if joined:
            timeline.entries = [e for e in timeline.entries if id(e) not in joined]
        timeline.by_mid = {e["mid"]: i for i, e in enumerate(timeline.entries) if e["kind"] == "message"}
        _freed_per_turn(timeline)


def _message(p: dict[str, Any], seq: Any) -> dict[str, Any]:
    mid = p.get("mid")
    entry = {"kind": "message", "seq": seq, "mid": mid if isinstance(mid, int) else -1,
             **{k: p.get(k) for k in ("turn", "role", "origin", "tokens", "name", "call_id", "is_error",
                                      "parent_call_id")},
             "parts": [_part(part) for part in p.get("parts") or () if isinstance(part, dict)],
             "content": p.get("content") if isinstance(p.get("content"), str) else None}
    return entry


def _part(part: dict[str, Any]) -> dict[str, Any]:
    kind = part.get("type")
    if kind == "tool_call":
        args = part.get("arguments")
        text = _arguments(args) if isinstance(args, dict) else str(part.get("arguments_raw", ""))
        return {"type": "tool_call", "call_id": part.get("call_id"), "name": part.get("name"),
                "arguments": text, "parse_error": part.get("parse_error")}
    return {"type": "reasoning" if kind == "reasoning" else "text", "text": str(part.get("text") or ""),
            "redacted": bool(part.get("redacted"))}


def _arguments(args: dict[str, Any]) -> str:
    """JSON of a call's arguments, one per line, each value compact (a table stays a few lines)."""
    lines = [f" {json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}" for k, v in args.items()]
    return "{\n" + ",\n".join(lines) + "\n}" if lines else "{}"


def _request(p: dict[str, Any]) -> dict[str, Any]:
    return {"turn": p.get("turn"), "purpose": p.get("purpose", "main"), "predicted": p.get("predicted_tokens"),
            "view_messages": p.get("view_messages"), "fired": list(p.get("fired") or ())}


def _strategy(p: dict[str, Any], seq: Any, effects: dict[int, list[dict[str, Any]]]) -> dict[str, Any]:
    """A strategy decision, and a note on each message it touched."""
    changes: dict[str, Any] = p["changes"] if isinstance(p.get("changes"), dict) else {}
    touched: dict[str, list[int]] = {}
    for key, label in EFFECTS.items():
        mids = [m for m in changes.get(key) or () if isinstance(m, int)]
        if mids:
            touched[label] = mids
    shortened = [s[0] for s in changes.get("shorten") or () if isinstance(s, list | tuple) and s]
    if shortened:
        touched["shortened"] = shortened
    note = {"strategy": p.get("name"), "turn": p.get("turn")}
    for label, mids in touched.items():
        detail = {"placeholder": changes.get("placeholder")} if label == "cleared" else {}
        if label == "cleared" and changes.get("style") == "remove":
            detail = {"removed_with_call": True}
        for mid in mids:
            effects[mid].append({**note, "effect": label, **detail})
    before, after = p.get("tokens_before"), p.get("tokens_after")
    freed = before - after if isinstance(before, int) and isinstance(after, int) else None
    extra = {k: v for k, v in p.items() if k not in ("name", "decision", "turn", "tokens_before", "tokens_after",
                                                     "changes")}
    return {"kind": "strategy", "seq": seq, "name": p.get("name"), "decision": p.get("decision"),
            "turn": p.get("turn"), "tokens_before": before, "tokens_after": after, "freed": freed,
            "touched": touched, "extra": extra}


def _generic(kind: str, payload: dict[str, Any], seq: Any) -> dict[str, Any]:
    """An event shown as its JSON (cut when long), with the few fields its line names."""
    text = json.dumps(payload, indent=1, ensure_ascii=False, default=str)
    if len(text) > GENERIC_MAX_CHARS:
        text = text[:GENERIC_MAX_CHARS] + f"\n[... {len(text) - GENERIC_MAX_CHARS} more characters]"
    named = SUMMARY_FIELDS.get(kind, ())
    return {"kind": kind if kind in SUMMARY_FIELDS else "event", "type": kind, "seq": seq,
            "turn": payload.get("turn"), "payload": {k: payload.get(k) for k in named} if named else None,
            "text": text}


def _freed_per_turn(timeline: Timeline) -> None:
    """Each chart point gets the tokens its firings took out of the view."""
    freed: dict[Any, dict[str, int]] = defaultdict(dict)
    for entry in timeline.entries:
        if entry["kind"] == "strategy" and entry["freed"]:
            names = freed[entry["turn"]]
            names[entry["name"]] = names.get(entry["name"], 0) + entry["freed"]
    for point in timeline.series:
        point["freed"] = {name: freed[point["turn"]].get(name, 0) for name in point["fired"]}


def _chars(part: dict[str, Any]) -> int:
    return len(part.get("arguments") or part.get("text") or "")


def folded(entry: dict[str, Any]) -> dict[str, Any]:
    """A message entry with its long texts cut to their preview, `folded` telling so, and each
    text's length in characters."""
    cut = False

    def fold(text: str | None) -> str | None:
        nonlocal cut
        if text is None or len(text) <= FOLD_CHARS:
            return text
        cut = True
        return text[:PREVIEW_CHARS]

    field_of = {"tool_call": "arguments"}
    parts = [{**part, field_of.get(part["type"], "text"): fold(part[field_of.get(part["type"], "text")]),
              "chars": _chars(part)} for part in entry["parts"]]
    content = entry["content"]
    return {**entry, "parts": parts, "content": fold(content), "content_chars": len(content or ""), "folded": cut}


def whole(timeline: Timeline, mid: int) -> dict[str, Any]:
    """Message `mid` with nothing cut (what expanding a folded one fetches), its texts read back
    from its line in the file; `KeyError` when the timeline has no such message, `ValueError`
    when the file no longer holds it there."""
    entry = timeline.entries[timeline.by_mid[mid]]
    if not entry["folded"]:
        return entry
    offset, length = timeline.spans[mid]
    with open(timeline.path, "rb") as fh:
        fh.seek(offset)
        raw = fh.read(length)
    try:
        payload = json.loads(raw)["payload"]
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError):
        payload = None
    if not isinstance(payload, dict) or payload.get("mid") != mid:
        raise ValueError(f"message {mid} is no longer where the trajectory had it; reload the episode")
    full = _message(payload, entry["seq"])
    parts = [{**part, "chars": _chars(part)} for part in full["parts"]]
    return {**entry, "parts": parts, "content": full["content"],
            "content_chars": len(full["content"] or ""), "folded": False}


def pooled(series: list[dict[str, Any]], most: int = SERIES_POINTS) -> list[dict[str, Any]]:
    """At most `most` points: runs of consecutive calls pooled into one, which has the largest
    request of the run (its turn, tokens and messages), every strategy fired in it and what each
    freed in total. A series within `most` is returned as it is."""
    if len(series) <= most:
        return series
    size = -(-len(series) // most)
    out = []
    for start in range(0, len(series), size):
        run = series[start:start + size]
        fired: dict[str, int] = {}
        for point in run:
            for name in point["fired"]:
                fired[name] = fired.get(name, 0) + point["freed"].get(name, 0)
        peak = max(run, key=lambda p: p["predicted"] if isinstance(p["predicted"], int) else -1)
        out.append({**peak, "fired": list(fired), "freed": fired, "calls": len(run)})
    return out
