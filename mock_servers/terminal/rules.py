"""What run_command may run: allow-listed programs without their blocked flags, and path
arguments that stay inside the workspace. A usability layer; the OS sandbox is the boundary."""

from __future__ import annotations

import glob
import os
import shutil
from itertools import islice
from pathlib import Path

from loca.core.world import World
from mock_servers.core.errors import Code, ToolFailure, denied, invalid
from mock_servers.core.files import DISPLAY_ROOT, resolve
from mock_servers.sandbox.launch import SYSTEM_PATH
from mock_servers.terminal.parse import Command, Pipeline, Word

ALLOWED = (
    "ls", "cat", "head", "tail", "wc", "grep", "sort", "uniq", "cut", "tr", "sed", "awk", "find",
    "mkdir", "cp", "mv", "rm", "rmdir", "touch", "zip", "unzip", "tar", "gzip", "gunzip", "diff",
    "cmp", "file", "stat", "du", "echo", "printf", "pwd", "column", "comm", "join", "paste",
    "split", "nl", "rev", "tee", "jq", "pdftotext", "python", "python3",
)
PYTHON = ("python", "python3")
BLOCKED_FLAGS = {"find": ("-exec", "-execdir", "-ok", "-okdir")}
TEXT_ONLY = ("echo", "printf", "tr")  # their arguments are text, never paths
DEV_NULL = "/dev/null"
MAX_GLOB_MATCHES = 10_000
_PATH_HINT = f"relative paths start from {DISPLAY_ROOT}; nothing outside it is reachable"


def program(command: Command) -> str:
    return command.words[0].text


def validate(world: World, pipelines: list[Pipeline]) -> None:
    """Everything that can be checked before anything runs (globs and files that earlier
    commands may create are checked when their command starts)."""
    for pipeline in pipelines:
        for command in pipeline.commands:
            name = program(command)
            if name not in ALLOWED:
                hint = f"commands run in {DISPLAY_ROOT}; use paths relative to it" if name == "cd" \
                    else "show_security_rules lists what may run"
                raise denied(f"command '{name}' is not allowed; allowed: {' '.join(ALLOWED)}", hint=hint)
            blocked = [w.text for w in command.words[1:] if w.text in BLOCKED_FLAGS.get(name, ())]
            if blocked:
                raise denied(f"'{name} {blocked[0]}' is not allowed (it runs other programs)")
            if name not in PYTHON:
                program_path(name)
            if name not in TEXT_ONLY:
                for word in command.words[1:]:
                    if word.pattern is None:
                        argument(world, word.text, DISPLAY_ROOT)
            for _op, target in command.redirects:
                if target is not None:
                    redirect_path(world, target.text)


def program_path(name: str) -> str:
    path = shutil.which(name, path=SYSTEM_PATH)
    if path is None:
        raise ToolFailure(Code.NOT_FOUND, f"command '{name}' is allowed but not installed on this machine")
    return path


def argument(world: World, text: str, inside_workspace: str) -> str:
    """An argument as the child gets it: paths under /workspace mapped to where the child
    sees the workspace; a path outside the workspace is PERMISSION_DENIED. A word starting
    with '/' counts as a path when its first component exists on this machine."""
    head, _, value = text.partition("=") if text.startswith("-") and "=" in text else ("", "", text)
    prefix = f"{head}=" if head else ""
    if not value or value == DEV_NULL:
        return text
    if value == DISPLAY_ROOT or value.startswith(DISPLAY_ROOT + "/"):
        resolve(world, value)  # symlink escapes, NUL bytes, special files
        return prefix + inside_workspace + value[len(DISPLAY_ROOT):]
    if value.startswith("/"):
        if os.path.lexists("/" + value.lstrip("/").split("/", 1)[0]):
            raise denied(f"path '{_short(value)}' is outside the workspace {DISPLAY_ROOT}", hint=_PATH_HINT)
        return text
    if ".." in value.split("/"):
        resolve(world, value)
    return text


def expand(world: World, word: Word, inside_workspace: str, paths: bool = True) -> list[str]:
    """A word's arguments: its glob matches inside the workspace (sorted; none: the word
    itself, as a POSIX shell does), each checked as a path when `paths`."""
    words = [word.text]
    pattern = word.pattern
    if pattern is not None:
        shown = DISPLAY_ROOT + "/" if pattern.startswith(DISPLAY_ROOT + "/") else ""
        if shown or not pattern.startswith("/"):
            matches = list(islice(glob.iglob(pattern[len(shown):], root_dir=world.workspace),
                                  MAX_GLOB_MATCHES + 1))
            if len(matches) > MAX_GLOB_MATCHES:
                raise invalid(f"'{_short(word.text)}' matches more than {MAX_GLOB_MATCHES} files; narrow it")
            words = [shown + match for match in sorted(matches)] or words
    return [argument(world, w, inside_workspace) for w in words] if paths else words


def redirect_path(world: World, text: str) -> Path:
    """Where a redirection reads or writes (inside the workspace, or /dev/null)."""
    if text == DEV_NULL:
        return Path(os.devnull)
    target = resolve(world, text)
    if target.is_dir():
        raise invalid(f"cannot redirect to '{_short(text)}': it is a directory")
    return target


def _short(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."
