"""Runs: a plan (tasks x lengths x seeds x trials, one agent with its settings) -> episodes ->
records in a run directory -> a summary. Rerunning a command on its run directory resumes it,
retrying the episodes that ended in a provider or harness error; a command with the same
settings and a larger plan grows it.

`config` (what a run is), `rundir` (its files, resume and growth), `records` (failure records
and the summary; the models of the files are `loca.records`), `breaker` (stopping on a failing
provider), `engine` (running the plan)."""

from loca.records import Episode, EpisodeRecord, RunSummary
from loca.runner.breaker import Breaker, Trip, explain
from loca.runner.config import KeepWorlds, RunConfig, plan
from loca.runner.engine import EpisodeFn, Executor, RunOutcome, execute
from loca.runner.records import RETRIED_STATES, failure_record
from loca.runner.rundir import Resume, RunDir, RunError, SettingsError

__all__ = [
    "RETRIED_STATES", "Breaker", "Episode", "EpisodeFn", "EpisodeRecord", "Executor", "KeepWorlds",
    "Resume", "RunConfig", "RunDir", "RunError", "RunOutcome", "RunSummary", "SettingsError", "Trip",
    "execute", "explain", "failure_record", "plan",
]
