"""The gymnasium environment: API contract, determinism, errors, grading."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import envs  # noqa: F401
from envs.canvas_arrange_exam import CanvasArrangeExamEnv

SMALL = {"params": {"num_courses": 4}}


def test_gymnasium_env_checker_passes():
    env = gym.make("loca/CanvasArrangeExam-v0", length="8k")
    try:
        check_env(env.unwrapped)
    finally:
        env.close()


def test_reset_info_and_determinism(tmp_path):
    env = CanvasArrangeExamEnv()
    try:
        obs, info = env.reset(seed=7, options={**SMALL, "episode_dir": str(tmp_path / "a")})
        assert obs.startswith("Today is Wednesday, January 15, 2025") and obs.endswith("Change nothing else.")
        assert info["terminal_tool"] == "claim_done_claim_done"
        names = [t["name"] for t in info["tools"]]
        assert "canvas_canvas_list_courses" in names and "email_get_emails" in names
        assert info["read_only"]["canvas_canvas_list_courses"] is True
        assert info["env_description_tokens"] > 1000 and info["seed"] == 7
        assert info["tool_count"] == len(names) == 95 and info["tools_tokens"] > 5000
        first_hash = info["world_hash"]
        _, again = env.reset(seed=7, options={**SMALL, "episode_dir": str(tmp_path / "b")})
        assert again["world_hash"] == first_hash
        _, other = env.reset(seed=8, options={**SMALL, "episode_dir": str(tmp_path / "c")})
        assert other["world_hash"] != first_hash
        _, drawn = env.reset(options=SMALL)
        assert isinstance(drawn["seed"], int)
    finally:
        env.close()
        env.close()  # idempotent


def test_step_errors_are_observations_and_claim_grades():
    env = CanvasArrangeExamEnv()
    try:
        env.reset(seed=1, options=SMALL)
        obs, reward, terminated, truncated, info = env.step(
            {"id": "c1", "name": "canvas_canvas_get_course", "arguments": {"course_id": 99999}})
        assert info["is_error"] and obs.startswith("Error [NOT_FOUND]") and not terminated
        obs, *_ = env.step({"id": "c2", "name": "email_get_emails", "arguments": "{not json"})
        assert obs.startswith("Error [INVALID_ARGUMENT]")
        obs, _, _, _, info = env.step({"id": "c3", "name": "nope", "arguments": {}})
        assert info["is_error"] and "unknown tool" in obs
        obs, *_ = env.step({"id": "c4", "name": "email_get_emails", "arguments": '{"page_size": 2}'})
        assert len(json.loads(obs)["emails"]) == 2
        assert env.evaluate().passed is False
        obs, reward, terminated, truncated, info = env.step(
            {"id": "c5", "name": "claim_done_claim_done", "arguments": {}})
        assert terminated and not truncated and reward == 0.0
        assert info["verdict"]["passed"] is False
        assert "row_keys" in [c["name"] for c in info["verdict"]["checks"] if not c["passed"]]
        with pytest.raises(RuntimeError):
            env.step({"id": "c6", "name": "email_get_emails", "arguments": {}})
    finally:
        env.close()


def test_final_text_grades_and_bad_options_are_rejected():
    env = CanvasArrangeExamEnv()
    try:
        env.reset(seed=2, options=SMALL)
        _, reward, terminated, _, info = env.step({"id": "f", "name": "__final__", "arguments": {"text": "done"}})
        assert terminated and reward == 0.0 and "verdict" in info
        with pytest.raises(ValueError):
            env.reset(seed=2, options={"lenght": "8k"})
    finally:
        env.close()
