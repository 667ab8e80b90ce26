"""Run records: the typed files of a run directory (`models`), written by the runner and read
through one loader (`load`) by the runner, the report, the viewer and the export."""

from loca.records.load import RunFileError, StoredRun, load_run
from loca.records.models import (
    SCHEMA_VERSION,
    Episode,
    EpisodeRecord,
    RunManifest,
    RunSettings,
    RunSummary,
    Tally,
)

__all__ = ["SCHEMA_VERSION", "Episode", "EpisodeRecord", "RunFileError", "RunManifest", "RunSettings",
           "RunSummary", "StoredRun", "Tally", "load_run"]
