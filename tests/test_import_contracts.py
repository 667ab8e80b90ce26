"""The import contracts hold the layers of the whole tree: an upward import anywhere, a task
importing another task, or a module of loca, the servers or the scaffolds placed in no layer
breaks them. Each case edits a copy of the packages and runs lint-imports on it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # lint-imports on a copy of the tree, once per case

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("loca", "envs", "mock_servers", "generators", "checkers", "scaffolds")
TASKS = "Tasks are independent of each other: "  # the independence contracts' names
_VERDICT = re.compile(r"^(.+) (KEPT|BROKEN)(?: \(\d+ ignored imports?\))?$", re.MULTILINE)
_LINT = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the packages' modules and of the contracts."""
    root = tmp_path_factory.mktemp("tree")
    for package in PACKAGES:
        shutil.copytree(REPO / package, root / package, ignore=_not_python)
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def _not_python(folder: str, names: list[str]) -> set[str]:
    return {name for name in names if not (name.endswith(".py") or (Path(folder) / name).is_dir())
            or name == "__pycache__"}


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "500"}  # one line per contract
    return subprocess.run([sys.executable, "-c", _LINT, "--no-cache", "--config", "pyproject.toml"], cwd=root,
                          env=env, capture_output=True, text=True, timeout=120)


def _broken(report: str) -> list[str]:
    """The names of the contracts the report says are broken."""
    return [found[1] for found in _VERDICT.finditer(report) if found[2] == "BROKEN"]


def test_the_copied_tree_keeps_every_contract(tree: Path) -> None:
    result = _lint(tree)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout and not _broken(result.stdout)


@pytest.mark.parametrize(("module", "line", "contract"), [
    ("loca/core/clock.py", "import loca.view", "Layers of the whole tree"),
    ("loca/core/tokens.py", "from loca import cli", "Layers of the whole tree"),
    ("mock_servers/core/errors.py", "import loca.report", "Layers of the whole tree"),
    ("mock_servers/pdf_tools/search.py", "import envs.core.env", "Layers of the whole tree"),
    ("checkers/kit.py", "import scaffolds.loop", "Layers of the whole tree"),
    ("envs/core/build.py", "import loca.runner", "Layers of the whole tree"),
    ("mock_servers/email/__init__.py", "import mock_servers.canvas", "Layers of the servers"),
    ("mock_servers/core/db.py", "import mock_servers.gateway", "Layers of the servers"),
    ("scaffolds/messages.py", "import scaffolds.loop", "Layers of the scaffolds"),
    ("generators/ab_testing/plan.py", "import generators.academic_warning", TASKS + "generators"),
    ("checkers/ab_testing.py", "import checkers.academic_warning", TASKS + "checkers"),
    ("scaffolds/oracles/ab_testing.py", "import scaffolds.oracles.academic_warning", TASKS + "scripted agents"),
])
def test_an_import_against_the_layers_breaks_a_contract(tree: Path, module: str, line: str, contract: str) -> None:
    path = tree / module
    original = path.read_text(encoding="utf-8")
    path.write_text(f"{original}\n{line}\n", encoding="utf-8")
    try:
        result = _lint(tree)
    finally:
        path.write_text(original, encoding="utf-8")
    assert result.returncode == 1, result.stdout[-2000:]
    assert any(name.startswith(contract) for name in _broken(result.stdout)), result.stdout[-3000:]


@pytest.mark.parametrize("module", ["loca/newcomer.py", "mock_servers/newcomer.py", "scaffolds/newcomer.py"])
def test_a_module_in_no_layer_breaks_a_contract(tree: Path, module: str) -> None:
    path = tree / module
    path.write_text('"""A module nobody placed."""\n', encoding="utf-8")
    try:
        result = _lint(tree)
    finally:
        path.unlink()
    assert result.returncode == 1 and _broken(result.stdout)
    assert f"- {module.removesuffix('.py').replace('/', '.')}" in result.stdout
