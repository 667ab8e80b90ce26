"""Shared fixtures."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from generators.common import create_world
from loca.core.world import World, WorldMeta
from mock_servers.core.db import Database


@pytest.fixture
def make_world(tmp_path: Path) -> Callable[..., tuple[World, Database]]:
    """An empty world with the tables of the given servers: `make_world(["canvas"])`."""

    def make(servers: list[str], now: str = "2025-01-15T09:00:00Z", tz: str = "UTC",
             **meta: object) -> tuple[World, Database]:
        world_meta = WorldMeta(task="test", seed=0, params={}, now=now, tz=tz,
                               generator_version="test", **meta)
        return create_world(tmp_path / "world", world_meta, servers)

    return make
