"""Test support for the code-execution sandbox: the confined modes as a fixture (skipped where
a mode cannot run, unless LOCA_REQUIRE_STRONG_SANDBOX=1 or LOCA_REQUIRE_LANDLOCK=1 makes that a
failure), private worlds, and a scan for processes that outlived a call."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from generators.common import create_world
from loca.core.world import World, WorldMeta
from mock_servers.sandbox import (
    CONFIG_MODE,
    SCRIPT_FLAGS,
    Limits,
    Stage,
    landlock_problem,
    open_execution,
    strong_problem,
)

REQUIRED = {"strong": os.environ.get("LOCA_REQUIRE_STRONG_SANDBOX") == "1",
            "landlock": os.environ.get("LOCA_REQUIRE_LANDLOCK") == "1"}
MODES = ["strong", "landlock"]
"""The confined modes: every attack is tried in each."""


def require(mode: str) -> None:
    """Skip (or, when the mode is required here, fail) where `mode` cannot run."""
    problem = {"strong": strong_problem, "landlock": landlock_problem}.get(mode, lambda: None)()
    if problem is not None:
        if REQUIRED[mode]:
            pytest.fail(f"{mode} sandbox required but unavailable: {problem}")
        pytest.skip(f"{mode} mode cannot run here: {problem}")


def config_for(mode: str) -> dict[str, Any]:
    """Server config for `mode`."""
    return {CONFIG_MODE: mode}


@dataclass
class Run:
    code: int | None
    stdout: str
    stderr: str
    elapsed: float


def run_python(world: World, mode: str, code: str, timeout: float = 20, name: str = "case.py",
               config: dict[str, Any] | None = None, **limits: int) -> Run:
    """Run `code` as a script in `mode`, as python_execute does."""
    with open_execution(world, {**config_for(mode), **(config or {})},
                        Limits(timeout_s=timeout, **limits)) as ex:
        script = ex.write_script(name, code)
        returncode = ex.run([Stage([*ex.python(*SCRIPT_FLAGS), script])])
        return Run(returncode, ex.stdout(), ex.stderr(), ex.elapsed)


def open_folder() -> Iterator[Path]:
    """A private temporary folder (mode 0700, owned by the gym's user, as `mktemp -d` makes
    it): the sandbox must work in it in every mode, as root too."""
    folder = Path(tempfile.mkdtemp(prefix="loca-sandbox-test-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def new_world(folder: Path, tz: str = "UTC") -> World:
    meta = WorldMeta(task="test", seed=0, params={}, now="2025-01-15T09:00:00Z", tz=tz,
                     generator_version="test")
    world, db = create_world(folder / "world", meta, [])
    db.dispose()
    return world


def survivors(marker: str, wait_s: float = 3.0) -> list[int]:
    """Live (non-zombie) processes whose command line holds `marker`, after letting killed
    ones finish dying for up to `wait_s`."""
    end = time.monotonic() + wait_s
    while True:
        found = []
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                cmdline = Path(entry.path, "cmdline").read_bytes()
                state = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker.encode() in cmdline and state != "Z":
                found.append(int(entry.name))
        if not found or time.monotonic() > end:
            return found
        time.sleep(0.05)
