"""The gymnasium environment: API contract, determinism, tool filters, errors, grading."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import envs  # noqa: F401  (registers the gym ids)
from envs.core.api import WORLD_INFO_KEYS
from envs.core.env import LocaEnv
from envs.core.registry import Task
from mock_servers.catalog import load
from scaffolds.oracles import agents
from tests.conftest import small_params


def _small(task: Task) -> dict:
    return {"params": small_params(task)}


def test_gymnasium_env_checker_passes(any_task: Task) -> None:
    env = gym.make(any_task.spec.env_id, length="8k")
    try:
        check_env(env.unwrapped)
    finally:
        env.close()


def test_reset_info_and_determinism(any_task: Task, tmp_path) -> None:
    env = LocaEnv(any_task.name)
    catalog = load()
    try:
        obs, info = env.reset(seed=7, options={**_small(any_task), "episode_dir": str(tmp_path / "a")})
        assert obs == any_task.spec.instruction(env.world) and obs.endswith("Change nothing else.")
        assert info["terminal_tool"] == "claim_done_claim_done" and info["task"] == any_task.name
        expected = {f"{key}_{tool}": info_["rw"] == "read" for key, server in any_task.spec.servers.items()
                    for tool, info_ in catalog[server].items()}
        assert info["read_only"] == expected and info["tool_count"] == len(expected)
        assert [t["name"] for t in info["tools"]] == sorted(expected) and info["tools_tokens"] > 1000
        assert info["env_description_tokens"] > 100 and info["seed"] == 7
        assert set(WORLD_INFO_KEYS) <= set(info)  # what the agent loop records of the world
        first_hash = info["world_hash"]
        _, again = env.reset(seed=7, options={**_small(any_task), "episode_dir": str(tmp_path / "b")})
        assert again["world_hash"] == first_hash
        _, other = env.reset(seed=8, options={**_small(any_task), "episode_dir": str(tmp_path / "c")})
        assert other["world_hash"] != first_hash
        _, drawn = env.reset(options=_small(any_task))
        assert isinstance(drawn["seed"], int)
    finally:
        env.close()
        env.close()  # idempotent


@pytest.mark.parametrize("tool_filter", ["core", "task"])
def test_tool_filters(any_task: Task, tool_filter: str) -> None:
    env = LocaEnv(any_task.name, tool_filter=tool_filter)  # type: ignore[arg-type]
    catalog = load()
    try:
        _, info = env.reset(seed=0, options=_small(any_task))
        exposed = {tuple(v) for v in info["name_map"].values()}
        if tool_filter == "task":
            assert exposed == set(any_task.spec.tools)
        else:
            assert exposed == {(key, tool) for key, server in any_task.spec.servers.items()
                               for tool, i in catalog[server].items() if i["core"]}
        assert ("claim_done", "claim_done") in exposed
    finally:
        env.close()


def test_step_errors_are_observations_and_claim_grades(any_task: Task) -> None:
    env = LocaEnv(any_task.name)
    try:
        _, info = env.reset(seed=1, options=_small(any_task))
        read_tool = next(t["name"] for t in info["tools"] if info["read_only"][t["name"]])
        obs, reward, terminated, _, step_info = env.step({"id": "c1", "name": "nope", "arguments": {}})
        assert step_info["is_error"] and "unknown tool" in obs and not terminated
        obs, *_ = env.step({"id": "c2", "name": read_tool, "arguments": "{not json"})
        assert obs.startswith("Error [INVALID_ARGUMENT]")
        obs, *_ = env.step({"id": "c3", "name": read_tool, "arguments": {"no_such_parameter": 1}})
        assert obs.startswith(f"Error [INVALID_ARGUMENT]: {info['name_map'][read_tool][1]}")
        assert env.evaluate().passed is False
        obs, reward, terminated, truncated, step_info = env.step(
            {"id": "c4", "name": "claim_done_claim_done", "arguments": {}})
        assert terminated and not truncated and reward == 0.0
        assert step_info["verdict"]["passed"] is False
        must = agents(any_task.name).must_fail("noop")
        assert must in [c["name"] for c in step_info["verdict"]["checks"] if not c["passed"]]
        with pytest.raises(RuntimeError):
            env.step({"id": "c5", "name": read_tool, "arguments": {}})
    finally:
        env.close()


def test_final_text_grades_and_bad_options_are_rejected(any_task: Task) -> None:
    env = LocaEnv(any_task.name)
    try:
        env.reset(seed=2, options=_small(any_task))
        _, reward, terminated, _, info = env.step({"id": "f", "name": "__final__", "arguments": {"text": "done"}})
        assert terminated and reward == 0.0 and "verdict" in info
        with pytest.raises(ValueError):
            env.reset(seed=2, options={"lenght": "8k"})
    finally:
        env.close()
