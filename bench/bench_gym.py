"""Benchmarks of the gym (numbers and ratios, not pass/fail tests).

    python bench/bench_gym.py                      # every task, print the tables
    python bench/bench_gym.py --tasks a,b --write  # some tasks; also write bench/RESULTS.md
    python bench/bench_gym.py --tasks a,b --tasks-only --write  # only their per-task figures

Measures, per registered task in one warm process: generation and the whole reset (generate,
measure, serve) at every tier; the in-process latency of every tool its read set calls, on a
256K world (the tools an agent calls most); one calibration search for a seed outside the table.
Then the CLI's start-up (`loca --help`, `loca tasks`), a tool call over stdio, sandboxed
executions in each sandbox mode (`bench_sandbox.py`), resets for any seed and length, first and
later in a process (`bench_reset.py`), and with `--sweep` the oracle sweep over every task, tier
and seed with one and two processes."""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import envs  # noqa: F401  (registers the gym ids)
from envs.core.build import dispatcher, drive, tool_list
from envs.core.calibration import calibrate_one, params_for
from envs.core.env import LocaEnv
from envs.core.registry import Task, tasks
from loca.core.lengths import TIERS, parse_length
from loca.core.script import ToolReply, ToolRequest
from loca.core.world import World
from loca.core.world_cache import LIMIT_ENV
from loca.episode import run_episode
from loca.runner import Executor, RunConfig, RunSummary, execute
from mock_servers.gateway import Gateway

ROOT = Path(__file__).resolve().parent
TASKS_SECTION = "## Tasks: generation, reset and tool latency"
STARTUP_SECTION = "## Start-up, transports and the sandbox"
SWEEP_SECTION = "## Oracle sweep"
sys.path.insert(0, str(ROOT))
from bench_reset import reset_section  # noqa: E402  (sibling scripts, not a package)
from bench_sandbox import sandbox_lines  # noqa: E402
from results import put_section, put_subsections  # noqa: E402


def _stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def bench_reset(task: Task, repeats: int) -> list[tuple[str, int, float, float, float]]:
    """Per tier: measured tokens, generation alone, the whole reset with the world cache off
    (generate + measure + serve) and a reset from the world cache (copy + verify + serve),
    medians."""
    rows = []
    env = LocaEnv(task.name)
    scratch = Path(tempfile.mkdtemp(prefix="loca-gen-"))
    os.environ["LOCA_CACHE_DIR"] = str(scratch / "cache")
    env.reset(seed=0)  # warm up imports, the tokenizer and the tool schemas
    for tier in TIERS:
        params = asyncio.run(params_for(task, parse_length(tier), 0))
        gens, totals, hits, tokens = [], [], [], 0
        for _ in range(repeats):
            started = time.perf_counter()
            task.generate(scratch / "world", params, 0)
            gens.append(time.perf_counter() - started)
            os.environ[LIMIT_ENV] = "0"
            started = time.perf_counter()
            _, info = env.reset(seed=0, options={"length": tier})
            totals.append(time.perf_counter() - started)
            tokens = info["env_description_tokens"]
            os.environ[LIMIT_ENV] = ""
            env.reset(seed=0, options={"length": tier})  # stored, if it was not
            started = time.perf_counter()
            _, info = env.reset(seed=0, options={"length": tier})
            hits.append(time.perf_counter() - started)
            assert info["world_cache"] == "hit"
        rows.append((tier, tokens, statistics.median(gens), statistics.median(totals),
                     statistics.median(hits)))
    env.close()
    os.environ.pop("LOCA_CACHE_DIR")
    shutil.rmtree(scratch, ignore_errors=True)
    return rows


def bench_read_tools(task: Task, world: World, rounds: int) -> list[tuple[str, int, float, float, float]]:
    """Every call of the read set, timed over `rounds` runs on one new gateway; per tool: calls,
    median and p95 over all rounds, and the median of the first round alone (no call repeated
    yet; the world was just measured in this process, as in a run)."""
    gateway = Gateway(world, task.spec.servers)
    call = dispatcher(gateway, errors_raise=True)
    samples: dict[str, list[float]] = defaultdict(list)

    async def timed(request: ToolRequest) -> ToolReply:
        started = time.perf_counter()
        reply = await call(request)
        samples[request.name].append(time.perf_counter() - started)
        return reply

    for _ in range(rounds):
        asyncio.run(drive(task.spec.read_set("", tool_list(gateway)), timed))
    gateway.close()
    return [(name, len(s) // rounds, *_stats(s), statistics.median(s[:len(s) // rounds]))
            for name, s in sorted(samples.items())]


def bench_calibration(task: Task) -> tuple[int, float, int]:
    target = parse_length("64k")
    started = time.perf_counter()
    entry = asyncio.run(calibrate_one(task, target, seed=99))
    return target, time.perf_counter() - started, entry.measured


def bench_command(args: list[str], repeats: int = 5) -> float:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def bench_stdio(task: Task, world: World, n: int) -> tuple[str, float, float]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    gateway = Gateway(world, task.spec.servers)
    spec = next(s for s in gateway.specs if s.read_only and not s.parameters["required"])
    gateway.close()
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "mock_servers", task.spec.servers[spec.server], "--world", str(world.root)])

    async def session() -> list[float]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            samples = []
            for _ in range(n):
                started = time.perf_counter()
                await client.call_tool(spec.tool, {})
                samples.append(time.perf_counter() - started)
            return samples

    return (spec.tool, *_stats(asyncio.run(session())))


