"""Environment seeds in bulk: the worlds of one task at many lengths and seeds, built in parallel
processes into one directory, with an index of them.

A dataset directory `DIR` holds one task's worlds, each a whole world directory at
`DIR/<length>/<seed>/` (`8k/17/`: `world.json`, `state.sqlite`, `workspace/`, `truth/` and
`instruction.txt`), and the index of every world in it, `index.jsonl` and `index.parquet`, one
row per world sorted by (target length, seed). A world is built under a temporary name beside
its final one and renamed when it is whole, so a killed run leaves nothing that passes for a
world; rerunning the command builds only what is missing. A world counts as built when it loads
with its state and ground truth, was made by the task's current generator for its (length,
seed), has its instruction, and its content hash matches the one recorded when it was built;
anything else at its path is built again. A world the world cache holds is copied from it
(its index row says `cached`); a world built here is not stored in the cache, whose copies
would only slow the build down (`LOCA_WORLD_CACHE_MB=0` builds every one)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envs.core.env import warm_up
from envs.core.registry import Task, get_task
from envs.core.reuse import obtain_world
from loca.core.dirlock import hold
from loca.core.lengths import label, parse_length
from loca.core.world import (
    INSTRUCTION_FILE,
    WORLD_FILE,
    World,
    WorldError,
    content_hash,
    write_bytes_atomic,
    write_text_atomic,
)

INDEX_JSONL = "index.jsonl"
INDEX_PARQUET = "index.parquet"
PARTIAL = ".partial-"
"""Infix of the temporary name a world is built under (`<length>/.<seed>.partial-XXXX/`)."""


class BulkError(ValueError):
    """A dataset directory that cannot take the worlds asked for."""


@dataclass(frozen=True)
class Outcome:
    """One planned world: its index row, whether this run built it, or why it could not."""

    length: int
    seed: int
    row: dict[str, Any] | None
    built: bool = False
    error: str | None = None


@dataclass
class Summary:
    planned: int
    built: int = 0
    copied: int = 0
    """Planned worlds this run copied from the world cache."""
    kept: int = 0
    """Planned worlds that were already complete."""
    failed: list[Outcome] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    """The index: every world in the directory."""
    seconds: float = 0.0


def world_path(out: Path, length: int, seed: int) -> Path:
    return out / label(length) / str(seed)


def index_row(task: Task, out: Path, world: World) -> dict[str, Any]:
    """The index row of a world of the dataset at `out`."""
    meta = world.meta
    return {
        "task": meta.task,
        "length": label(meta.target_tokens or 0),
        "target_tokens": meta.target_tokens,
        "seed": meta.seed,
        "params": task.resolve_params(meta.params),
        "env_description_tokens": meta.env_description_tokens,
        "origin": "cached" if meta.builds == 0 else "built",
        "builds": meta.builds or None,
        "content_hash": meta.content_hash,
        "generator_version": meta.generator_version,
        "world": world.root.relative_to(out).as_posix(),
        "instruction": (world.root / INSTRUCTION_FILE).read_text(encoding="utf-8").rstrip("\n"),
    }


def complete(task: Task, path: Path, length: int, seed: int, verify: bool = True) -> World | None:
    """The world at `path` if it is a whole world of (`task`, `length`, `seed`) made by the
    current generator (with `verify`, its content hash checked too), else None."""
    try:
        world = World.load(path, complete=True)
    except WorldError:
        return None
    meta = world.meta
    if (meta.task, meta.seed, meta.target_tokens, meta.generator_version) != \
            (task.name, seed, length, task.generator_version) \
            or not meta.content_hash or meta.env_description_tokens is None \
            or not (path / INSTRUCTION_FILE).is_file():
        return None
    try:
        if verify and content_hash(world) != meta.content_hash:
            return None
    except (OSError, ValueError):  # an unreadable database or file
        return None
    return world


def ensure_world(task_name: str, out: Path, length: int, seed: int) -> Outcome:
    """Make sure the world of (`length`, `seed`) is whole in `out`: keep it when it is, else
    build it under a temporary name and rename it into place. Runs in worker processes."""
    task = get_task(task_name)
    path = world_path(out, length, seed)
    world = complete(task, path, length, seed)
    if world is not None:
        return Outcome(length, seed, index_row(task, out, world))
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{seed}{PARTIAL}", dir=path.parent))
    try:
        built, _ = asyncio.run(obtain_world(task, staging / "world", length, seed, store=False))
        write_text_atomic(built.root / INSTRUCTION_FILE, task.spec.instruction(built) + "\n")
        if path.exists() or path.is_symlink():
            _remove(path)
        os.rename(built.root, path)
    except Exception as exc:
        return Outcome(length, seed, None, error=" ".join(str(exc).split()) or type(exc).__name__)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Outcome(length, seed, index_row(task, out, World.load(path)), built=True)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def _present(out: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """(world path, raw `world.json`) of every world-like directory `<length>/<seed>/` in `out`."""
    for meta_file in sorted(out.glob(f"*/*/{WORLD_FILE}")):
        if meta_file.parent.name.startswith("."):
            continue
        try:
            raw = json.loads(meta_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(raw, dict):
            yield meta_file.parent, raw


def prepare(task: Task, out: Path) -> None:
    """Refuse a directory that holds another task's worlds; remove what killed runs left."""
    for path, raw in _present(out):
        if raw.get("task") != task.name:
            raise BulkError(f"{out} holds worlds of {raw.get('task')!r} ({path.relative_to(out)}), "
                            f"not {task.name}; use another --out")
    for partial in out.glob(f"*/.*{PARTIAL}*"):
        shutil.rmtree(partial, ignore_errors=True)


