"""One episode of a run: the task's env, the agent's model client, the agent loop, one record."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import gymnasium as gym

import envs  # noqa: F401  (registers the gymnasium ids)
from envs.core.registry import Task, get_task
from loca.runner import Episode, RunConfig
from scaffolds.clients import ScriptedClient, client_from_agent_string
from scaffolds.clients.base import ModelClient
from scaffolds.config import AgentConfig, Limits
from scaffolds.loop import AgentLoop
from scaffolds.oracles import agents


def make_client(agent: str, task: Task, base_url: str | None = None) -> ModelClient:
    """`oracle`, `noop`, `mutant:NAME` (scripted) or `openai:MODEL`."""
    if agent.startswith("openai:"):
        return client_from_agent_string(agent, base_url=base_url)
    scripted = agents(task.name)
    if agent not in scripted.names():
        raise ValueError(f"unknown agent {agent!r} for {task.name}; "
                         f"scripted agents: {', '.join(scripted.names())}; LLM agents: openai:MODEL")
    return ScriptedClient.from_script(scripted.script(agent))


async def play(episode: Episode, episode_dir: Path, config: RunConfig) -> dict[str, Any]:
    task = get_task(episode.task)
    env = gym.make(task.spec.env_id, length=episode.length, naming=config.naming,
                   tool_filter=config.tool_filter).unwrapped
    client = make_client(episode.agent, task, config.base_url)
    agent_config = AgentConfig(limits=Limits(max_turns=config.max_turns,
                                             max_tool_calls=config.max_tool_calls))
    try:
        result = await AgentLoop(env, client, agent_config).run(
            episode.seed, {"length": episode.length, "episode_dir": str(episode_dir / "world")},
            episode_dir)
    finally:
        close = getattr(client, "aclose", None)
        if close is not None:
            await close()
    verdict = result.verdict or result.diagnostic or {}
    return {
        **episode.to_dict(),
        "terminal_state": result.terminal_state,
        "graded": result.graded,
        "success": result.success,
        "reward": result.reward,
        "env_description_tokens": result.env.get("env_description_tokens"),
        "params": result.env.get("params"),
        "tool_count": result.env.get("tool_count"),
        "tools_tokens": result.env.get("tools_tokens"),
        "world_hash": result.env.get("world_hash"),
        "checks": verdict.get("checks", []),
        "metrics": result.metrics.model_dump(mode="json"),
        "error": result.error.model_dump(mode="json", by_alias=True) if result.error else None,
        "world_dir": str(Path("episodes") / episode.episode_id / "world"),
        "trajectory": str(Path("episodes") / episode.episode_id / "trajectory.jsonl"),
    }


def run_episode(episode: Episode, episode_dir: Path, config: RunConfig) -> dict[str, Any]:
    """Synchronous entry point (also used in worker processes)."""
    episode_dir.mkdir(parents=True, exist_ok=True)
    return asyncio.run(play(episode, episode_dir, config))
