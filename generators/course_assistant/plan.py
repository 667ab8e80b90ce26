"""The plan of a course_assistant world, before any text is written: the roster, who submitted
(and how), and when each inbox message arrives. Pure: named random streams in, plan out.

Roles are drawn from their own streams, so the distractor count (the fine length knob) never
moves a student, a submission or its time."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from envs.course_assistant import DROPPED, ENROLLED, TRAP_PAGE
from generators.common import PersonNames

NOW = datetime(2025, 6, 10, 9, 0, tzinfo=UTC)
ANNOUNCED = NOW - timedelta(days=29)  # the TA's submission instructions to the class list
OPENS = NOW - timedelta(days=27)  # the oldest submission arrives then; every other message later
LATEST = NOW - timedelta(minutes=10)
MIN_INBOX = TRAP_PAGE + 5  # distractors pad a small inbox so the trap (the oldest) is past page one
DOMAINS = ("northfield.edu", "westbrook.edu", "lakeshore.edu", "riverton.edu", "hillcrest.edu")
PERSONAL = ("gmail.com", "outlook.com", "yahoo.com", "proton.me", "icloud.com")
STREAMS = ("people", "roles", "times", "distractors")

# message kinds
SUBMISSION, RESUBMISSION, LATE_DROP = "submission", "resubmission", "dropped_submission"
PERSONAL_SUBMISSION, UNKNOWN_ID = "personal_submission", "unknown_id_submission"
OTHER_COURSE, QUESTION, DISTRACTOR = "other_course", "question", "distractor"


@dataclass(frozen=True)
class Student:
    name: str
    student_id: str
    email: str
    status: str

    @property
    def first(self) -> str:
        return self.name.split()[0]


@dataclass(frozen=True)
class Message:
    """One inbox message as planned: who it concerns (`student`, None for distractors), who
    sends it and when."""

    kind: str
    at: datetime
    sender: str
    sender_name: str
    student: Student | None = None


@dataclass
class Plan:
    ta: Student  # the TA's name and address (no ID, no status)
    domain: str
    students: list[Student]  # roster order
    messages: list[Message]
    pairs: list[tuple[Student, Student]]  # same full name: (the one who submitted, the one who did not)
    unknown: list[Student] = field(default_factory=list)  # submitters not on the roster

    @property
    def submitted_ids(self) -> set[str]:
        kinds = (SUBMISSION, RESUBMISSION, LATE_DROP, PERSONAL_SUBMISSION, UNKNOWN_ID)
        return {m.student.student_id for m in self.messages if m.kind in kinds and m.student}

    def recipients(self) -> list[Student]:
        """The ground truth: enrolled students without a submission, by Student ID."""
        done = self.submitted_ids
        return sorted((s for s in self.students if s.status == ENROLLED and s.student_id not in done),
                      key=lambda s: s.student_id)


@dataclass(frozen=True)
class Counts:
    """How many of each role a world of `num_students` holds (fixed ratios)."""

    students: int
    dropped: int
    submitters: int  # enrolled students who submitted
    edge: int  # of each edge case (resubmissions, personal addresses, other course, ...)
    pairs: int  # same-name pairs

    @classmethod
    def of(cls, n: int) -> Counts:
        """Dropped round(0.2 n); submitters floor(0.7 x enrolled) (integer arithmetic: no
        float rounding at the boundaries)."""
        dropped = (2 * n + 5) // 10
        return cls(n, dropped, 7 * (n - dropped) // 10, max(1, n // 50), max(1, n // 150))


def default_distractors(num_students: int) -> int:
    """ceil(0.15 n)."""
    return -(-15 * num_students // 100)


def _address(name: str, domain: str, taken: set[str], rng: random.Random | None = None) -> str:
    """`first.last@domain` (a number appended on a clash), or a personal style with `rng`."""
    first, last = (re.sub(r"[^a-z]", "", part.lower()) for part in name.split(maxsplit=1))
    base = f"{first}.{last}" if rng is None else f"{first}{last}{rng.randint(1, 99)}"
    address, number = f"{base}@{domain}", 2
    while address in taken:
        address, number = f"{base}{number}@{domain}", number + 1
    taken.add(address)
    return address


def _people(rng: random.Random, names: PersonNames, c: Counts, domain: str,
            extra: int) -> tuple[list[Student], list[Student]]:
    """The roster (unique names except `c.pairs` same-name pairs, listed next to each other;
    unique IDs and addresses; everybody enrolled for now) and `extra` people not on it."""
    unique: list[str] = []
    seen: set[str] = set()
    while len(unique) < c.students - c.pairs + extra:
        name = names.full()
        if name not in seen:
            seen.add(name)
            unique.append(name)
    roster_names = unique[:c.students - c.pairs] + unique[:c.pairs]
    ids = [str(i) for i in rng.sample(range(20_000_000, 26_000_000), c.students + extra)]
    taken: set[str] = set()
    roster = [Student(name, ids[i], _address(name, domain, taken), ENROLLED)
              for i, name in enumerate(roster_names)]
    outsiders = [Student(name, ids[c.students + i], _address(name, rng.choice(PERSONAL), taken, rng), "")
                 for i, name in enumerate(unique[c.students - c.pairs:])]
    return sorted(roster, key=lambda s: (s.name.split()[-1], s.name, s.student_id)), outsiders


@dataclass
class _Roles:
    """Disjoint groups of students, each playing one part in the inbox."""

    pairs: list[tuple[Student, Student]]
    dropped_submitters: list[Student]
    submitters: list[Student]  # enrolled, one plain submission each (the trap among them)
    resubmitters: list[Student]
    personal: list[Student]  # submitted from an address not on the roster
    other_course: list[Student]  # enrolled non-submitters who sent a cv-presentation
    questions: list[Student]  # enrolled non-submitters who asked about the presentation


def _roles(rng: random.Random, roster: list[Student], c: Counts) -> tuple[list[Student], _Roles]:
    """Statuses and roles. Returns the roster with statuses set, and the roles."""
    by_name: dict[str, list[Student]] = {}
    for s in roster:
        by_name.setdefault(s.name, []).append(s)
    twins = [group for group in by_name.values() if len(group) == 2]
    for group in twins:
        rng.shuffle(group)
    paired = {s.student_id for group in twins for s in group}
    free = [s for s in roster if s.student_id not in paired]
    rng.shuffle(free)
    dropped, free = free[:c.dropped], free[c.dropped:]
    late = dropped[:min(c.edge, c.dropped - 1)]
    submitters, rest = free[:c.submitters - len(twins)], free[c.submitters - len(twins):]
    e = c.edge
    roles = _Roles(pairs=[(a, b) for a, b in twins], dropped_submitters=late,
                   submitters=submitters[2 * e:], resubmitters=submitters[:e], personal=submitters[e:2 * e],
                   other_course=rest[:e], questions=rest[e:2 * e])
    gone = {s.student_id for s in dropped}
    return [Student(s.name, s.student_id, s.email, DROPPED if s.student_id in gone else ENROLLED)
            for s in roster], roles


def _at(rng: random.Random, after: datetime = OPENS, before: datetime = LATEST) -> datetime:
    """A second in [after + 1 h, before]."""
    return after + timedelta(seconds=rng.randint(3600, int((before - after).total_seconds())))


def _messages(rng: random.Random, roles: _Roles, status: Mapping[str, Student],
              outsiders: list[Student]) -> list[Message]:
    """Every inbox message that concerns a student (the distractors come separately)."""
    def own(kind: str, s: Student, at: datetime | None = None) -> Message:
        current = status[s.student_id]
        return Message(kind, at or _at(rng), current.email, current.name, current)

    trap, *plain = roles.submitters
    out = [own(SUBMISSION, trap, OPENS)]  # the oldest submission: beyond page one of any big inbox
    out += [own(SUBMISSION, s) for s in plain + [a for a, _ in roles.pairs]]
    out += [own(LATE_DROP, s) for s in roles.dropped_submitters]
    for s in roles.resubmitters:
        first = own(SUBMISSION, s, _at(rng, before=LATEST - timedelta(days=1)))
        out += [first, own(RESUBMISSION, s, _at(rng, first.at))]
    for s in roles.personal:
        current = status[s.student_id]
        address = _address(current.name, rng.choice(PERSONAL), set(), rng)
        out.append(Message(PERSONAL_SUBMISSION, _at(rng), address, current.name, current))
    out += [Message(UNKNOWN_ID, _at(rng), o.email, o.name, o) for o in outsiders]
    out += [own(OTHER_COURSE, s) for s in roles.other_course]
    out += [own(QUESTION, s) for s in roles.questions]
    return out


def plan_world(streams: Mapping[str, random.Random], names: PersonNames, num_students: int,
               num_distractors: int) -> Plan:
    c = Counts.of(num_students)
    people = streams["people"]
    domain = people.choice(DOMAINS)
    ta_name = names.full()
    roster, outsiders = _people(people, names, c, domain, extra=c.edge)
    roster, roles = _roles(streams["roles"], roster, c)
    status = {s.student_id: s for s in roster}
    messages = _messages(streams["times"], roles, status, outsiders)
    distractors = max(num_distractors, MIN_INBOX - len(messages))
    times = streams["distractors"]
    messages += [Message(DISTRACTOR, _at(times), "", "") for _ in range(distractors)]
    ta = Student(ta_name, "", _address(ta_name, domain, {s.email for s in roster}), "")
    pairs = [(status[a.student_id], status[b.student_id]) for a, b in roles.pairs]
    return Plan(ta, domain, roster, sorted(messages, key=lambda m: m.at), pairs, outsiders)
