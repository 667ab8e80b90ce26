"""Run directories read for a report: the plan, the last record per episode, and the versions
the episodes ran under; several runs merged into one set of planned episodes.

Runs merge only when they agree on the task versions (a task's version bumps when its
generator, tools or checker change results), the prompt texts (id -> sha256) and the
trajectory format, all read from the episodes' trajectory headers. Rows are model x reasoning
setting x strategy (the reasoning setting, as LongBench Pro compares thinking and non-thinking
runs of a model); two runs of one model, setting and strategy name with other result-affecting
settings (window, triggers, limits, sampling...) become two rows, told apart by a digest of
those settings. An
instance (task, length, seed) planned more than once in a row (`trial` in the manifest, or the
same instance in several runs) has one trial per planned episode."""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SETTINGS_OUTSIDE_ROWS = ("tasks", "lengths", "seeds", "agent", "strategy", "timeouts")
"""Run settings that pick episodes or only bound waiting; the rest make a row."""
HEADER_MAX_CHARS = 1 << 20
"""A trajectory's first line is read up to this size (a header is a few KB)."""


class ReportError(ValueError):
    """Run directories that cannot be reported on, or not together."""


@dataclass(frozen=True)
class Row:
    model: str
    strategy: str
    settings: str = ""
    """The model's reasoning setting (`effort high`, `thinking 8192`, `default`); empty when no
    run of the report sets one."""

    @property
    def label(self) -> str:
        return " · ".join(x for x in (self.model, self.settings, self.strategy) if x)


@dataclass(frozen=True)
class Episode:
    """One planned episode and its record (None while it has not finished)."""

    row: Row
    task: str
    length: int
    seed: int
    record: dict[str, Any] | None

    @property
    def instance(self) -> tuple[str, int, int]:
        return self.task, self.length, self.seed

    @property
    def success(self) -> bool:
        return self.record is not None and self.record.get("success") is True

    @property
    def metrics(self) -> dict[str, Any] | None:
        """The episode's metrics (see docs/concepts/runs.md); None when it has not finished or ended before the
        agent loop ran (a world that could not be built)."""
        return None if self.record is None else self.record.get("metrics")


@dataclass(frozen=True)
class Run:
    root: Path
    config: dict[str, Any]
    planned: list[dict[str, Any]]
    records: dict[str, dict[str, Any]]
    versions: dict[str, dict[str, Any]]
    """Kind (`task`, `prompt`, `format`) -> name -> version, as the episodes recorded them."""
    sandbox: list[str] = field(default_factory=list)
    """The sandbox modes the run's code ran in (`run.json` and the episodes' records)."""

    @property
    def unconfined(self) -> bool:
        """Whether any code of the run ran without confinement (explicitly allowed)."""
        return "unconfined" in self.sandbox


@dataclass
class Dataset:
    """Planned episodes of every run, in row order (rows by first appearance)."""

    runs: list[Run]
    episodes: list[Episode] = field(default_factory=list)

    @property
    def rows(self) -> list[Row]:
        return list(dict.fromkeys(e.row for e in self.episodes))

    @property
    def lengths(self) -> list[int]:
        return sorted({e.length for e in self.episodes})

    @property
    def label_columns(self) -> list[str]:
        """The label columns of a row: model, the reasoning setting where any run sets one,
        strategy."""
        return ["model", "settings", "strategy"] if any(r.settings for r in self.rows) \
            else ["model", "strategy"]

    def labels(self, row: Row) -> list[str]:
        """A row's values of `label_columns`."""
        return [row.model, row.settings, row.strategy] if len(self.label_columns) == 3 \
            else [row.model, row.strategy]

    def trials(self) -> int:
        """The most planned episodes of one instance in one row."""
        return max(Counter((e.row, e.instance) for e in self.episodes).values(), default=0)

    def of(self, row: Row, length: int | None = None) -> list[Episode]:
        """A row's episodes at one length, or at all lengths."""
        return [e for e in self.episodes if e.row == row and (length is None or e.length == length)]


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: cannot be read as JSON ({exc})") from None


def _jsonl(path: Path) -> list[Any]:
    """Lines of a JSONL file; a last line cut off by a kill is left out."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            if n == len(lines) - 1:
                break
            raise ReportError(f"{path}: line {n + 1} is not JSON") from None
    return out


def _header(path: Path) -> dict[str, Any] | None:
    """The header event's payload of a trajectory file, or None when there is none."""
    try:
        with open(path, encoding="utf-8") as fh:
            event = json.loads(fh.readline(HEADER_MAX_CHARS))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    payload = event.get("payload") if isinstance(event, dict) and event.get("type") == "header" else None
    return payload if isinstance(payload, dict) else None


