"""The files of a run directory as typed models: `run.json` (`RunManifest`), each line of
`manifest.jsonl` (a planned `Episode`), each episode's `result.json` and line of `episodes.jsonl`
(`EpisodeRecord`) and `summary.json` (`RunSummary`).

`run.json`, the records and the summary carry the `schema_version` that wrote them; the lines of
`manifest.jsonl` are of the version of their `run.json`. Files written before versions existed
are version 1: what they lack takes its default. A reader refuses a version newer than
`SCHEMA_VERSION` (`loca.records.load`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.dataclasses import dataclass

from loca.core.lengths import label
from loca.core.outcome import Check, EpisodeError, EpisodeMetrics

SCHEMA_VERSION = 2
"""Version 1: the files written before the version was recorded (the same fields, unversioned)."""
UNVERSIONED = 1
"""The version of a file that names none."""


class Versioned(BaseModel):
    schema_version: int = SCHEMA_VERSION


@dataclass(frozen=True)
class Episode:
    """One planned episode: a line of `manifest.jsonl`. Its id is stored with it; a reader takes
    the stored id, and a line may name its own `strategy` (a plan merged from several)."""

    task: str
    length: int
    """The target length in tokens."""
    seed: int
    agent: str
    trial: int = 0
    """Distinct episodes of one (task, length, seed), for pass@k; lines written before trials
    existed have none (0)."""
    strategy: str | None = None
    stored_id: str | None = None

    @property
    def episode_id(self) -> str:
        """Readable and stable: `<task>__<length>__s<seed>__<agent>`, then `__t<trial>` for every
        trial but the first (so runs without trials keep their ids)."""
        if self.stored_id is not None:
            return self.stored_id
        agent = self.agent.replace(":", "-").replace("/", "-")
        trial = f"__t{self.trial}" if self.trial else ""
        return f"{self.task}__{label(self.length)}__s{self.seed}__{agent}{trial}"

    def to_dict(self) -> dict[str, Any]:
        """The manifest line (and the first fields of the episode's record)."""
        line = {"episode_id": self.episode_id, "task": self.task, "length": label(self.length),
                "target_tokens": self.length, "seed": self.seed, "agent": self.agent, "trial": self.trial}
        return {**line, "strategy": self.strategy} if self.strategy is not None else line

    @classmethod
    def from_dict(cls, line: dict[str, Any]) -> Episode:
        """A manifest line; `KeyError`, `TypeError` or `ValueError` when it is not one."""
        strategy = line.get("strategy")
        return cls(str(line["task"]), int(line["target_tokens"]), int(line["seed"]), str(line["agent"]),
                   int(line.get("trial") or 0), None if strategy is None else str(strategy),
                   str(line["episode_id"]))


class EpisodeRecord(Versioned):
    """One finished episode: who played what, how it ended, its verdict, metrics and files. An
    episode that ended before the agent loop ran (`env_setup_error`, `llm_error` making the
    client, `harness_error`) has no metrics, environment figures or trajectory."""

    model_config = ConfigDict(extra="ignore")

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
    """Graded and every check passed; anything else scores 0."""
    graded: bool = False
    reward: float = 0.0
    strategy: str | None = None
    """The context strategy set as named (`react`, `clear_tool_results+compaction`...)."""
    sandbox: str | None = None
    """The code sandbox mode the episode ran in (None where code could not run)."""
    env_description_tokens: int | None = None
    builds: int | None = None
    params: dict[str, Any] | None = None
    tool_count: int | None = None
    tools_tokens: int | None = None
    world_hash: str | None = None
    checks: list[Check] = Field(default_factory=list)
    """The verdict's checks when graded, else the diagnostic verdict's."""
    metrics: EpisodeMetrics | None = None
    error: EpisodeError | None = None
    world_dir: str | None = None
    """The final world, relative to the run directory, where it was kept."""
    trajectory: str | None = None
    """The ledger, relative to the run directory."""

    @property
    def error_kind(self) -> str | None:
        """What a failed model call ran into (`connection_refused`, `auth`...), if that ended it."""
        return self.error.kind if self.error else None

    def failed_checks(self) -> list[str]:
        return [c.name for c in self.checks if not c.passed]

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class Sampling(BaseModel):
    """The reasoning settings of a run's sampling, as readers of run directories need them."""

    model_config = ConfigDict(extra="allow")

    reasoning_effort: str | None = None
    reasoning_budget_tokens: int | None = None


class RunSettings(BaseModel):
    """A run's configuration as readers of run directories see it: the agent, the strategy's name
    and the reasoning setting typed, every other setting as it was written (the runner's own
    `RunConfig` checks them all when it resumes the run)."""

    model_config = ConfigDict(extra="allow")

    agent: str = "?"
    strategy: str = "react"
    sampling: Sampling = Field(default_factory=Sampling)

    def reasoning(self) -> str:
        """`effort <level>`, `thinking <budget>` (extended thinking), or `default` (the provider's)."""
        if self.sampling.reasoning_effort is not None:
            return f"effort {self.sampling.reasoning_effort}"
        if self.sampling.reasoning_budget_tokens is not None:
            return f"thinking {self.sampling.reasoning_budget_tokens}"
        return "default"


class RunManifest(Versioned):
    """`run.json`: the run's resolved configuration, its settings digest, the version of loca that
    created it and the sandbox modes its code ran in (None where code could not run)."""

    config: dict[str, Any]
    """The runner's `RunConfig`, as JSON."""
    config_hash: str | None = None
    loca_version: str | None = None
    sandbox: list[str | None] = Field(default_factory=list)

    @property
    def settings(self) -> RunSettings:
        return RunSettings.model_validate(self.config)


class Tally(BaseModel):
    """Planned episodes of a group, how many finished and passed; accuracy over the planned."""

    episodes: int = 0
    finished: int = 0
    passed: int = 0
    accuracy: float = 0.0


class RunSummary(Versioned):
    """`summary.json`: every planned episode of the run directory (those of earlier, smaller
    plans included); anything but success scores 0, an episode that has not finished too."""

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
