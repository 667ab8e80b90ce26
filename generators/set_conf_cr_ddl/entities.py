"""The people, conferences, time zones and deadlines of a set_conf_cr_ddl world: pure data
drawn from the world's RNG streams."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from datetime import timezone as fixed_offset
from typing import Literal
from zoneinfo import ZoneInfo

from envs.set_conf_cr_ddl import AOE_OFFSET

ZoneKind = Literal["aoe", "utc", "offset", "iana"]
NOW = datetime(2025, 9, 15, 9, 0, tzinfo=UTC)
FIRST_DAY, LAST_DAY = 10, 80  # every deadline lies in now + [10 d, 80 d]
EXTENSION_DAYS = (2, 7)
# calendar zones: none is UTC or AoE, so a naive time read in the calendar's zone is wrong
CALENDAR_ZONES = ["America/New_York", "America/Chicago", "America/Los_Angeles", "Europe/Berlin",
                  "Europe/Paris", "Asia/Tokyo", "Asia/Singapore", "Australia/Sydney", "Asia/Kolkata"]
STATED_ZONES = ["America/Los_Angeles", "America/New_York", "America/Sao_Paulo", "Europe/London",
                "Europe/Berlin", "Europe/Lisbon", "Asia/Kolkata", "Asia/Shanghai", "Asia/Tokyo",
                "Asia/Seoul", "Australia/Sydney", "Pacific/Auckland"]
OFFSETS = ["-08:00", "-07:00", "-05:00", "-03:00", "+01:00", "+02:00", "+05:30", "+08:00",
           "+09:00", "+10:00"]
WALL_TIMES = {"aoe": [time(23, 59)] * 4 + [time(12, 0), time(18, 0), time(20, 0)],
              "utc": [time(23, 59), time(12, 0), time(17, 0), time(18, 0)],
              "offset": [time(23, 59), time(17, 0), time(18, 0), time(20, 0), time(9, 0), time(12, 0)],
              "iana": [time(23, 59), time(17, 0), time(18, 0), time(20, 0), time(23, 0), time(12, 0)]}
ZONE_SHARES: dict[ZoneKind, float] = {"aoe": 0.55, "utc": 0.15, "offset": 0.15, "iana": 0.15}
TRACKS = ["Main Track", "Findings Track", "Industry Track", "Demo Track", "Short Paper Track",
          "Student Research Track", "Position Paper Track", "Datasets and Benchmarks Track",
          "Systems Track", "Applications Track", "Theory Track", "Tutorial Track",
          "Doctoral Consortium Track", "Resource Track", "Reproducibility Track"]
WORDS = {  # research topics by initial: a conference's name spells its acronym
    "A": ["Algorithms", "Acoustics", "Automation", "Agents"],
    "B": ["Bioinformatics", "Biometrics", "Bandits"],
    "C": ["Computation", "Cognition", "Control", "Cryptography", "Causality"],
    "D": ["Databases", "Dynamics", "Design", "Discovery"],
    "E": ["Economics", "Embedded Systems", "Ethics", "Education"],
    "F": ["Forecasting", "Fairness", "Formal Methods"],
    "G": ["Graphs", "Geometry", "Games"],
    "H": ["Hardware", "Haptics", "Healthcare"],
    "I": ["Inference", "Interaction", "Imaging"],
    "K": ["Knowledge", "Kernels"],
    "L": ["Learning", "Language", "Logic", "Linguistics"],
    "M": ["Modeling", "Multimedia", "Mobility", "Mining"],
    "N": ["Networks", "Neuroscience", "Numerics"],
    "O": ["Optimization", "Ontologies"],
    "P": ["Perception", "Programming", "Privacy", "Planning"],
    "Q": ["Quantum Computing", "Queueing"],
    "R": ["Robotics", "Reasoning", "Retrieval", "Recommendation"],
    "S": ["Security", "Semantics", "Statistics", "Software", "Speech", "Simulation"],
    "T": ["Theory", "Text", "Testing"],
    "U": ["Usability", "Uncertainty"],
    "V": ["Vision", "Verification", "Visualization"],
    "W": ["Web", "Wireless", "Wearables"],
}
LETTERS = sorted(WORDS)
# acronyms that read as words or as other abbreviations of the mails
RESERVED = {"AM", "PM", "AOE", "UTC", "GMT", "PDF", "CFP", "ACM", "ID", "IT", "IS", "IN", "ON",
            "OR", "AN", "AS", "AT", "BE", "BY", "DO", "GO", "HE", "IF", "ME", "MY", "NO", "OF",
            "OK", "SO", "TO", "UP", "US", "WE", "THE", "AND", "FOR", "NOT", "ARE", "ALL", "NEW",
            "TBD", "FAQ", "URL", "RE", "FW", "FWD", "CR", "EU", "UK", "USA", "DEAR", "BEST",
            "MAIN", "DEMO", "NOTE", "CALL", "PAPER", "TRACK", "READY", "DUE", "LAB", "HI"}
VENUES = ["International Conference on", "Symposium on", "Conference on", "Annual Meeting on",
          "International Symposium on", "European Conference on", "Asian Conference on"]
CITIES = ["Lisbon", "Vancouver", "Kyoto", "Singapore", "Vienna", "Montreal", "Barcelona",
          "Sydney", "Seoul", "Copenhagen", "Buenos Aires", "Cape Town", "Prague", "Dublin",
          "Marrakesh", "Taipei", "Helsinki", "Edinburgh", "Bangalore", "Santiago"]
ACRONYM_LENGTHS = ([2] * 3) + ([3] * 9) + ([4] * 6) + ([5] * 2)



@dataclass(frozen=True)
class Zone:
    """How a deadline's time zone is stated: AoE, UTC, a fixed offset (`name` "+05:30") or an
    IANA zone (`name` "Europe/Berlin")."""

    kind: ZoneKind
    name: str = ""

    @property
    def tz(self) -> tzinfo:
        if self.kind == "aoe":
            return fixed_offset(AOE_OFFSET)
        if self.kind == "utc":
            return UTC
        if self.kind == "offset":
            sign = -1 if self.name[0] == "-" else 1
            hours, minutes = (int(p) for p in self.name[1:].split(":"))
            return fixed_offset(sign * timedelta(hours=hours, minutes=minutes))
        return ZoneInfo(self.name)


AOE, UTC_ZONE = Zone("aoe"), Zone("utc")


@dataclass(frozen=True)
class Deadline:
    """A camera-ready deadline as one e-mail states it."""

    track: str
    at: datetime  # the instant, UTC
    zone: Zone  # the zone it is written in

    @property
    def local(self) -> datetime:
        return self.at.astimezone(self.zone.tz)

    def restated(self, zone: Zone) -> Deadline:
        """The same instant written in another zone."""
        return Deadline(self.track, self.at, zone)


@dataclass(frozen=True)
class Person:
    name: str
    email: str

    @property
    def first(self) -> str:
        return self.name.split()[0]


@dataclass(frozen=True)
class Conference:
    acronym: str
    name: str
    year: int
    tracks: tuple[str, ...]
    city: str
    starts: date
    zone: Zone  # the zone its organisers state deadlines in

    @property
    def site(self) -> str:
        return f"{self.acronym.lower()}{self.year}.org"

    @property
    def label(self) -> str:
        return f"{self.acronym} {self.year}"


def draw_zone(rng: random.Random) -> Zone:
    kind: ZoneKind = rng.choices(list(ZONE_SHARES), weights=list(ZONE_SHARES.values()))[0]
    if kind == "offset":
        return Zone(kind, rng.choice(OFFSETS))
    if kind == "iana":
        return Zone(kind, rng.choice(STATED_ZONES))
    return Zone(kind)


class Acronyms:
    """Unique acronyms (case-insensitively), none reserved; `longer(a)` makes one that has `a`
    as a prefix, `shorter(a)` one that is a prefix of `a`."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def _take(self, acronym: str) -> bool:
        if acronym in self.used or acronym in RESERVED:
            return False
        self.used.add(acronym)
        return True

    def fresh(self, length: int | None = None) -> str:
        for _ in range(10_000):
            size = length or self.rng.choice(ACRONYM_LENGTHS)
            acronym = "".join(self.rng.choice(LETTERS) for _ in range(size))
            if self._take(acronym):
                return acronym
        raise ValueError("no free acronym left")

    def longer(self, base: str) -> str:
        for letter in self.rng.sample(LETTERS, len(LETTERS)):
            if self._take(base + letter):
                return base + letter
        return self.fresh()

    def pair(self) -> tuple[str, str]:
        """A fresh acronym and a longer one it is a prefix of."""
        for _ in range(1_000):
            short = self.fresh(self.rng.choice([2, 3, 3, 4]))
            long = self.longer(short)
            if long.startswith(short):
                return short, long
        raise ValueError("no free acronym pair left")


