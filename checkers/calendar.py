"""Calendar events the agent created, found by diffing the world against the snapshot frozen at
generation: the `cal_event` rows added after it (event ids are never reused). Shared by the
tasks whose output is `NewEvents`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from checkers.kit import Context
from loca.core.clock import parse_instant
from mock_servers.calendar import domain
from mock_servers.core import snapshot
from mock_servers.core.db import Database


@dataclass(frozen=True)
class NewEvent:
    """One event the agent created. `start`/`end` are UTC instants; all-day events have none."""

    id: str
    summary: str
    start: datetime | None
    end: datetime | None
    all_day: bool


def _instant(shown: dict[str, str]) -> datetime | None:
    return parse_instant(shown["dateTime"]) if "dateTime" in shown else None


def _read(ctx: Context) -> list[NewEvent]:
    before = snapshot.Snapshot.model_validate(ctx.world.read_truth("snapshot.json"))
    known = before.tables["cal_event"].max_rowid
    db = Database(ctx.world.state_path, readonly=True)
    try:
        with db.read() as session:
            events = [e for e in domain.all_events(session) if domain.event_pk(e["id"]) > known]
    finally:
        db.dispose()
    return [NewEvent(e["id"], e["summary"], _instant(e["start"]), _instant(e["end"]), "date" in e["start"])
            for e in events]


def new_events(ctx: Context) -> list[NewEvent]:
    """What the agent added to the calendar since the snapshot, by id (memoised per grading)."""
    found: list[NewEvent] = ctx.memo(("new_events",), lambda: _read(ctx))
    return found
