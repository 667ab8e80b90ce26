"""The command line: tasks, agents, generate, check (exit codes grade external agents)."""

from __future__ import annotations

import asyncio
import json

from typer.testing import CliRunner

from envs.canvas_arrange_exam import TASK
from loca.cli import app
from loca.core.world import World
from loca.validate import play_script

runner = CliRunner()


def test_tasks_and_agents():
    result = runner.invoke(app, ["tasks"])
    assert result.exit_code == 0 and "canvas_arrange_exam" in result.output
    result = runner.invoke(app, ["agents", "canvas_arrange_exam"])
    names = result.output.split()
    assert result.exit_code == 0 and names[:2] == ["noop", "oracle"]
    assert "mutant:first_page" in names and len(names) == 10
    assert runner.invoke(app, ["agents", "no_such_task"]).exit_code != 0


def test_generate_then_check_fails_until_solved(tmp_path):
    world_dir = tmp_path / "world"
    result = runner.invoke(app, ["generate", "canvas_arrange_exam", "--length", "8k", "--seed", "4",
                                 "--out", str(world_dir)])
    assert result.exit_code == 0, result.output
    world = World.load(world_dir)
    assert abs(world.meta.env_description_tokens - 8000) <= 400
    assert (world_dir / "instruction.txt").read_text().startswith("Today is")

    unsolved = runner.invoke(app, ["check", str(world_dir)])
    assert unsolved.exit_code == 1
    verdict = json.loads(unsolved.stdout)
    assert verdict["passed"] is False and "row_keys" in [c["name"] for c in verdict["checks"] if not c["passed"]]

    assert asyncio.run(play_script(TASK, world, "oracle")) == ()
    solved = runner.invoke(app, ["check", str(world_dir)])
    assert solved.exit_code == 0 and json.loads(solved.stdout)["passed"] is True


def test_validate_prints_the_matrix_and_exits_zero():
    result = runner.invoke(app, ["validate", "canvas_arrange_exam", "--lengths", "8k", "--seeds", "1"])
    assert result.exit_code == 0, result.output
    assert "mutant:stale_correction" in result.output and "fail values" in result.output


def test_serve_refuses_remote_bind_without_flag(tmp_path):
    result = runner.invoke(app, ["serve", "--world", str(tmp_path), "--transport", "http", "--host", "0.0.0.0"])
    assert result.exit_code != 0
