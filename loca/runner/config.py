"""What a run is: its configuration (the plan and the settings that decide results) and the
episodes it plans (`loca.records.Episode`, the lines of its manifest)."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from loca.core.lengths import parse_length, parse_seeds
from loca.records import Episode
from scaffolds.clients import RateLimits, Sampling, Timeouts, agent_profile, is_llm_agent
from scaffolds.config import AgentConfig, Limits
from scaffolds.context import ContextConfig

KeepWorlds = Literal["all", "failed", "none"]
PLAN_FIELDS = frozenset({"tasks", "lengths", "seeds", "trials"})
"""Settings that pick episodes: a run grows when they grow."""
RUN_FIELDS = frozenset({"timeouts", "strict", "rate_limits", "keep_worlds"})
"""Settings that decide how a run goes, not its results: a resume may change them."""


class RunConfig(BaseModel):
    """Everything that decides a run's results."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[str]
    lengths: list[int]
    seeds: list[int]
    trials: int = Field(default=1, ge=1)
    """Episodes per (task, length, seed): distinct episodes, for pass@k."""
    agent: str
    base_url: str | None = None
    max_turns: int = 300
    max_tool_calls: int = 500
    naming: Literal["prefixed", "dedup", "bare"] = "prefixed"
    tool_filter: Literal["all", "core", "task"] = "all"
    timeouts: Timeouts = Timeouts()
    """Model-call timeouts; they decide how soon a dead provider is given up, not a result, so
    they stay out of the digest and a run may resume with others."""
    strategy: str = "react"
    """The strategy set as named (`react`, `clear_tool_results+compaction`, `paper+...`)."""
    context: ContextConfig = Field(default_factory=ContextConfig)
    """Budget terms and strategies, fully resolved."""
    system_prompt: str = "system/react@1"
    sampling: Sampling = Field(default_factory=Sampling)
    rate_limits: RateLimits = Field(default_factory=RateLimits)
    """Of the agent's rate group (spec §7.3), for the whole run: split evenly between worker
    processes, shared through one limiter on Ray. It paces calls, it decides no result: out of
    the digest."""
    strict: bool = True
    """Refuse options the model's profile does not list as supported (reasoning settings on a
    non-reasoning model); it decides what may run, not a result, so it stays out of the digest."""
    keep_worlds: KeepWorlds = "failed"
    """Which episodes keep their final world in their folder (the trajectory and the record
    always stay): all, those that did not pass, or none."""

    @property
    def scripted(self) -> bool:
        """Scripted agents do not react to their context (the loop runs them context-blind)."""
        return not is_llm_agent(self.agent)

    def agent_config(self) -> AgentConfig:
        return AgentConfig(system_prompt=self.system_prompt, sampling=self.sampling,
                           context=self.context,
                           limits=Limits(max_turns=self.max_turns,
                                         max_tool_calls=self.max_tool_calls))

    @model_validator(mode="after")
    def _agent_config_valid(self) -> RunConfig:
        """Context settings are checked before any episode runs (spec §3.7), against the
        model's profile where it has one."""
        agent_config = self.agent_config()
        profile = None if self.scripted else agent_profile(self.agent, self.base_url)
        if profile is not None:
            agent_config.check_profile(profile, self.strict)
        compaction = self.context.strategies.compaction
        if self.scripted and compaction is not None and compaction.summarizer == "model":
            raise ValueError(f"compaction.summarizer: model needs a model; {self.agent} is "
                             f"scripted (use scripted, or leave it unset)")
        return self

    @field_validator("tasks", "lengths", "seeds")
    @classmethod
    def _each_once(cls, values: list[Any], info: ValidationInfo) -> list[Any]:
        """Non-empty, valid, each value once (a duplicate would run an episode twice)."""
        if not values:
            raise ValueError(f"no {info.field_name} given")
        if info.field_name == "lengths":
            values = [parse_length(v) for v in values]
        if info.field_name == "seeds":
            values = parse_seeds(",".join(str(v) for v in values))
        return list(dict.fromkeys(values))

    def settings(self) -> dict[str, Any]:
        """What decides the results besides the plan: two runs with equal settings are one run
        that may grow."""
        return self.model_dump(mode="json", exclude=set(PLAN_FIELDS | RUN_FIELDS))

    def digest(self) -> str:
        """Of the settings (not the plan, timeouts, strictness, rate limits or kept worlds)."""
        return hashlib.sha256(json.dumps(self.settings(), sort_keys=True).encode()).hexdigest()[:16]

    def grown(self, other: RunConfig) -> RunConfig:
        """This configuration with the plan of `other` added (tasks, lengths and seeds in order of
        first appearance, the larger number of trials)."""
        return self.model_copy(update={
            "tasks": list(dict.fromkeys([*self.tasks, *other.tasks])),
            "lengths": list(dict.fromkeys([*self.lengths, *other.lengths])),
            "seeds": sorted({*self.seeds, *other.seeds}),
            "trials": max(self.trials, other.trials)})


def plan(config: RunConfig) -> list[Episode]:
    return [Episode(task, length, seed, config.agent, trial)
            for task in config.tasks for length in config.lengths for seed in config.seeds
            for trial in range(config.trials)]
