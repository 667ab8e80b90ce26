"""Worlds are reproducible: same (task, params, seed) -> same content, in any process and zone."""

import json
import os
import subprocess
import sys
from pathlib import Path

from envs.canvas_arrange_exam import TASK
from loca.core.world import World, content_hash

PARAMS = {"num_courses": 6}

_GENERATE = """
import sys
from pathlib import Path
from envs.canvas_arrange_exam import TASK
world = TASK.generate(Path(sys.argv[1]), {"num_courses": 6}, 3, None)
print(world.meta.content_hash)
"""


def _generate_in_process(root: Path, tz: str) -> str:
    env = {**os.environ, "TZ": tz}
    out = subprocess.run([sys.executable, "-c", _GENERATE, str(root)], env=env, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


def test_same_content_hash_across_processes_and_time_zones(tmp_path):
    utc = _generate_in_process(tmp_path / "a", "UTC")
    tokyo = _generate_in_process(tmp_path / "b", "Asia/Tokyo")
    assert utc == tokyo and len(utc) == 64
    # byte for byte: every workspace and truth file is identical
    for sub in ("workspace", "truth"):
        for path in sorted((tmp_path / "a" / sub).rglob("*")):
            twin = tmp_path / "b" / sub / path.relative_to(tmp_path / "a" / sub)
            assert path.read_bytes() == twin.read_bytes(), path.name


def test_hash_tracks_content(tmp_path):
    a = TASK.generate(tmp_path / "a", PARAMS, 0, None)
    b = TASK.generate(tmp_path / "b", PARAMS, 1, None)
    assert a.meta.content_hash != b.meta.content_hash
    assert content_hash(World.load(tmp_path / "a")) == a.meta.content_hash
    (a.workspace / "note.txt").write_text("changed")
    assert content_hash(a) != a.meta.content_hash


def test_world_json_contract(tmp_path):
    world = TASK.generate(tmp_path / "w", PARAMS, 2, 8000)
    meta = json.loads((tmp_path / "w" / "world.json").read_text())
    for key in ("task", "seed", "params", "now", "tz", "target_tokens", "generator_version",
                "content_hash", "env_description_tokens"):
        assert key in meta
    assert meta["params"]["num_courses"] == 6 and meta["target_tokens"] == 8000
    assert (world.workspace / "exam_schedule.xlsx").is_file()
    truth = json.loads((world.truth_dir / "truth.json").read_text())
    assert truth["rows"] and all(len(r) == 11 for r in truth["rows"])
    # the agent's file tools are confined to workspace/: truth lives outside it
    assert not (world.workspace / "truth").exists()
