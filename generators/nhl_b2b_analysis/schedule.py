"""The season of nhl_b2b_analysis: games day by day, postponements and their replays, and the
back-to-back counts that are the ground truth (also what the oracle computes from the rows)."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from envs.nhl_b2b_analysis import FIRST_RANGE_ROWS, POSTPONED, back_to_backs
from mock_servers.google_sheet.domain.values import CellInput

TEAMS = ("Anaheim Ducks", "Boston Bruins", "Buffalo Sabres", "Calgary Flames", "Carolina Hurricanes",
         "Chicago Blackhawks", "Colorado Avalanche", "Columbus Blue Jackets", "Dallas Stars", "Detroit Red Wings",
         "Edmonton Oilers", "Florida Panthers", "Los Angeles Kings", "Minnesota Wild", "Montreal Canadiens",
         "Nashville Predators", "New Jersey Devils", "New York Islanders", "New York Rangers", "Ottawa Senators",
         "Philadelphia Flyers", "Pittsburgh Penguins", "San Jose Sharks", "Seattle Kraken", "St. Louis Blues",
         "Tampa Bay Lightning", "Toronto Maple Leafs", "Utah Hockey Club", "Vancouver Canucks",
         "Vegas Golden Knights", "Washington Capitals", "Winnipeg Jets")
OPENING = date(2024, 10, 8)
EASTERN, SASKATCHEWAN = ZoneInfo("America/New_York"), ZoneInfo("America/Regina")
EVENING = (time(19, 0), time(19, 30), time(20, 0), time(21, 0), time(22, 0), time(22, 30))
AFTERNOON = (time(12, 30), time(13, 0), time(15, 0), time(16, 0))
EMPTY_DAY, POSTPONE, RESTED_BIAS = 0.05, 0.03, 3.0
ATTEMPTS = 20  # seasons drawn (each from its own stream) until one holds every guarantee


@dataclass(frozen=True)
class Game:
    day: date
    start: datetime  # aware, Eastern
    visitor: str
    home: str
    visitor_score: int | None
    home_score: int | None
    status: str

    def row(self) -> list[CellInput]:
        """The game as a schedule row (the sheet's column order)."""
        sask = self.start.astimezone(SASKATCHEWAN)
        return [self.day.isoformat(), _clock(sask), _clock(self.start), self.visitor,
                "" if self.visitor_score is None else self.visitor_score, self.home,
                "" if self.home_score is None else self.home_score, self.status]


def _clock(moment: datetime) -> str:
    return f"{moment.hour % 12 or 12}:{moment.minute:02d} {'AM' if moment.hour < 12 else 'PM'}"


def num_teams(games: int) -> int:
    return max(4, min(len(TEAMS), 4 + games // 150))


def _result(rng: random.Random) -> tuple[int, int, str]:
    """(visitor goals, home goals, status) of a game played."""
    roll = rng.random()
    status = "Final" if roll < 0.8 else ("Final/OT" if roll < 0.93 else "Final/SO")
    loser = rng.randint(0, 5)
    winner = loser + (1 if status != "Final" else rng.randint(1, 4))
    return (winner, loser, status) if rng.random() < 0.5 else (loser, winner, status)


def _start(rng: random.Random, day: date) -> datetime:
    slots = AFTERNOON + EVENING if day.weekday() >= 5 else EVENING
    return datetime.combine(day, rng.choice(slots), EASTERN)


def draw_season(rng: random.Random, games: int) -> list[Game]:
    """`games` rows, day by day from the opening night: weekdays 2-8 games and weekends 5-12
    (at most half the teams), 5% of days without games, rested teams preferred but back-to-backs
    allowed (except for one team, which never plays two days running), 3% of games postponed and
    replayed 3-20 days later as a new row. A team plays at most once a day."""
    teams = rng.sample(TEAMS, num_teams(games))
    steady = rng.choice(teams)  # never plays on consecutive days: a team with no set at all
    rows: list[Game] = []
    last: dict[str, date] = {}
    replays: list[tuple[date, Game]] = []
    day = OPENING
    while len(rows) < games:
        busy: set[str] = set()
        due = [g for when, g in replays if when <= day]
        replays = [(when, g) for when, g in replays if when > day]
        for game in due:  # a replay waits for a day both teams are free
            if len(rows) < games and {game.visitor, game.home}.isdisjoint(busy) and not _tired(game, steady, last, day):
                rows.append(_played(rng, Game(day, _start(rng, day), game.visitor, game.home, None, None, POSTPONED)))
                busy |= {game.visitor, game.home}
                last.update({game.visitor: day, game.home: day})
            else:
                replays.append((day + timedelta(days=1), game))
        if rng.random() >= EMPTY_DAY:
            wanted = rng.randint(5, 12) if day.weekday() >= 5 else rng.randint(2, 8)
            yesterday = day - timedelta(days=1)
            free = [t for t in teams if t not in busy and not (t == steady and last.get(t) == yesterday)]
            order = sorted(free, key=lambda t: rng.random() * (RESTED_BIAS if last.get(t) == yesterday else 1.0))
            count = min(wanted, len(order) // 2, len(teams) // 2 - len(busy) // 2, games - len(rows))
            for k in range(max(0, count)):
                visitor, home = order[2 * k], order[2 * k + 1]
                game = Game(day, _start(rng, day), visitor, home, None, None, POSTPONED)
                if rng.random() < POSTPONE:
                    rows.append(game)
                    replays.append((day + timedelta(days=rng.randint(3, 20)), game))
                else:
                    rows.append(_played(rng, game))
                    last.update({visitor: day, home: day})
        day += timedelta(days=1)
    return rows


def _tired(game: Game, steady: str, last: dict[str, date], day: date) -> bool:
    return steady in (game.visitor, game.home) and last.get(steady) == day - timedelta(days=1)


def _played(rng: random.Random, game: Game) -> Game:
    visitor, home, status = _result(rng)
    return Game(game.day, game.start, game.visitor, game.home, visitor, home, status)


def _facts(games: Sequence[Game]) -> list[tuple[date, str, str, str]]:
    return [(g.day, g.visitor, g.home, g.status) for g in games]


def problems(games: Sequence[Game]) -> list[str]:
    """The guarantees a season must hold, broken (none: the season is usable)."""
    found = []
    days: dict[str, list[date]] = defaultdict(list)
    for g in games:
        days[g.visitor].append(g.day)
        days[g.home].append(g.day)
    if any(len(d) != len(set(d)) for d in days.values()):
        found.append("a team plays twice on one date")
    counts = back_to_backs(_facts(games))
    real: dict[str, set[date]] = {t: set() for t in counts}  # the days each team played
    for g in games:
        if g.status != POSTPONED:
            real[g.visitor].add(g.day)
            real[g.home].add(g.day)
    if not any(d - timedelta(days=1) in real[t] and d + timedelta(days=1) in real[t] for t in real for d in real[t]):
        found.append("no three games on three consecutive days")
    if not any(g.day + step in real[t] for g in games if g.status == POSTPONED for t in (g.visitor, g.home)
               for step in (timedelta(days=1), timedelta(days=-1))):
        found.append("no postponed game next to a game of its teams")
    if not any(c["HA"] != c["AH"] for c in counts.values()):
        found.append("HA equals AH for every team")
    if not any(c["Total"] == 0 for c in counts.values()):
        found.append("every team has a back-to-back set")
    first = back_to_backs(_facts(games[:FIRST_RANGE_ROWS - 1]))  # the first range holds the header
    if not any(first[t] != counts[t] for t in first):
        found.append("the first range alone gives the right counts")
    return found


def season(streams: Sequence[random.Random], games: int) -> list[Game]:
    """The first season drawn (one stream per attempt) that holds every guarantee."""
    for rng in streams[:ATTEMPTS]:
        drawn = draw_season(rng, games)
        if not problems(drawn):
            return drawn
    raise RuntimeError(f"no season of {games} games held every guarantee in {ATTEMPTS} draws")
