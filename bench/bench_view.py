"""`loca view` on a 2M-token episode: the time to its index and first screen (numbers, not
pass/fail tests).

    python bench/bench_view.py           # print the table
    python bench/bench_view.py --write   # also put it into bench/RESULTS.md

A run of one synthetic episode whose ledger holds 2M message tokens (1,000-token tool results,
written by the runner's ledger) is served in process. "Index + first screen" is what opening the
episode costs: its summary (`/api/episode`, which indexes the trajectory file) and the first page
of its timeline (`/api/entries`), from a cold cache. Then a page deep in the episode, an expanded
message read back from the file, and the memory the index keeps. Medians of `REPEATS`.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT.parent), str(ROOT)]

from results import put_section  # noqa: E402  (a sibling script, not a package)
from starlette.testclient import TestClient  # noqa: E402

from loca.view import Catalog, build_app  # noqa: E402
from loca.view.timeline import read_timeline  # noqa: E402
from tests.long_episode import write_long_run  # noqa: E402

SECTION = "## Viewer: opening a 2M-token episode"
TOKENS = 2_000_000
REPEATS = 5


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def touch(path: Path) -> None:
    """A new modification time, so that the viewer's cache sees a changed file."""
    stamp = path.stat().st_mtime_ns + 1_000_000
    os.utime(path, ns=(stamp, stamp))


def run(write: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root, eid = write_long_run(Path(folder) / "run", TOKENS)
        trajectory = root / "episodes" / eid / "trajectory.jsonl"
        client = TestClient(build_app(Catalog([root])), base_url="http://127.0.0.1")
        key = f"0:{eid}"
        sizes: dict[str, int] = {}

        def first_screen() -> None:
            touch(trajectory)  # a changed file is indexed anew
            sizes["summary"] = len(client.get("/api/episode", params={"key": key}).content)
            page = client.get("/api/entries", params={"key": key, "offset": 0, "limit": 100})
            sizes["page"] = len(page.content)
            sizes["entries"] = page.json()["total"]

        cold = [timed(first_screen) for _ in range(REPEATS)]
        deep = [timed(lambda: client.get("/api/entries", params={
            "key": key, "offset": sizes["entries"] - 100, "limit": 100})) for _ in range(REPEATS)]
        last = max(read_timeline(trajectory).by_mid)
        expand = [timed(lambda: client.get("/api/message", params={"key": key, "mid": str(last)}))
                  for _ in range(REPEATS)]
        touch(trajectory)
        tracemalloc.start()
        read_timeline(trajectory)
        kept, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        megabytes = trajectory.stat().st_size / 1e6
    ms = lambda xs: f"{1000 * statistics.median(xs):.0f}"  # noqa: E731
    lines = [SECTION, "", f"Machine: {platform.machine()}, Python {platform.python_version()}. A "
             f"{TOKENS:,}-token ledger ({megabytes:.1f} MB, {sizes['entries']:,} timeline entries), "
             f"served in process; medians of {REPEATS}.", "",
             "| measure | value |", "|---|---|",
             f"| index + first screen, cold (summary + first page of 100 entries) | {ms(cold)} ms |",
             f"| a page of 100 entries at the end, indexed | {ms(deep)} ms |",
             f"| one message expanded (read back from the file) | {ms(expand)} ms |",
             f"| summary response | {sizes['summary'] / 1000:.1f} KB |",
             f"| first page response | {sizes['page'] / 1000:.1f} KB |",
             f"| memory the index keeps / peak while indexing | {kept / 1e6:.1f} MB / "
             f"{peak / 1e6:.1f} MB |"]
    print("\n".join(lines))
    if write:
        put_section(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write into bench/RESULTS.md")
    run(parser.parse_args().write)


if __name__ == "__main__":
    main()