def conference(rng: random.Random, acronym: str, track: str | None = None) -> Conference:
    """A conference with 3-5 tracks (including `track` when given)."""
    words = [rng.choice(WORDS[letter]) for letter in acronym]
    topics = f"{', '.join(words[:-1])} and {words[-1]}"
    tracks = rng.sample(TRACKS, rng.randint(3, 5))
    if track is not None and track not in tracks:
        tracks[rng.randrange(len(tracks))] = track
    starts = (NOW + timedelta(days=rng.randint(75, 200))).date()
    return Conference(acronym, f"{rng.choice(VENUES)} {topics}", starts.year,
                      tuple(tracks), rng.choice(CITIES), starts, draw_zone(rng))


class Deadlines:
    """Deadline instants in now + [10 d, 80 d]; the final deadlines of targets are distinct."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.finals: set[datetime] = set()

    def first(self, track: str, zone: Zone, latest_day: int = LAST_DAY - EXTENSION_DAYS[1]) -> Deadline:
        """A first announcement: late enough that a UTC correction (12 h earlier) stays in range,
        early enough that an extension does."""
        for _ in range(1_000):
            day = (NOW + timedelta(days=self.rng.randint(FIRST_DAY + 1, latest_day))).date()
            local = datetime.combine(day, self.rng.choice(WALL_TIMES[zone.kind]), zone.tz)
            if in_range(local - timedelta(hours=12)) and in_range(local + timedelta(days=7)):
                return Deadline(track, local.astimezone(UTC), zone)
        raise ValueError("no deadline in range")

    def keep_final(self, deadline: Deadline) -> bool:
        """Claim `deadline` as a target's final one; False when another target has it."""
        if deadline.at in self.finals:
            return False
        self.finals.add(deadline.at)
        return True


def in_range(moment: datetime) -> bool:
    return NOW + timedelta(days=FIRST_DAY) <= moment <= NOW + timedelta(days=LAST_DAY)


def extended(deadline: Deadline, days: int) -> Deadline:
    """The same wall time `days` later, in the same zone."""
    local = deadline.local
    moved = datetime.combine(local.date() + timedelta(days=days), local.time(), deadline.zone.tz)
    return Deadline(deadline.track, moved.astimezone(UTC), deadline.zone)


def corrected_to_utc(deadline: Deadline) -> Deadline:
    """The same wall time, read in UTC instead of the zone it was stated in."""
    return Deadline(deadline.track, deadline.local.replace(tzinfo=UTC), UTC_ZONE)
