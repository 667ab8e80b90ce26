"""`loca run --strategy / --strategy-config`: scripted agents record the view they would have
been shown, the strategy is part of the run's configuration, bad settings fail before a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from loca.cli import app, main
from scaffolds.ledger import read_trajectory
from tests.test_context_config import documented_strategy_file

runner = CliRunner()
TASK = "canvas_arrange_exam"
SMALL_WINDOW = """\
context:
  max_context_tokens: 24000
  output_reserve: 4000
  strategies:
    clear_tool_results: {trigger: 0.5}
    compaction: {trigger: 0.6, summary_max_tokens: 2000}
"""


ARGS = ["run", "--tasks", TASK, "--lengths", "8k", "--seeds", "0", "--tool-filter", "task"]


def run(*args: str) -> object:
    return runner.invoke(app, [*ARGS, *args])


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The one-line error of a command line that must fail."""
    with pytest.raises(SystemExit) as exit_info:
        main([*ARGS, *args])
    assert exit_info.value.code != 0
    return capsys.readouterr().err


def test_oracle_with_strategies_records_views_and_firings(tmp_path: Path) -> None:
    config = tmp_path / "small.yaml"
    config.write_text(SMALL_WINDOW)
    out = tmp_path / "run"
    result = run("--strategy-config", str(config), "--out", str(out))
    assert result.exit_code == 0, result.output
    (record,) = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert record["success"] and record["strategy"] == "clear_tool_results+compaction"
    metrics = record["metrics"]
    assert metrics["strategy_firings"].get("clear_tool_results", 0) >= 1
    assert metrics["peak_request_tokens"] <= 24000 - 4000 - 512
    assert metrics["peak_request_tokens"] < metrics["trajectory_tokens"]
    assert any(point["fired"] for point in metrics["context_series"])
    trajectory = read_trajectory(out / record["trajectory"])
    assert trajectory.header["client"]["context_blind"] is True
    cleared = [p for p in trajectory.of_type("strategy") if p["name"] == "clear_tool_results"]
    assert cleared and all(p["tokens_after"] < p["tokens_before"] for p in cleared)
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["config"]["strategy"] == "clear_tool_results+compaction"
    assert run_json["config"]["context"]["strategies"]["compaction"]["summary_max_tokens"] == 2000

    resumed = run("--strategy", "react", "--out", str(out))
    assert resumed.exit_code == 2 and "strategy: clear_tool_results+compaction → react" in resumed.output


def test_the_documented_example_carries_the_oracle_through_the_largest_tier(tmp_path: Path) -> None:
    """The context strategies page's `small.yaml` at 256K with every tool exposed: the oracle passes, every request
    fits B, compaction frees tokens and never grows the request."""
    out = tmp_path / "run"
    result = runner.invoke(app, ["run", "--tasks", TASK, "--lengths", "256k", "--seeds", "0",
                                 "--strategy-config", str(documented_strategy_file(tmp_path)),
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    (record,) = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    metrics = record["metrics"]
    assert record["success"] and metrics["peak_request_tokens"] <= 64_000 - 8000 - 1280
    assert metrics["strategy_firings"]["compaction"] >= 1
    assert all(freed > 0 for freed in metrics["tokens_freed"].values())
    trajectory = read_trajectory(out / record["trajectory"])
    compactions = [p for p in trajectory.of_type("strategy") if p["name"] == "compaction"]
    assert all(p["tokens_after"] < p["tokens_before"] for p in compactions
               if p["decision"] == "compact")


def test_oracle_with_memory_sees_the_protocol_and_the_warning(tmp_path: Path) -> None:
    config = tmp_path / "small.yaml"
    config.write_text(SMALL_WINDOW.replace("    compaction: {trigger: 0.6, summary_max_tokens: 2000}\n",
                                           ""))
    out = tmp_path / "run"
    result = run("--agent", "oracle", "--strategy", "memory+clear_tool_results",
                 "--strategy-config", str(config), "--out", str(out))
    assert result.exit_code == 0, result.output
    (record,) = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert record["success"] and record["metrics"]["memory_warnings"] == 1
    trajectory = read_trajectory(out / record["trajectory"])
    task = trajectory.messages[1]
    assert task.origin == "task" and task.text.count("/memories") == 2
    (warning,) = [m for m in trajectory.messages if m.origin == "harness.warning"]
    views = [p["view"] for p in trajectory.of_type("llm_request")]
    assert any(warning.mid in range(run[0], run[1] + 1) for view in views for run in view)
    assert (out / record["trajectory"]).parent.joinpath("memories").is_dir()
    tools = [t["name"] for t in trajectory.of_type("tools")[0]["tools"]]
    assert tools[-6:] == ["memory_view", "memory_create", "memory_str_replace", "memory_insert",
                          "memory_delete", "memory_rename"]


def test_bad_strategy_names_fail_before_the_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for spec, message in [("compaction+compaction", "twice"), ("magic", "unknown strategy"),
                          ("memory+ptc+memory", "twice")]:
        assert message in refused(capsys, "--strategy", spec, "--out", str(tmp_path / "never"))
    assert not (tmp_path / "never").exists()


def test_bad_strategy_files_fail_before_the_run(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    for text, message in [("context: {strategies: {clear_tool_results: {trigger: 3.0}}}\n",
                           "must lie in (0, 1)"),
                          ("context: {strategies: {compaction: {}}}\n", "does not enable"),
                          ("context: {max_context_tokens: 1000}\n", "must be below")]:
        bad.write_text(text)
        args = ["--strategy", "clear_tool_results"] if "does not enable" in message else []
        error = refused(capsys, "--strategy-config", str(bad), *args,
                        "--out", str(tmp_path / "never"))
        assert message in error, (text, error)
    assert not (tmp_path / "never").exists()
