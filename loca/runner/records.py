"""The records of a run: one per finished episode (what `result.json` and each line of
`episodes.jsonl` hold) and the summary of them all (`summary.json`).

An episode record is typed in the fields the runner reads and keeps every other field as it came
(metrics, checks, params...), so records written by older versions still load."""

from __future__ import annotations

import traceback
from collections import Counter
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from loca.core.lengths import label
from loca.runner.config import Episode
from scaffolds.result import PROVIDER_STATES

RETRIED_STATES = frozenset({"llm_error", "harness_error", *PROVIDER_STATES})
"""Terminal states a rerun tries again (unless asked not to): the provider or our code failed,
not the agent."""


class RecordError(BaseModel):
    """Why an episode failed outside the agent: the exception, and for a model call the kind
    of failure (`scaffolds.clients.base.FaultKind`), its status and every attempt."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    class_: str = Field(alias="class")
    message: str
    details: dict[str, Any] | None = None

    @property
    def kind(self) -> str | None:
        kind = (self.details or {}).get("kind")
        return kind if isinstance(kind, str) else None


class EpisodeRecord(BaseModel):
    """One finished episode."""

    model_config = ConfigDict(extra="allow")

    episode_id: str
    task: str
    length: str
    target_tokens: int
    seed: int
    agent: str
    trial: int = 0
    attempt: int = 1
    """How many times the episode ran to a record (a rerun retries errored episodes)."""
    terminal_state: str
    success: bool
    env_description_tokens: int | None = None
    checks: list[dict[str, Any]] = Field(default_factory=list)
    error: RecordError | None = None

    @property
    def error_kind(self) -> str | None:
        """What a failed model call ran into (`connection_refused`, `auth`...), if that ended it."""
        return self.error.kind if self.error else None

    def failed_checks(self) -> list[str]:
        return [str(c.get("name")) for c in self.checks if not c.get("passed")]

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


def failure_record(episode: Episode, terminal_state: str, exc: BaseException) -> dict[str, Any]:
    """The record of an episode that ended by an exception outside the agent loop: ungraded,
    scoring 0, with the error (class, message, traceback) for diagnosis."""
    return {**episode.to_dict(), "terminal_state": terminal_state, "graded": False,
            "success": False, "reward": 0.0, "checks": [], "metrics": None,
            "error": {"class": type(exc).__name__, "message": str(exc),
                      "traceback": "".join(traceback.format_exception(exc))}}


class Tally(BaseModel):
    """Planned episodes of a group, how many finished and passed; accuracy over the planned."""

    episodes: int = 0
    finished: int = 0
    passed: int = 0
    accuracy: float = 0.0


class RunSummary(BaseModel):
    """Every planned episode of the run directory (those of earlier, smaller plans included);
    anything but success scores 0, an episode that has not finished too."""

    episodes: int
    finished: int
    passed: int
    accuracy: float
    by_length: dict[str, Tally]
    by_task: dict[str, Tally]
    by_task_length: dict[str, dict[str, Tally]]
    """Task -> length -> tally, tasks and lengths in plan order."""
    by_terminal_state: dict[str, int]
    not_passed: dict[str, int] = Field(default_factory=dict)
    """Terminal states of the finished episodes that did not pass."""
    by_error_kind: dict[str, int] = Field(default_factory=dict)
    """Of the episodes a failed model call ended: what it ran into."""
    max_length_deviation: float


def summarize(planned: list[Episode], results: dict[str, EpisodeRecord]) -> RunSummary:
    """The summary of `planned` episodes from the records of those that finished."""
    lengths = [label(n) for n in sorted({e.length for e in planned})]
    by_length: dict[str, Tally] = {name: Tally() for name in lengths}
    by_task: dict[str, Tally] = {}
    by_task_length: dict[str, dict[str, Tally]] = {}
    for episode in planned:
        record = results.get(episode.episode_id)
        length = label(episode.length)
        cells = by_task_length.setdefault(episode.task, {})
        for tally in (by_length[length], by_task.setdefault(episode.task, Tally()),
                      cells.setdefault(length, Tally())):
            tally.episodes += 1
            tally.finished += record is not None
            tally.passed += record is not None and record.success
    for cells in by_task_length.values():
        ordered = {name: cells[name] for name in lengths if name in cells}
        cells.clear()
        cells.update(ordered)
    for tally in [*by_length.values(), *by_task.values(),
                  *(t for cells in by_task_length.values() for t in cells.values())]:
        tally.accuracy = tally.passed / tally.episodes
    finished = [r for e in planned if (r := results.get(e.episode_id)) is not None]
    passed = sum(r.success for r in finished)
    deviations = [abs(r.env_description_tokens - r.target_tokens) / r.target_tokens
                  for r in finished if r.env_description_tokens]
    return RunSummary(
        episodes=len(planned), finished=len(finished), passed=passed,
        accuracy=passed / len(planned) if planned else 0.0,
        by_length=by_length, by_task=by_task, by_task_length=by_task_length,
        by_terminal_state=dict(sorted(Counter(r.terminal_state for r in finished).items())),
        not_passed=dict(sorted(Counter(r.terminal_state for r in finished if not r.success).items())),
        by_error_kind=dict(sorted(Counter(k for r in finished if (k := r.error_kind)).items())),
        max_length_deviation=max(deviations, default=0.0))
