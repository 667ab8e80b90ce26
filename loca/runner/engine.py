"""Running a plan: the episodes a command asks for that the run directory has not finished, in
this process, in worker processes or as Ray tasks, each recorded as it ends; then the summary of
the whole run.

An episode that fails in any way but cancellation or the loss of its worker process still ends
with a record (`harness_error` when nothing more precise applies), and the run goes on, unless
the circuit breaker (`loca.runner.breaker`) finds the model provider failing the same way
episode after episode: then no further episode starts (locally those running finish; on Ray
those not finished are cancelled), and the outcome says why."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic_core import PydanticSerializationError

from loca.core.world import write_text_atomic
from loca.records import Episode, EpisodeRecord, RunSummary
from loca.records.load import SUMMARY
from loca.runner.breaker import Breaker, Trip
from loca.runner.config import RunConfig, plan
from loca.runner.records import failure_record, summarize
from loca.runner.rundir import Resume, RunDir

EpisodeFn = Callable[[Episode, Path, RunConfig], EpisodeRecord]
Executor = Literal["local", "ray"]
Stop = Callable[[], bool]


@dataclass(frozen=True)
class RunOutcome:
    summary: RunSummary
    """Of every episode the run directory plans, also written to `summary.json`."""
    resume: Resume
    stopped: Trip | None = None
    """Why the breaker stopped the run early; None when every asked episode ran."""


def execute(config: RunConfig, out: Path, run_episode: EpisodeFn, processes: int = 1, *,
            executor: Executor = "local", ray_address: str | None = None,
            retry_errors: bool = True, breaker: Breaker | None = None,
            on_start: Callable[[Resume], None] | None = None,
            on_result: Callable[[EpisodeRecord], None] | None = None) -> RunOutcome:
    """Run (or resume, or grow) the run at `out` with `config`'s plan. Episodes run in this
    process, in `processes` worker processes, or as Ray tasks (`executor="ray"`, on the cluster
    at `ray_address`, else on a local Ray instance of `processes` CPUs). Finished episodes
    are kept, except those that ended in a state of `records.RETRIED_STATES` with `retry_errors`."""
    run = RunDir(out)
    breaker = breaker or Breaker()
    with run.lock():
        planned, fresh = run.open(config)
        schedule = run.schedule(planned, plan(config), fresh, retry_errors)
        if on_start:
            on_start(schedule.resume)
        if executor == "ray":
            from loca.ray_executor import ray_results
            finished = ray_results(schedule.todo, run, config, run_episode, processes, ray_address,
                                   stop=lambda: breaker.tripped is not None)
        else:
            finished = _results(schedule.todo, run, config, run_episode, processes,
                                stop=lambda: breaker.tripped is not None)
        for episode, raw in finished:
            record = _record(episode, raw, schedule.attempts[episode.episode_id])
            run.store(episode, record)
            if on_result:
                on_result(record)
            breaker.observe(record)
        results = {e.episode_id: r for e in planned if (r := run.finished(e)) is not None}
        summary = summarize(planned, results)
        write_text_atomic(run.root / SUMMARY, summary.model_dump_json(indent=1) + "\n")
    return RunOutcome(summary, schedule.resume, breaker.tripped)


def _record(episode: Episode, returned: Any, attempt: int) -> EpisodeRecord:
    """What an episode function returned, numbered as the `attempt`; anything but a record that
    can be stored as JSON is a bug, recorded as `harness_error`."""
    try:
        if not isinstance(returned, EpisodeRecord):
            raise TypeError(f"the episode function returned a {type(returned).__name__}, not an EpisodeRecord")
        json.dumps(returned.to_dict())
        record = returned
    except (TypeError, ValueError, PydanticSerializationError) as exc:
        record = failure_record(episode, "harness_error", exc)
    return record.model_copy(update={"attempt": attempt})


def _results(todo: list[Episode], run: RunDir, config: RunConfig, run_episode: EpisodeFn,
             processes: int, stop: Stop) -> Iterator[tuple[Episode, EpisodeRecord]]:
    """(episode, record) as episodes finish; an episode function that raises gives a
    `harness_error` record. No episode starts once `stop()` holds; those running finish.
    Cancellation and a lost worker process stop the run (resumable)."""
    if processes <= 1:
        for episode in todo:
            if stop():
                return
            try:
                yield episode, run_episode(episode, run.episode_dir(episode), config)
            except Exception as exc:
                yield episode, failure_record(episode, "harness_error", exc)
        return
    share = config.model_copy(update={"rate_limits": config.rate_limits.split(processes)})
    waiting = iter(todo)
    running: dict[Future[EpisodeRecord], Episode] = {}
    pool = ProcessPoolExecutor(max_workers=processes)
    try:
        while True:
            while len(running) < processes and not stop() and (start := next(waiting, None)):
                running[pool.submit(run_episode, start, run.episode_dir(start), share)] = start
            if not running:
                return
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                episode = running.pop(future)
                try:
                    yield episode, future.result()
                except BrokenProcessPool:
                    raise
                except Exception as exc:
                    yield episode, failure_record(episode, "harness_error", exc)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