def _others(task: Task, out: Path, planned: set[tuple[int, int]]) -> list[dict[str, Any]]:
    """Index rows of the whole worlds in `out` outside this run's plan (built by earlier runs
    with other lengths or seeds); their content hash was checked when they were built."""
    rows = []
    for path, _ in _present(out):
        try:
            length, seed = parse_length(path.parent.name), int(path.name)
        except ValueError:
            continue
        if (length, seed) in planned or path != world_path(out, length, seed):
            continue
        world = complete(task, path, length, seed, verify=False)
        if world is not None:
            rows.append(index_row(task, out, world))
    return rows


def _outcomes(task: Task, out: Path, plan: list[tuple[int, int]],
              processes: int) -> Generator[Outcome, None, None]:
    """Outcomes as worlds finish, in `processes` worker processes (1: in this one). Closed early
    (Ctrl-C), it cancels the worlds not started and waits only for those being built."""
    if processes <= 1:
        for length, seed in plan:
            yield ensure_world(task.name, out, length, seed)
        return
    pool = ProcessPoolExecutor(max_workers=processes)
    try:
        futures: dict[Future[Outcome], tuple[int, int]] = {
            pool.submit(ensure_world, task.name, out, length, seed): (length, seed)
            for length, seed in plan}
        for future in as_completed(futures):
            yield future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def generate_many(task: Task, out: Path, lengths: list[int], seeds: list[int], processes: int = 1,
                  on_world: Callable[[Outcome], None] | None = None) -> Summary:
    """Build the worlds of `lengths` x `seeds` that `out` does not hold whole yet, then write
    the index of every world in `out`. A world that cannot be built is reported in the summary
    and left out of the index; the others are built all the same."""
    started = time.perf_counter()
    plan = [(length, seed) for length in lengths for seed in seeds]
    summary = Summary(planned=len(plan))
    with hold(out, "dataset directory", BulkError):
        prepare(task, out)
        warm_up(task)  # once here, not in every worker process: they are forked from this one
        with closing(_outcomes(task, out, plan, processes)) as outcomes:
            for outcome in outcomes:
                if outcome.row is None:
                    summary.failed.append(outcome)
                else:
                    cached = outcome.row["origin"] == "cached"
                    summary.built += outcome.built and not cached
                    summary.copied += outcome.built and cached
                    summary.kept += not outcome.built
                    summary.rows.append(outcome.row)
                if on_world:
                    on_world(outcome)
        summary.rows += _others(task, out, set(plan))
        summary.rows.sort(key=lambda r: (r["target_tokens"], r["seed"]))
        summary.failed.sort(key=lambda o: (o.length, o.seed))
        write_index(out, summary.rows)
    summary.seconds = time.perf_counter() - started
    return summary


def write_index(out: Path, rows: list[dict[str, Any]]) -> None:
    """`index.jsonl` and `index.parquet` of `rows`, each replaced whole."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    write_text_atomic(out / INDEX_JSONL, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    write_bytes_atomic(out / INDEX_PARQUET, sink.getvalue().to_pybytes())
