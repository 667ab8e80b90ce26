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


def timed(argv: list[str]) -> tuple[float, list[str]]:
    """Wall seconds of one `loca` command run with the world cache off, and the worlds it could
    not build (exit 1); any other failure stops the benchmark."""
    env = {**os.environ, "LOCA_WORLD_CACHE_MB": "0", "COLUMNS": "200"}
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
