"""Runs: plan (tasks x lengths x seeds x agent) -> episodes -> results on disk -> summary.

The run directory holds `run.json` (resolved config, and the sandbox modes code ran in),
`manifest.jsonl` (the plan), one folder per
episode (`episodes/<id>/`: its world, trajectory and `result.json`, whose presence means done),
`episodes.jsonl` (one record per finished episode) and `summary.json`. Rerunning the same command
on the same directory resumes it: finished episodes are skipped, unfinished ones start over.
An episode that fails in any way but cancellation or the loss of its worker process still ends
with a record (`harness_error` when nothing more precise applies), and the run goes on."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import traceback
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from loca import __version__
from loca.core.dirlock import hold
from loca.core.lengths import label, parse_length, parse_seeds
from loca.core.world import write_text_atomic
from mock_servers.sandbox import recorded_mode
from scaffolds.clients import RateLimits, Sampling, Timeouts, agent_profile, is_llm_agent
from scaffolds.config import AgentConfig, Limits
from scaffolds.context import ContextConfig


class RunError(ValueError):
    """A run that cannot start: its directory is busy, a file, or holds another run."""


class RunConfig(BaseModel):
    """Everything that decides a run's results."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[str]
    lengths: list[int]
    seeds: list[int]
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

    def digest(self) -> str:
        """Of what decides the results (not timeouts, strictness or rate limits)."""
        decisive = self.model_dump_json(exclude={"timeouts", "strict", "rate_limits"})
        return hashlib.sha256(decisive.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Episode:
    task: str
    length: int
    seed: int
    agent: str

    @property
    def episode_id(self) -> str:
        agent = self.agent.replace(":", "-").replace("/", "-")
        return f"{self.task}__{label(self.length)}__s{self.seed}__{agent}"

    def to_dict(self) -> dict[str, Any]:
        return {"episode_id": self.episode_id, "task": self.task, "length": label(self.length),
                "target_tokens": self.length, "seed": self.seed, "agent": self.agent}


def failure_record(episode: Episode, terminal_state: str, exc: BaseException) -> dict[str, Any]:
    """The record of an episode that ended by an exception outside the agent loop: ungraded,
    scoring 0, with the error (class, message, traceback) for diagnosis."""
    return {**episode.to_dict(), "terminal_state": terminal_state, "graded": False,
            "success": False, "reward": 0.0, "checks": [], "metrics": None,
            "error": {"class": type(exc).__name__, "message": str(exc),
                      "traceback": "".join(traceback.format_exception(exc))}}


def plan(config: RunConfig) -> list[Episode]:
    return [Episode(task, length, seed, config.agent)
            for task in config.tasks for length in config.lengths for seed in config.seeds]


class RunDir:
    """The files of one run."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def episode_dir(self, episode: Episode) -> Path:
        return self.root / "episodes" / episode.episode_id

    def result_path(self, episode: Episode) -> Path:
        return self.episode_dir(episode) / "result.json"

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the run directory: one writer at a time (`loca.core.dirlock`)."""
        with hold(self.root, "run directory", RunError):
            yield

    def prepare(self, config: RunConfig, episodes: list[Episode]) -> None:
        """Create the run, or check that an existing one was made by the same command. Either
        way `run.json` lists the sandbox mode of this process among those the run's code ran
        in (`sandbox`; null where code could not run)."""
        run_json = self.root / "run.json"
        manifest = "".join(json.dumps(e.to_dict()) + "\n" for e in episodes)
        mode = recorded_mode()
        if run_json.exists():
            old = json.loads(run_json.read_text(encoding="utf-8"))
            if old.get("config_hash") != config.digest():
                raise RunError(f"{self.root} holds a run with another configuration "
                               f"({old.get('config')}); use another --out")
            if (self.root / "manifest.jsonl").read_text(encoding="utf-8") != manifest:
                raise RunError(f"{self.root}: the plan differs from the stored manifest")
            if mode not in old.setdefault("sandbox", []):
                old["sandbox"].append(mode)
                write_text_atomic(run_json, json.dumps(old, indent=1) + "\n")
            return
        write_text_atomic(self.root / "manifest.jsonl", manifest)
        write_text_atomic(run_json, json.dumps(
            {"config": config.model_dump(), "config_hash": config.digest(), "loca_version": __version__,
             "sandbox": [mode]}, indent=1) + "\n")

    def finished(self, episode: Episode) -> dict[str, Any] | None:
        path = self.result_path(episode)
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    def record(self, result: dict[str, Any]) -> None:
        with open(self.root / "episodes.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(result) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def logged_ids(self) -> set[str]:
        """Episode ids already in `episodes.jsonl`; a last line cut off by a kill is dropped (its
        record is appended again from `result.json`)."""
        path = self.root / "episodes.jsonl"
        if not path.exists():
            return set()
        text = path.read_text(encoding="utf-8")
        if text and not text.endswith("\n"):
            text = text[: text.rfind("\n") + 1]
            write_text_atomic(path, text)
        return {json.loads(line)["episode_id"] for line in text.splitlines()}


def summarize(results: list[dict[str, Any]], planned: int) -> dict[str, Any]:
    """Accuracy counts every planned episode; anything but success scores 0."""
    by_length: dict[str, dict[str, Any]] = defaultdict(lambda: {"episodes": 0, "passed": 0})
    by_task: dict[str, dict[str, Any]] = defaultdict(lambda: {"episodes": 0, "passed": 0})
    for r in results:
        for cell in (by_length[r["length"]], by_task[r["task"]]):
            cell["episodes"] += 1
            cell["passed"] += int(bool(r["success"]))
    for cell in [*by_length.values(), *by_task.values()]:
        cell["accuracy"] = cell["passed"] / cell["episodes"] if cell["episodes"] else 0.0
    passed = sum(int(bool(r["success"])) for r in results)
    deviations = [abs(r["env_description_tokens"] - r["target_tokens"]) / r["target_tokens"]
                  for r in results if r.get("env_description_tokens")]
    return {
        "episodes": planned,
        "finished": len(results),
        "passed": passed,
        "accuracy": passed / planned if planned else 0.0,
        "by_length": dict(sorted(by_length.items(), key=lambda kv: parse_length(kv[0]))),
        "by_task": dict(sorted(by_task.items())),
        "by_terminal_state": dict(sorted(Counter(r["terminal_state"] for r in results).items())),
        "max_length_deviation": max(deviations, default=0.0),
    }


EpisodeFn = Callable[[Episode, Path, RunConfig], dict[str, Any]]


Executor = Literal["local", "ray"]


def execute(config: RunConfig, out: Path, run_episode: EpisodeFn, processes: int = 1,
            on_result: Callable[[dict[str, Any]], None] | None = None,
            executor: Executor = "local", ray_address: str | None = None) -> dict[str, Any]:
    """Run (or resume) the plan; returns the summary, also written to `summary.json`. Episodes
    run in this process, in `processes` worker processes, or as Ray tasks (`executor="ray"`, on
    the cluster at `ray_address`, else on a local Ray instance of `processes` CPUs)."""
    run = RunDir(out)
    with run.lock():
        return _execute(config, run, run_episode, processes, on_result, executor, ray_address)


def _execute(config: RunConfig, run: RunDir, run_episode: EpisodeFn, processes: int,
             on_result: Callable[[dict[str, Any]], None] | None, executor: Executor,
             ray_address: str | None) -> dict[str, Any]:
    episodes = plan(config)
    run.prepare(config, episodes)
    logged = run.logged_ids()
    todo = []
    for episode in episodes:
        done = run.finished(episode)
        if done is None:
            shutil.rmtree(run.episode_dir(episode), ignore_errors=True)  # an interrupted attempt
            todo.append(episode)
        elif episode.episode_id not in logged:
            run.record(done)
    if executor == "ray":
        from loca.ray_executor import ray_results
        finished = ray_results(todo, run, config, run_episode, processes, ray_address)
    else:
        finished = _results(todo, run, config, run_episode, processes)
    for episode, result in finished:
        try:
            text = json.dumps(result, indent=1)
        except (TypeError, ValueError) as exc:  # a record that cannot be stored is a bug
            result = failure_record(episode, "harness_error", exc)
            text = json.dumps(result, indent=1)
        run.episode_dir(episode).mkdir(parents=True, exist_ok=True)
        write_text_atomic(run.result_path(episode), text + "\n")
        run.record(result)
        if on_result:
            on_result(result)
    results = [r for e in episodes if (r := run.finished(e)) is not None]
    summary = summarize(results, len(episodes))
    write_text_atomic(run.root / "summary.json", json.dumps(summary, indent=1) + "\n")
    return summary


def _results(todo: list[Episode], run: RunDir, config: RunConfig, run_episode: EpisodeFn,
             processes: int) -> Iterator[tuple[Episode, dict[str, Any]]]:
    """(episode, record) as episodes finish; an episode function that raises gives a
    `harness_error` record. Cancellation and a lost worker process stop the run (resumable)."""
    if processes <= 1:
        for episode in todo:
            try:
                yield episode, run_episode(episode, run.episode_dir(episode), config)
            except Exception as exc:
                yield episode, failure_record(episode, "harness_error", exc)
        return
    share = config.model_copy(update={"rate_limits": config.rate_limits.split(processes)})
    with ProcessPoolExecutor(max_workers=processes) as pool:
        futures: dict[Future[dict[str, Any]], Episode] = {
            pool.submit(run_episode, e, run.episode_dir(e), share): e for e in todo}
        for future in as_completed(futures):
            episode = futures[future]
            try:
                yield episode, future.result()
            except BrokenProcessPool:
                raise
            except Exception as exc:
                yield episode, failure_record(episode, "harness_error", exc)
