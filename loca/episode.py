"""One episode of a run: the task's env, the agent's model client, the agent loop, one record.

Everything from the start of an episode to its record is guarded: an env that cannot be made is
`env_setup_error`, a model client that cannot be made is `llm_error`, anything else unexpected is
`harness_error`; the error goes into the record and the run goes on."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import gymnasium as gym

import envs  # noqa: F401  (registers the gymnasium ids)
from envs.core.registry import Task, get_task
from loca.records import Episode, EpisodeRecord
from loca.runner import KeepWorlds, RunConfig, failure_record
from mock_servers.sandbox import recorded_mode
from scaffolds.clients import (
    LLM_AGENTS,
    RateLimits,
    ScriptedClient,
    Timeouts,
    client_from_agent_string,
    is_llm_agent,
)
from scaffolds.clients.base import ModelClient
from scaffolds.loop import AgentLoop
from scaffolds.oracles import agents

RECORDED_WORLD_KEYS = ("env_description_tokens", "builds", "params", "tool_count", "tools_tokens",
                       "world_hash")
"""What a record keeps of the world the env described (`envs.core.api.WORLD_INFO_KEYS`); the
rest is the planned episode's own or stays in the trajectory's header."""


def make_client(agent: str, task: Task, base_url: str | None = None,
                timeouts: Timeouts | None = None, rate_limits: RateLimits | None = None) -> ModelClient:
    """`oracle`, `noop`, `mutant:NAME` (scripted), or an LLM agent (`openai:MODEL`,
    `anthropic:MODEL`, `profile:ID`)."""
    if is_llm_agent(agent):
        return client_from_agent_string(agent, base_url=base_url, timeouts=timeouts,
                                        rate_limits=rate_limits)
    scripted = agents(task.name)
    if agent not in scripted.names():
        raise ValueError(f"unknown agent {agent!r} for {task.name}; "
                         f"scripted agents: {', '.join(scripted.names())}; LLM agents: {LLM_AGENTS}")
    return ScriptedClient.from_script(scripted.script(agent))


async def play(episode: Episode, episode_dir: Path, config: RunConfig) -> EpisodeRecord:
    task = get_task(episode.task)
    try:  # the env holds nothing until it is reset, so a failure below needs no clean-up
        env = gym.make(task.spec.env_id, length=episode.length, naming=config.naming,
                       tool_filter=config.tool_filter).unwrapped
    except Exception as exc:
        return failure_record(episode, "env_setup_error", exc)
    try:
        client = make_client(episode.agent, task, config.base_url, config.timeouts, config.rate_limits)
    except Exception as exc:
        return failure_record(episode, "llm_error", exc)
    try:
        result = await AgentLoop(env, client, config.agent_config(),
                                 context_blind=config.scripted).run(
            episode.seed, {"length": episode.length, "episode_dir": str(episode_dir / "world")},
            episode_dir)
    finally:
        close = getattr(client, "aclose", None)
        if close is not None:
            await close()
    verdict = result.verdict or result.diagnostic or {}
    world = {key: result.env.get(key) for key in RECORDED_WORLD_KEYS}
    return EpisodeRecord.model_validate({
        **episode.to_dict(), **world,
        "strategy": config.strategy, "sandbox": recorded_mode(),
        "terminal_state": result.terminal_state, "graded": result.graded,
        "success": result.success, "reward": result.reward,
        "checks": verdict.get("checks", []), "metrics": result.metrics, "error": result.error,
        "world_dir": str(Path("episodes") / episode.episode_id / "world"),
        "trajectory": str(Path("episodes") / episode.episode_id / "trajectory.jsonl"),
    })


def run_episode(episode: Episode, episode_dir: Path, config: RunConfig) -> EpisodeRecord:
    """Synchronous entry point (also used in worker processes); only cancellation raises. The
    final world stays in the episode's folder as `config.keep_worlds` says."""
    try:
        episode_dir.mkdir(parents=True, exist_ok=True)
        record = asyncio.run(play(episode, episode_dir, config))
    except Exception as exc:
        record = failure_record(episode, "harness_error", exc)
    return keep_world(record, episode_dir, config.keep_worlds)


def keep_world(record: EpisodeRecord, episode_dir: Path, keep: KeepWorlds) -> EpisodeRecord:
    """`record`, its world folder removed (and `world_dir` null) unless `keep` says it stays:
    `all`, or `failed` for an episode that did not pass."""
    if keep == "all" or (keep == "failed" and not record.success):
        return record
    shutil.rmtree(episode_dir / "world", ignore_errors=True)
    return record.model_copy(update={"world_dir": None})
