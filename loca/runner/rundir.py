"""The run directory: `run.json` (the resolved configuration, its settings digest and the
sandbox modes the run's code ran in), `manifest.jsonl` (every planned episode), one folder per
episode (`episodes/<id>/`: its trajectory, `result.json` whose presence means done, and its
final world as `keep_worlds` says) and `episodes.jsonl` (one line per finished attempt; readers
take the last line of an episode).

A directory belongs to one agent and one set of settings; its plan may grow. A later command
with the same settings adds the episodes it plans that the manifest lacks; one with other
settings is refused, naming each setting that differs."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from loca import __version__
from loca.core.dirlock import hold
from loca.core.errors import BadInput
from loca.core.world import write_text_atomic
from loca.records import SCHEMA_VERSION, Episode, EpisodeRecord, RunManifest
from loca.records.load import (
    EPISODES,
    MANIFEST,
    RESULT,
    RUN_JSON,
    RunFileError,
    read_manifest,
    read_records,
    read_result,
    read_run_json,
)
from loca.runner.config import RunConfig, plan
from loca.runner.records import RETRIED_STATES
from mock_servers.sandbox import recorded_mode

SHOWN_CHARS = 40
"""A differing setting's value is shown up to this many characters."""


class RunError(BadInput):
    """A run that cannot start: its directory is busy, a file, or holds another run."""


class SettingsError(RunError):
    """The run directory holds a run with other settings; `differences` names each of them."""

    def __init__(self, root: Path, differences: list[str]) -> None:
        self.differences = differences
        super().__init__(f"{root} holds a run with other settings ({'; '.join(differences)}); "
                         f"use another --out for these")


@dataclass(frozen=True)
class Resume:
    """Where a command finds its plan in the run directory."""

    fresh: bool
    """The directory held no run before."""
    done: int
    retry: int
    """Finished in a state a rerun tries again (`RETRIED_STATES`)."""
    new: int
    """Not finished yet (never started, or interrupted)."""


@dataclass(frozen=True)
class Schedule:
    """What a command runs now."""

    todo: list[Episode]
    resume: Resume
    attempts: dict[str, int]
    """Episode id -> the number of the attempt it starts (1 for an episode never recorded)."""


