"""Our own executor for a parsed command line: pipelines run in order under `;`, `&&` and `||`,
redirections opened by the server (inside the workspace), every program in the sandbox."""

from __future__ import annotations

import os
from contextlib import ExitStack

from loca.core.world import World
from mock_servers.sandbox import Execution, Stage
from mock_servers.sandbox.process import Target
from mock_servers.terminal.parse import Command, Pipeline, Word
from mock_servers.terminal.rules import PYTHON, TEXT_ONLY, expand, program, program_path, redirect_path

PYTHON_FLAGS = ("-s",)  # no user site; unlike a python_execute script, a script's folder stays importable
_OPEN_FLAGS = {
    "<": os.O_RDONLY,
    ">": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "2>": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    ">>": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
    "2>>": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
}


class _RedirectFailed(Exception):
    """A redirection's file cannot be opened: the command fails as in a shell (status 1)."""


def execute(ex: Execution, world: World, pipelines: list[Pipeline]) -> int | None:
    """The exit status of the last pipeline run, or None when the timeout stopped it."""
    status = 0
    for pipeline in pipelines:
        if (pipeline.connector == "&&" and status != 0) or (pipeline.connector == "||" and status == 0):
            continue
        with ExitStack() as files:
            try:
                stages = [_stage(ex, world, command, files) for command in pipeline.commands]
            except _RedirectFailed as exc:
                ex.err.feed(f"{exc}\n".encode())
                status = 1
                continue
            code = ex.run(stages)
        if code is None:
            return None
        status = code
    return status


def _stage(ex: Execution, world: World, command: Command, files: ExitStack) -> Stage:
    name = program(command)
    argv = ex.python(*PYTHON_FLAGS) if name in PYTHON else [ex.program(name, program_path(name))]
    for word in command.words[1:]:
        argv += expand(world, word, ex.workspace, paths=name not in TEXT_ONLY)
    stdin: int | None = None
    stdout: Target = "out"
    stderr: Target = "err"
    for op, target in command.redirects:
        if op == "2>&1":
            stderr = stdout
            continue
        assert target is not None
        fd = _open(world, name, op, target)
        files.callback(os.close, fd)
        if op == "<":
            stdin = fd
        elif op in (">", ">>"):
            stdout = fd
        else:
            stderr = fd
    return Stage(argv, stdin, stdout, stderr)


def _open(world: World, name: str, op: str, target: Word) -> int:
    path = redirect_path(world, target.text)
    try:
        return os.open(path, _OPEN_FLAGS[op] | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise _RedirectFailed(f"{name}: {target.text}: {exc.strerror}") from None
