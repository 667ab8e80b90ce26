"""The world cache: a reset of a world built before is a verified copy of it, byte for byte the
world a fresh build gives; damaged entries are dropped and rebuilt; concurrent publishers leave
one entry; the size bound evicts the least recently used; off means nothing is stored."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from envs.core.env import LocaEnv
from envs.core.registry import Task, get_task
from envs.core.reuse import target_alias, world_key
from loca.core.world import World, content_hash
from loca.core.world_cache import LIMIT_ENV, WorldCache, world_cache

TASK = "toy"  # the toy task (tests/toy), the quickest to build


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> WorldCache:
    monkeypatch.setenv("LOCA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(LIMIT_ENV, "512")
    found = world_cache()
    assert found is not None
    return found


def _reset(seed: int = 0, **options: object) -> tuple[World, dict]:
    env = LocaEnv(TASK)
    _, info = env.reset(seed=seed, options={"length": "8k", **options})
    assert env.world is not None
    world = World.load(env.world.root)
    env.close()  # a temporary world dir is removed; the meta read above stays
    return world, info


def _keep(tmp_path: Path, name: str, seed: int = 0) -> tuple[World, dict]:
    env = LocaEnv(TASK)
    _, info = env.reset(seed=seed, options={"length": "8k", "episode_dir": tmp_path / name})
    env.close()
    return World.load(tmp_path / name), info


def test_a_second_reset_is_a_verified_copy_of_the_fresh_build(cache: WorldCache, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    built, first = _keep(tmp_path, "a")
    hit, second = _keep(tmp_path, "b")
    assert (first["world_cache"], second["world_cache"]) == ("built", "hit")
    assert second["builds"] == 0 and first["builds"] >= 1
    assert content_hash(hit) == content_hash(built)
    assert second["env_description_tokens"] == first["env_description_tokens"]
    assert second["world_hash"] == first["world_hash"]
    monkeypatch.setenv(LIMIT_ENV, "0")
    fresh, off = _keep(tmp_path, "c")
    assert off["world_cache"] == "off" and content_hash(fresh) == content_hash(hit)
    assert get_task(TASK).check(hit).to_dict() == get_task(TASK).check(fresh).to_dict()


def test_explicit_params_share_the_entry_of_the_same_world(cache: WorldCache, tmp_path: Path) -> None:
    built, info = _keep(tmp_path, "a")
    task = get_task(TASK)
    assert cache.alias(target_alias(task, 8000, 0)) == world_key(task, built.meta.params, 0)
    _, again = _keep(tmp_path, "b")
    env = LocaEnv(TASK)
    _, explicit = env.reset(seed=0, options={"params": dict(built.meta.params)})
    env.close()
    assert again["world_cache"] == explicit["world_cache"] == "hit"
    assert explicit["world_hash"] == info["world_hash"]
    assert world_key(task, built.meta.params, 1) != world_key(task, built.meta.params, 0)


def _damage(world: Path, how: str) -> None:
    """Damage the world folder of a cache entry `how`."""
    if how == "world deleted":
        shutil.rmtree(world)
    elif how == "file missing":
        (world / "truth" / "truth.json").unlink()
    elif how == "file truncated":
        with open(world / "state.sqlite", "r+b") as fh:
            fh.truncate(fh.seek(0, os.SEEK_END) // 2)
    elif how == "byte flipped":  # same size and times: only the bytes tell
        victim = next(p for p in (world / "workspace").rglob("*") if p.is_file())
        stat = victim.stat()
        data = bytearray(victim.read_bytes())
        data[len(data) // 2] ^= 0x01
        victim.write_bytes(bytes(data))
        os.utime(victim, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    else:
        with sqlite3.connect(world / "state.sqlite") as conn:
            conn.execute("UPDATE kg_observation SET text = text || '!' WHERE rowid = 1")


@pytest.mark.parametrize("damage", ["world deleted", "file missing", "file truncated", "byte flipped", "row"])
def test_a_damaged_entry_is_dropped_and_the_world_rebuilt(cache: WorldCache, tmp_path: Path,
                                                          damage: str) -> None:
    built, _ = _keep(tmp_path, "a")
    entry = cache.root / world_key(get_task(TASK), built.meta.params, 0)
    _damage(entry / "world", damage)
    rebuilt, info = _keep(tmp_path, "b")
    assert info["world_cache"] == "built"
    assert content_hash(rebuilt) == content_hash(built)
    _, again = _keep(tmp_path, "c")
    assert again["world_cache"] == "hit"
    assert content_hash(World.load(entry / "world")) == content_hash(built)


def _publish(root: str, world_dir: str) -> None:
    WorldCache(Path(root), 1 << 30).publish("k" * 64, World.load(world_dir))


@pytest.mark.slow
def test_concurrent_publishers_leave_one_whole_entry(cache: WorldCache, tmp_path: Path) -> None:
    built, _ = _keep(tmp_path, "a")
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_publish, args=(str(cache.root), str(built.root))) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    assert sorted(p.name for p in cache.root.iterdir() if p.name != "aliases") == sorted(
        [world_key(get_task(TASK), built.meta.params, 0), "k" * 64])
    restored = cache.restore("k" * 64, tmp_path / "copy")
    assert restored is not None and content_hash(restored) == content_hash(built)


def test_the_size_bound_evicts_the_least_recently_used(cache: WorldCache, tmp_path: Path) -> None:
    built, _ = _keep(tmp_path, "a")
    small = WorldCache(tmp_path / "small", 1 << 30)
    for i, key in enumerate(("old", "mid", "new")):
        small.publish(key, built)
        os.utime(small.root / key / "used", (1000 + i, 1000 + i))
    assert small.restore("old", tmp_path / "x") is not None  # used now: the most recent
    size = sum(p.stat().st_size for p in (small.root / "old").rglob("*") if p.is_file())
    bounded = WorldCache(small.root, 3 * size + size // 2)  # room for three of the four
    bounded.publish("newest", built)
    assert sorted(p.name for p in small.root.iterdir()) == ["new", "newest", "old"]


def test_off_stores_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(LIMIT_ENV, "0")
    assert world_cache() is None
    _, info = _reset()
    assert info["world_cache"] == "off" and not (tmp_path / "cache" / "worlds").exists()
    monkeypatch.setenv(LIMIT_ENV, "lots")
    with pytest.raises(ValueError, match="whole number of megabytes"):
        world_cache()
    monkeypatch.setenv(LIMIT_ENV, "100")
    monkeypatch.setenv("LOCA_CACHE_DIR", "")
    assert world_cache() is None


def test_loca_cache_shows_the_worlds_against_the_limit_and_clears_everything(
        cache: WorldCache, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from loca.cli import app

    built, _ = _keep(tmp_path, "a")
    (entry,) = cache.entries()
    assert entry[1] == sum(p.stat().st_size for p in built.root.rglob("*") if p.is_file())
    (entry[2] / "size").unlink()  # an entry stored before sizes were recorded is measured
    assert cache.entries()[0][1] == entry[1]
    runner = CliRunner()
    shown = runner.invoke(app, ["cache", "info"])
    assert shown.exit_code == 0 and f"cache: {cache.root.parent}" in shown.output
    assert f"world cache: 1 world, {entry[1] / 2**20:.1f} MB; limit 512 MB" in shown.output
    cleared = runner.invoke(app, ["cache", "clear"])
    assert cleared.exit_code == 0 and "MB freed" in cleared.output
    assert list(cache.root.parent.iterdir()) == [] and cache.entries() == []
    assert "world cache: 0 worlds, 0.0 MB" in runner.invoke(app, ["cache", "info"]).output


def test_editing_a_task_spec_changes_its_worlds_keys(any_task: Task, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The spec module (scale, read set) is part of the code a world is keyed by: a target
    length never finds a world built under another spec."""
    import importlib

    from envs.core import reuse

    module = importlib.import_module(any_task.package or f"envs.{any_task.name}")
    assert module.__file__ is not None and reuse._spec_file(any_task) == Path(module.__file__)
    spec = tmp_path / "spec.py"
    monkeypatch.setattr(reuse, "_spec_file", lambda task: spec)
    keys = []
    smallest = {any_task.spec.scale.primary: any_task.spec.scale.lo}
    for text in ("hi = 400\n", "hi = 76\n"):
        spec.write_text(text)
        reuse._code_digest.cache_clear()
        keys.append((target_alias(any_task, 8000, 0), world_key(any_task, smallest, 0)))
    reuse._code_digest.cache_clear()
    assert keys[0][0] != keys[1][0] and keys[0][1] != keys[1][1]
