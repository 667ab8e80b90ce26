"""Benchmarks of resets: any seed, any length, first and later reset in a process.

    python bench/bench_reset.py                 # every task; print the section
    python bench/bench_reset.py --write         # also put it in bench/RESULTS.md

Figures: the first and a later 8K reset in fresh processes (imports excluded; the user cache
warm with the world cached, warm with the world cache off, and cold), medians over
`--processes` processes, for the first task in all three cases and for every task in the second;
per task, with the world cache off, resets at 8K and 256K for the
table seeds 0-4 and for seeds 100-119 (in no table), and over seeds 100-119 at 8K, 64K and 256K
the builds per world and the largest deviation from the target (`bench_gym.py --write`
includes this section)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from results import put_section  # a sibling script (run from bench/ or by bench_gym)

import envs  # noqa: F401  (registers the gym ids)
from envs.core.env import LocaEnv
from envs.core.errors import EnvSetupError
from envs.core.registry import tasks
from loca.core.world_cache import LIMIT_ENV

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
SECTION = "## Reset: any seed, any length"
TABLE_SEEDS = range(5)
UNSEEN_SEEDS = range(100, 120)
TIERS = ("8k", "64k", "256k")

_CHILD = """
import importlib, json, sys, time
started = time.perf_counter()
from envs.core.env import LocaEnv
from envs.core.registry import get_task
from mock_servers import load_toolbox
task = get_task(sys.argv[1])
task.generator, task.checks, [load_toolbox(s) for s in task.spec.servers.values()]
imported = time.perf_counter()
env = LocaEnv(task.name)
times, warm = [], []
for _ in range(4):
    t = time.perf_counter()
    _, info = env.reset(seed=int(sys.argv[3]), options={"length": sys.argv[2]})
    times.append(time.perf_counter() - t)
    warm.append(info["timings"]["warm_up_s"])
env.close()
print(json.dumps({"imports": imported - started, "first": times[0], "later": sorted(times[1:])[1],
                  "warm_up": warm[0]}))
"""


def fresh_process(task: str, length: str, seed: int, cache: str | None,
                  world_cache: bool) -> dict[str, float]:
    """One fresh process: its imports, first reset and median later reset (seconds)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), LIMIT_ENV: "" if world_cache else "0"}
    if cache is not None:
        env["LOCA_CACHE_DIR"] = cache
    out = subprocess.run([sys.executable, "-c", _CHILD, task, length, str(seed)], env=env, cwd=REPO,
                         check=True, capture_output=True, text=True).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    """Median of each figure over the processes' runs, and of their first - later gaps."""
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]} | {
        "gap": statistics.median(r["first"] - r["later"] for r in runs)}


