"""Benchmarks of the gym (numbers and ratios, not pass/fail tests).

    python bench/bench_gym.py            # print the tables
    python bench/bench_gym.py --write    # also write bench/RESULTS.md

Measures, in one warm process: generate + reset per length tier, one calibration search, tool
call latency in-process and over stdio (official MCP SDK client), and the oracle sweep over every
tier and seed."""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import envs  # noqa: F401
from envs.canvas_arrange_exam import TASK, CanvasArrangeExamEnv
from envs.core.calibration import calibrate_one, params_for
from loca.core.lengths import TIERS, parse_length
from loca.episode import run_episode
from loca.runner import RunConfig, execute
from mock_servers.gateway import Gateway

ROOT = Path(__file__).resolve().parent


def _stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def bench_reset(repeats: int) -> list[tuple[str, int, float, float]]:
    """Per tier: measured tokens, generation alone, and the whole reset (generate, measure,
    serve), medians in a warm process."""
    rows = []
    env = CanvasArrangeExamEnv()
    env.reset(seed=0)  # warm up imports and the tokenizer
    scratch = Path(tempfile.mkdtemp(prefix="loca-gen-"))
    for tier in TIERS:
        params = asyncio.run(params_for(TASK, parse_length(tier), 0))
        gens, totals = [], []
        tokens = 0
        for _ in range(repeats):
            started = time.perf_counter()
            TASK.generate(scratch / "world", params, 0, None)
            gens.append(time.perf_counter() - started)
            started = time.perf_counter()
            _, info = env.reset(seed=0, options={"length": tier})
            totals.append(time.perf_counter() - started)
            tokens = info["env_description_tokens"]
        rows.append((tier, tokens, statistics.median(gens), statistics.median(totals)))
    env.close()
    shutil.rmtree(scratch, ignore_errors=True)
    return rows


def bench_calibration() -> tuple[int, float, int]:
    target = parse_length("64k")
    started = time.perf_counter()
    entry = asyncio.run(calibrate_one(TASK, target, seed=99))
    return target, time.perf_counter() - started, entry.measured


CALLS = [
    ("canvas_canvas_get_course", {"course_id": 7}),
    ("canvas_canvas_list_announcements", {"course_id": 7}),
    ("canvas_canvas_list_courses", {"per_page": 10}),
    ("email_get_emails", {"page_size": 20}),
    ("email_read_email", {"email_id": "5"}),
    ("excel_read_data_from_excel", {"filepath": "exam_schedule.xlsx", "sheet_name": "Sheet1"}),
]


def bench_in_process(world_root: Path, n: int) -> list[tuple[str, float, float]]:
    from loca.core.world import World

    gateway = Gateway(World.load(world_root), TASK.servers)
    rows = []

    async def measure(name: str, args: dict[str, Any]) -> list[float]:
        samples = []
        for _ in range(n):
            started = time.perf_counter()
            outcome = await gateway.call(name, args)
            samples.append(time.perf_counter() - started)
            assert not outcome.is_error, outcome.text
        return samples

    for name, args in CALLS:
        median, p95 = _stats(asyncio.run(measure(name, args)))
        rows.append((name, median, p95))
    gateway.close()
    return rows


def bench_stdio(world_root: Path, n: int) -> tuple[float, float]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "mock_servers", "canvas", "--world", str(world_root)])

    async def session() -> list[float]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            samples = []
            for _ in range(n):
                started = time.perf_counter()
                await client.call_tool("canvas_get_course", {"course_id": 7})
                samples.append(time.perf_counter() - started)
            return samples

    return _stats(asyncio.run(session()))


def bench_sweep(processes: int) -> tuple[float, dict[str, Any]]:
    out = Path(tempfile.mkdtemp(prefix="loca-sweep-"))
    config = RunConfig(task=TASK.name, lengths=[parse_length(t) for t in TIERS], seeds=list(range(5)),
                       agent="oracle")
    started = time.perf_counter()
    summary = execute(config, out, run_episode, processes=processes)
    elapsed = time.perf_counter() - started
    shutil.rmtree(out, ignore_errors=True)
    return elapsed, summary


def machine() -> str:
    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--write", action="store_true", help="write bench/RESULTS.md")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    lines = [f"Machine: {machine()}.", ""]

    lines += ["## Generate + reset (warm process, seed 0, median of "
              f"{args.repeats})", "",
              "| tier | measured tokens | generate s | reset s (generate + measure + serve) |",
              "|---|---|---|---|"]
    for tier, tokens, gen, total in bench_reset(args.repeats):
        lines.append(f"| {tier} | {tokens} | {gen:.2f} | {total:.2f} |")
    print("\n".join(lines), flush=True)

    target, seconds, measured = bench_calibration()
    lines += ["", "## Calibration", "",
              f"One search (64k, seed 99, not in the table): {seconds:.1f} s, lands at {measured} tokens "
              f"({100 * (measured - target) / target:+.1f}%)."]

    world = Path(tempfile.mkdtemp(prefix="loca-bench-")) / "world"
    env = CanvasArrangeExamEnv()
    env.reset(seed=0, options={"length": "256k", "episode_dir": str(world)})
    lines += ["", f"## Tool calls on a 256k world ({args.calls} calls each)", "",
              "| tool | median ms | p95 ms |", "|---|---|---|"]
    for name, median, p95 in bench_in_process(world, args.calls):
        lines.append(f"| in-process `{name}` | {1000 * median:.3f} | {1000 * p95:.3f} |")
    median, p95 = bench_stdio(world, args.calls)
    lines.append(f"| stdio (MCP SDK client) `canvas_get_course` | {1000 * median:.3f} | {1000 * p95:.3f} |")
    env.close()
    shutil.rmtree(world.parent, ignore_errors=True)
    print("\n".join(lines[-(len(CALLS) + 5):]), flush=True)

    lines += ["", "## Oracle sweep (7 tiers x 5 seeds = 35 episodes)", "",
              "| processes | seconds | passed |", "|---|---|---|"]
    for processes in (1, 2):
        elapsed, summary = bench_sweep(processes)
        lines.append(f"| {processes} | {elapsed:.1f} | {summary['passed']}/{summary['episodes']} |")
    text = "# Benchmarks\n\n" + "\n".join(lines) + "\n"
    print("\n".join(lines[-5:]))
    if args.write:
        (ROOT / "RESULTS.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