def bench_sweep(names: list[str], processes: int, executor: Executor = "local") -> tuple[float, RunSummary]:
    """The oracle over every episode, each world built (the world cache off)."""
    os.environ[LIMIT_ENV] = "0"
    out = Path(tempfile.mkdtemp(prefix="loca-sweep-"))
    config = RunConfig(tasks=names, lengths=[parse_length(t) for t in TIERS], seeds=list(range(5)),
                       agent="oracle")
    started = time.perf_counter()
    summary = execute(config, out, run_episode, processes=processes, executor=executor).summary
    elapsed = time.perf_counter() - started
    shutil.rmtree(out, ignore_errors=True)
    return elapsed, summary


def machine() -> str:
    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}")


def task_section(task: Task, repeats: int, rounds: int) -> list[str]:
    lines = [f"### {task.name}", "", f"Generate + reset (warm process, seed 0, median of {repeats}):", "",
             "| tier | measured tokens | generate s | reset s (generate + measure + serve) "
             "| reset s from the world cache |", "|---|---|---|---|---|"]
    for tier, tokens, gen, total, hit in bench_reset(task, repeats):
        lines.append(f"| {tier} | {tokens} | {gen:.2f} | {total:.2f} | {hit:.2f} |")
    root = Path(tempfile.mkdtemp(prefix="loca-bench-")) / "world"
    env = LocaEnv(task.name)
    env.reset(seed=0, options={"length": "256k", "episode_dir": str(root)})
    lines += ["", f"In-process latency of the tools of the read set on a 256K world ({rounds} rounds):", "",
              "| tool | calls per read set | median ms | p95 ms | first round median ms |", "|---|---|---|---|---|"]
    for name, calls, median, p95, first in bench_read_tools(task, World.load(root), rounds):
        lines.append(f"| `{name}` | {calls} | {1000 * median:.3f} | {1000 * p95:.3f} | {1000 * first:.3f} |")
    env.close()
    shutil.rmtree(root.parent, ignore_errors=True)
    target, seconds, measured = bench_calibration(task)
    lines += ["", f"One calibration search (64k, seed 99, not in the table): {seconds:.1f} s, "
              f"lands at {measured} tokens ({100 * (measured - target) / target:+.1f}%).", ""]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", default="all", help="comma-separated task names, or all")
    parser.add_argument("--write", action="store_true", help="write bench/RESULTS.md")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5, help="read-set runs timed per task")
    parser.add_argument("--sweep", action="store_true", help="also time the oracle sweep")
    parser.add_argument("--sandbox-repeats", type=int, default=30)
    parser.add_argument("--processes", type=int, default=5, help="fresh processes per first-reset figure")
    parser.add_argument("--tasks-only", action="store_true",
                        help="only the per-task figures, merged into those already written")
    args = parser.parse_args()
    names = sorted(tasks()) if args.tasks == "all" else args.tasks.split(",")
    lines = [TASKS_SECTION, "", f"Machine: {machine()}; one warm process.", ""]
    for name in names:
        section = task_section(tasks()[name], args.repeats, args.rounds)
        print("\n".join(section), flush=True)
        lines += section
    if args.write:
        put_subsections(lines)  # other tasks' figures stay
    if args.tasks_only:
        return
    loca = [sys.executable, "-m", "loca"]
    startup = [STARTUP_SECTION, "",
               f"- `loca --help`: {bench_command([*loca, '--help']):.2f} s; "
               f"`loca tasks`: {bench_command([*loca, 'tasks']):.2f} s (median of 5, fresh processes)."]
    first = tasks()[names[0]]
    root = Path(tempfile.mkdtemp(prefix="loca-bench-")) / "world"
    first.generate(root, {first.spec.scale.primary: first.spec.scale.lo}, 0)
    tool, median, p95 = bench_stdio(first, World.load(root), 200)
    startup.append(f"- `{tool}` over stdio with the official MCP SDK client: median {1000 * median:.2f} ms, "
                   f"p95 {1000 * p95:.2f} ms.")
    shutil.rmtree(root.parent, ignore_errors=True)
    startup += ["", f"Sandboxed executions (in-process tool calls end to end, median of {args.sandbox_repeats}):",
                "", *sandbox_lines(args.sandbox_repeats)]
    print("\n".join(startup))
    reset = reset_section(names, args.processes)
    print("\n".join(reset))
    sections = [startup, reset]
    if args.sweep:
        sweep = [SWEEP_SECTION, "", f"{len(names)} tasks x 7 tiers x 5 seeds:", "",
                 "| executor | processes | seconds | passed |", "|---|---|---|---|"]
        runs: list[tuple[Executor, int]] = [("local", 1), ("local", 2), ("ray", 2)]
        for executor, processes in runs:
            elapsed, summary = bench_sweep(names, processes, executor)
            sweep.append(f"| {executor} | {processes} | {elapsed:.1f} | "
                         f"{summary.passed}/{summary.episodes} |")
        print("\n".join(sweep))
        sections.append(sweep)
    if args.write:
        for section in sections:
            put_section(section)

if __name__ == "__main__":
    main()
