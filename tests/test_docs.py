"""The README and the docs pages are run: every `console` block's commands with their output, every
`pycon` block as a doctest and every `python` block as code, page by page in a scratch folder
(a page's blocks share it, in order, so a later block may read what an earlier one wrote). A
block right after `<!-- file: NAME -->` is written to that file instead. Expected output may say
`...` for a line's rest or, on a line of its own, for any number of lines. A page that says
`<!-- docs-test: slow -->` is slow. The site itself must build with `mkdocs build --strict`."""

from __future__ import annotations

import doctest
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from loca.cli import main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"(?:<!-- file: (?P<file>[\w.-]+) -->\n|<!-- not run: (?P<not_run>[^\n]+?) -->\n)?"
                   r"```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.DOTALL | re.MULTILINE)
"""A fenced block, with the file it is written to first, or why it is not run (a live model or a
server that blocks); `console`, `pycon` and `python` blocks run otherwise."""
RUN = {"console", "pycon", "python"}
COMMAND_SECONDS = 600


@dataclass(frozen=True)
class Block:
    lang: str
    body: str
    file: str | None
    line: int


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    return [Block(m["lang"], m["body"], m["file"], text.count("\n", 0, m.start()) + 1)
            for m in FENCE.finditer(text) if not m["not_run"] and (m["file"] or m["lang"] in RUN)]


def pages() -> list[object]:
    return [pytest.param(page, id=str(page.relative_to(ROOT)),
                         marks=[pytest.mark.slow] if "<!-- docs-test: slow -->" in page.read_text() else [])
            for page in PAGES if blocks(page)]


def matches(expected: str, got: str) -> bool:
    """Whether `got` is `expected`, where `...` on a line of its own stands for any lines and at
    the end of a line for the rest of it (trailing spaces ignored)."""
    pattern = []
    for line in expected.rstrip("\n").split("\n"):
        if line.strip() == "...":
            pattern.append(r"(?:.*\n)*?")
        else:
            parts = [re.escape(part) for part in line.rstrip().split("...")]
            pattern.append("[^\n]*".join(parts) + r"[ \t]*\n")
    got_lines = "\n".join(line.rstrip() for line in got.rstrip("\n").split("\n")) + "\n"
    return re.fullmatch("".join(pattern), got_lines) is not None


def commands(body: str) -> list[tuple[str, str]]:
    """A console block's (command, expected output) pairs; `\\` continues a command."""
    found: list[tuple[str, str]] = []
    lines = body.split("\n")
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            raise ValueError(f"console block: output before any command: {lines[i]!r}")
        command = lines[i][2:]
        while command.endswith("\\"):
            i += 1
            command = command[:-1] + lines[i].strip()
        i += 1
        start = i
        while i < len(lines) and not lines[i].startswith("$ "):
            i += 1
        found.append((command, "\n".join(lines[start:i])))
    return found


def shim(folder: Path) -> dict[str, str]:
    """The environment a page's commands run in: `loca` and `python` are this interpreter's."""
    bin_dir = folder / ".bin"
    bin_dir.mkdir()
    for name, command in (("loca", "-m loca "), ("python", "")):
        (bin_dir / name).write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {command}"$@"\n')
        (bin_dir / name).chmod(0o755)
    pythonpath = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": pythonpath,
            "COLUMNS": "80", "TERM": "dumb", "NO_COLOR": "1"}


def run_console(block: Block, cwd: Path, env: dict[str, str], where: str) -> None:
    for command, expected in commands(block.body.rstrip("\n")):
        done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=COMMAND_SECONDS)
        got = done.stdout
        assert matches(expected, got), f"{where}: `{command}` printed\n{got}\nexpected\n{expected}"


def run_python(block: Block, cwd: Path, namespace: dict[str, object], where: str) -> None:
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        if block.lang == "pycon":
            test = doctest.DocTestParser().get_doctest(block.body, namespace, where, where, block.line)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            runner.run(test, clear_globs=False)
            namespace.update(test.globs)  # the test ran on a copy; later blocks see its names
            assert runner.failures == 0, f"{where}: the example's output differs (printed above)"
        else:
            exec(compile(block.body, where, "exec"), namespace)
    finally:
        os.chdir(previous)


@pytest.mark.parametrize("page", pages())
def test_the_examples_of_a_page_run_as_shown(page: Path, tmp_path: Path) -> None:
    env = shim(tmp_path)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for block in blocks(page):
        where = f"{page.relative_to(ROOT)}:{block.line}"
        if block.file:
            (tmp_path / block.file).write_text(block.body, encoding="utf-8")
        elif block.lang == "console":
            run_console(block, tmp_path, env, where)
        else:
            run_python(block, tmp_path, namespace, where)


def test_docs_without_mkdocs_says_what_to_install(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mkdocs" else real(name, *a))
    with pytest.raises(SystemExit) as exit_:
        main(["docs"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == "loca: error: mkdocs is not installed: pip install -e '.[docs]'\n"


def test_expected_output_matching() -> None:
    assert matches("a\n...\nz", "a\nb\nc\nz\n") and matches("a\n...\nz", "a\nz")
    assert matches("took ... s", "took 1.2 s  \n") and not matches("took ... s", "took 1.2 min")
    assert not matches("a\nz", "a\nb\nz") and not matches("a", "a\nb")
    assert commands("$ loca x \\\n    --y 1\nout\n$ loca z") == [("loca x --y 1", "out"), ("loca z", "")]
    with pytest.raises(ValueError, match="output before any command"):
        commands("out\n$ loca z")


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """`loca docs --build` (`mkdocs build --strict`): every page in the nav, every link and every
    generated reference page (tasks, servers, CLI, Python API) without a warning."""
    site = tmp_path / "site"
    done = subprocess.run(["loca", "docs", "--build", str(site)], cwd=tmp_path, env=shim(tmp_path),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    for page in ("reference/tasks/index.html", "reference/servers/index.html", "reference/cli/index.html",
                 "reference/python-api/index.html"):
        assert (site / page).stat().st_size > 10_000, page
