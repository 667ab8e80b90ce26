"""The plan of a canvas_list_test world: my courses with their quizzes, assignments, submissions
and exemption policies, and the ground-truth rows. Pure data drawn from the world's RNG streams;
the package's `generate` writes it."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any

from envs.canvas_list_test import ASSIGNMENTS, DEADLINE, EXAMPLE, QUIZZES
from loca.core.clock import iso_z
from loca.core.outputs import TableFile

NOW = datetime(2025, 9, 20, 12, 0, tzinfo=UTC)
DUE_TIME = time(23, 59)
OPEN_DAYS, PAST_DAYS = range(1, 22), range(1, 11)  # deadlines now+1..21 d and now-10..-1 d
OPEN_DATES, PAST_DATES = 6, 3  # a small set of dates, so that deadlines tie across courses
QUIZ_ODDS, ASSIGNMENT_ODDS = (0.8, 0.2), (0.7, 0.2)  # first item, then a second one
SUBMITTED = {"quiz": 0.15, "assignment": 0.3}
PAST = 0.1
POLICY_SHARE = 0.12
MIN_COURSES = 4  # one course per guaranteed role (exempt, missed exemption, submitted work, trap)
SCORING = ("keep_highest", "keep_latest", "keep_average")
QUIZ_TITLES = ("Quiz", "Reading Quiz", "Unit Quiz", "Concept Check", "Practice Test", "Lab Quiz")
ASSIGNMENT_TITLES = ("Problem Set", "Essay", "Lab Report", "Reading Response", "Case Study",
                     "Worksheet", "Project Part")
QUOTED_VARIANTS = (1, 3, 5)  # assignment.j2 variants whose text holds double quotes
DESCRIPTION_VARIANTS = 7
READINGS = ("The Tragedy of the Commons", "Thinking, Fast and Slow", "On Liberty, Chapter 2",
            "The Structure of Scientific Revolutions", "Why Nations Fail", "Silent Spring",
            "The Selfish Gene", "Gödel, Escher, Bach", "A Room of One's Own", "The Wealth of Nations")
DEPARTMENTS = ("CS", "MATH", "PHYS", "CHEM", "BIO", "ECON", "HIST", "PSYC", "ENGL", "PHIL", "STAT",
               "EE", "ME", "LING", "SOC", "POLS", "MUS", "GEOG", "ASTR", "ANTH", "FIN", "MKT")
SUBJECTS = (
    "Algorithms", "Data Structures", "Linear Algebra", "Real Analysis", "Quantum Mechanics",
    "Organic Chemistry", "Cell Biology", "Microeconomics", "Macroeconomics", "World History",
    "Cognitive Psychology", "Modern Poetry", "Ethics", "Probability", "Statistical Inference",
    "Signals and Systems", "Thermodynamics", "Syntax", "Urban Sociology", "Comparative Politics",
    "Music Theory", "Cartography", "Stellar Astrophysics", "Cultural Anthropology",
    "Corporate Finance", "Consumer Behavior", "Operating Systems", "Computer Networks",
    "Machine Learning", "Databases", "Compilers", "Number Theory", "Differential Equations",
    "Topology", "Electromagnetism", "Optics", "Biochemistry", "Genetics", "Ecology",
    "Econometrics", "Game Theory", "Medieval History", "Social Psychology", "Logic",
    "Epistemology", "Time Series", "Bayesian Methods", "Control Systems", "Fluid Mechanics",
    "Phonology", "Criminology", "International Relations", "Remote Sensing", "Planetary Science",
    "Archaeology", "Public Health", "Investments", "Brand Management", "Computer Graphics",
    "Cryptography", "Robotics", "Neuroscience", "Immunology", "Labor Economics",
    "Developmental Psychology", "Semantics", "Climate Science", "Acoustics", "Graph Theory",
    "Marine Biology",
)
LEVELS = ("Introduction to", "Foundations of", "Topics in", "Advanced", "Applied", "Seminar in")


@dataclass(frozen=True)
class Person:
    name: str
    email: str


@dataclass
class Item:
    """A quiz or an assignment; `submitted`: I have turned it in."""

    title: str
    description: str
    due: datetime
    submitted: bool
    points: int

    @property
    def open(self) -> bool:
        return self.due > NOW

    @property
    def listed(self) -> bool:
        """An item the student must still submit (before its course's exemption)."""
        return self.open and not self.submitted


@dataclass
class Quiz(Item):
    credits: int = 1
    questions: int = 10
    time_limit: int = 30
    attempts: int = 1
    scoring: str = "keep_highest"


@dataclass
class Assignment(Item):
    types: tuple[str, ...] = ("online_text_entry",)


@dataclass(frozen=True)
class Policy:
    """An announced exemption: an exam score of at least `threshold` waives the course's
    remaining quizzes and assignments; `score` is mine (in memory)."""

    threshold: int
    score: int
    variant: int

    @property
    def met(self) -> bool:
        return self.score >= self.threshold


@dataclass
class Course:
    base_code: str
    base_name: str
    section: int
    instructor: Person
    topic: str
    quizzes: list[Quiz] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    policy: Policy | None = None

    @property
    def code(self) -> str:
        return f"{self.base_code}-{self.section}"

    @property
    def name(self) -> str:
        return f"{self.base_name}-{self.section}"

    @property
    def exempt(self) -> bool:
        return self.policy is not None and self.policy.met


@dataclass
class WorldPlan:
    university: str
    student: Person
    others: list[Person]  # fellow students
    courses: list[Course]  # in id order (the default listing order)
    example: tuple[str, str]  # code and name of the example rows' course


Render = Callable[[str, dict[str, Any]], str]  # (template name, values) -> text


class _Drawer:
    """Draws items: deadlines from the world's small sets of dates, titles unique per course,
    descriptions unique in the world."""

    def __init__(self, rng: random.Random, render: Render) -> None:
        self.rng = rng
        self.render = render
        day = NOW.date()
        self.due = {  # open or not -> the deadlines to draw from
            True: [datetime.combine(day + timedelta(days=d), DUE_TIME, UTC)
                   for d in sorted(rng.sample(OPEN_DAYS, OPEN_DATES))],
            False: [datetime.combine(day - timedelta(days=d), DUE_TIME, UTC)
                    for d in sorted(rng.sample(PAST_DAYS, PAST_DATES))]}
        self.descriptions: set[str] = set()

    def deadline(self, is_open: bool) -> datetime:
        return self.rng.choice(self.due[is_open])

    def title(self, kinds: tuple[str, ...], taken: set[str]) -> str:
        free = [f"{k} {n}" for k in kinds for n in range(1, 10) if f"{k} {n}" not in taken]
        return self.rng.choice(free)

    def description(self, topic: str, quoted: bool = False) -> str:
        """An unused description; with `quoted`, one holding double quotes."""
        variants = QUOTED_VARIANTS if quoted else range(DESCRIPTION_VARIANTS)
        for _ in range(1000):
            first = self.rng.randint(1, 30)
            text = self.render("assignment.j2", {
                "variant": self.rng.choice(list(variants)), "topic": topic.lower(),
                "first": first, "last": first + self.rng.randint(3, 12), "chapter": self.rng.randint(1, 14),
                "words": self.rng.choice([300, 500, 750, 1000, 1500]), "sources": self.rng.randint(2, 6),
                "pages": self.rng.randint(2, 8), "reading": self.rng.choice(READINGS)})
            if text not in self.descriptions:
                self.descriptions.add(text)
                return text
        raise ValueError("no unused assignment description left")

    def quiz(self, course: Course, is_open: bool, submitted: bool) -> Quiz:
        questions = self.rng.choice([5, 8, 10, 12, 15, 20, 25])
        about = self.render("quiz.j2", {"variant": self.rng.randrange(3), "topic": course.topic.lower()})
        return Quiz(self.title(QUIZ_TITLES, {q.title for q in course.quizzes}), about, self.deadline(is_open),
                    submitted, questions * self.rng.choice([1, 2, 4]), credits=self.rng.randint(1, 4),
                    questions=questions, time_limit=self.rng.choice([10, 15, 20, 30, 45, 60]),
                    attempts=self.rng.choice([1, 1, 2, 3]), scoring=self.rng.choice(SCORING))

    def assignment(self, course: Course, is_open: bool, submitted: bool) -> Assignment:
        types = ("online_text_entry",) if self.rng.random() < 0.6 else ("online_text_entry", "online_upload")
        return Assignment(self.title(ASSIGNMENT_TITLES, {a.title for a in course.assignments}),
                          self.description(course.topic), self.deadline(is_open), submitted,
                          self.rng.choice([10, 20, 25, 50, 100]), types=types)

    def items(self, course: Course) -> None:
        """The course's quizzes and assignments by the fixed odds."""
        for kind, odds in (("quiz", QUIZ_ODDS), ("assignment", ASSIGNMENT_ODDS)):
            for p in odds:
                if self.rng.random() >= p:
                    break
                is_open = self.rng.random() >= PAST
                submitted = self.rng.random() < SUBMITTED[kind]
                if kind == "quiz":
                    course.quizzes.append(self.quiz(course, is_open, submitted))
                else:
                    course.assignments.append(self.assignment(course, is_open, submitted))


NOTES_PER_COURSE = 16
"""Plain announcements carry most of a course's length, so that a 256K world has about 75
courses: reading each course (three listings plus a submission check per open item) then fits
the agent loop's 500-tool-call limit with room to spare."""


def default_notes(num_courses: int) -> int:
    return NOTES_PER_COURSE * num_courses


def _catalogue(rng: random.Random, count: int) -> list[tuple[str, str, str]]:
    """`count` (base code, base name, subject) triples; codes and names each unique."""
    codes = [f"{d}{n}" for d in DEPARTMENTS for n in range(101, 500, 6)]
    names = [(f"{level} {subject}", subject) for subject in SUBJECTS for level in LEVELS]
    if count > min(len(codes), len(names)):
        raise ValueError(f"at most {min(len(codes), len(names)) - 1} courses are supported")
    return [(code, name, subject) for code, (name, subject) in
            zip(rng.sample(codes, count), rng.sample(names, count), strict=True)]


def _people(fake: Any, count: int, domain: str, seen: set[str]) -> list[Person]:
    out: list[Person] = []
    while len(out) < count:
        first, last = fake.first_name(), fake.last_name()
        email = f"{first.lower()}.{last.lower()}@{domain}"
        if email not in seen:
            seen.add(email)
            out.append(Person(f"{first} {last}", email))
    return out


def plan_world(streams: dict[str, random.Random], fake: Any, num_courses: int, render: Render) -> WorldPlan:
    """Draw the whole world. `streams` holds the named child streams (catalogue, items,
    policies, roles); `fake` draws names; `render` fills the item templates."""
    if num_courses < MIN_COURSES:
        raise ValueError(f"num_courses must be at least {MIN_COURSES} (the guaranteed roles)")
    school = fake.last_name()
    domain = f"{school.lower()}.edu"
    seen: set[str] = set()
    [student] = _people(fake, 1, domain, seen)
    instructors = _people(fake, max(3, math.ceil(num_courses / 4)), domain, seen)
    others = _people(fake, 3 + num_courses // 10, domain, seen)
    rng = streams["catalogue"]
    catalogue = _catalogue(rng, num_courses + 1)
    courses = [Course(code, name, rng.randint(1, 4), rng.choice(instructors), subject)
               for code, name, subject in catalogue[:num_courses]]
    drawer = _Drawer(streams["items"], render)
    for course in courses:
        drawer.items(course)
    _policies(streams["policies"], courses)
    drawer.rng = streams["roles"]  # what the guarantees change or add draws from its own stream
    _roles(drawer, courses)
    code, name, _ = catalogue[num_courses]
    example = (f"{code}-{rng.randint(1, 4)} {EXAMPLE}", f"{name} {EXAMPLE}")
    return WorldPlan(f"{school} University", student, others, courses, example)


def _policies(rng: random.Random, courses: list[Course]) -> None:
    """Exemption policies on a share of the courses (never the last one), at least two: half
    met (score at or above the threshold), half missed by 1-3 points."""
    count = max(2, round(POLICY_SHARE * len(courses)))
    chosen = rng.sample(courses[:-1], count)
    for i, course in enumerate(chosen):
        threshold = rng.choice([70, 75, 80, 85, 90])
        met = i < math.ceil(count / 2)
        score = min(100, threshold + rng.randint(0, 8)) if met else threshold - rng.randint(1, 3)
        course.policy = Policy(threshold, score, rng.randrange(3))


def _ensure(drawer: _Drawer, course: Course, *, is_open: bool, submitted: bool, claimed: set[int]) -> Assignment:
    """An assignment of the course with the given state, not claimed by another guarantee:
    an existing one, a new one (at most two per course), or an unclaimed one changed."""
    for a in course.assignments:
        if id(a) not in claimed and a.open == is_open and a.submitted == submitted:
            claimed.add(id(a))
            return a
    if len(course.assignments) < 2:
        course.assignments.append(drawer.assignment(course, is_open, submitted))
        found = course.assignments[-1]
    else:
        found = next(a for a in course.assignments if id(a) not in claimed)
        found.due, found.submitted = drawer.deadline(is_open), submitted
    claimed.add(id(found))
    return found


def _roles(drawer: _Drawer, courses: list[Course]) -> None:
    """The guarantees every world keeps, whatever its size:
    - the last course (beyond the first page of any listing) has an open unsubmitted
      assignment and quiz, and that assignment's description holds double quotes;
    - a course whose exemption is met has an open unsubmitted assignment (skipped);
    - a course whose exemption is missed has one (listed);
    - a course without a policy has an open assignment I submitted and a past one I did not;
    - two listed rows of different courses share a deadline, with course_code and title
      ordering them differently."""
    claimed: set[int] = set()
    last = courses[-1]
    trap = _ensure(drawer, last, is_open=True, submitted=False, claimed=claimed)
    if not any(q.listed for q in last.quizzes):
        if len(last.quizzes) < 2:
            last.quizzes.append(drawer.quiz(last, True, False))
        else:
            last.quizzes[0].due, last.quizzes[0].submitted = drawer.deadline(True), False
    met = next(c for c in courses if c.policy and c.policy.met)
    missed = next(c for c in courses if c.policy and not c.policy.met)
    plain = next(c for c in courses[:-1] if c.policy is None)
    _ensure(drawer, met, is_open=True, submitted=False, claimed=claimed)
    partner = _ensure(drawer, missed, is_open=True, submitted=False, claimed=claimed)
    _ensure(drawer, plain, is_open=True, submitted=True, claimed=claimed)
    _ensure(drawer, plain, is_open=False, submitted=False, claimed=claimed)
    if '"' not in trap.description:
        drawer.descriptions.discard(trap.description)
        trap.description = drawer.description(last.topic, quoted=True)
    if not any(ties_disagree(truth_rows(courses, out), out) for out in (QUIZZES, ASSIGNMENTS)):
        _discordant_tie(drawer, (last, trap), (missed, partner))


def ties_disagree(rows: list[dict[str, Any]], out: TableFile) -> bool:
    """Whether breaking deadline ties by title before course_code changes the rows' order."""
    title = out.key[1]
    by_code = [(r[DEADLINE], r["course_code"], r[title]) for r in rows]
    return by_code != sorted(by_code, key=lambda k: (k[0], k[2], k[1]))


def _discordant_tie(drawer: _Drawer, *pair: tuple[Course, Assignment]) -> None:
    """Give two listed assignments of different courses one deadline, and titles that order
    them against their course codes."""
    (low, a), (high, b) = sorted(pair, key=lambda p: p[0].code)
    b.due = a.due
    taken = {x.title for x in low.assignments + high.assignments}
    free = sorted(drawer.rng.sample([f"{k} {n}" for k in ASSIGNMENT_TITLES for n in range(1, 10)
                                     if f"{k} {n}" not in taken], 2))
    a.title, b.title = free[1], free[0]


def truth_rows(courses: list[Course], out: TableFile) -> list[dict[str, Any]]:
    """The expected rows of one output file, in the required order."""
    rows: list[dict[str, Any]] = []
    for c in courses:
        if c.exempt:
            continue
        if out is QUIZZES:
            rows += [dict(zip(QUIZZES.headers, (
                c.code, c.name, q.credits, q.title, q.questions, q.time_limit, q.attempts, q.scoring,
                q.points, iso_z(q.due)), strict=True)) for q in c.quizzes if q.listed]
        else:
            rows += [dict(zip(ASSIGNMENTS.headers, (
                c.code, c.name, a.title, a.description, iso_z(a.due), a.points), strict=True))
                for a in c.assignments if a.listed]
    return sorted(rows, key=lambda r: (r[DEADLINE], r["course_code"], r[out.key[1]]))

