"""What a restore from the world cache costs on a 256K world, and how much of it verification is.

    python bench/bench_world_cache.py                 # every task; print the section
    python bench/bench_world_cache.py --tasks a,b --write   # also put it in bench/RESULTS.md

Per task, its seed-0 256K world built into a temporary cache, then medians over `--repeats`
runs of: the whole restore (copy, load, digest of the copy, compared with the entry's); the copy
alone; the digest alone (sha256 over the copy's files, read from the page cache)."""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from results import put_section  # a sibling script (run from bench/)

from envs.core.registry import get_task, tasks
from envs.core.reuse import obtain_world, world_key
from loca.core.lengths import parse_length
from loca.core.world_cache import LIMIT_ENV, files_digest, world_cache

SECTION = "## World cache: restoring a 256K world"
NOTE = ("The digest is sha256 over every file of the copy, about 0.6 ms per MB: at most about 15 ms "
        "beside the 0.2-1 s a 256K world takes to build. A cheaper check of sizes and times would miss "
        "a byte changed in place (`tests/test_world_cache.py` flips one and keeps both).")


def _median_ms(run: Callable[[int], object], repeats: int) -> float:
    samples = []
    for i in range(repeats):
        started = time.perf_counter()
        run(i)
        samples.append(time.perf_counter() - started)
    return 1000 * statistics.median(samples)


def restore_row(name: str, repeats: int) -> str:
    """One task's row: entry size and files, restore, copy and digest milliseconds."""
    task = get_task(name)
    scratch = Path(tempfile.mkdtemp(prefix="loca-wc-"))
    os.environ["LOCA_CACHE_DIR"], os.environ[LIMIT_ENV] = str(scratch / "cache"), "4096"
    try:
        world, _ = asyncio.run(obtain_world(task, scratch / "built", parse_length("256k"), 0))
        cache = world_cache()
        assert cache is not None
        key = world_key(task, world.meta.params, 0)
        stored = cache.root / key / "world"
        files = [p for p in stored.rglob("*") if p.is_file()]
        megabytes = sum(p.stat().st_size for p in files) / 1e6
        restore = _median_ms(lambda i: cache.restore(key, scratch / f"restored-{i}"), repeats)
        copy = _median_ms(lambda i: shutil.copytree(stored, scratch / f"copied-{i}"), repeats)
        digest = _median_ms(lambda i: files_digest(scratch / f"copied-{i}"), repeats)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return (f"| {name} | {megabytes:.1f} | {len(files)} | {restore:.1f} | {copy:.1f} | {digest:.1f} | "
            f"{100 * digest / restore:.0f}% |")


def section(names: list[str], repeats: int) -> list[str]:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return [SECTION, "", f"{os.cpu_count()} cores; load average at the start {load} (other jobs share the machine). "
            f"Seed 0, medians of {repeats} runs in one process (`python bench/bench_world_cache.py`):", "",
            "| task | entry MB | files | restore ms | copy ms | digest ms | digest / restore |",
            "|---|---|---|---|---|---|---|", *(restore_row(name, repeats) for name in names), "", NOTE, ""]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", default="all", help="comma-separated task names, or all")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--write", action="store_true", help="put the section in bench/RESULTS.md")
    args = parser.parse_args()
    names = sorted(tasks()) if args.tasks == "all" else args.tasks.split(",")
    lines = section(names, args.repeats)
    print("\n".join(lines))
    if args.write:
        put_section(lines)


if __name__ == "__main__":
    main()
