"""Reading a run directory's files into their models: the one place that parses `run.json`,
`manifest.jsonl`, `result.json`, `episodes.jsonl` and `summary.json`, for the runner (resuming a
run), the report, the viewer and the export.

A file that is not what the runner writes is refused with one line naming the file, the line and
the field; one written by a newer version of loca is refused, saying so. A last line of a JSONL
file cut off by a kill is left out (its episode has not finished)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from loca.records.models import (
    SCHEMA_VERSION,
    UNVERSIONED,
    Episode,
    EpisodeRecord,
    RunManifest,
    RunSettings,
    RunSummary,
    Versioned,
)

RUN_JSON, MANIFEST, EPISODES, SUMMARY, RESULT = ("run.json", "manifest.jsonl", "episodes.jsonl",
                                                 "summary.json", "result.json")
Model = TypeVar("Model", bound=Versioned)


class RunFileError(ValueError):
    """A run directory file that cannot be read as what the runner writes."""


def _parse(model: type[Model], data: Any, where: str, what: str) -> Model:
    """`data` as `model`; a file without a version is version 1, one newer than ours is refused."""
    if not isinstance(data, dict):
        raise RunFileError(f"{where} is not {what}")
    version = data.get("schema_version", UNVERSIONED)
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise RunFileError(f"{where} was written by a newer loca (schema version {version}; this one "
                           f"reads up to {SCHEMA_VERSION}): upgrade loca to read it")
    try:
        return model.model_validate({**data, "schema_version": version})
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(map(str, first["loc"])) or "?"
        raise RunFileError(f"{where} is not {what} ({field}: {first['msg']})") from None


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunFileError(f"{path}: cannot be read as JSON ({exc})") from None


def _jsonl(path: Path) -> list[tuple[int, Any]]:
    """(line number, value) of each line of a JSONL file; a last line cut off by a kill is left
    out. A missing file has no lines."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append((n, json.loads(line)))
        except json.JSONDecodeError:
            if n == len(lines):
                break
            raise RunFileError(f"{path}: line {n} is not JSON") from None
    return out


def parse_record(data: Any, where: str) -> EpisodeRecord:
    return _parse(EpisodeRecord, data, where, "an episode record")


def read_run_json(path: Path) -> RunManifest:
    data = _json(path)
    if not isinstance(data, dict) or not isinstance(data.get("config"), dict):
        raise RunFileError(f"{path}: no run configuration")
    return _parse(RunManifest, data, str(path), "a run manifest")


def read_manifest(path: Path) -> list[Episode]:
    """Every planned episode, in plan order."""
    planned = []
    for n, line in _jsonl(path):
        try:
            planned.append(Episode.from_dict(line))
        except (KeyError, TypeError, ValueError):
            raise RunFileError(f"{path}: line {n} is not a planned episode") from None
    return planned


def read_result(path: Path) -> EpisodeRecord | None:
    """An episode's `result.json`, None while it has not finished."""
    return parse_record(_json(path), str(path)) if path.is_file() else None


def read_records(path: Path) -> dict[str, EpisodeRecord]:
    """The last line of each episode in `episodes.jsonl` (a retried episode has several)."""
    return {record.episode_id: record
            for record in (parse_record(line, f"{path}: line {n}") for n, line in _jsonl(path))}


def read_summary(path: Path) -> RunSummary:
    return _parse(RunSummary, _json(path), str(path), "a run summary")


@dataclass(frozen=True)
class StoredRun:
    """A run directory as read: its manifest, its plan and the last record of each planned
    episode that finished."""

    root: Path
    manifest: RunManifest
    planned: list[Episode]
    records: dict[str, EpisodeRecord]

    @property
    def settings(self) -> RunSettings:
        return self.manifest.settings

    def record(self, episode: Episode) -> EpisodeRecord | None:
        return self.records.get(episode.episode_id)

    def finished(self) -> list[tuple[Episode, EpisodeRecord]]:
        """The planned episodes that finished and their records, in plan order."""
        return [(e, r) for e in self.planned if (r := self.record(e)) is not None]

    @property
    def sandbox(self) -> list[str]:
        """The sandbox modes the run's code ran in (`run.json` and the episodes' records)."""
        modes = [*self.manifest.sandbox, *(r.sandbox for r in self.records.values())]
        return sorted({mode for mode in modes if mode is not None})

    @property
    def unconfined(self) -> bool:
        """Whether any code of the run ran without confinement (explicitly allowed)."""
        return "unconfined" in self.sandbox


def load_run(root: Path) -> StoredRun:
    """One run directory: `run.json`, `manifest.jsonl`, and the last line per episode of
    `episodes.jsonl` (episodes outside the plan are left out)."""
    root = Path(root)
    if not (root / RUN_JSON).is_file() or not (root / MANIFEST).is_file():
        raise RunFileError(f"{root} is not a run directory (no {RUN_JSON} and {MANIFEST})")
    manifest = read_run_json(root / RUN_JSON)
    planned = read_manifest(root / MANIFEST)
    ids = {e.episode_id for e in planned}
    records = {k: r for k, r in read_records(root / EPISODES).items() if k in ids}
    return StoredRun(root, manifest, planned, records)
