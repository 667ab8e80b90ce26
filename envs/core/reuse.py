"""Resets through the world cache (`loca.core.world_cache`): what a task's world is keyed by,
and obtaining a world from the cache or building it (and storing it for the next reset).

A world is keyed by its task, generator version, resolved params and seed, and by a digest of
the code and data worlds are made from (the task's spec module with its scale and read set, its
generator folder with its templates and calibration table, the packages of its servers and the
shared server core), so that editing a spec, a generator or a server's tables never serves a
stale world. A reset by target length finds its world through an alias of (task, code digest,
target, seed)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from functools import cache
from pathlib import Path
from typing import Any, Literal

from envs.core.build import build_world
from envs.core.calibration import build_to_target
from envs.core.registry import Task, get_task
from loca.core.world import World
from loca.core.world_cache import world_cache

Source = Literal["hit", "built", "off"]


def _package_dir(module: str) -> Path:
    found = importlib.util.find_spec(module)
    if found is None or not found.submodule_search_locations:
        raise LookupError(f"{module} is not a package")
    return Path(next(iter(found.submodule_search_locations)))


def code_digest(task: Task) -> str:
    """Digest of the files `task`'s worlds are made from (computed once per process)."""
    return _code_digest(task.name)


@cache
def _code_digest(name: str) -> str:
    task = get_task(name)
    roots = [task.generator_dir, _package_dir("loca.core"), _package_dir("mock_servers.core"),
             *(_package_dir(f"mock_servers.{server}") for server in sorted(set(task.spec.servers.values())))]
    shared = sorted(p for p in task.generator_dir.parent.glob("*.py"))
    h = hashlib.sha256()
    for path in [_spec_file(task), *shared, *(p for root in roots for p in sorted(root.rglob("*")))]:
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(f"{path.parent.name}/{path.name}\n".encode())
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _spec_file(task: Task) -> Path:
    """The module declaring the task's `TaskSpec` (`envs/<task>.py`, or an extra task's package)."""
    found = importlib.util.find_spec(f"envs.{task.name}" if task.package is None else task.package)
    if found is None or found.origin is None:
        raise LookupError(f"task {task.name} has no spec module")
    return Path(found.origin)


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def world_key(task: Task, params: dict[str, Any], seed: int) -> str:
    """The cache key of the world of (task, params, seed)."""
    return _digest(task.name, task.generator_version, code_digest(task), task.resolve_params(params), seed)


def target_alias(task: Task, target: int, seed: int) -> str:
    return _digest("target", task.name, task.generator_version, code_digest(task), target, seed)


async def obtain_world(task: Task, root: Path, target: int, seed: int,
                       params: dict[str, Any] | None = None, store: bool = True) -> tuple[World, Source]:
    """The world of (target, seed), or of (`params`, seed) when given, at `root`: copied from
    the world cache when it holds it, else built (and then stored there, unless `store` is
    False: worlds built in bulk stay where they are built, the dataset being their store)."""
    cache = world_cache()
    if cache is None:
        return await _build(task, root, target, seed, params), "off"
    key = world_key(task, params, seed) if params else cache.alias(target_alias(task, target, seed))
    world = cache.restore(key, root) if key else None
    if world is not None:
        world.meta.target_tokens, world.meta.builds = target, 0
        world.save()
        return world, "hit"
    world = await _build(task, root, target, seed, params)
    if not store:
        return world, "built"
    key = world_key(task, world.meta.params, seed)
    cache.publish(key, world)
    if not params:
        cache.set_alias(target_alias(task, target, seed), key)
    return world, "built"


async def _build(task: Task, root: Path, target: int, seed: int,
                 params: dict[str, Any] | None) -> World:
    if params:
        return await build_world(task, root, params, seed, target)
    return await build_to_target(task, root, target, seed)
