"""Generator of nhl_b2b_analysis: one Google Sheet holding a season's schedule (Date, start times in
Saskatchewan and Eastern time, Visitor, Score, Home, Score.1, Status), long enough to be read in
ranges, with postponed games replayed later as new rows.

Scale: `num_games` (primary), the schedule's rows; the number of teams follows from it
(clamp(4 + g/150, 4, 32)). Each game is about 30 tokens of the read set, so the primary count
alone lands on any target."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from envs.nhl_b2b_analysis import CSV, SCHEDULE_HEADERS, SCHEDULE_PREFIX, SCHEDULE_SHEET, TASK, back_to_backs, report
from generators.common import create_world, finish_world
from generators.nhl_b2b_analysis.schedule import ATTEMPTS, Game, num_teams, season
from loca.core.rng import WorldRng
from loca.core.world import World, WorldMeta
from mock_servers.google_sheet import domain
from mock_servers.google_sheet.domain.values import CellInput

VERSION = "1"


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_games: int = Field(ge=TASK.scale.lo, le=TASK.scale.hi)

    def resolved(self) -> dict[str, int]:
        return {"num_games": self.num_games, "num_teams": num_teams(self.num_games)}


def resolve_params(params: dict[str, object]) -> dict[str, int]:
    return Params.model_validate({k: v for k, v in params.items() if k != "num_teams"}).resolved()


def title_of(games: list[Game]) -> str:
    return f"{SCHEDULE_PREFIX} {games[0].day.isoformat()} to {games[-1].day.isoformat()}"


def generate(root: Path, params: dict[str, object], seed: int, target_tokens: int | None = None) -> World:
    """Build the world directory for (params, seed). Pure in its inputs: same inputs, same
    content hash."""
    p = resolve_params(params)
    rngs = WorldRng(TASK.name, seed)
    games = season([rngs.stream("season", attempt) for attempt in range(ATTEMPTS)], p["num_games"])
    last_day = games[-1].day
    now = datetime.combine(last_day + timedelta(days=1), datetime.min.time(), UTC).replace(hour=12)
    title = title_of(games)
    meta = WorldMeta(task=TASK.name, seed=seed, params=p, now=now.isoformat().replace("+00:00", "Z"),
                     target_tokens=target_tokens, generator_version=VERSION,
                     accounts={"google_sheet": {"schedule_title": title}})
    world, db = create_world(root, meta, TASK.servers.values())
    rows: list[list[CellInput]] = [list(SCHEDULE_HEADERS), *(g.row() for g in games)]
    with db.write() as session:
        domain.create(session, task=TASK.name, seed=seed, title=title, created=_created(games[0].day),
                      sheets=[domain.SheetSpec(SCHEDULE_SHEET, rows, column_count=len(SCHEDULE_HEADERS))],
                      today=now.date())
    db.dispose()
    answer = report(back_to_backs([(g.day, g.visitor, g.home, g.status) for g in games]))
    return finish_world(world, TASK, {CSV.file: answer})


def _created(opening: date) -> str:
    """When the schedule was published: a month before opening night."""
    return f"{(opening - timedelta(days=30)).isoformat()}T15:00:00Z"
