"""The world directory: its content hash tracks its content; `world.json` holds the contract.
(Reproducibility across processes and time zones: the generic acceptance suite.)"""

import json

from envs.core.registry import Task
from loca.core.world import World, content_hash
from tests.conftest import small_params


def test_hash_tracks_content(any_task: Task, tmp_path) -> None:
    a = any_task.generate(tmp_path / "a", small_params(any_task), 0)
    b = any_task.generate(tmp_path / "b", small_params(any_task), 1)
    assert a.meta.content_hash != b.meta.content_hash
    assert content_hash(World.load(tmp_path / "a")) == a.meta.content_hash
    (a.workspace / "note.txt").write_text("changed")
    assert content_hash(a) != a.meta.content_hash


def test_world_json_contract(any_task: Task, tmp_path) -> None:
    world = any_task.generate(tmp_path / "w", small_params(any_task), 2, 8000)
    meta = json.loads((tmp_path / "w" / "world.json").read_text())
    for key in ("task", "seed", "params", "now", "tz", "target_tokens", "generator_version",
                "content_hash", "env_description_tokens"):
        assert key in meta
    assert meta["task"] == any_task.name and meta["target_tokens"] == 8000
    assert meta["params"] == any_task.resolve_params(small_params(any_task))
    truth = json.loads((world.truth_dir / "truth.json").read_text())
    assert truth["answer"]
    assert json.loads((world.truth_dir / "snapshot.json").read_text())["tables"]
    # the agent's file tools are confined to workspace/: truth lives outside it
    assert not (world.workspace / "truth").exists()
