"""`loca run` as a person sees it: one summary table and where the results are, progress that
shows without a terminal, a dead provider stopping the run with one line and a rerun retrying
it, a run that grows, a changed setting refused naming it, Ctrl-C saying how to resume."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path

import pytest
from rich.console import Console

from envs.core.registry import Task
from loca.cli import main
from loca.run_console import RunConsole, duration, progress_line
from loca.runner import Resume
from tests.fake_llm import FakeLLM, http_error


def _loca(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(args)
    captured = capsys.readouterr()
    return int(exited.value.code or 0), captured.out, captured.err


def _run(task: Task, out: Path, *extra: str) -> list[str]:
    return ["run", "--tasks", task.name, "--lengths", "8k", "--out", str(out), *extra]


def test_the_end_of_a_run_is_one_table_the_totals_what_did_not_pass_and_where(
        any_task: Task, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _loca(_run(any_task, tmp_path / "run", "--seeds", "0-1", "--agent", "noop"), capsys)
    assert code == 0
    assert any(line.split() == [any_task.name, "0/2", "0/2"] for line in out.splitlines()), out
    assert "passed 0/2 (accuracy 0.000)" in out and "not passed: claimed_done 2" in out
    assert f"results in {tmp_path / 'run'}" in out
    assert "failed checks" not in out  # no row per episode
    assert not any(line.split()[:2] == [any_task.name, "8k"] for line in out.splitlines())
    code, verbose, _ = _loca(_run(any_task, tmp_path / "run", "--seeds", "0-1", "--agent", "noop",
                                  "--verbose"), capsys)
    assert code == 0 and "resuming" in verbose and verbose.count("failed checks") == 2
    assert any(line.split()[:3] == [any_task.name, "8k", "s1"] for line in verbose.splitlines()), verbose


def test_a_run_grows_and_a_changed_setting_is_refused_naming_it(
        any_task: Task, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert _loca(_run(any_task, out, "--seeds", "0-1", "--agent", "noop"), capsys)[0] == 0
    code, stdout, _ = _loca(_run(any_task, out, "--seeds", "0-3", "--agent", "noop"), capsys)
    assert code == 0 and "resuming" in stdout and "2 done, 0 to retry, 2 new" in stdout
    ids = [json.loads(line)["episode_id"] for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 4
    code, _, err = _loca(_run(any_task, out, "--seeds", "0-3", "--agent", "noop", "--max-turns", "50",
                              "--strategy", "clear_tool_results"), capsys)
    lines = err.splitlines()
    assert code == 2 and lines[0].startswith("loca: error: ") and "another --out" in lines[0]
    assert lines[2:] == ["  max_turns: 300 → 50", "  strategy: react → clear_tool_results"]
    assert lines[1].startswith("  context.strategies.clear_tool_results: null → {")  # one line, not a key each


@pytest.mark.slow
def test_a_dead_provider_stops_the_run_with_one_line_and_a_rerun_retries(
        any_task: Task, tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_llm: FakeLLM,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    fake_llm.push(*[http_error(404, "The model `fake-model` does not exist.")] * 3)
    args = _run(any_task, tmp_path / "run", "--seeds", "0-4", "--agent", "openai:fake-model",
                "--base-url", fake_llm.base_url)
    code, out, err = _loca(args, capsys)
    assert code == 1 and len(fake_llm.requests) == 3
    assert out.count("llm_error (model_not_found)") == 3
    assert "not passed: llm_error 3 (model_not_found 3), not finished 2" in out
    [line] = err.splitlines()
    assert line.startswith("loca: error: stopped after 3 episodes") and "'fake-model'" in line
    assert "rerun the same command" in line
    fake_llm.push(*[http_error(401, "Incorrect API key provided")] * 3)
    code, out, err = _loca(args, capsys)
    assert code == 1 and "resuming" in out and "0 done, 3 to retry, 2 new" in out
    assert "refused the API key in OPENAI_API_KEY" in err


def test_ctrl_c_says_how_to_resume(any_task: Task, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import loca.runner

    def interrupted(*args: object, on_start, **kwargs: object) -> None:  # type: ignore[no-untyped-def]
        on_start(Resume(fresh=False, done=3, retry=0, new=2))
        raise KeyboardInterrupt

    monkeypatch.setattr(loca.runner, "execute", interrupted)
    code, _, err = _loca(_run(any_task, tmp_path / "run", "--agent", "noop"), capsys)
    assert code == 130
    assert err.strip() == ("interrupted: 3 of 5 episodes done; rerun the same command to resume "
                           "(finished episodes are kept)")


def test_without_a_terminal_progress_is_a_line_every_few_seconds() -> None:
    """Lines with done/planned, rate and time left; none of the bar's control codes."""
    output = io.StringIO()
    console = RunConsole(Console(file=output, force_terminal=False), Path("runs/x"), tick_s=0.01)
    console.start(Resume(fresh=True, done=0, retry=0, new=4))
    seen = threading.Event()
    for _ in range(500):
        if "episodes 0/4 done (0%)" in output.getvalue():
            seen.set()
            break
        seen.wait(0.01)
    console.close()
    assert seen.is_set() and "\x1b" not in output.getvalue()


def test_progress_lines_and_durations() -> None:
    assert progress_line(0, 525, 0, 0.0) == "episodes 0/525 done (0%)"
    assert progress_line(125, 525, 100, 50.0) == "episodes 125/525 done (23%), 2.00/s, about 3m left"
    assert progress_line(4, 10, 1, 20.0) == "episodes 4/10 done (40%), 3.0/min, about 2m left"
    assert [duration(s) for s in (4.2, 59.6, 61, 3600 * 2 + 300)] == ["4s", "1m", "1m", "2h05m"]


def test_version_and_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    from loca import __version__

    code, out, _ = _loca(["--version"], capsys)
    assert code == 0 and out.strip() == f"loca {__version__}"
    code, _, err = _loca(["run", "--tasks", "canvas_list_tst"], capsys)
    assert code == 2 and "did you mean canvas_list_test?" in err
    code, _, err = _loca(["run", "--tasks", "canvas_list_test", "--agent", "mutant:firstpage"], capsys)
    assert code == 2 and "did you mean mutant:first_page?" in err


def test_the_default_run_s_table_fits_80_columns_with_no_name_cut() -> None:
    """Every task at every tier, 5 seeds each: each name whole, each cell whole."""
    from envs.core.registry import tasks
    from loca.core.lengths import TIERS, parse_length
    from loca.run_console import summary_table
    from loca.runner import Episode, EpisodeRecord
    from loca.runner.records import summarize

    planned = [Episode(task, parse_length(tier), seed, "oracle") for task in tasks() for tier in TIERS
               for seed in range(5)]
    records = {e.episode_id: EpisodeRecord.model_validate(
        {**e.to_dict(), "terminal_state": "claimed_done", "success": True}) for e in planned}
    output = io.StringIO()
    Console(file=output, width=80).print(summary_table(summarize(planned, records)))
    lines = output.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines) and "…" not in output.getvalue()
    assert all(any(line.split()[0] == task for line in lines) for task in tasks())
    assert lines[-1].split() == ["all", *["75/75"] * len(TIERS), "525/525"]
