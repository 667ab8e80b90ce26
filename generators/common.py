"""Helpers every generator uses: the world directory, seeded faker, jinja2 templates."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from faker import Faker
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from loca.core.task import TaskSpec
from loca.core.world import World, WorldMeta, content_hash, write_text_atomic
from mock_servers import load_toolbox, snapshot_ignore
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
    prefixes = [load_toolbox(server).table_prefix for server in servers]  # registers their tables
    db = Database(world.state_path)
    db.create_tables(["core_", *prefixes])
    with db.write() as session:
        session.add(ClockState(id=1, writes=0))
    world.save()
    return world, db


def finish_world(world: World, spec: TaskSpec, answer: dict[str, Any], **truth: Any) -> World:
    """Freeze what the checker needs and record the world's identity: `truth/truth.json` (the
    expected `answer` per output, plus any other ground truth), `truth/snapshot.json` (the state
    before the agent acts, writable files left out) and the content hash."""
    write_text_atomic(world.truth_dir / "truth.json",
                      json.dumps({"answer": answer, **truth}, indent=1, ensure_ascii=False) + "\n")
    taken = snapshot.take(world, snapshot_ignore(list(spec.servers.values())), spec.writable_files)
    write_text_atomic(world.truth_dir / "snapshot.json", taken.model_dump_json(indent=1) + "\n")
    world.meta.content_hash = content_hash(world)
    world.save()
    return world


def seeded_faker(rng: random.Random, locale: str = "en_US") -> Faker:
    """A Faker whose every draw follows from `rng` (never the global random state)."""
    fake = Faker(locale)
    fake.seed_instance(rng.getrandbits(64))
    return fake


@cache
def templates(folder: str) -> Environment:
    """The jinja2 environment of a generator's `templates/` folder."""
    return Environment(loader=FileSystemLoader(Path(folder)), undefined=StrictUndefined,
                       keep_trailing_newline=False, trim_blocks=True, lstrip_blocks=True,
                       autoescape=False)
