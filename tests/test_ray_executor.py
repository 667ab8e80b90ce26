"""Episodes as Ray tasks on a local Ray instance: the same records, files and summary as a run in
this process, and a run stopped after one episode locally is finished on Ray, each episode once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from loca.episode import run_episode
from loca.runner import EpisodeRecord, Executor, RunConfig, execute, plan

pytestmark = pytest.mark.slow  # starts Ray clusters (tens of seconds each)

ray = pytest.importorskip("ray")
TIMING_KEYS = {"timings", "latency_s", "wall_s", "llm_s", "tool_s", "duration_s"}


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def _config() -> RunConfig:
    return RunConfig(tasks=["set_conf_cr_ddl"], lengths=[8000], seeds=[0, 1, 2], agent="oracle",
                     keep_worlds="all")


def _without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items()
                if k not in TIMING_KEYS and not k.endswith("_s")}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def _records(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "episodes.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == len({r["episode_id"] for r in records})  # each episode once
    return {r["episode_id"]: _without_timings(r) for r in records}


def _files(out: Path) -> list[str]:
    return sorted(p.relative_to(out).as_posix() for p in (out / "episodes").rglob("*") if p.is_file())


def test_a_ray_run_matches_a_local_run(local_ray: None, tmp_path: Path) -> None:
    local = execute(_config(), tmp_path / "local", run_episode).summary
    on_ray = execute(_config(), tmp_path / "ray", run_episode, processes=2, executor="ray").summary
    assert on_ray == local and on_ray.passed == 3
    assert _records(tmp_path / "ray") == _records(tmp_path / "local")
    assert _files(tmp_path / "ray") == _files(tmp_path / "local")
    for episode in plan(_config()):
        world = tmp_path / "ray" / "episodes" / episode.episode_id / "world" / "world.json"
        assert json.loads(world.read_text())["content_hash"]


@pytest.mark.parametrize("first", ["local", "ray"])
def test_a_run_stopped_after_one_episode_is_finished_on_ray(local_ray: None, tmp_path: Path,
                                                            first: Executor) -> None:
    out = tmp_path / "run"

    def stop(_: EpisodeRecord) -> None:
        raise KeyboardInterrupt  # the driver dies once the first episode is recorded

    with pytest.raises(KeyboardInterrupt):
        execute(_config(), out, run_episode, processes=2, on_result=stop, executor=first)
    assert len(_records(out)) == 1
    summary = execute(_config(), out, run_episode, processes=2, executor="ray").summary
    assert summary.episodes == summary.passed == 3
    assert sorted(_records(out)) == sorted(e.episode_id for e in plan(_config()))


def _hold(actor: Any, seconds: float) -> tuple[float, float]:
    """On a worker: hold one permit of the shared limiter for `seconds`; when it was held."""
    import asyncio
    import time

    from loca.ray_executor import _RemoteLimiter

    async def hold() -> tuple[float, float]:
        limiter = _RemoteLimiter(actor)
        await limiter.acquire(1)
        start = time.time()
        await asyncio.sleep(seconds)
        end = time.time()
        await limiter.release(1, 1, False)
        return start, end

    return asyncio.run(hold())


def test_workers_share_one_rate_limiter(local_ray: None) -> None:
    from loca.ray_executor import _LimiterActor
    from scaffolds.clients import RateLimits

    actor = ray.remote(num_cpus=0)(_LimiterActor).remote(RateLimits(max_in_flight=1))
    hold = ray.remote(num_cpus=1)(_hold)
    spans = sorted(ray.get([hold.remote(actor, 0.5) for _ in range(3)]))
    for (_, end), (start, _) in pairwise(spans):
        assert start >= end  # one permit in the whole cluster: the holds never overlap
