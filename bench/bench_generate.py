"""Benchmark of environment seeds in bulk: `loca generate TASK --lengths 8k --seeds 0-999
--processes 2` with the world cache off (every world built), then the same command again (every
world verified and kept); with `--cache`, the rate of 50 new worlds with the world cache on and
off, alternating which goes first.

    python bench/bench_generate.py             # print the section
    python bench/bench_generate.py --write     # also put it in bench/RESULTS.md
    python bench/bench_generate.py --cache [--rounds 3] [--write]

Wall seconds are those of the whole command as a user runs it (start-up and imports included).
The cache comparison uses the world cache as configured (`LOCA_CACHE_DIR`), as a user has it."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results import put_section  # a sibling script (run from bench/)

from loca.core.world_cache import LIMIT_ENV, limit_mb, world_cache

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
SECTION = "## Environment seeds in bulk (`loca generate`)"
CACHE_SECTION = "## Environment seeds in bulk with the world cache on and off"


def timed(argv: list[str], cache: bool = False) -> tuple[float, list[str]]:
    """Wall seconds of one `loca` command run with the world cache off (or as configured), and
    the worlds it could not build (exit 1); any other failure stops the benchmark."""
    env = {**os.environ, "COLUMNS": "200"}
    if not cache:
        env[LIMIT_ENV] = "0"
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "loca", *argv], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    failed = [line.removeprefix("failed: ") for line in done.stderr.splitlines() if line.startswith("failed: ")]
    if done.returncode not in (0, 1) or (done.returncode == 1 and not failed):
        raise SystemExit(f"loca {' '.join(argv)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return elapsed, failed


def measure(task: str, length: str, seeds: int, processes: int) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="loca-bench-generate-") as tmp:
        out = Path(tmp) / "worlds"
        argv = ["generate", task, "--lengths", length, "--seeds", f"0-{seeds - 1}",
                "--processes", str(processes), "--out", str(out)]
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        first, failed = timed(argv)
        again, _ = timed(argv)
        rows = [json.loads(line) for line in (out / "index.jsonl").read_text(encoding="utf-8").splitlines()]
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    assert len(rows) + len(failed) == seeds, (len(rows), failed)
    target = rows[0]["target_tokens"]
    deviation = max(abs(r["env_description_tokens"] - target) / target for r in rows)
    builds = [r["builds"] for r in rows]
    lines = [
        SECTION, "",
        f"{os.cpu_count()} cores; load average at the start {load} (other jobs share the machine). "
        f"`loca generate {task} --lengths {length} --seeds 0-{seeds - 1} --processes {processes}` with "
        f"`LOCA_WORLD_CACHE_MB=0` (every world built), then the same command again (worlds already "
        f"built are verified by content hash and kept; those that could not be built are tried "
        f"again); wall seconds of the whole command, start-up included:", "",
        "| worlds planned | built | processes | wall s | worlds built/s | builds per world (mean, max) "
        "| largest deviation | on disk | rerun wall s |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| {seeds:,} | {len(rows):,} | {processes} | {first:.1f} | {len(rows) / first:.1f} | "
        f"{statistics.mean(builds):.2f}, {max(builds)} | {100 * deviation:.1f}% | {size / 2**20:.0f} MiB | "
        f"{again:.1f} |",
    ]
    if failed:
        lines += ["", f"Worlds that could not be built ({len(failed)}):", "",
                  *[f"- {line}" for line in failed]]
    return lines


def cache_comparison(task: str, length: str, first_seed: int, seeds: int, processes: int,
                     rounds: int) -> list[str]:
    """Worlds built per second by `loca generate` with the world cache on and off, `rounds`
    times each, alternating which goes first; median rates."""
    cache = world_cache()
    entries = cache.entries() if cache else []
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    seed_range = f"{first_seed}-{first_seed + seeds - 1}"
    rates: dict[bool, list[float]] = {True: [], False: []}
    for round_ in range(rounds):
        for on in (False, True) if round_ % 2 == 0 else (True, False):
            with tempfile.TemporaryDirectory(prefix="loca-bench-generate-") as tmp:
                out = Path(tmp) / "worlds"
                seconds, _ = timed(["generate", task, "--lengths", length, "--seeds", seed_range,
                                    "--processes", str(processes), "--out", str(out)], cache=on)
                rows = (out / "index.jsonl").read_text(encoding="utf-8").splitlines()
                rates[on].append(len(rows) / seconds)
    on, off = statistics.median(rates[True]), statistics.median(rates[False])
    shown = {flag: ", ".join(f"{r:.1f}" for r in rates[flag]) for flag in rates}
    return [
        CACHE_SECTION, "",
        f"{os.cpu_count()} cores; load average at the start {load} (other jobs share the machine). "
        f"`loca generate {task} --lengths {length} --seeds {seed_range} --processes {processes}` into a "
        f"new folder, with the world cache on (limit {limit_mb()} MB, holding {len(entries)} worlds, "
        f"{sum(size for _, size, _ in entries) / 2**20:.0f} MiB, none of these seeds) and off "
        f"(`{LIMIT_ENV}=0`), {rounds} times each, alternating which goes first; worlds per second of "
        f"the whole command, start-up included:", "",
        "| world cache | worlds/s (median) | each run |", "|---|---|---|",
        f"| on | {on:.1f} | {shown[True]} |", f"| off | {off:.1f} | {shown[False]} |", "",
        f"On / off: {on / off:.2f}.",
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="set_conf_cr_ddl")
    parser.add_argument("--length", default="8k")
    parser.add_argument("--seeds", type=int, default=1000, help="seeds 0..N-1")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--write", action="store_true", help="put the section in bench/RESULTS.md")
    parser.add_argument("--cache", action="store_true", help="compare the world cache on and off instead")
    parser.add_argument("--rounds", type=int, default=3, help="with --cache: runs of each")
    args = parser.parse_args()
    if args.cache:
        lines = cache_comparison(args.task, args.length, 1000, 50, args.processes, args.rounds)
    else:
        lines = measure(args.task, args.length, args.seeds, args.processes)
    print("\n".join(lines))
    if args.write:
        put_section(lines)


if __name__ == "__main__":
    main()
