"""The world directory: `world.json`, `state.sqlite`, `workspace/`, `truth/` (and a private
`scratch/` for the servers, and `audit.sqlite`, their log of an agent's calls). Everything
needed to serve, replay or re-check an episode."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loca.core.clock import VirtualClock, parse_instant
from loca.core.errors import BadInput

WORLD_FILE = "world.json"
STATE_FILE = "state.sqlite"
AUDIT_FILE = "audit.sqlite"  # beside the state: logging a call leaves the state's file untouched
INSTRUCTION_FILE = "instruction.txt"  # the task as given to external agents (outside workspace/)
INPUTS = "inputs"  # under truth/: workspace files the checker reads as generated (mail templates)


class WorldError(BadInput):
    """A directory that is not a (complete) world."""


class WorldMeta(BaseModel):
    """The content of `world.json`."""

    model_config = ConfigDict(extra="forbid")

    task: str
    seed: int
    params: dict[str, Any]
    now: str = Field(description="the virtual clock's t0, ISO 8601 with offset")
    tz: str = "UTC"
    tick_s: int = 1
    target_tokens: int | None = None
    env_description_tokens: int | None = None
    builds: int | None = Field(default=None, description="worlds built (measured) to land this one on its "
                               "target, calibration probes included; None: not recorded")
    generator_version: str
    content_hash: str = ""
    max_output_chars: int = 200_000
    accounts: dict[str, dict[str, Any]] = Field(default_factory=dict)


class World:
    """A world on disk. Cheap to construct; servers, checkers and the env all take one."""

    def __init__(self, root: Path, meta: WorldMeta) -> None:
        self.root = Path(root)
        self.meta = meta

    @classmethod
    def load(cls, root: str | Path, complete: bool = False) -> World:
        """The world at `root`; with `complete`, its state and ground truth must be there too
        (to serve or grade it). A directory that is not a world is a `WorldError`, and nothing
        in it is touched."""
        root = Path(root)
        path = root / WORLD_FILE
        if not path.is_file():
            raise WorldError(f"{root} is not a world directory (no {WORLD_FILE})")
        try:
            meta = WorldMeta.model_validate_json(path.read_bytes())
        except (ValidationError, OSError) as exc:
            first = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            raise WorldError(f"{path} is not a valid {WORLD_FILE}: {first}") from None
        world = cls(root, meta)
        if complete:
            if not world.state_path.is_file():
                raise WorldError(f"{root} has no {STATE_FILE}: the world is incomplete")
            if not (world.truth_dir / "truth.json").is_file():
                raise WorldError(f"{root} has no truth/truth.json: the world is incomplete")
        return world

    def save(self) -> None:
        write_text_atomic(self.root / WORLD_FILE, self.meta.model_dump_json(indent=2) + "\n")

    @property
    def task(self) -> str:
        return self.meta.task

    @property
    def state_path(self) -> Path:
        return self.root / STATE_FILE

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def truth_dir(self) -> Path:
        return self.root / "truth"

    @property
    def scratch(self) -> Path:
        return self.root / "scratch"

    @cached_property
    def clock(self) -> VirtualClock:
        """The world's virtual clock (read on every write call: built once)."""
        return VirtualClock(parse_instant(self.meta.now), self.meta.tz, self.meta.tick_s)

    def read_truth(self, name: str = "truth.json") -> Any:
        return json.loads(self.read_truth_text(name))

    def read_truth_text(self, name: str) -> str:
        return (self.truth_dir / name).read_text(encoding="utf-8")


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write through a new temporary file in the target's folder, fsync, then rename it over
    `path`. The temporary file is created exclusively under a name not yet taken, never through
    a symlink, and removed when the write fails."""
    fd, tmp = _exclusive_temp(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) \
    | getattr(os, "O_BINARY", 0)
_TEMP_TRIES = 100


def _exclusive_temp(path: Path) -> tuple[int, Path]:
    """A new file `.NAME.<pid>.<n>.tmp` next to `path`, opened for writing; what is already
    there (a file, a symlink) is never reused."""
    for attempt in range(_TEMP_TRIES):
        tmp = path.with_name(f".{path.name[:200]}.{os.getpid()}.{attempt}.tmp")
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name next to {path.name}")


_DIGEST_BATCH = 4096  # rows turned into digest input at once


def table_digest(conn: sqlite3.Connection, table: str, columns: Sequence[str] | None = None,
                 max_rowid: int | None = None, where: str | None = None) -> tuple[int, str]:
    """How many rows `table` has (up to `max_rowid`, where the SQL condition `where` holds) and
    the sha256 of them in rowid order, each as the repr of its (rowid, *columns) SQLite values
    (all columns when None: int, float, str, bytes, None are exact and floats round-trip, about
    3x cheaper than JSON). Rows are encoded in batches: the same bytes as row by row, at a
    fraction of the calls."""
    selected = "*" if columns is None else ", ".join(f'"{c}"' for c in columns) or "rowid"
    conditions = ([] if max_rowid is None else ["rowid <= ?"]) + ([] if where is None else [f"({where})"])
    args = () if max_rowid is None else (max_rowid,)
    clause = f"WHERE {' AND '.join(conditions)} " if conditions else ""
    rows = conn.execute(f'SELECT rowid, {selected} FROM "{table}" {clause}ORDER BY rowid', args)
    h, count = hashlib.sha256(), 0
    while batch := rows.fetchmany(_DIGEST_BATCH):
        count += len(batch)
        h.update("".join(map(repr, batch)).encode())
    return count, h.hexdigest()


def tables(conn: sqlite3.Connection) -> list[str]:
    """The database's tables by name, SQLite's own left out."""
    return [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]


def _db_digest(path: Path, h: Any, known: Mapping[str, str]) -> None:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        for table in tables(conn):
            digest = known[table] if table in known else table_digest(conn, table)[1]
            h.update(f"\x1etable {table} {digest}\n".encode())
    finally:
        conn.close()


def _tree_digest(root: Path, h: Any) -> None:
    if not root.exists():
        return
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(f"\x1efile {path.relative_to(root).as_posix()}\n".encode())
        h.update(hashlib.sha256(path.read_bytes()).digest())


def content_hash(world: World, known: Mapping[str, str] | None = None) -> str:
    """sha256 of what the world holds: identity, database rows, workspace and truth files.
    Measured and derived fields of `world.json` (length, hash) are left out. `known`: whole-table
    digests (`table_digest` with all columns) already taken of this state, not read again."""
    h = hashlib.sha256()
    ident = world.meta.model_dump(include={"task", "seed", "params", "now", "tz", "tick_s",
                                           "generator_version", "accounts"})
    h.update(json.dumps(ident, sort_keys=True).encode())
    _db_digest(world.state_path, h, known or {})
    _tree_digest(world.workspace, h)
    _tree_digest(world.truth_dir, h)
    return h.hexdigest()