def _versions(root: Path, records: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    versions: dict[str, dict[str, Any]] = {"task": {}, "prompt": {}, "format": {}}
    for record in records.values():
        trajectory = record.get("trajectory")
        header = _header(root / trajectory) if isinstance(trajectory, str) else None
        if header is None:
            continue
        found = {("format", "trajectory"): header.get("format")}
        env = header.get("env") or {}
        if "task_version" in env:
            found["task", str(env.get("task", record.get("task")))] = env["task_version"]
        for prompt in header.get("prompts") or []:
            found["prompt", str(prompt.get("id"))] = prompt.get("sha256")
        for (kind, name), value in found.items():
            seen = versions[kind].setdefault(name, value)
            if seen != value:
                raise ReportError(f"{root}: episodes disagree on {kind} {name} ({seen} vs {value})")
    return versions


def _plan_entry(path: Path, n: int, entry: Any) -> dict[str, Any]:
    """A manifest line with the fields a report needs, checked."""
    try:
        return {"episode_id": str(entry["episode_id"]), "task": str(entry["task"]),
                "target_tokens": int(entry["target_tokens"]), "seed": int(entry["seed"]),
                **{k: str(entry[k]) for k in ("agent", "strategy") if entry.get(k) is not None}}
    except (KeyError, TypeError, ValueError):
        raise ReportError(f"{path}: line {n + 1} is not a planned episode") from None


def load_run(root: Path) -> Run:
    """One run directory: `run.json`, `manifest.jsonl`, and the last line per episode of
    `episodes.jsonl` (episodes outside the plan are ignored)."""
    if not (root / "run.json").is_file() or not (root / "manifest.jsonl").is_file():
        raise ReportError(f"{root} is not a run directory (no run.json and manifest.jsonl)")
    run_json = _json(root / "run.json")
    config = run_json.get("config") if isinstance(run_json, dict) else None
    if not isinstance(config, dict):
        raise ReportError(f"{root / 'run.json'}: no run configuration")
    manifest = root / "manifest.jsonl"
    planned = [_plan_entry(manifest, n, e) for n, e in enumerate(_jsonl(manifest))]
    ids = {p["episode_id"] for p in planned}
    records = {r["episode_id"]: r for r in _jsonl(root / "episodes.jsonl")
               if isinstance(r, dict) and r.get("episode_id") in ids}
    for record in records.values():
        if not isinstance(record.get("metrics"), dict):
            record["metrics"] = None
    stored = run_json.get("sandbox")
    modes = [*(stored if isinstance(stored, list) else []), *(r.get("sandbox") for r in records.values())]
    sandbox = sorted({str(mode) for mode in modes if mode is not None})
    return Run(root, config, planned, records, _versions(root, records), sandbox)


def check_compatible(runs: list[Run]) -> None:
    """Refuse runs that disagree on a task version, a prompt text or the trajectory format."""
    problems = []
    for kind in ("task", "prompt", "format"):
        names = sorted({name for run in runs for name in run.versions[kind]})
        for name in names:
            seen = {str(run.root): run.versions[kind][name] for run in runs if name in run.versions[kind]}
            if len(set(map(str, seen.values()))) > 1:
                problems.append(f"{kind} {name}: " + ", ".join(f"{v} in {r}" for r, v in seen.items()))
    if problems:
        raise ReportError("runs not comparable, not merged: " + "; ".join(problems))


def _set(value: Any) -> Any:
    """Settings without their unset (null) entries, so that a setting added later with no default
    does not tell two runs apart."""
    if isinstance(value, dict):
        return {k: _set(v) for k, v in value.items() if v is not None}
    return value


def _settings_digest(config: dict[str, Any]) -> str:
    settings = _set({k: v for k, v in config.items() if k not in SETTINGS_OUTSIDE_ROWS})
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:6]


def _named(run: Run, planned: dict[str, Any]) -> tuple[str, str]:
    """(model, strategy) of a planned episode: its own, else the run's."""
    return (planned.get("agent") or str(run.config.get("agent", "?")),
            planned.get("strategy") or str(run.config.get("strategy", "react")))


def reasoning_setting(config: dict[str, Any]) -> str:
    """A run's reasoning setting as its sampling configuration gives it: `effort <level>`,
    `thinking <budget>` (extended thinking), or `default` (the provider's)."""
    sampling = config.get("sampling")
    sampling = sampling if isinstance(sampling, dict) else {}
    if sampling.get("reasoning_effort") is not None:
        return f"effort {sampling['reasoning_effort']}"
    if sampling.get("reasoning_budget_tokens") is not None:
        return f"thinking {sampling['reasoning_budget_tokens']}"
    return "default"


def _rows(runs: list[Run]) -> dict[tuple[int, str, str], Row]:
    """The row of each (run, model, strategy). The reasoning setting is part of the row when any
    run sets one; a model, setting and strategy name run with other settings in another run
    gets the settings' digest."""
    settings = [reasoning_setting(run.config) for run in runs]
    if set(settings) == {"default"}:
        settings = [""] * len(runs)
    digests = [_settings_digest(run.config) for run in runs]
    variants: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for i, run in enumerate(runs):
        for planned in run.planned:
            variants[(*_named(run, planned), settings[i])].add(digests[i])
    return {(i, model, strategy): Row(model, strategy if len(variants[model, strategy, settings[i]]) == 1
                                      else f"{strategy} [{digests[i]}]", settings[i])
            for i, run in enumerate(runs) for model, strategy in {_named(run, p) for p in run.planned}}


def load(roots: list[Path]) -> Dataset:
    """Load and merge run directories (each once, in the order given)."""
    unique = list(dict.fromkeys(Path(r) for r in roots))
    if not unique:
        raise ReportError("no run directories given")
    runs = [load_run(root) for root in unique]
    check_compatible(runs)
    data = Dataset(runs)
    rows = _rows(runs)
    for i, run in enumerate(runs):
        for planned in run.planned:
            data.episodes.append(Episode(rows[(i, *_named(run, planned))], planned["task"],
                                         planned["target_tokens"], planned["seed"],
                                         run.records.get(planned["episode_id"])))
    if not data.episodes:
        raise ReportError("the runs plan no episodes")
    return data
