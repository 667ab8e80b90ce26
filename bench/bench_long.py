"""Benchmarks of the long tiers (512k, 1m, 2m): resets of new worlds and one episode's memory.

    python bench/bench_long.py                  # every task; print the section
    python bench/bench_long.py --write          # also put it in bench/RESULTS.md

Per task, in fresh processes with the world cache off (every world built, as a new seed's
first reset): the reset at 1m and at 2m for table seeds (median over `--seeds`), with the builds
it took and the measured length; then the peak memory of one whole 2m episode (reset, the oracle
in the agent loop, the verdict) in a process of its own; and the measure step's tokenizer time per
token at 256k and at 2m (equal when the work is linear in the world's size)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from results import put_section  # a sibling script (run from bench/)

import envs  # noqa: F401  (registers the gym ids)
from envs.core.registry import tasks
from loca.core.world_cache import LIMIT_ENV

REPO = Path(__file__).resolve().parent.parent
SECTION = "## Long tiers: resets of new 1M and 2M worlds, memory of a 2M episode"

_RESETS = """
import json, sys, time
from envs.core.env import LocaEnv
env = LocaEnv(sys.argv[1])
env.reset(seed=0, options={"length": "8k"})  # the process's one-time work
rows = []
for seed in map(int, sys.argv[3].split(",")):
    t = time.perf_counter()
    _, info = env.reset(seed=seed, options={"length": sys.argv[2]})
    rows.append({"s": time.perf_counter() - t, "builds": info["builds"],
                 "tokens": info["env_description_tokens"], "target": info["target_tokens"]})
env.close()
print(json.dumps(rows))
"""

_TOKENIZER = """
import asyncio, json, sys, tempfile, time
from pathlib import Path
from envs.core.build import dispatcher, drive, tool_list
from envs.core.calibration import build_to_target
from envs.core.registry import get_task
from loca.core.lengths import parse_length
from loca.core.tokens import encoding
from mock_servers.gateway import Gateway
task = get_task(sys.argv[1])
rates = {}
with tempfile.TemporaryDirectory() as tmp:
    for tier in sys.argv[2:]:
        world = asyncio.run(build_to_target(task, Path(tmp) / tier, parse_length(tier), 0))
        gateway = Gateway(world, task.spec.servers, config={"audit": False})
        replies, _ = asyncio.run(drive(task.spec.read_set("", tool_list(gateway)), dispatcher(gateway)))
        gateway.close()
        texts = [r.text for r in replies]
        t = time.perf_counter()
        tokens = sum(len(ids) for ids in encoding().encode_ordinary_batch(texts))
        rates[tier] = (time.perf_counter() - t) / tokens * 1e6
print(json.dumps(rates))
"""

_EPISODE = """
import asyncio, json, resource, sys, tempfile, time
from pathlib import Path
from envs.core.registry import get_task
from loca.core.lengths import parse_length
from loca.validate import play_in_loop
task = get_task(sys.argv[1])
with tempfile.TemporaryDirectory() as tmp:
    t = time.perf_counter()
    verdict, why = asyncio.run(play_in_loop(task, parse_length(sys.argv[2]), 0, Path(tmp)))
    s = time.perf_counter() - t
print(json.dumps({"passed": bool(verdict and verdict.passed), "why": why, "s": s,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def child(code: str, *args: str) -> object:
    env = {**os.environ, "PYTHONPATH": str(REPO), LIMIT_ENV: "0"}
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def task_row(task: str, seeds: str) -> str:
    cells = []
    for tier in ("1m", "2m"):
        rows = child(_RESETS, task, tier, seeds)
        assert isinstance(rows, list)
        worst = max(abs(r["tokens"] - r["target"]) / r["target"] for r in rows)
        cells += [f"{statistics.median(r['s'] for r in rows):.2f}", f"{max(r['s'] for r in rows):.2f}",
                  f"{max(r['builds'] for r in rows)}", f"{100 * worst:.1f}%"]
    rates = child(_TOKENIZER, task, "256k", "2m")
    assert isinstance(rates, dict)
    cells.append(f"{rates['256k']:.2f} → {rates['2m']:.2f}")
    episode = child(_EPISODE, task, "2m")
    assert isinstance(episode, dict)
    cells += [f"{episode['peak_mb']:.0f}", f"{episode['s']:.1f}", "pass" if episode["passed"] else
              f"FAIL: {episode['why']}"]
    return f"| {task} | " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", default="all", help="comma-separated task names, or all")
    parser.add_argument("--seeds", default="0,1,2", help="table seeds whose resets are timed")
    parser.add_argument("--write", action="store_true", help="put the section in bench/RESULTS.md")
    args = parser.parse_args()
    names = sorted(tasks()) if args.tasks == "all" else args.tasks.split(",")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [SECTION, "", f"{os.cpu_count()} cores; load average at the start {load}. Fresh processes, world cache "
             f"off (every world built); resets over table seeds {args.seeds} (median and max s, most builds, "
             "largest deviation from the target); the measure step's tokenizer time per token of the read "
             "set's replies at 256k and at 2m (flat: linear in the world's size); the 2m episode: the oracle in "
             "the agent loop, seed 0, peak resident memory of its process (reset, every tool call, the verdict).", "",
             "| task | 1m reset s | 1m max s | builds | dev | 2m reset s | 2m max s | builds | dev "
             "| tokenizer µs/token 256k → 2m | 2m episode peak MB | episode s | oracle |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in names:
        lines.append(task_row(name, args.seeds))
        print(lines[-1], flush=True)
    print("\n".join(lines))
    if args.write:
        put_section(lines)


if __name__ == "__main__":
    main()
