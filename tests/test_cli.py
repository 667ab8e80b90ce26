"""The command line: tasks, agents, generate, check (exit codes grade external agents), validate."""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

from envs.core.registry import Task, tasks
from loca.adversary import generic_agents
from loca.cli import app, main
from loca.core.world import World
from loca.validate import play_script
from scaffolds.oracles import agents

runner = CliRunner()


def test_tasks_lists_every_task_with_its_tool_counts() -> None:
    result = runner.invoke(app, ["tasks"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert len(lines) == 1 + len(tasks()) + 2 and lines[-2] == ""
    assert lines[-1].startswith("lengths: default 8k,") and "long (opt-in) 512k,1m,2m" in lines[-1]
    for task, line in zip(tasks().values(), lines[1:-2], strict=True):
        name, env_id, counts, scale, first_last, count, servers = line.split()
        assert (name, env_id, scale, servers) == (task.name, task.spec.env_id, task.spec.scale.primary,
                                                  ",".join(task.spec.servers))
        assert counts.endswith(f"/{len(task.spec.tools)}")
        assert (first_last, count) == ("8k..2m", "(10)")


def test_agents(any_task: Task) -> None:
    result = runner.invoke(app, ["agents", any_task.name])
    lines = result.output.splitlines()
    assert result.exit_code == 0 and lines[0] == "oracle"
    names = [line.split("\t")[0] for line in lines]
    assert names == agents(any_task.name).names() + [g.agent for g in generic_agents(any_task)]
    assert "generic:side:files:move\tmust fail no_side_effects: moves a workspace input file into a folder" in lines
    assert runner.invoke(app, ["agents", "no_such_task"]).exit_code != 0


def _loca(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The exit status and standard output of the `loca` entry point itself."""
    with pytest.raises(SystemExit) as exited:
        main(args)
    return exited.value.code, capsys.readouterr().out


def test_generate_then_check_fails_until_solved(any_task: Task, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    world_dir = tmp_path / "world"
    result = runner.invoke(app, ["generate", any_task.name, "--length", "8k", "--seed", "4",
                                 "--out", str(world_dir)])
    assert result.exit_code == 0, result.output
    world = World.load(world_dir)
    assert abs(world.meta.env_description_tokens - 8000) <= 400
    assert (world_dir / "instruction.txt").read_text().strip() == any_task.spec.instruction(world)

    code, out = _loca(["check", str(world_dir)], capsys)
    assert code == 1
    verdict = json.loads(out)
    must = agents(any_task.name).must_fail("noop")
    assert verdict["passed"] is False and must in [c["name"] for c in verdict["checks"] if not c["passed"]]

    assert asyncio.run(play_script(any_task, world, "oracle")).passed
    code, out = _loca(["check", str(world_dir)], capsys)
    assert code == 0 and json.loads(out)["passed"] is True


def test_validate_prints_the_matrix_and_exits_zero(any_task: Task) -> None:
    result = runner.invoke(app, ["validate", any_task.name, "--lengths", "8k", "--seeds", "1"],
                           terminal_width=200)
    assert result.exit_code == 0, result.output
    scripted = agents(any_task.name)
    assert "validator" in result.output and "= ground truth" in result.output
    for name in scripted.names():
        assert name in result.output


@pytest.mark.slow
def test_validate_several_tasks_in_worker_processes() -> None:
    """Tasks joined by commas run in spawned workers: each task's matrix, then one summary."""
    two = sorted(tasks())[:2]
    result = runner.invoke(app, ["validate", ",".join(two), "--lengths", "8k", "--seeds", "1",
                                 "--processes", "2"], terminal_width=200)
    assert result.exit_code == 0, result.output
    for name in two:
        assert f"{name}: checker validation" in result.output
    assert "2 task(s), 2 worlds" in result.output
    summary = result.output[result.output.rindex("checker validation"):]
    assert all(name in summary for name in two)


@pytest.fixture
def nothing_confines(monkeypatch):
    """A machine where neither bubblewrap nor Landlock works."""
    from mock_servers.sandbox import mode

    # Set (the command sets the second), so that the test's end restores them as they were.
    monkeypatch.setenv(mode.ENV_MODE, "auto")
    monkeypatch.setenv(mode.ENV_ALLOW_UNCONFINED, "0")
    monkeypatch.setattr(mode, "strong_problem", lambda: "no bubblewrap here")
    monkeypatch.setattr(mode, "landlock_problem", lambda: "no Landlock here")


def test_run_refuses_to_run_code_unconfined_unless_asked(nothing_confines, any_task: Task, tmp_path) -> None:
    args = ["run", "--tasks", any_task.name, "--lengths", "8k", "--seeds", "0", "--agent", "noop"]
    refused = runner.invoke(app, [*args, "--out", str(tmp_path / "refused")])
    assert refused.exit_code == 2 and not (tmp_path / "refused").exists()
    assert "no confinement for code is available here" in refused.output
    assert "--allow-unconfined-sandbox" in refused.output
    assert runner.invoke(app, ["validate", any_task.name, "--lengths", "8k", "--seeds", "0"]).exit_code == 2
    allowed = runner.invoke(app, [*args, "--out", str(tmp_path / "run"), "--allow-unconfined-sandbox"])
    assert allowed.exit_code == 0, allowed.output
    assert "sandbox: UNCONFINED (explicitly requested" in allowed.output
    assert json.loads((tmp_path / "run" / "run.json").read_text())["sandbox"] == ["unconfined"]
    (record,) = [json.loads(line) for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()]
    assert record["sandbox"] == "unconfined"


def test_run_prints_the_sandbox_mode_once(any_task: Task, tmp_path) -> None:
    from mock_servers.sandbox import recorded_mode

    mode = recorded_mode()
    if mode is None:
        pytest.skip("no confinement here")
    result = runner.invoke(app, ["run", "--tasks", any_task.name, "--lengths", "8k", "--seeds", "0",
                                 "--agent", "noop", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0 and result.output.count("sandbox: ") == 1
    assert f"sandbox: {mode} (" in result.output


def test_serve_refuses_remote_bind_without_flag(tmp_path) -> None:
    result = runner.invoke(app, ["serve", "--world", str(tmp_path), "--transport", "http", "--host", "0.0.0.0"])
    assert result.exit_code != 0
