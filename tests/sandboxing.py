"""Test support for the code-execution sandbox: the two modes as a fixture (strong skipped where
bubblewrap cannot run, unless LOCA_REQUIRE_STRONG_SANDBOX=1 makes that a failure), worlds that
an unprivileged child can reach, and a scan for processes that outlived a call."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generators.common import create_world
from loca.core.world import World, WorldMeta
from mock_servers.sandbox import CONFIG_MODE, CONFIG_PYTHON, strong_problem
from mock_servers.sandbox.launch import child_ids, traversable

REQUIRE_STRONG = os.environ.get("LOCA_REQUIRE_STRONG_SANDBOX") == "1"
MODES = ["strong", "weak"]
_FALLBACK_PYTHON = "/usr/bin/python3"


def require(mode: str) -> None:
    """Skip (or, when strong mode is required, fail) where `mode` cannot run here."""
    if mode == "strong":
        problem = strong_problem()
        if problem is not None:
            if REQUIRE_STRONG:
                pytest.fail(f"strong sandbox required but unavailable: {problem}")
            pytest.skip(f"bubblewrap cannot run here: {problem}")


def config_for(mode: str) -> dict[str, Any]:
    """Server config for `mode`. In weak mode as root the child is `nobody` without a private
    mount table, so the interpreter must lie where `nobody` can reach it."""
    config: dict[str, Any] = {CONFIG_MODE: mode}
    ids = child_ids()
    if mode == "weak" and ids is not None and not traversable(Path(sys.executable).resolve().parent, ids):
        if not (os.path.exists(_FALLBACK_PYTHON) and traversable(Path(_FALLBACK_PYTHON).parent, ids)):
            pytest.skip("no interpreter the unprivileged sandbox user can reach")
        config[CONFIG_PYTHON] = _FALLBACK_PYTHON
    return config


def open_folder() -> Iterator[Path]:
    """A temporary folder every user may enter (pytest's own are private to their owner)."""
    folder = Path(tempfile.mkdtemp(prefix="loca-sandbox-test-"))
    folder.chmod(0o755)
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