def first_reset_per_task(names: list[str], processes: int) -> list[str]:
    """The first and a later 8K reset of every task in fresh processes, user cache warm, world
    cache off (every world built): the case of a new worker process."""
    lines = [f"First and later 8K reset of every task (seed 0; fresh processes, imports excluded; user cache "
             f"warm, world cache off; median of {processes} processes):", "",
             "| task | first reset s | of which warm-up s | later reset s | first - later s |", "|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="loca-cache-") as warm:
        for task in names:
            fresh_process(task, "8k", 0, warm, world_cache=False)  # fills the user cache
            med = _medians([fresh_process(task, "8k", 0, warm, world_cache=False) for _ in range(processes)])
            lines.append(f"| {task} | {med['first']:.3f} | {med['warm_up']:.3f} | {med['later']:.3f} | "
                         f"{med['gap']:.3f} |")
    return lines


def first_reset_lines(task: str, processes: int) -> list[str]:
    lines = [f"First and later reset in a fresh process (`{task}`, 8k, seed 0; imports excluded; "
             f"median of {processes} processes):", "",
             "| user cache | imports s | first reset s | of which warm-up s | later reset s | first - later s |",
             "|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="loca-cache-") as warm:
        fresh_process(task, "8k", 0, warm, world_cache=True)  # fills the user and world caches
        rows = {"warm, world cached": (warm, True), "warm, world cache off": (warm, False),
                "cold (empty), world cache off": (None, False)}
        for label, (cache, worlds) in rows.items():
            runs = []
            for _ in range(processes):
                with tempfile.TemporaryDirectory(prefix="loca-cache-") as cold:
                    runs.append(fresh_process(task, "8k", 0, cache or cold, worlds))
            med = _medians(runs)
            lines.append(f"| {label} | {med['imports']:.2f} | {med['first']:.3f} | {med['warm_up']:.3f} | "
                         f"{med['later']:.3f} | {med['gap']:.3f} |")
    return lines


Rows = dict[tuple[str, str], list[tuple[float, int, float]]]


def sweep(task: str) -> tuple[Rows, list[str]]:
    """(tier, "table"|"unseen") -> [(reset seconds, builds, deviation)] in one warm process
    with the world cache off (every world built), and the resets that failed."""
    os.environ[LIMIT_ENV] = "0"
    failures: list[str] = []
    env = LocaEnv(task)
    env.reset(seed=0)  # the process's one-time work, measured by `first_reset_lines`
    rows: Rows = {}
    for tier in TIERS:
        kinds = (("table", TABLE_SEEDS), ("unseen", UNSEEN_SEEDS)) if tier != "64k" else (("unseen", UNSEEN_SEEDS),)
        for kind, seeds in kinds:
            for seed in seeds:
                started = time.perf_counter()
                try:
                    _, info = env.reset(seed=seed, options={"length": tier})
                except EnvSetupError as exc:
                    failures.append(f"{task} {tier} seed {seed}: {str(exc.__cause__ or exc)[:120]}")
                    continue
                elapsed = time.perf_counter() - started
                target = info["target_tokens"]
                rows.setdefault((tier, kind), []).append(
                    (elapsed, info["builds"], (info["env_description_tokens"] - target) / target))
    env.close()
    return rows, failures


def sweep_lines(names: list[str], jobs: int) -> list[str]:
    lines = ["Resets in a warm process: table seeds 0-4, unseen seeds 100-119 (median reset s; builds per "
             "world; largest deviation from the target):", "",
             "| task | tier | table seeds s | unseen seeds s | unseen / table | unseen builds (mean, max) "
             "| largest deviation |", "|---|---|---|---|---|---|---|"]
    all_builds: list[int] = []
    failures: list[str] = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:  # one task per process
        swept = list(pool.map(sweep, names))
    for name, (rows, failed) in zip(names, swept):
        failures += failed
        for tier in TIERS:
            unseen = rows[(tier, "unseen")]
            table = rows.get((tier, "table"))
            builds = [b for _, b, _ in unseen]
            all_builds += builds
            t_unseen = statistics.median(t for t, _, _ in unseen)
            t_table = statistics.median(t for t, _, _ in table) if table else None
            worst = max(abs(d) for *_, d in unseen + (table or []))
            lines.append(f"| {name} | {tier} | {f'{t_table:.2f}' if t_table else '-'} | {t_unseen:.2f} | "
                         f"{f'{t_unseen / t_table:.2f}x' if t_table else '-'} | "
                         f"{statistics.mean(builds):.2f}, {max(builds)} | {100 * worst:.1f}% |")
    lines += ["", f"Mean builds per world over every task, tier and unseen seed: "
                  f"{statistics.mean(all_builds):.2f} ({len(all_builds)} worlds)."]
    if failures:
        lines += ["", "Resets that failed (generator errors, not length misses):", "",
                  *[f"- {failure}" for failure in failures]]
    return lines


def reset_section(names: list[str], processes: int, jobs: int = 1) -> list[str]:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return [SECTION, "", f"{os.cpu_count()} cores; load average at the start {load} (other jobs share the "
            "machine: absolute seconds are inflated, ratios within one process less so).", "",
            *first_reset_lines(names[0], processes), "", *first_reset_per_task(names, processes), "",
            *sweep_lines(names, jobs), ""]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", default="all", help="comma-separated task names, or all")
    parser.add_argument("--processes", type=int, default=5, help="fresh processes per first-reset figure")
    parser.add_argument("--jobs", type=int, default=1, help="tasks swept in parallel processes")
    parser.add_argument("--write", action="store_true", help="put the section in bench/RESULTS.md")
    args = parser.parse_args()
    names = sorted(tasks()) if args.tasks == "all" else args.tasks.split(",")
    lines = reset_section(names, args.processes, args.jobs)
    print("\n".join(lines))
    if args.write:
        put_section(lines)


if __name__ == "__main__":
    main()
