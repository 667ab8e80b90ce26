"""The plan of an apply_phd_email world: the student, the two recommenders, the award
certificates, the professors with their reply types and required trees, and when every inbox
message arrives. Pure data drawn from the world's RNG streams; the package renders it."""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from envs.apply_phd_email import TRAP_PAGE
from generators.common import PersonNames

Kind = Literal["positive", "withdrawn", "ra_offer", "no_spots", "silent"]
Event = Literal["request", "withdrawal", "ra_offer", "no_spots", "notice"]
MIN_INBOX = TRAP_PAGE + 5
MAX_POSITIVES = 40
OFFICE_SHARE = 0.25  # requests that name a department mailbox instead of the professor
NAME = re.compile(r"[A-Z][a-z]+")

UNIVERSITIES = [
    ("Northbridge University", "northbridge.edu"), ("Halvorsen Institute of Technology", "hit.edu"),
    ("University of Westmere", "westmere.edu"), ("Calder State University", "calderstate.edu"),
    ("Ashford University", "ashford.ac.uk"), ("Lakeshore University", "lakeshore.edu"),
    ("Bellhaven College", "bellhaven.edu"), ("Technical University of Oderberg", "tu-oderberg.de"),
    ("University of Kestrel Bay", "kestrelbay.edu.au"), ("Marlow University", "marlow.ac.uk"),
    ("Vantrell Institute", "vantrell.edu"), ("University of Eastham", "eastham.ac.uk"),
    ("Sorrento Polytechnic", "sorrentopoly.it"), ("Granite Peak University", "granitepeak.edu"),
    ("Rivergate University", "rivergate.edu"), ("University of Norvik", "norvik.no"),
    ("Ellery University", "ellery.edu"), ("Copperfield Institute of Science", "copperfield.edu"),
    ("University of Saint Aubin", "saint-aubin.fr"), ("Whitmore University", "whitmore.edu"),
    ("Delft Harbour University", "dhu.nl"), ("Pinecrest University", "pinecrest.edu"),
    ("University of Maplewood", "maplewood.ca"), ("Thornbury College London", "thornbury.ac.uk"),
    ("Kingsbridge Technological University", "ktu.edu.sg"), ("Auckridge University", "auckridge.ac.nz"),
    ("Stonebrook University", "stonebrook.edu"), ("University of Lindqvist", "lindqvist.se"),
    ("Harlan Institute of Technology", "harlantech.edu"), ("Brightwater University", "brightwater.edu"),
]
DEPARTMENTS = [("Computer Science", "cs"), ("Electrical Engineering", "ee"), ("Statistics", "stat"),
               ("Data Science", "ds"), ("Applied Mathematics", "amath"), ("Information Systems", "is")]
FIELDS = ["machine learning theory", "natural language processing", "computer vision",
          "reinforcement learning", "distributed systems", "computational biology",
          "robot learning", "probabilistic programming", "human-computer interaction",
          "information retrieval", "graph mining", "trustworthy AI", "speech processing",
          "database systems", "computer architecture", "optimization for learning"]
HOME_UNIVERSITIES = [("Eastlake University", "eastlake.edu.cn"),
                     ("Jinhai University of Science and Technology", "jhust.edu.cn"),
                     ("Southbay Normal University", "sbnu.edu.cn"), ("Qinghe University", "qinghe.edu.cn")]
AWARD_TITLES = [
    "National Scholarship for Graduate Students", "Outstanding Graduate Student Award",
    "First Prize in the Mathematical Contest in Modeling", "Best Undergraduate Thesis Award",
    "Excellent Student Leader Award", "Academic Honor Roll", "Academic Excellence Scholarship",
    "Second Prize in the National Programming Contest", "Presidential Research Fellowship",
    "Outstanding Teaching Assistant Award", "Innovation and Entrepreneurship Award",
]
AWARD_YEARS = range(2019, 2026)
TOPICS = ["efficient fine-tuning of language models", "uncertainty estimation for medical image segmentation",
          "graph neural networks for traffic forecasting", "retrieval-augmented question answering",
          "robust reinforcement learning for robot grasping", "privacy-preserving federated learning",
          "self-supervised speech representations", "learned indexes for database systems"]

# Top folders of a required tree and the source files of the flat folder.
PERSONAL, ACADEMIC = "Personal_Information", "Academic_Materials"
LETTERS, SUPPLEMENTARY = "Recommendation_Letters", "Supplementary_Materials"
CV, ID_CARD, PHOTO = "CV.pdf", "ID_Card.pdf", "Photo.jpg"
TRANSCRIPT, ENROLLMENT = "Transcript.pdf", "Enrollment_Certificate.pdf"
PORTFOLIO, REPORT = "Portfolio.pdf", "Project_Report.pdf"
LETTER_FILES = ("Recommendation_Letter_1.pdf", "Recommendation_Letter_2.pdf")


