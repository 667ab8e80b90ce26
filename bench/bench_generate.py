"""Benchmark of environment seeds in bulk: `loca generate TASK --lengths 8k --seeds 0-999
--processes 2` with the world cache off (every world built), then the same command again (every
world verified and kept).

    python bench/bench_generate.py             # print the section
    python bench/bench_generate.py --write     # also put it in bench/RESULTS.md

Wall seconds are those of the whole command as a user runs it (start-up and imports included)."""

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

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
SECTION = "## Environment seeds in bulk (`loca generate`)"


def timed(argv: list[str]) -> float:
    """Wall seconds of one `loca` command, run with the world cache off; raises on failure."""
    env = {**os.environ, "LOCA_WORLD_CACHE_MB": "0"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "loca", *argv], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"loca {' '.join(argv)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return elapsed


def measure(task: str, length: str, seeds: int, processes: int) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="loca-bench-generate-") as tmp:
        out = Path(tmp) / "worlds"
        argv = ["generate", task, "--lengths", length, "--seeds", f"0-{seeds - 1}",
                "--processes", str(processes), "--out", str(out)]
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        first = timed(argv)
        again = timed(argv)
        rows = [json.loads(line) for line in (out / "index.jsonl").read_text(encoding="utf-8").splitlines()]
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    assert len(rows) == seeds, len(rows)
    target = rows[0]["target_tokens"]
    deviation = max(abs(r["env_description_tokens"] - target) / target for r in rows)
    builds = [r["builds"] for r in rows]
    return [
        SECTION, "",
        f"{os.cpu_count()} cores; load average at the start {load} (other jobs share the machine). "
        f"`loca generate {task} --lengths {length} --seeds 0-{seeds - 1} --processes {processes}` with "
        f"`LOCA_WORLD_CACHE_MB=0` (every world built), then the same command again; wall seconds of "
        f"the whole command, start-up included:", "",
        "| worlds | processes | wall s | worlds/s | builds per world (mean, max) | largest deviation "
        "| on disk | rerun wall s (all verified, none built) |",
        "|---|---|---|---|---|---|---|---|",
        f"| {seeds:,} | {processes} | {first:.1f} | {seeds / first:.1f} | {statistics.mean(builds):.2f}, "
        f"{max(builds)} | {100 * deviation:.1f}% | {size / 2**20:.0f} MiB | {again:.1f} |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="set_conf_cr_ddl")
    parser.add_argument("--length", default="8k")
    parser.add_argument("--seeds", type=int, default=1000, help="seeds 0..N-1")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--write", action="store_true", help="put the section in bench/RESULTS.md")
    args = parser.parse_args()
    lines = measure(args.task, args.length, args.seeds, args.processes)
    print("\n".join(lines))
    if args.write:
        put_section(lines)


if __name__ == "__main__":
    main()
