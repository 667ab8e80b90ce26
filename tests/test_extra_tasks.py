"""Extra tasks (the toy task of these tests): found by name, in child processes too through
`LOCA_EXTRA_TASKS`, never listed with the shipped tasks; a package without a task or with a
taken name is refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from envs.core.extra import EXTRA_TASKS_ENV, task_module
from envs.core.registry import get_task, register_task, tasks
from loca.cli import _task_names
from tests.acceptance.conftest import TASK_NAMES

ROOT = Path(__file__).resolve().parents[1]


def test_an_extra_task_is_found_by_name_but_never_listed() -> None:
    toy = get_task("toy")
    assert toy.package == "tests.toy" and register_task("tests.toy") is toy
    assert toy.generator.__name__ == "tests.toy.generator" and toy.generator_dir == ROOT / "tests/toy/generator"
    assert task_module("toy", "agents") == "tests.toy.agents"
    assert task_module("ab_testing", "agents") == "scaffolds.oracles.ab_testing"
    assert "toy" not in tasks() and "toy" not in _task_names("all") and "toy" not in TASK_NAMES


@pytest.mark.parametrize("source, message", [
    ("", "declares no TASK"),
    ("from tests.toy import TASK", "the name of tests.toy"),
    ("import dataclasses\nfrom tests.toy import TASK as TOY\nTASK = dataclasses.replace(TOY, name='ab_testing')",
     "the name of a shipped task"),
])
def test_a_package_without_a_task_or_with_a_taken_name_is_refused(
        source: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "extra_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(source + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=message):
        register_task("extra_pkg")
    sys.modules.pop("extra_pkg", None)
    assert get_task("toy").package == "tests.toy" and "ab_testing" in tasks()


def _agents_in_child(extra: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != EXTRA_TASKS_ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    if extra is not None:
        env[EXTRA_TASKS_ENV] = extra
    return subprocess.run([sys.executable, "-m", "loca", "agents", "toy"], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_child_processes_see_the_extra_tasks_of_their_environment() -> None:
    seen = _agents_in_child("tests.toy")
    assert seen.returncode == 0 and seen.stdout.splitlines()[0] == "oracle", seen.stderr
    unseen = _agents_in_child(None)
    assert unseen.returncode != 0 and "unknown task 'toy'" in unseen.stderr + unseen.stdout
