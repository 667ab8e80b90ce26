"""Episodes as Ray tasks (spec §7.4): `loca run --executor ray [--ray-address ADDR]`.

The driver keeps the plan, the run directory and its records, exactly as a local run does; each
Ray task runs one episode in a scratch folder of its worker (any node of the cluster: no shared
storage is assumed) and returns the episode's record with its folder packed as a gzip'd tar,
which the driver unpacks into `episodes/<id>/`. The run directory therefore holds the same files
as a local run, and a run started one way resumes the other. Without an address a local Ray
instance is started with `processes` CPUs and stopped at the end; with one, the driver joins that
cluster (every node needs this package installed) and leaves it running. A model agent's rate
limits are served by one limiter actor, so that all workers share the run's budget."""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from loca.records import Episode, EpisodeRecord
from loca.runner.config import RunConfig
from loca.runner.engine import EpisodeFn
from loca.runner.records import failure_record
from loca.runner.rundir import RunDir
from mock_servers.sandbox import ENV_ALLOW_UNCONFINED, ENV_MODE
from scaffolds.clients import RateLimits, rate_group
from scaffolds.clients.ratelimit import LocalLimiter, share


class _LimiterActor:
    """The run's one rate limiter on Ray (spec §7.3): every worker's attempts take its permits."""

    def __init__(self, limits: RateLimits) -> None:
        self.limiter = LocalLimiter(limits)

    async def acquire(self, tokens: int) -> None:
        await self.limiter.acquire(tokens)

    async def release(self, tokens: int, used: int | None, throttled: bool) -> None:
        await self.limiter.release(tokens, used, throttled)


class _RemoteLimiter:
    """A worker's view of the limiter actor."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    async def acquire(self, tokens: int) -> None:
        await self.actor.acquire.remote(tokens)

    async def release(self, tokens: int, used: int | None, throttled: bool) -> None:
        await self.actor.release.remote(tokens, used, throttled)


def _play_packed(run_episode: EpisodeFn, episode: Episode, config: RunConfig,
                 limiter: Any = None) -> tuple[EpisodeRecord, bytes]:
    """On a worker: the episode's record and its folder as a gzip'd tar."""
    if limiter is not None:
        share(rate_group(config.agent, config.base_url), _RemoteLimiter(limiter))
    with tempfile.TemporaryDirectory(prefix="loca-ray-") as scratch:
        folder = Path(scratch) / "episode"
        record = run_episode(episode, folder, config)
        packed = io.BytesIO()
        with tarfile.open(fileobj=packed, mode="w:gz") as tar:
            for path in sorted(folder.rglob("*")):
                tar.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
        return record, packed.getvalue()


def _unpack(data: bytes, folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(folder, filter="data")  # no absolute paths, links out or devices


def ray_results(todo: list[Episode], run: RunDir, config: RunConfig, run_episode: EpisodeFn,
                processes: int, address: str | None,
                stop: Callable[[], bool]) -> Iterator[tuple[Episode, EpisodeRecord]]:
    """(episode, record) as Ray tasks finish, their folders unpacked into the run directory; a
    task that raises gives a `harness_error` record. Once `stop()` holds, the tasks not
    finished are cancelled (their episodes stay unfinished, for a rerun)."""
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, num_cpus=None if address else max(1, processes),
                 include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        limiter = None
        if not config.scripted and not config.rate_limits.unlimited:
            limiter = ray.remote(num_cpus=0)(_LimiterActor).remote(config.rate_limits)
        # The sandbox's choice (LOCA_SANDBOX, an explicit unconfined run) goes to every node.
        env = {name: os.environ[name] for name in (ENV_MODE, ENV_ALLOW_UNCONFINED) if name in os.environ}
        remote = ray.remote(num_cpus=1, max_retries=0)(_play_packed)
        if env:
            remote = remote.options(runtime_env={"env_vars": env})
        pending = {remote.remote(run_episode, episode, config, limiter): episode for episode in todo}
        while pending and not stop():
            (ref,), _ = ray.wait(list(pending), num_returns=1)
            episode = pending.pop(ref)
            try:
                record, packed = ray.get(ref)
                _unpack(packed, run.episode_dir(episode))
            except Exception as exc:
                record = failure_record(episode, "harness_error", exc)
            yield episode, record
    finally:
        for ref in pending:  # a stopped driver leaves nothing running on a shared cluster
            ray.cancel(ref, force=True)
        if started_here:
            ray.shutdown()
