"""Helpers every generator uses: the world directory, seeded faker, jinja2 templates."""

from __future__ import annotations

import random
import shutil
from functools import cache
from pathlib import Path

from faker import Faker
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from loca.core.world import World, WorldMeta
from mock_servers import load_toolbox, table_prefix
from mock_servers.core.db import Database
from mock_servers.core.models import ClockState


def create_world(root: Path, meta: WorldMeta, servers: list[str]) -> tuple[World, Database]:
    """A fresh world directory (replacing any old one) with the tables of `servers`."""
    root = Path(root)
    if root.exists():
        shutil.rmtree(root)
    for sub in ("workspace", "truth", "scratch"):
        (root / sub).mkdir(parents=True)
    world = World(root, meta)
    for server in servers:
        load_toolbox(server)  # registers the server's tables
    db = Database(world.state_path)
    db.create_tables(["core_"] + [table_prefix(s) for s in servers])
    with db.write() as session:
        session.add(ClockState(id=1, writes=0))
    world.save()
    return world, db


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
