"""Bad command lines and inputs: one clear line on stderr and exit status 2, never a traceback;
nothing is created or changed by a refused command; one writer per run directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from loca.cli import main
from loca.runner import RunConfig, RunDir, RunError, execute


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("loca: error: "), err
    return lines[0]


@pytest.fixture
def not_a_world(tmp_path: Path) -> Path:
    (tmp_path / "world.json").write_text("{broken")
    return tmp_path


BAD = [
    (["check", "{tmp}/missing"], "not a world directory"),
    (["check", "{world}"], "not a valid world.json"),
    (["serve", "--world", "{world}"], "not a valid world.json"),
    (["serve", "--world", "{tmp}"], "not a world directory"),
    (["serve", "--port", "70000"], "--port"),
    (["serve", "--transport", "carrier-pigeon"], "transport"),
    (["serve", "--world", "{tmp}", "--transport", "http", "--host", "0.0.0.0"], "--allow-remote"),
    (["serve", "--world", "{tmp}", "--transport", "http", "--allow-remote", "*"], "host names"),
    (["run", "--lengths", ""], "no lengths"),
    (["run", "--lengths", "8000000k"], "out of range"),
    (["run", "--lengths", "eight"], "bad length"),
    (["run", "--seeds", "-5"], "non-negative"),
    (["run", "--seeds", "0-100000000"], "too many seeds"),
    (["run", "--seeds", "4-2"], "first seed"),
    (["run", "--agent", "bogus"], "unknown agent"),
    (["run", "--agent", "openai:"], "unknown agent"),
    (["run", "--tasks", "nope"], "unknown task"),
    (["run", "--tasks", ","], "no tasks"),
    (["run", "--out", "{file}", "--lengths", "8k", "--seeds", "0"], "is a file"),
    (["run", "--processes", "x"], "--processes"),
    (["run", "--tool-filter", "most"], "tool_filter"),
    (["run", "--keep-worlds", "some"], "keep_worlds"),
    (["run", "--trials", "0"], "--trials"),
    (["run", "--stop-after-errors", "-1"], "--stop-after-errors"),
    (["run", "--seeds", "x"], "bad seeds"),
    (["run", "--connect-timeout", "0"], "connect_s"),
    (["run", "--response-timeout", "-1"], "response_s"),
    (["validate", "nope"], "unknown task"),
    (["agents", "nope"], "unknown task"),
    (["generate", "nope", "--out", "{tmp}/w"], "unknown task"),
    (["calibrate", "nope"], "unknown task"),
    (["tasks", "extra"], "unexpected extra argument"),
    (["no-such-command"], "No such command"),
]


@pytest.mark.parametrize("argv,says", BAD)
def test_bad_input_is_one_line_and_exit_status_2(argv: list[str], says: str, tmp_path: Path,
                                                  not_a_world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    before = sorted(p.name for p in tmp_path.iterdir())
    argv = [a.format(tmp=tmp_path / "empty", world=not_a_world, file=a_file) for a in argv]
    (tmp_path / "empty").mkdir()
    line = _fails(argv, capsys)
    assert says.lower() in line.lower(), line
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "empty") == before
    assert not list((tmp_path / "empty").iterdir())  # a refused serve created no state.sqlite
    assert not_a_world.joinpath("world.json").read_text() == "{broken"


@pytest.mark.parametrize(("agent", "key_env"), [
    ("openai:some-model", "OPENAI_API_KEY"), ("anthropic:claude-some-model", "ANTHROPIC_API_KEY"),
    ("profile:deepseek-chat", "DEEPSEEK_API_KEY")])
def test_an_llm_agent_needs_its_api_key_before_the_run_starts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        agent: str, key_env: str) -> None:
    monkeypatch.delenv(key_env, raising=False)
    line = _fails(["run", "--agent", agent, "--out", str(tmp_path / "run")], capsys)
    assert key_env in line and not (tmp_path / "run").exists()


def test_an_unknown_profile_is_refused_before_the_run_starts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _fails(["run", "--agent", "profile:no-such-model", "--out", str(tmp_path / "run")],
                  capsys)
    assert "unknown model profile 'no-such-model'" in line and not (tmp_path / "run").exists()


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="not a world directory"):
        main(["check", str(tmp_path), "--debug"])


def test_a_second_writer_of_a_run_directory_is_refused(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    with run.lock(), pytest.raises(RunError, match=f"in use by pid {os.getpid()}"):
        execute(RunConfig(tasks=["x"], lengths=[8000], seeds=[0], agent="noop"), run.root,
                lambda *a: {})
    with run.lock():  # released when the first writer is done
        pass
