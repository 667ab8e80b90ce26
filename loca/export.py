"""Training data from runs: one record per finished episode, with the conversation as the model
was shown it, in the OpenAI chat format.

`messages` is the view of the episode's last model request, rendered from its ledger
(`scaffolds.context.render`: every clearing, stripping, compaction and truncation decided up to
that request applied; the rendering is checked against the view hash the request recorded),
followed by what came after it (the last reply and its tool results). Scripted agents run
context-blind, so theirs is the view they would have been shown. Each message has the same keys
(`role`, `content`, `tool_calls`, `tool_call_id`, `reasoning_content`; null where they do not
apply), so the records load as one table. `tools` (the OpenAI tool list) and `metrics` vary in
shape from task to task and are JSON text. Records follow the run directories in the order
given and each run's plan; the same runs give the same bytes."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from loca.records import EpisodeRecord, RunFileError, StoredRun, load_run
from scaffolds.clients.openai_wire import wire_messages, wire_tools
from scaffolds.context.view import Renderer
from scaffolds.ledger import Trajectory, read_trajectory
from scaffolds.messages import Message, utf8_safe
from scaffolds.result import TerminalState

Format = Literal["jsonl", "parquet"]
FORMATS: tuple[str, ...] = get_args(Format)
TERMINAL_STATES: tuple[str, ...] = get_args(TerminalState)
MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "reasoning_content")
BATCH = 64
"""Records per parquet row group (bounds the memory an export of long episodes takes)."""


class ExportError(ValueError):
    """Run directories or options that cannot be exported."""


ONLY = ("success", "failure")


@dataclass(frozen=True)
class Filters:
    only: str | None = None
    """`success` or `failure`: only the episodes that passed, or only those that did not."""
    terminal_states: frozenset[str] = frozenset()

    def keep(self, record: EpisodeRecord) -> bool:
        if self.only is not None and record.success != (self.only == "success"):
            return False
        return not self.terminal_states or record.terminal_state in self.terminal_states


@dataclass
class Exported:
    records: int = 0
    without_trajectory: int = 0
    """Selected episodes left out: they ended before the agent loop ran (no ledger)."""


def shown(trajectory: Trajectory) -> tuple[list[Message], list[dict[str, Any]]]:
    """The messages of the last main request's view and those after it, and the tools offered."""
    events = trajectory.events
    requests = [i for i, e in enumerate(events)
                if e["type"] == "llm_request" and e["payload"].get("purpose") == "main"]
    cut = requests[-1] + 1 if requests else len(events)
    renderer = Renderer().sync(events[:cut], trajectory.messages)
    if requests and renderer.view_hash() != events[requests[-1]]["payload"].get("view_hash"):
        raise ExportError(f"turn {events[requests[-1]]['payload'].get('turn')}: the rendered view differs "
                          f"from the one the request recorded")
    for event in events[cut:]:
        if event["type"] == "message":
            renderer.add(trajectory.messages[event["payload"]["mid"]])
    tools = [e["payload"]["tools"] for e in events[:cut] if e["type"] == "tools"]
    return list(renderer.messages()), tools[-1] if tools else []


def openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Chat-format messages with every key of `MESSAGE_KEYS`; shown reasoning (not redacted) as
    `reasoning_content`."""
    out = []
    for message, wire in zip(messages, wire_messages(messages, "none"), strict=True):
        reasoning = "".join(p.text for p in message.reasoning if not p.redacted)
        out.append({**dict.fromkeys(MESSAGE_KEYS), **wire,
                    "reasoning_content": utf8_safe(reasoning) if reasoning else None})
    return out


def episode_record(run: StoredRun, record: EpisodeRecord, trajectory: str) -> dict[str, Any]:
    """The export record of one finished episode with its ledger at `trajectory` (`run`: the run
    directory as given)."""
    path = run.root / trajectory
    try:
        ledger = read_trajectory(path)
        messages, tools = shown(ledger)
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise ExportError(f"{path}: cannot be exported ({exc})") from None
    client = ledger.header.get("client") or {}
    return {
        "run": str(run.root),
        "episode_id": record.episode_id,
        "task": record.task,
        "length": record.length,
        "target_tokens": record.target_tokens,
        "seed": record.seed,
        "agent": record.agent,
        "model": client.get("model"),
        "strategy": record.strategy or run.settings.strategy,
        "sandbox": record.sandbox,
        "passed": record.success,
        "graded": record.graded,
        "reward": record.reward,
        "checks": [check.model_dump() for check in record.checks],
        "terminal_state": record.terminal_state,
        "env_description_tokens": record.env_description_tokens,
        "metrics": json.dumps(record.metrics.model_dump(mode="json") if record.metrics else None, sort_keys=True),
        "messages": openai_messages(messages),
        "tools": json.dumps(wire_tools(tools)),
    }


def records(run_dirs: Sequence[Path], filters: Filters, counts: Exported) -> Iterator[dict[str, Any]]:
    """Export records of the selected episodes, run by run in plan order."""
    for root in dict.fromkeys(Path(r) for r in run_dirs):
        if not root.is_dir():
            raise ExportError(f"{root} is not a directory")
        try:
            run = load_run(root)
        except RunFileError as exc:
            raise ExportError(str(exc)) from None
        for _, record in run.finished():
            if not filters.keep(record):
                continue
            if record.trajectory is None:
                counts.without_trajectory += 1
                continue
            counts.records += 1
            yield episode_record(run, record, record.trajectory)


def export(run_dirs: Sequence[Path], out: Path, fmt: str, filters: Filters) -> Exported:
    """Write the selected episodes of `run_dirs` to `out` (replaced whole, never half-written)."""
    if fmt not in FORMATS:
        raise ExportError(f"--format is one of {', '.join(FORMATS)}, not {fmt!r}")
    if filters.only not in (None, *ONLY):
        raise ExportError(f"--only is {' or '.join(ONLY)}, not {filters.only!r}")
    unknown = sorted(filters.terminal_states - set(TERMINAL_STATES))
    if unknown:
        raise ExportError(f"unknown terminal state {', '.join(unknown)}; one of {', '.join(TERMINAL_STATES)}")
    if out.is_dir():
        raise ExportError(f"--out {out} is a directory; name the file to write")
    if not run_dirs:
        raise ExportError("no run directories given")
    counts = Exported()
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    os.close(fd)
    try:
        (_write_jsonl if fmt == "jsonl" else _write_parquet)(records(run_dirs, filters, counts), Path(tmp))
        if not counts.records:
            raise ExportError("no episode of the runs matches the filters; nothing written")
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return counts


def _write_jsonl(rows: Iterator[dict[str, Any]], path: Path) -> None:
    with open(path, "wb") as fh:
        for row in rows:
            try:
                line = json.dumps(row, ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate outside the messages: escaped
                line = json.dumps(row).encode("ascii")
            fh.write(line + b"\n")


def _write_parquet(rows: Iterator[dict[str, Any]], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = parquet_schema()
    with pq.ParquetWriter(path, schema) as writer:
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append(row)
            if len(batch) == BATCH:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                batch = []
        if batch:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))


def parquet_schema() -> Any:
    """The records' columns, typed (one schema for every batch and every export)."""
    import pyarrow as pa

    call = pa.struct([("id", pa.string()), ("type", pa.string()),
                      ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())]))])
    message = pa.struct([("role", pa.string()), ("content", pa.string()), ("tool_calls", pa.list_(call)),
                         ("tool_call_id", pa.string()), ("reasoning_content", pa.string())])
    check = pa.struct([("name", pa.string()), ("passed", pa.bool_()), ("detail", pa.string()),
                       ("error", pa.bool_())])
    return pa.schema([
        ("run", pa.string()), ("episode_id", pa.string()), ("task", pa.string()), ("length", pa.string()),
        ("target_tokens", pa.int64()), ("seed", pa.int64()), ("agent", pa.string()), ("model", pa.string()),
        ("strategy", pa.string()), ("sandbox", pa.string()), ("passed", pa.bool_()), ("graded", pa.bool_()),
        ("reward", pa.float64()),
        ("checks", pa.list_(check)), ("terminal_state", pa.string()), ("env_description_tokens", pa.int64()),
        ("metrics", pa.string()), ("messages", pa.list_(message)), ("tools", pa.string()),
    ])
