"""`loca generate` in bulk: worlds built in parallel, resumable, never a half world taken as
built, and an index that matches the worlds and loads with Hugging Face `datasets`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import loca.bulk
from envs.core.registry import get_task
from loca.bulk import INDEX_JSONL, INDEX_PARQUET
from loca.cli import app
from loca.core.world import World, content_hash

TASK = "toy"  # the toy task (tests/toy)
runner = CliRunner()


def _generate(out: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["generate", TASK, "--out", str(out), *args], terminal_width=200)
    return result.exit_code, result.output


def _index(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / INDEX_JSONL).read_text(encoding="utf-8").splitlines()]


def _stamps(out: Path) -> dict[str, int]:
    """mtime (ns) of every file of every world, unchanged unless a world was rebuilt (SQLite's
    shared-memory index aside: reading the database to verify it may touch it)."""
    return {str(p.relative_to(out)): p.stat().st_mtime_ns for p in sorted(out.glob("*k/*/**/*"))
            if p.is_file() and not p.name.endswith("-shm")}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bulk") / "ds"
    code, output = _generate(out, "--lengths", "8k", "--seeds", "0-2", "--processes", "2")
    assert code == 0, output
    assert "built 3, copied from the world cache 0, already complete 0, failed 0 of 3 planned" in output
    return out


def test_worlds_are_built_where_the_index_says(dataset: Path) -> None:
    task = get_task(TASK)
    rows = _index(dataset)
    assert [(r["length"], r["seed"]) for r in rows] == [("8k", 0), ("8k", 1), ("8k", 2)]
    for row in rows:
        world = World.load(dataset / row["world"], complete=True)
        assert row["world"] == f"8k/{row['seed']}"
        assert (world.meta.task, world.meta.seed, world.meta.target_tokens) == (TASK, row["seed"], 8000)
        assert row["content_hash"] == world.meta.content_hash == content_hash(world)
        assert row["env_description_tokens"] == world.meta.env_description_tokens
        assert abs(row["env_description_tokens"] - 8000) <= 400
        assert row["params"] == task.resolve_params(world.meta.params)
        assert row["builds"] == world.meta.builds >= 1 and row["origin"] == "built"
        assert row["instruction"] == task.spec.instruction(world)
        assert (world.root / "instruction.txt").read_text(encoding="utf-8") == row["instruction"] + "\n"
    assert len({r["content_hash"] for r in rows}) == 3
    assert not list(dataset.glob("*/.*"))  # no temporary world left behind


def test_both_indexes_load_with_datasets(dataset: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    rows = _index(dataset)
    for kind, name in (("json", INDEX_JSONL), ("parquet", INDEX_PARQUET)):
        loaded = datasets.load_dataset(kind, data_files=str(dataset / name), split="train",
                                       cache_dir=str(tmp_path / kind))
        assert loaded.to_list() == rows


def test_a_rerun_builds_nothing(dataset: Path) -> None:
    before, index = _stamps(dataset), (dataset / INDEX_JSONL).read_bytes()
    code, output = _generate(dataset, "--lengths", "8k", "--seeds", "0-2", "--processes", "2")
    assert code == 0, output
    assert "built 0, copied from the world cache 0, already complete 3, failed 0 of 3 planned" in output
    assert _stamps(dataset) == before
    assert (dataset / INDEX_JSONL).read_bytes() == index


def test_damaged_and_half_written_worlds_are_rebuilt(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    shutil.copytree(dataset, out)
    (out / "8k/0/state.sqlite").unlink()  # incomplete
    with open(next((out / "8k/1/workspace").rglob("*.txt")), "a", encoding="utf-8") as fh:
        fh.write("tampered\n")  # whole, but not what was built
    shutil.move(out / "8k/2", out / "8k/.2.partial-killed")  # a run killed before the rename
    code, output = _generate(out, "--lengths", "8k", "--seeds", "0-2")
    assert code == 0, output
    assert "built 3, copied from the world cache 0, already complete 0" in output
    assert not (out / "8k/.2.partial-killed").exists()
    rows = _index(out)
    assert [r["content_hash"] for r in rows] == [r["content_hash"] for r in _index(dataset)]  # same seeds, same worlds
    for row in rows:
        assert content_hash(World.load(out / row["world"], complete=True)) == row["content_hash"]


def test_more_seeds_later_are_added_to_the_index(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    shutil.copytree(dataset, out)
    before = _stamps(out)
    code, output = _generate(out, "--seeds", "3")
    assert code == 0, output
    assert "built 1, copied from the world cache 0, already complete 0, failed 0 of 1 planned" in output
    assert [r["seed"] for r in _index(out)] == [0, 1, 2, 3]
    assert {k: v for k, v in _stamps(out).items() if k in before} == before


def test_a_world_that_cannot_be_built_is_reported_and_left_out(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    real = loca.bulk.obtain_world

    async def failing(task, root, target, seed, **options):  # type: ignore[no-untyped-def]
        if seed == 1:
            raise RuntimeError("generator exploded")
        return await real(task, root, target, seed, **options)

    monkeypatch.setattr(loca.bulk, "obtain_world", failing)
    out = tmp_path / "ds"
    code, output = _generate(out, "--seeds", "0-1")
    assert code == 1
    assert "failed: 8k seed 1: generator exploded" in output
    assert [r["seed"] for r in _index(out)] == [0]
    assert sorted(p.name for p in (out / "8k").iterdir()) == ["0"]


def test_the_world_cache_gives_what_it_holds_and_takes_nothing_built_in_bulk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A world a reset stored is copied (its index row says `cached`, with no build count); the
    worlds built in bulk stay out of the cache."""
    from envs.core.env import LocaEnv
    from loca.core.world_cache import LIMIT_ENV, world_cache

    monkeypatch.setenv("LOCA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(LIMIT_ENV, "512")
    env = LocaEnv(TASK)
    env.reset(seed=5, options={"length": "8k"})
    env.close()
    cache = world_cache()
    assert cache is not None and len(cache.entries()) == 1
    code, output = _generate(tmp_path / "ds", "--seeds", "5-6", "--processes", "2")
    assert code == 0, output
    assert "built 1, copied from the world cache 1, already complete 0, failed 0 of 2 planned" in output
    rows = {r["seed"]: r for r in _index(tmp_path / "ds")}
    assert (rows[5]["origin"], rows[5]["builds"]) == ("cached", None)
    assert rows[6]["origin"] == "built" and rows[6]["builds"] >= 1
    assert len(cache.entries()) == 1


def test_another_tasks_dataset_is_refused(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    shutil.copytree(dataset, out)
    meta = json.loads((out / "8k/0/world.json").read_text())
    (out / "8k/0/world.json").write_text(json.dumps({**meta, "task": "canvas_list_test"}))
    before = _stamps(out)
    code, output = _generate(out, "--seeds", "0-2")
    assert code == 2 and "holds worlds of 'canvas_list_test'" in output
    assert _stamps(out) == before


@pytest.mark.parametrize("args", [["--length", "8k", "--seeds", "0-2"], ["--seed", "1", "--lengths", "8k"],
                                  ["--processes", "2"], ["--seeds", "0-2", "--processes", "0"],
                                  ["--lengths", "9x"]])
def test_bad_command_lines_are_refused(args: list[str], tmp_path: Path) -> None:
    code, output = _generate(tmp_path / "ds", *args)
    assert code == 2, output
    assert not (tmp_path / "ds").exists()
