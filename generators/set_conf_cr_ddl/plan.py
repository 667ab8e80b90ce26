"""The plan of a set_conf_cr_ddl world: which conferences exist, which (conference, track)
pairs are targets, every e-mail (what it states and when it was sent), the calendar's
pre-existing events, and the ground truth. Pure data drawn from the world's RNG streams;
the package's `generate` renders and stores it."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from faker import Faker

from envs.set_conf_cr_ddl import EVENTS, FIRST_PAGE, LEAD, LENGTH
from generators.set_conf_cr_ddl.entities import (
    AOE,
    CALENDAR_ZONES,
    EXTENSION_DAYS,
    NOW,
    UTC_ZONE,
    Acronyms,
    Conference,
    Deadline,
    Deadlines,
    Person,
    conference,
    corrected_to_utc,
    extended,
)
from loca.core.clock import iso_z

MailKind = Literal["instructions", "combined", "reminder", "extension", "correction", "cfp",
                   "registration", "update", "misc"]
GENERAL_KINDS: tuple[MailKind, ...] = ("cfp", "registration", "update")
SHARES = {"extended": 0.4, "corrected": 0.1, "other_track": 0.3, "reminded": 0.3}
NOISE_CAMERA_READY = 0.7  # share of noise conferences that announce a camera-ready deadline
MIN_TARGETS, MIN_NOISE = 3, 2
MAIL_WINDOW = (timedelta(days=60), timedelta(minutes=10))  # e-mails sent in now - [60 d, 10 min]


@dataclass
class Mail:
    """One e-mail of the inbox: its kind, its conference, the deadlines it states (a combined
    e-mail states several tracks' deadlines), the deadline it replaces (extension, correction)
    and when it was sent."""

    kind: MailKind
    conference: Conference | None = None
    deadlines: tuple[Deadline, ...] = ()
    previous: Deadline | None = None
    at: datetime = NOW


@dataclass(frozen=True)
class Flags:
    """The edge cases a target carries."""

    in_aoe: bool = False  # stated in AoE whatever the conference's habit
    extended: bool = False
    stale_reminder: bool = False  # a reminder of the superseded deadline, before the extension
    corrected: bool = False  # restated in UTC instead of AoE
    other_track: bool = False  # another track of the conference announces its own deadline
    reminded: bool = False  # a reminder restating the final deadline


@dataclass(frozen=True)
class Target:
    conference: Conference
    track: str
    first: Deadline  # as first announced
    final: Deadline  # as last stated: the truth
    flags: Flags

    @property
    def line(self) -> str:
        return f"{self.conference.acronym} ({self.track})"


@dataclass(frozen=True)
class EventPlan:
    summary: str
    start: dict[str, str]
    end: dict[str, str]
    created: datetime
    description: str | None = None
    location: str | None = None


@dataclass
class WorldPlan:
    owner: Person
    zone: str  # the calendar's time zone
    targets: list[Target]  # in the order of the conference list
    noise: list[Conference]
    mails: list[Mail]
    threads: list[list[Mail]] = field(default_factory=list)  # per target: its deadline e-mails
    events: list[EventPlan] = field(default_factory=list)


def default_misc(num_target: int) -> int:
    return 2 + math.ceil(num_target / 2)


def default_noise(num_target: int) -> int:
    return round(1.4 * num_target)


# ---------------------------------------------------------------- targets

def _flags(rng: random.Random, index: int) -> Flags:
    """Drawn by the fixed shares; the first three targets carry the guaranteed edge cases (an
    extension after a reminder of the old deadline, stated in AoE; a UTC correction, which
    corrects an AoE statement; another track with its own deadline)."""
    drawn = {k: rng.random() < share for k, share in SHARES.items()}
    if index == 0:
        drawn.update(extended=True, corrected=False)
    elif index == 1:
        drawn.update(corrected=True)
    elif index == 2:
        drawn.update(other_track=True)
    stale = drawn["extended"] and (index == 0 or rng.random() < 0.7)
    return Flags(index == 0 or drawn["corrected"], drawn["extended"], stale, drawn["corrected"],
                 drawn["other_track"], drawn["reminded"])


def _restated(rng: random.Random, deadline: Deadline) -> Deadline:
    """A reminder's statement: the same instant, now and then written in UTC."""
    return deadline.restated(UTC_ZONE) if rng.random() < 0.3 else deadline


def _target_chain(rng: random.Random, dl: Deadlines, conf: Conference, track: str,
                  flags: Flags) -> tuple[Deadline, list[Mail]]:
    """The target track's first deadline and its deadline e-mails, oldest first."""
    zone = AOE if flags.in_aoe else conf.zone
    for _ in range(1_000):
        first = current = dl.first(track, zone)
        mails = [Mail("instructions", conf, (first,))]
        if flags.extended:
            if flags.stale_reminder:
                mails.append(Mail("reminder", conf, (_restated(rng, current),)))
            new = extended(current, rng.randint(*EXTENSION_DAYS))
            mails.append(Mail("extension", conf, (new,), previous=current))
            current = new
        if flags.corrected:
            new = corrected_to_utc(current)
            mails.append(Mail("correction", conf, (new,), previous=current))
            current = new
        if flags.reminded:
            mails.append(Mail("reminder", conf, (_restated(rng, current),)))
        if dl.keep_final(current):
            return first, mails
    raise ValueError("no distinct final deadline left")


def _other_chain(rng: random.Random, dl: Deadlines, conf: Conference, track: str,
                 final: Deadline) -> list[Mail]:
    """Deadline e-mails of another track of the target's conference (never the target's
    final deadline)."""
    other = rng.choice([t for t in conf.tracks if t != track])
    for _ in range(1_000):
        first = last = dl.first(other, conf.zone)
        mails = [Mail("instructions", conf, (first,))]
        if rng.random() < SHARES["extended"]:
            last = extended(first, rng.randint(*EXTENSION_DAYS))
            mails.append(Mail("extension", conf, (last,), previous=first))
        if abs(last.at - final.at) >= timedelta(hours=1):
            return mails
    raise ValueError("no deadline apart from the target's")


def _interleave(rng: random.Random, a: list[Mail], b: list[Mail]) -> list[Mail]:
    """`a` and `b` merged in a random order that keeps each one's order."""
    slots = [0] * len(a) + [1] * len(b)
    rng.shuffle(slots)
    sources = [iter(a), iter(b)]
    return [next(sources[s]) for s in slots]


def _general(rng: random.Random, conf: Conference, count: int) -> list[Mail]:
    """`count` general e-mails of a conference, each kind once before any repeats."""
    kinds = rng.sample(GENERAL_KINDS, len(GENERAL_KINDS)) * 2
    return [Mail(kind, conf) for kind in kinds[:count]]


def _target(rng: random.Random, dl: Deadlines, conf: Conference, track: str,
            flags: Flags) -> tuple[Target, list[Mail], list[Mail]]:
    """A target, its thread (every deadline e-mail of its conference, in sending order) and
    its conference's other e-mails."""
    first, thread = _target_chain(rng, dl, conf, track, flags)
    final = next(d for m in reversed(thread) for d in m.deadlines if d.track == track)
    if flags.other_track:
        other = _other_chain(rng, dl, conf, track, final)
        if rng.random() < 0.5:  # the first announcements of both tracks in one e-mail
            thread[0] = Mail("combined", conf, (first, *other.pop(0).deadlines))
        thread = [thread[0], *_interleave(rng, thread[1:], other)]
    target = Target(conf, track, first, final, flags)
    return target, thread, _general(rng, conf, rng.randint(0, 2))


# ---------------------------------------------------------------- noise conferences

def _noise_mails(rng: random.Random, dl: Deadlines, conf: Conference, track: str | None) -> list[Mail]:
    """U{1..5} e-mails of a conference nobody asked about; with `track` (or by chance) they
    announce a camera-ready deadline, maybe extend it and remind of it."""
    count = rng.randint(1, 5)
    mails: list[Mail] = []
    if track is not None or rng.random() < NOISE_CAMERA_READY:
        current = dl.first(track or rng.choice(conf.tracks), conf.zone)
        mails.append(Mail("instructions", conf, (current,)))
        if count > len(mails) and rng.random() < SHARES["extended"]:
            new = extended(current, rng.randint(*EXTENSION_DAYS))
            mails.append(Mail("extension", conf, (new,), previous=current))
            current = new
        if count > len(mails) and rng.random() < SHARES["reminded"]:
            mails.append(Mail("reminder", conf, (_restated(rng, current),)))
    return mails + _general(rng, conf, count - len(mails))


# ---------------------------------------------------------------- sending times

class SendTimes:
    """Distinct send instants, to the second, in the mail window."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[datetime] = set()
        self.first = NOW - MAIL_WINDOW[0]
        self.span = int((MAIL_WINDOW[0] - MAIL_WINDOW[1]).total_seconds())

    def draw(self, count: int) -> list[datetime]:
        """`count` new instants, ascending."""
        picked: set[datetime] = set()
        while len(picked) < count:
            moment = self.first + timedelta(seconds=self.rng.randrange(self.span))
            if moment not in self.used:
                picked.add(moment)
        self.used |= picked
        return sorted(picked)

    def move(self, mails: list[Mail], before: datetime) -> None:
        """Shift `mails` (keeping their spacing) so the newest is sent before `before`."""
        delta = mails[-1].at - before + timedelta(seconds=self.rng.randint(3_600, 3 * 86_400))
        while any(m.at - delta in self.used for m in mails):
            delta += timedelta(seconds=1)
        for m in mails:
            self.used.discard(m.at)
            m.at -= delta
            self.used.add(m.at)


def _time(times: SendTimes, threads: list[list[Mail]], singles: list[Mail]) -> None:
    for thread in threads:
        for mail, at in zip(thread, times.draw(len(thread)), strict=True):
            mail.at = at
    for mail, at in zip(singles, times.draw(len(singles)), strict=True):
        mail.at = at


def _pagination_trap(times: SendTimes, plan: WorldPlan) -> None:
    """Every deadline e-mail of at least one target lies beyond the inbox's first page."""
    newest = sorted(plan.mails, key=lambda m: m.at, reverse=True)
    first_page = {id(m) for m in newest[:FIRST_PAGE]}
    if any(not any(id(m) in first_page for m in thread) for thread in plan.threads):
        return
    shortest = min(plan.threads, key=len)
    times.move(shortest, newest[-1].at)


# ---------------------------------------------------------------- the world

def _events(rng: random.Random, fake: Faker, plan: WorldPlan) -> list[EventPlan]:
    """3 + floor(t/4) events; the first is a reading group named after a target's acronym;
    others: trips to target conferences, a noise conference's own camera-ready reminder, and
    everyday meetings."""
    count = 3 + len(plan.targets) // 4
    zone = plan.zone
    events = []
    for i in range(count):
        kind = "reading" if i == 0 else rng.choice(["reading", "travel", "noise", "meeting", "meeting"])
        created = NOW - timedelta(days=rng.randint(1, 60), minutes=rng.randint(0, 1439))
        day = (NOW + timedelta(days=rng.randint(-7, 90))).date()
        hour = rng.randint(8, 17)
        target = rng.choice(plan.targets)
        if kind == "travel":
            conf = target.conference
            events.append(EventPlan(f"Trip to {conf.label} ({conf.city})",
                                    {"date": conf.starts.isoformat()},
                                    {"date": (conf.starts + timedelta(days=4)).isoformat()}, created))
            continue
        start = f"{day.isoformat()}T{hour:02d}:{rng.choice(['00', '30'])}:00"
        length = rng.choice([30, 60, 90])
        end = (datetime.fromisoformat(start) + timedelta(minutes=length)).isoformat()
        if kind == "reading":
            summary = f"{target.conference.acronym} reading group"
            description = f"We discuss a paper from last year's {target.conference.acronym} proceedings."
        elif kind == "noise" and plan.noise:
            summary = EVENTS.title.format(acronym=rng.choice(plan.noise).acronym)
            description = "Upload the final version."
        else:
            summary = rng.choice(["Lab meeting", "Thesis committee meeting", "Office hours",
                                  f"Call with {fake.name()}", "Reading week planning",
                                  "Seminar: invited talk", "Grant report review"])
            description = None
        events.append(EventPlan(summary, {"dateTime": start, "timeZone": zone},
                                {"dateTime": end, "timeZone": zone}, created, description,
                                rng.choice([None, "Room 2.14", "Online"])))
    return events


def _owner(fake: Faker) -> Person:
    first, last = fake.first_name(), fake.last_name()
    return Person(f"{first} {last}", f"{first.lower()}.{last.lower()}@{fake.last_name().lower()}-university.edu")


def plan_world(streams: dict[str, random.Random], fake: Faker, num_target: int, num_noise: int,
               num_misc: int) -> WorldPlan:
    """Draw the whole world. `streams` holds the named child streams: "acronyms", "targets",
    "noise", "times", "events". At least three targets and two noise conferences (the
    guaranteed edge cases)."""
    if num_target < MIN_TARGETS or num_noise < MIN_NOISE:
        raise ValueError(f"a world needs at least {MIN_TARGETS} targets and {MIN_NOISE} noise conferences")
    names, rng = Acronyms(streams["acronyms"]), streams["targets"]
    dl = Deadlines(streams["targets"])
    # prefix pairs: a target's acronym starts another conference's, and a target's acronym
    # extends a noise conference's (SR / SRL both ways)
    short, long = names.pair()
    noise_short, target_long = names.pair()
    target_names = [short, target_long, *(names.fresh() for _ in range(num_target - 2))]
    plan = WorldPlan(_owner(fake), rng.choice(CALENDAR_ZONES), [], [], [])
    general: list[Mail] = []
    for i, acronym in enumerate(target_names):
        conf = conference(rng, acronym)
        target, thread, others = _target(rng, dl, conf, rng.choice(conf.tracks), _flags(rng, i))
        plan.targets.append(target)
        plan.threads.append(thread)
        plan.mails += thread
        general += others
    paired_track = plan.targets[0].track  # the longer acronym's conference announces it too
    rng.shuffle(plan.targets)
    noise_rng = streams["noise"]
    noise_dl = Deadlines(noise_rng)
    noise_names = [long, noise_short, *(names.fresh() for _ in range(num_noise - 2))]
    for i, acronym in enumerate(noise_names):
        forced = paired_track if i == 0 else None
        conf = conference(noise_rng, acronym, forced)
        plan.noise.append(conf)
        plan.mails += _noise_mails(noise_rng, noise_dl, conf, forced)
    min_misc = FIRST_PAGE + min(len(t) for t in plan.threads) + 1 - len(plan.mails) - len(general)
    general += [Mail("misc") for _ in range(max(num_misc, min_misc))]
    times = SendTimes(streams["times"])
    by_conference: dict[int, list[Mail]] = {id(c): [] for c in plan.noise}
    for m in plan.mails:
        if m.conference is not None and id(m.conference) in by_conference:
            by_conference[id(m.conference)].append(m)
    noise_threads = list(by_conference.values())
    _time(times, plan.threads + noise_threads, general)
    plan.mails += general
    _pagination_trap(times, plan)
    plan.mails.sort(key=lambda m: m.at)
    plan.events = _events(streams["events"], fake, plan)
    return plan


def truth_events(plan: WorldPlan) -> list[dict[str, str]]:
    """The expected new events, in the order of the conference list."""
    return [{"acronym": t.conference.acronym, "track": t.track,
             "title": EVENTS.title.format(acronym=t.conference.acronym),
             "deadline": iso_z(t.final.at), "start": iso_z(t.final.at - LEAD),
             "end": iso_z(t.final.at - LEAD + LENGTH)} for t in plan.targets]


def info_text(plan: WorldPlan) -> str:
    return "".join(f"{t.line}\n" for t in plan.targets)

