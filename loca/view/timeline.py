"""One episode's `trajectory.jsonl` as the viewer shows it: a timeline of entries in ledger order
(turn requests, messages with their tool calls and results, strategy decisions, retries, the
verdict), each message annotated with what the strategies later did to it in the model's view.

The file is read tolerantly: a line that is not a ledger event is skipped and named in
`problems` (a cut-off last line means the episode was interrupted), so a damaged file still
shows everything it holds. Texts longer than `FOLD_CHARS` leave in a page as their first
`PREVIEW_CHARS`; the whole message is fetched on demand."""

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
"""Parsed trajectories kept in memory (a 256K episode parses in well under a second)."""
SUMMARY_FIELDS = {"llm_retry": ("turn", "number", "outcome", "status", "message", "wait_s"),
                  "verdict": ("graded", "success", "reward"), "terminal": ("state", "error")}
"""Events with a line of their own in the page, and the payload fields it names."""
EFFECTS = {"clear": "cleared", "hide": "hidden", "strip": "reasoning stripped", "pin": "pinned",
           "to_end": "moved to the end"}
"""Strategy changes naming message ids, and how a message they touched is labelled."""


@dataclass
class Timeline:
    header: dict[str, Any]
    entries: list[dict[str, Any]] = field(default_factory=list)
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
    events, problems = _events(Path(path))
    header = events[0]["payload"] if events and events[0]["type"] == "header" else {}
    if not header:
        problems.insert(0, "the ledger does not start with a header event")
    timeline = Timeline(header=header, problems=problems)
    _build(timeline, events)
    return timeline


def _events(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The well-formed events of a file, and a note per line that is not one."""
    events, problems = [], []
    with open(path, "rb") as fh:
        lines = fh.read().splitlines()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            event = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            event, why = None, str(exc)
        else:
            why = "not a ledger event"
        if isinstance(event, dict) and isinstance(event.get("type"), str) and isinstance(event.get("payload"), dict):
            events.append(event)
        elif number == len(lines):
            problems.append(f"line {number}: the last line is cut off (the episode was interrupted)")
        else:
            problems.append(f"line {number} skipped: {why}")
    return events, problems


def _build(timeline: Timeline, events: list[dict[str, Any]]) -> None:
    """Entries in ledger order; tool executions and model responses join their messages."""
    execs = {p.get("call_id"): p for e in events if e["type"] == "tool_exec" for p in [e["payload"]]}
    responses = {p.get("mid"): p for e in events if e["type"] == "llm_response" for p in [e["payload"]]}
    results = {e["payload"].get("call_id") for e in events
               if e["type"] == "message" and e["payload"].get("role") == "tool"}
    effects: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for event in events:
        kind, payload, seq = event["type"], event["payload"], event.get("seq")
        if kind == "message":
            entry = _message(payload, seq, execs, responses)
            entry["effects"] = effects[entry["mid"]]
            timeline.by_mid[entry["mid"]] = len(timeline.entries)
            timeline.entries.append(entry)
        elif kind == "tool_exec" and payload.get("call_id") in results:
            continue
        elif kind == "llm_request":
            timeline.entries.append({"kind": "request", "seq": seq, **_request(payload)})
            if payload.get("purpose", "main") == "main":
                timeline.series.append(_request(payload))
        elif kind == "strategy":
            timeline.entries.append(_strategy(payload, seq, effects))
        elif kind == "tools":
            timeline.tools = {"count": len(payload.get("tools") or ()), "tokens": payload.get("tokens")}
        elif kind in ("header", "llm_response"):
            continue
        else:
            timeline.entries.append(_generic(kind, payload, seq))
            if kind == "verdict":
                timeline.verdict = payload.get("verdict") if isinstance(payload.get("verdict"), dict) else None
            elif kind == "terminal":
                timeline.terminal = payload
    _freed_per_turn(timeline)


def _message(p: dict[str, Any], seq: Any, execs: dict[Any, dict[str, Any]],
             responses: dict[Any, dict[str, Any]]) -> dict[str, Any]:
    mid = p.get("mid")
    entry = {"kind": "message", "seq": seq, "mid": mid if isinstance(mid, int) else -1,
             **{k: p.get(k) for k in ("turn", "role", "origin", "tokens", "name", "call_id", "is_error",
                                      "parent_call_id")},
             "parts": [_part(part) for part in p.get("parts") or () if isinstance(part, dict)],
             "content": p.get("content") if isinstance(p.get("content"), str) else None}
    if entry["role"] == "tool" and entry["call_id"] in execs:
        run = execs[entry["call_id"]]
        entry["exec"] = {k: run.get(k) for k in ("status", "server", "latency_s", "output_tokens", "terminated")}
    if mid in responses:
        r = responses[mid]
        entry["response"] = {"finish_reason": r.get("finish_reason"), "latency_s": r.get("latency_s"),
                             "attempts": r.get("attempts"), "usage": r.get("usage")}
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
    """An entry as a page carries it: long texts cut to their preview, `folded` telling so."""
    if entry["kind"] != "message":
        return entry
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


def whole(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry with nothing cut (what expanding a folded one fetches)."""
    return {**entry, "parts": [{**part, "chars": _chars(part)} for part in entry["parts"]],
            "content_chars": len(entry["content"] or ""), "folded": False}
