"""Latency of sandboxed executions, in-process tool calls end to end (numbers, not tests).

    python bench/bench_sandbox.py [--repeats 30]

Per sandbox mode that runs here (strong, landlock, and unconfined for comparison):
python_execute of `print(1)`, run_command `ls`, a three-stage pipeline, and the bare
interpreter start and the launcher alone for comparison."""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from generators.common import create_world
from loca.core.world import World, WorldMeta
from mock_servers.core.toolkit import ServerRuntime, Toolbox
from mock_servers.python_execute import toolbox as python_toolbox
from mock_servers.sandbox import CONFIG_MODE, SCRIPT_FLAGS, landlock_problem, strong_problem
from mock_servers.sandbox.confine import stage
from mock_servers.sandbox.launch import LAUNCHER_FLAGS, launcher_source
from mock_servers.terminal import toolbox as terminal_toolbox


def _median_ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"{statistics.median(ordered) * 1000:.1f} ms (p95 {p95 * 1000:.1f})"


def _timed(runtime: ServerRuntime, tool: str, args: dict[str, Any], repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats + 2):  # two warm-up calls
        started = time.perf_counter()
        outcome = asyncio.run(runtime.call(tool, args))
        samples.append(time.perf_counter() - started)
        assert not outcome.is_error, outcome.text
    return samples[2:]


def _world(folder: Path) -> World:
    meta = WorldMeta(task="bench", seed=0, params={}, now="2025-01-15T09:00:00Z",
                     generator_version="bench")
    world, db = create_world(folder / "world", meta, [])
    db.dispose()
    (world.workspace / "data.csv").write_text("".join(f"item{i % 37},{i}\n" for i in range(2000)))
    return world


def bench_mode(mode: str, world: World, repeats: int) -> list[str]:
    config: dict[str, Any] = {CONFIG_MODE: mode}
    runs: list[tuple[Toolbox, str, dict[str, Any]]] = [
        (python_toolbox, "python_execute", {"code": "print(1)"}),
        (terminal_toolbox, "run_command", {"command": "ls"}),
        (terminal_toolbox, "run_command", {"command": "cut -d, -f1 data.csv | sort | uniq -c"}),
    ]
    lines = [f"- {mode} mode:"]
    for toolbox, tool, args in runs:
        runtime = ServerRuntime(toolbox, world, config)
        lines.append(f"  - `{tool}` `{args}`: {_median_ms(_timed(runtime, tool, args, repeats))}")
    return lines


def bench_bare(repeats: int) -> list[str]:
    lines = []
    runs = {f"bare `python {' '.join(flags)} -c 'print(1)'`, no sandbox": [sys.executable, *flags, "-c", "print(1)"]
            for flags in (list(SCRIPT_FLAGS), [*SCRIPT_FLAGS, "-S"])}
    runs["the launcher alone, running `true` (no limits, no confinement)"] = [
        sys.executable, *LAUNCHER_FLAGS, "-c", launcher_source(), "--", *stage(["true"])]
    for name, argv in runs.items():
        samples = []
        for _ in range(repeats):
            started = time.perf_counter()
            subprocess.run(argv, check=True, capture_output=True)
            samples.append(time.perf_counter() - started)
        lines.append(f"- {name}: {_median_ms(samples)}")
    return lines


def sandbox_lines(repeats: int) -> list[str]:
    """The figures as Markdown list items: the bare interpreter, then each mode that runs here."""
    folder = Path(tempfile.mkdtemp(prefix="loca-bench-sandbox-"))
    try:
        world = _world(folder)
        lines = bench_bare(repeats)
        problems = {"strong": strong_problem(), "landlock": landlock_problem(), "unconfined": None}
        for mode, problem in problems.items():
            if problem is not None:
                lines.append(f"- {mode} mode unavailable here: {problem}")
                continue
            lines += bench_mode(mode, world, repeats)
        return lines
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    print(f"cores {os.cpu_count()}, Python {sys.version.split()[0]}, root {os.geteuid() == 0}")
    print("\n".join(sandbox_lines(args.repeats)))


if __name__ == "__main__":
    main()
