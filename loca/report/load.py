"""Run directories read for a report (through `loca.records`): the plan, the last record per
episode, and the versions the episodes ran under; several runs merged into one set of planned
episodes.

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

from loca.core.outcome import EpisodeMetrics
from loca.records import Episode, EpisodeRecord, RunFileError, StoredRun, load_run

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
class Entry:
    """One planned episode in a row of the report, and its record (None while it has not
    finished)."""

    row: Row
    episode: Episode
    record: EpisodeRecord | None

    @property
    def task(self) -> str:
        return self.episode.task

    @property
    def length(self) -> int:
        return self.episode.length

    @property
    def seed(self) -> int:
        return self.episode.seed

    @property
    def instance(self) -> tuple[str, int, int]:
        return self.task, self.length, self.seed

    @property
    def success(self) -> bool:
        return self.record is not None and self.record.success

    @property
    def metrics(self) -> EpisodeMetrics | None:
        """The episode's metrics (spec §4.3); None when it has not finished or ended before the
        agent loop ran (a world that could not be built)."""
        return None if self.record is None else self.record.metrics


@dataclass(frozen=True)
class Run:
    """A run directory as the report reads it: its files, and the versions its episodes ran
    under."""

    stored: StoredRun
    versions: dict[str, dict[str, Any]]
    """Kind (`task`, `prompt`, `format`) -> name -> version, as the episodes recorded them."""

    @property
    def root(self) -> Path:
        return self.stored.root


@dataclass
class Dataset:
    """Planned episodes of every run, in row order (rows by first appearance)."""

    runs: list[Run]
    episodes: list[Entry] = field(default_factory=list)

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

    def of(self, row: Row, length: int | None = None) -> list[Entry]:
        """A row's episodes at one length, or at all lengths."""
        return [e for e in self.episodes if e.row == row and (length is None or e.length == length)]


def _header(path: Path) -> dict[str, Any] | None:
    """The header event's payload of a trajectory file, or None when there is none."""
    try:
        with open(path, encoding="utf-8") as fh:
            event = json.loads(fh.readline(HEADER_MAX_CHARS))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    payload = event.get("payload") if isinstance(event, dict) and event.get("type") == "header" else None
    return payload if isinstance(payload, dict) else None


def _versions(root: Path, records: dict[str, EpisodeRecord]) -> dict[str, dict[str, Any]]:
    versions: dict[str, dict[str, Any]] = {"task": {}, "prompt": {}, "format": {}}
    for record in records.values():
        header = _header(root / record.trajectory) if record.trajectory is not None else None
        if header is None:
            continue
        found = {("format", "trajectory"): header.get("format")}
        env = header.get("env") or {}
        if "task_version" in env:
            found["task", str(env.get("task", record.task))] = env["task_version"]
        for prompt in header.get("prompts") or []:
            found["prompt", str(prompt.get("id"))] = prompt.get("sha256")
        for (kind, name), value in found.items():
            seen = versions[kind].setdefault(name, value)
            if seen != value:
                raise ReportError(f"{root}: episodes disagree on {kind} {name} ({seen} vs {value})")
    return versions


def read_run(root: Path) -> Run:
    """One run directory (`loca.records.load_run`) and the versions its episodes ran under."""
    try:
        stored = load_run(root)
    except RunFileError as exc:
        raise ReportError(str(exc)) from None
    return Run(stored, _versions(stored.root, stored.records))


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


def _named(run: Run, planned: Episode) -> tuple[str, str]:
    """(model, strategy) of a planned episode: its own strategy, else the run's."""
    return planned.agent, planned.strategy or run.stored.settings.strategy


def _rows(runs: list[Run]) -> dict[tuple[int, str, str], Row]:
    """The row of each (run, model, strategy). The reasoning setting is part of the row when any
    run sets one; a model, setting and strategy name run with other settings in another run
    gets the settings' digest."""
    settings = [run.stored.settings.reasoning() for run in runs]
    if set(settings) == {"default"}:
        settings = [""] * len(runs)
    digests = [_settings_digest(run.stored.manifest.config) for run in runs]
    variants: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for i, run in enumerate(runs):
        for planned in run.stored.planned:
            variants[(*_named(run, planned), settings[i])].add(digests[i])
    return {(i, model, strategy): Row(model, strategy if len(variants[model, strategy, settings[i]]) == 1
                                      else f"{strategy} [{digests[i]}]", settings[i])
            for i, run in enumerate(runs) for model, strategy in {_named(run, p) for p in run.stored.planned}}


def load(roots: list[Path]) -> Dataset:
    """Load and merge run directories (each once, in the order given)."""
    unique = list(dict.fromkeys(Path(r) for r in roots))
    if not unique:
        raise ReportError("no run directories given")
    runs = [read_run(root) for root in unique]
    check_compatible(runs)
    data = Dataset(runs)
    rows = _rows(runs)
    for i, run in enumerate(runs):
        for planned in run.stored.planned:
            data.episodes.append(Entry(rows[(i, *_named(run, planned))], planned, run.stored.record(planned)))
    if not data.episodes:
        raise ReportError("the runs plan no episodes")
    return data