class RunDir:
    """The files of one run."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def episode_dir(self, episode: Episode) -> Path:
        return self.root / "episodes" / episode.episode_id

    def result_path(self, episode: Episode) -> Path:
        return self.episode_dir(episode) / RESULT

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the run directory: one writer at a time (`loca.core.dirlock`)."""
        with hold(self.root, "run directory", RunError):
            yield

    def open(self, config: RunConfig) -> tuple[list[Episode], bool]:
        """Create the run, or take the existing one when its settings equal `config`'s, adding
        the episodes of `config`'s plan it lacks. Returns the run's whole plan and whether the
        run is new. `run.json` lists the sandbox mode of this process among those the run's
        code ran in (null where code could not run)."""
        run_json = self.root / RUN_JSON
        mode = recorded_mode()
        wanted = plan(config)
        if not run_json.exists():
            self._write_manifest(wanted)
            self._write_run_json(RunManifest(config=config.model_dump(mode="json"), config_hash=config.digest(),
                                             loca_version=__version__, sandbox=[mode]))
            return wanted, True
        stored_json = self._read_run_json()
        stored = self._stored_config(stored_json)
        differences = settings_differences(stored.settings(), config.settings())
        if differences:
            raise SettingsError(self.root, differences)
        planned = self.manifest()
        known = {e.episode_id for e in planned}
        added = [e for e in wanted if e.episode_id not in known]
        if added:
            planned += added
            self._write_manifest(planned)
        grown = stored.grown(config)
        sandbox = stored_json.sandbox
        updated = stored_json.model_copy(update={
            "schema_version": SCHEMA_VERSION, "config": grown.model_dump(mode="json"), "config_hash": grown.digest(),
            "sandbox": sandbox if mode in sandbox else [*sandbox, mode]})
        if updated != stored_json:
            self._write_run_json(updated)
        return planned, False

    def manifest(self) -> list[Episode]:
        """Every episode the run plans, in plan order."""
        with _readable():
            return read_manifest(self.root / MANIFEST)

    def _read_run_json(self) -> RunManifest:
        with _readable():
            return read_run_json(self.root / RUN_JSON)

    def _stored_config(self, stored_json: RunManifest) -> RunConfig:
        try:
            return RunConfig.model_validate(stored_json.config)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"])) or "config"
            raise RunError(f"{self.root / RUN_JSON} holds a configuration this version cannot read "
                           f"({where}: {first['msg']}); use another --out") from None

    def _write_manifest(self, episodes: list[Episode]) -> None:
        write_text_atomic(self.root / MANIFEST,
                          "".join(json.dumps(e.to_dict()) + "\n" for e in episodes))

    def _write_run_json(self, content: RunManifest) -> None:
        write_text_atomic(self.root / RUN_JSON, json.dumps(content.model_dump(mode="json"), indent=1) + "\n")

    def finished(self, episode: Episode) -> EpisodeRecord | None:
        with _readable():
            return read_result(self.result_path(episode))

    def store(self, episode: Episode, record: EpisodeRecord) -> None:
        """Write the episode's `result.json` (atomically: its presence means done), then its
        line of `episodes.jsonl`."""
        self.episode_dir(episode).mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.result_path(episode), json.dumps(record.to_dict(), indent=1) + "\n")
        self.log(record)

    def log(self, record: EpisodeRecord) -> None:
        with open(self.root / EPISODES, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record.to_dict()) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def logged(self) -> dict[str, EpisodeRecord]:
        """The last line of each episode in `episodes.jsonl`; a last line cut off by a kill is
        dropped (its record is logged again from `result.json`)."""
        path = self.root / EPISODES
        if not path.exists():
            return {}
        text = path.read_text(encoding="utf-8")
        if text and not text.endswith("\n"):
            text = text[: text.rfind("\n") + 1]
            write_text_atomic(path, text)
        with _readable():
            return read_records(path)

    def schedule(self, planned: list[Episode], asked: list[Episode], fresh: bool,
                 retry_errors: bool) -> Schedule:
        """The episodes of `asked` to run now. Logs the finished episodes `episodes.jsonl` lacks
        (a kill between the two writes); clears the folders of unfinished ones (an interrupted
        attempt) and, with `retry_errors`, of those that ended in a state a rerun retries."""
        logged = self.logged()
        for episode in planned:
            done = self.finished(episode)
            if done is not None and logged.get(episode.episode_id) != done:
                self.log(done)
                logged[episode.episode_id] = done
        todo, done_count, retry = [], 0, 0
        for episode in asked:
            done = self.finished(episode)
            if done is not None and not (retry_errors and done.terminal_state in RETRIED_STATES):
                done_count += 1
                continue
            retry += done is not None
            shutil.rmtree(self.episode_dir(episode), ignore_errors=True)
            todo.append(episode)
        attempts = {e.episode_id: last.attempt + 1 if (last := logged.get(e.episode_id)) else 1
                    for e in todo}
        return Schedule(todo, Resume(fresh, done_count, retry, len(todo) - retry), attempts)


@contextmanager
def _readable() -> Iterator[None]:
    """A run file this version cannot read is a run that cannot go on in that directory."""
    try:
        yield
    except RunFileError as exc:
        raise RunError(f"{exc}; use another --out") from None


def settings_differences(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """One line per setting that differs, `key: old → new` (keys of nested settings dotted)."""
    lines = []
    for key in sorted(old.keys() | new.keys()):
        before, after = old.get(key, _UNSET), new.get(key, _UNSET)
        if isinstance(before, dict) and isinstance(after, dict):
            lines += settings_differences(before, after, f"{prefix}{key}.")
        elif before != after:
            lines.append(f"{prefix}{key}: {_shown(before)} → {_shown(after)}")
    return lines


_UNSET = object()


def _shown(value: Any) -> str:
    if value is _UNSET:
        return "(unset)"
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"