def half_up(x: float) -> int:
    return math.floor(x + 0.5)


def counts(n: int) -> dict[Kind, int]:
    """Professors per reply type for `n` professors (the spec's fixed ratios; at least one
    withdrawn request at every size)."""
    positive = min(MAX_POSITIVES, max(1, half_up(n / 10)))
    withdrawn = max(1, positive // 5)
    silent = half_up(0.05 * n)
    rest = n - positive - withdrawn - silent
    if rest < 2:
        raise ValueError(f"{n} professors leave no room for RA offers and rejections")
    return {"positive": positive, "withdrawn": withdrawn, "silent": silent,
            "ra_offer": (rest + 1) // 2, "no_spots": rest // 2}


def default_other_emails(n: int) -> int:
    return 2 + math.ceil(n / 10)


@dataclass(frozen=True)
class Person:
    first: str
    last: str
    email: str

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"


@dataclass(frozen=True)
class Structure:
    """A required tree, composed from blocks: the top folders in order (numbered `01_`...),
    the CV's name, and whether the award certificates come as one merged PDF."""

    folders: tuple[str, ...]
    cv_name: str
    merge_awards: bool


@dataclass
class Professor:
    person: Person
    title: str
    university: str
    department: str
    field: str
    kind: Kind
    structure: Structure | None = None  # positive and withdrawn: the tree the request asks for
    address: str | None = None  # positive and withdrawn: where the request says to send it
    via_office: bool = False


@dataclass(frozen=True)
class Award:
    file: str
    title: str
    year: int


@dataclass
class Student:
    person: Person
    student_id: str
    university: str
    domain: str
    major: str
    topic: str  # the master's project


@dataclass
class Message:
    """One inbox message: a professor's reply (by kind of event) or an unrelated notice."""

    event: Event
    professor: Professor | None
    at: datetime


@dataclass
class WorldPlan:
    student: Student
    recommenders: dict[str, Person]  # letter file -> the recommender who signed it
    awards: list[Award]  # by file name
    professors: list[Professor]
    inbox: list[Message]  # oldest first

    @property
    def positives(self) -> list[Professor]:
        return [p for p in self.professors if p.kind == "positive"]


class _Names:
    """Unique (first, last) pairs of plain-letter names (they go into file and folder names)."""

    def __init__(self, names: PersonNames) -> None:
        self.names = names
        self.taken: set[tuple[str, str]] = set()

    def draw(self) -> tuple[str, str]:
        while True:
            pair = self.names.first(), self.names.last()
            if NAME.fullmatch(pair[0]) and NAME.fullmatch(pair[1]) and pair not in self.taken:
                self.taken.add(pair)
                return pair


def _student(rng: random.Random, names: _Names) -> Student:
    first, last = names.draw()
    university, domain = rng.choice(HOME_UNIVERSITIES)
    email = f"{first.lower()}.{last.lower()}{rng.randint(10, 99)}@{domain}"
    return Student(Person(first, last, email), f"2023{rng.randrange(10**6):06d}", university, domain,
                   rng.choice(["Computer Science", "Artificial Intelligence", "Software Engineering"]),
                   rng.choice(TOPICS))


def _recommenders(names: _Names, student: Student) -> dict[str, Person]:
    people: list[Person] = []
    while len(people) < 2:
        first, last = names.draw()
        if last != student.person.last and all(last != p.last for p in people):
            people.append(Person(first, last, f"{first[0].lower()}{last.lower()}@{student.domain}"))
    return dict(zip(LETTER_FILES, people, strict=True))


def _awards(rng: random.Random) -> list[Award]:
    """3-5 certificates with distinct titles and years, whose file-name order is not
    chronological."""
    k = rng.randint(3, 5)
    titles = rng.sample(AWARD_TITLES, k)
    years = sorted(rng.sample(AWARD_YEARS, k))
    order = list(range(k))
    while order == sorted(order):
        rng.shuffle(order)
    return [Award(f"Award_Certificate_{chr(ord('A') + i)}.pdf", titles[j], years[j])
            for i, j in enumerate(order)]


def _structure(rng: random.Random, merge: bool) -> Structure:
    folders = [ACADEMIC, LETTERS] + [f for f in (PERSONAL, SUPPLEMENTARY) if rng.random() < 0.6]
    rng.shuffle(folders)
    return Structure(tuple(folders), rng.choice([CV, "Resume.pdf"]), merge)


def _professors(rng: random.Random, names: _Names, n: int) -> list[Professor]:
    kinds = [k for k, c in counts(n).items() for _ in range(c)]
    people: list[Professor] = []
    emails: set[str] = set()
    while len(people) < n:
        first, last = names.draw()
        university, domain = rng.choice(UNIVERSITIES)
        email = f"{first.lower()}.{last.lower()}@{domain}"
        if email not in emails:
            emails.add(email)
            department = rng.choice(DEPARTMENTS)[0]
            people.append(Professor(Person(first, last, email), rng.choice(["Professor", "Associate Professor",
                                    "Assistant Professor"]), university, department, rng.choice(FIELDS), "silent"))
    for professor, kind in zip(people, kinds, strict=True):
        professor.kind = kind
    return people


def _requests(rng: random.Random, professors: list[Professor]) -> None:
    """Structure and destination of every request (positive or later withdrawn): one merged
    and, with two or more positives, one separate award layout; department mailboxes unique,
    at least one among three or more positives."""
    positives = [p for p in professors if p.kind == "positive"]
    asking = positives + [p for p in professors if p.kind == "withdrawn"]
    merges = {id(p): rng.random() < 0.5 for p in asking}
    merges[id(positives[0])] = True
    if len(positives) >= 2:
        merges[id(positives[1])] = False
    office = {id(p) for p in asking if rng.random() < OFFICE_SHARE}
    if len(positives) >= 3:
        office.add(id(rng.choice(positives)))
    mailboxes: set[str] = set()
    for p in asking:
        p.structure = _structure(rng, merges[id(p)])
        short = next(s for d, s in DEPARTMENTS if d == p.department)
        mailbox = f"{short}-phd-admissions@{p.person.email.split('@')[1]}"
        p.via_office = id(p) in office and mailbox not in mailboxes
        if p.via_office:
            mailboxes.add(mailbox)
        p.address = mailbox if p.via_office else p.person.email
    if len(positives) >= 3 and not any(p.via_office for p in positives):
        raise ValueError("no positive reply names a department mailbox")


def _timeline(rng: random.Random, professors: list[Professor], others: int, start: datetime,
              end: datetime) -> list[Message]:
    """Every inbox message, oldest first, each arriving in its own minute of [start, end):
    withdrawals after their request, and a request that stays valid beyond the newest
    `TRAP_PAGE` messages."""
    slots: list[tuple[Event, Professor | None]] = []
    for p in professors:
        if p.kind in ("positive", "withdrawn"):
            slots.append(("request", p))
        if p.kind == "withdrawn":
            slots.append(("withdrawal", p))
        if p.kind in ("ra_offer", "no_spots"):
            slots.append((p.kind, p))
    slots += [("notice", None)] * max(others, MIN_INBOX - len(slots))
    window = int((end - start).total_seconds() // 60)
    if len(slots) > window:
        raise ValueError(f"{len(slots)} inbox messages do not fit in the {window} minutes of the reply window")
    rng.shuffle(slots)
    minutes = sorted(rng.sample(range(window), len(slots)))
    messages = [Message(event, p, start + timedelta(minutes=m)) for (event, p), m in zip(slots, minutes, strict=True)]
    requests = {id(m.professor): m for m in messages if m.event == "request"}
    for withdrawal in (m for m in messages if m.event == "withdrawal"):
        request = requests[id(withdrawal.professor)]
        if withdrawal.at < request.at:
            request.at, withdrawal.at = withdrawal.at, request.at
    newest = sorted(messages, key=lambda m: m.at, reverse=True)
    if not any(_valid_request(m) for m in newest[TRAP_PAGE:]):
        trap = rng.choice([m for m in newest[:TRAP_PAGE] if _valid_request(m)])
        swap = rng.choice([m for m in newest[TRAP_PAGE:] if m.event in ("ra_offer", "no_spots", "notice")])
        trap.at, swap.at = swap.at, trap.at
    return sorted(messages, key=lambda m: m.at)


def _valid_request(message: Message) -> bool:
    return message.event == "request" and message.professor is not None and message.professor.kind == "positive"


def plan_world(streams: dict[str, random.Random], people: PersonNames, n: int, others: int,
               start: datetime, end: datetime) -> WorldPlan:
    """The plan for `n` professors and `others` unrelated e-mails arriving in [start, end)."""
    names = _Names(people)
    student = _student(streams["people"], names)
    recommenders = _recommenders(names, student)
    professors = _professors(streams["professors"], names, n)
    streams["professors"].shuffle(professors)
    _requests(streams["requests"], professors)
    inbox = _timeline(streams["timeline"], professors, others, start, end)
    return WorldPlan(student, recommenders, _awards(streams["awards"]), professors, inbox)
