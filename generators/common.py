"""Helpers every generator uses: the world directory, seeded faker, jinja2 templates."""

from __future__ import annotations

import itertools
import random
import shutil
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import orjson
from faker import Faker
from jinja2 import BytecodeCache, Environment, FileSystemLoader, StrictUndefined
from jinja2.bccache import Bucket

from loca.core.cache import cache_dir, write_cache_file
from loca.core.task import TaskSpec
from loca.core.world import INPUTS, World, WorldMeta, content_hash, write_text_atomic
from mock_servers import load_toolbox, prepare_world, snapshot_rules
from mock_servers.core import snapshot
from mock_servers.core.db import Database
from mock_servers.core.models import ClockState


def create_world(root: Path, meta: WorldMeta, servers: Iterable[str]) -> tuple[World, Database]:
    """A fresh world directory (replacing any old one) with the tables of `servers` (types)."""
    root = Path(root)
    if root.exists():
        shutil.rmtree(root)
    for sub in ("workspace", "truth", "scratch"):
        (root / sub).mkdir(parents=True)
    world = World(root, meta)
    prefixes = [p for server in servers for p in load_toolbox(server).table_prefixes]  # registers their tables
    db = Database(world.state_path, building=True)
    db.create_tables(["core_", *prefixes])
    with db.write() as session:
        session.add(ClockState(id=1, writes=0))
    world.save()
    return world, db


def finish_world(world: World, spec: TaskSpec, answer: dict[str, Any],
                 *, known_tables: Mapping[str, snapshot.TableState] | None = None, **truth: Any) -> World:
    """Freeze what the checker needs and record the world's identity: `truth/truth.json` (the
    expected `answer` per output, plus any other ground truth), `truth/snapshot.json` (the state
    before the agent acts, writable files left out), copies of the workspace files the checker
    reads as generated (`truth/inputs/`, mail templates) and the content hash. `known_tables`: table
    states the generator took itself (`snapshot.take`). The servers' prepare steps run first."""
    prepare_world(world, list(spec.servers.values()))
    for name in spec.input_copies:
        (world.truth_dir / INPUTS).mkdir(exist_ok=True)
        shutil.copyfile(world.workspace / name, world.truth_dir / INPUTS / name)
    truth_json = orjson.dumps({"answer": answer, **truth}, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
    write_text_atomic(world.truth_dir / "truth.json", truth_json.decode() + "\n")
    rules = snapshot_rules(list(spec.servers.values()), spec.footprint, spec.writable_files)
    taken = snapshot.take(world, rules, known_tables)
    write_text_atomic(world.truth_dir / "snapshot.json", taken.model_dump_json(indent=1, exclude_none=True) + "\n")
    world.meta.content_hash = content_hash(world, snapshot.whole_tables(taken, rules))
    world.save()
    return world


def seeded_faker(rng: random.Random, locale: str = "en_US") -> Faker:
    """A Faker whose every draw follows from `rng` (never the global random state)."""
    fake = Faker(locale)
    fake.seed_instance(rng.getrandbits(64))
    return fake


class PersonNames:
    """Full names from the name data of a seeded Faker's person provider, drawn with a world
    stream and Faker's own frequencies. Each of Faker's weighted pickers costs about 0.3 ms a
    draw, too slow for the thousands of people of a large world; this costs microseconds."""

    def __init__(self, fake: Faker, rng: random.Random) -> None:
        provider = next((p for p in fake.get_providers() if hasattr(p, "last_names")), None)
        if provider is None:
            raise LookupError("this Faker has no person provider with name data")
        self.rng = rng
        self._first = _weighted(provider.first_names)
        self._last = _weighted(provider.last_names)

    def first(self) -> str:
        names, cumulative = self._first
        return self.rng.choices(names, cum_weights=cumulative)[0]

    def last(self) -> str:
        names, cumulative = self._last
        return self.rng.choices(names, cum_weights=cumulative)[0]

    def full(self) -> str:
        return f"{self.first()} {self.last()}"


def _weighted(data: Mapping[str, float] | Sequence[str]) -> tuple[list[str], list[float]]:
    """Names and their cumulative weights (equal weights when the provider gives none)."""
    if isinstance(data, Mapping):
        names, weights = list(data), list(data.values())
    else:
        names, weights = list(data), [1.0] * len(data)
    return names, list(itertools.accumulate(weights))


class _CompiledTemplates(BytecodeCache):
    """Compiled templates kept in the user cache across processes (compiling is most of a first
    render). jinja2 keys an entry by the template's name and source checksum and drops one that
    does not load; entries are written whole (a temporary file renamed)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, bucket: Bucket) -> Path:
        return self.folder / f"{bucket.key}.jinja"

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            data = self._path(bucket).read_bytes()
        except OSError:
            return
        bucket.bytecode_from_string(data)

    def dump_bytecode(self, bucket: Bucket) -> None:
        try:
            write_cache_file(self._path(bucket), bucket.bytecode_to_string())
        except OSError:
            pass  # an unwritable cache only costs the next process a compile


@cache
def templates(folder: str) -> Environment:
    """The jinja2 environment of a generator's `templates/` folder."""
    base = cache_dir()
    compiled = None if base is None else _CompiledTemplates(base / "templates")
    return Environment(loader=FileSystemLoader(Path(folder)), undefined=StrictUndefined,
                       keep_trailing_newline=False, trim_blocks=True, lstrip_blocks=True,
                       autoescape=False, bytecode_cache=compiled)
