"""What the runner makes of episodes: the record of one that failed outside the agent loop, and
the summary of a run (the models themselves are `loca.records`)."""

from __future__ import annotations

import traceback
from collections import Counter

from loca.core.lengths import label
from loca.core.outcome import EpisodeError
from loca.records import Episode, EpisodeRecord, RunSummary, Tally
from scaffolds.result import PROVIDER_STATES

RETRIED_STATES = frozenset({"llm_error", "harness_error", *PROVIDER_STATES})
"""Terminal states a rerun tries again (unless asked not to): the provider or our code failed,
not the agent."""


def failure_record(episode: Episode, terminal_state: str, exc: BaseException) -> EpisodeRecord:
    """The record of an episode that ended by an exception outside the agent loop: ungraded,
    scoring 0, with the error (class, message, traceback) for diagnosis."""
    error = EpisodeError.model_validate({"class": type(exc).__name__, "message": str(exc),
                                         "traceback": "".join(traceback.format_exception(exc))})
    return EpisodeRecord.model_validate({**episode.to_dict(), "terminal_state": terminal_state,
                                         "graded": False, "success": False, "reward": 0.0,
                                         "error": error})


def summarize(planned: list[Episode], results: dict[str, EpisodeRecord]) -> RunSummary:
    """The summary of `planned` episodes from the records of those that finished."""
    lengths = [label(n) for n in sorted({e.length for e in planned})]
    by_length: dict[str, Tally] = {name: Tally() for name in lengths}
    by_task: dict[str, Tally] = {}
    by_task_length: dict[str, dict[str, Tally]] = {}
    for episode in planned:
        record = results.get(episode.episode_id)
        length = label(episode.length)
        cells = by_task_length.setdefault(episode.task, {})
        for tally in (by_length[length], by_task.setdefault(episode.task, Tally()),
                      cells.setdefault(length, Tally())):
            tally.episodes += 1
            tally.finished += record is not None
            tally.passed += record is not None and record.success
    for cells in by_task_length.values():
        ordered = {name: cells[name] for name in lengths if name in cells}
        cells.clear()
        cells.update(ordered)
    for tally in [*by_length.values(), *by_task.values(),
                  *(t for cells in by_task_length.values() for t in cells.values())]:
        tally.accuracy = tally.passed / tally.episodes
    finished = [r for e in planned if (r := results.get(e.episode_id)) is not None]
    passed = sum(r.success for r in finished)
    deviations = [abs(r.env_description_tokens - r.target_tokens) / r.target_tokens
                  for r in finished if r.env_description_tokens]
    return RunSummary(
        episodes=len(planned), finished=len(finished), passed=passed,
        accuracy=passed / len(planned) if planned else 0.0,
        by_length=by_length, by_task=by_task, by_task_length=by_task_length,
        by_terminal_state=dict(sorted(Counter(r.terminal_state for r in finished).items())),
        not_passed=dict(sorted(Counter(r.terminal_state for r in finished if not r.success).items())),
        by_error_kind=dict(sorted(Counter(k for r in finished if (k := r.error_kind)).items())),
        max_length_deviation=max(deviations, default=0.0))
