"""The plan of a canvas_arrange_exam world: which courses exist, how each publishes its final,
and the ground-truth rows. Pure data drawn from the world's RNG streams; `build.py` renders it."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Literal

from faker import Faker

from envs.canvas_arrange_exam import TBD

Category = Literal["announcement", "email", "no_final", "exempt", "past"]
MIN_COURSES = 6
CATEGORY_SHARES: dict[Category, float] = {
    "announcement": 0.70, "email": 0.16, "no_final": 0.07, "exempt": 0.04, "past": 0.03}
MODIFIER_SHARES = {"location_tbd": 0.06, "datetime_tbd": 0.03, "corrected": 0.06}
START_SLOTS = [time(8, 0), time(9, 30), time(10, 0), time(11, 30), time(13, 0), time(14, 0),
               time(15, 30), time(16, 0), time(18, 30), time(19, 0)]
DURATIONS = [60, 90, 120, 150, 180]
DEPARTMENTS = ["CS", "MATH", "PHYS", "CHEM", "BIO", "ECON", "HIST", "PSYC", "ENGL", "PHIL",
               "STAT", "EE", "ME", "CE", "LING", "SOC", "POLS", "ARTH", "MUS", "GEOG", "ASTR",
               "ANTH", "EDUC", "NURS", "FIN", "MKT", "ACCT", "ENVS"]
SUBJECTS = [
    "Algorithms", "Data Structures", "Linear Algebra", "Real Analysis", "Quantum Mechanics",
    "Organic Chemistry", "Cell Biology", "Microeconomics", "Macroeconomics", "World History",
    "Cognitive Psychology", "Victorian Literature", "Ethics", "Probability", "Statistical Inference",
    "Signals and Systems", "Thermodynamics", "Structural Analysis", "Syntax", "Urban Sociology",
    "Comparative Politics", "Renaissance Art", "Music Theory", "Cartography", "Stellar Astrophysics",
    "Cultural Anthropology", "Learning Sciences", "Clinical Practice", "Corporate Finance",
    "Consumer Behavior", "Financial Accounting", "Climate Science", "Operating Systems",
    "Computer Networks", "Machine Learning", "Databases", "Compilers", "Number Theory",
    "Differential Equations", "Topology", "Electromagnetism", "Optics", "Biochemistry",
    "Genetics", "Ecology", "Econometrics", "Game Theory", "Medieval History", "Social Psychology",
    "Poetry Workshop", "Logic", "Epistemology", "Time Series", "Bayesian Methods",
    "Control Systems", "Fluid Mechanics", "Phonology", "Criminology", "International Relations",
    "Modern Architecture", "Composition", "Remote Sensing", "Planetary Science", "Archaeology",
    "Curriculum Design", "Public Health", "Investments", "Brand Management", "Auditing",
    "Sustainability", "Computer Graphics", "Cryptography", "Robotics", "Neuroscience",
    "Immunology", "Labor Economics", "Developmental Psychology", "Shakespeare", "Semantics",
]
LEVELS = ["Introduction to", "Foundations of", "Topics in", "Advanced", "Applied", "Seminar in"]
BUILDINGS = ["Hamilton Hall", "Baker Hall", "Curie Center", "Lovelace Building", "North Pavilion",
             "Turing Hall", "Franklin Annex", "Meyer Library", "Hopper Hall", "Ostrom Center",
             "Noether Building", "Darwin Hall"]


@dataclass(frozen=True)
class Person:
    name: str
    email: str


@dataclass(frozen=True)
class ExamDetails:
    """A final's details; None means not released (TBD)."""

    day: date | None
    start: time | None
    duration: int
    location: str | None

    @property
    def starts_at(self) -> tuple[date, time] | None:
        return (self.day, self.start) if self.day and self.start else None


@dataclass
class CoursePlan:
    base_code: str
    base_name: str
    section: int
    credits: int
    exam_type: str  # "Open-book" / "Closed-book"
    instructor: Person
    category: Category
    final: ExamDetails | None  # None for no_final
    announced: ExamDetails | None = None  # what was first published, when later corrected
    midterm: ExamDetails | None = None
    coursework: list[str] = field(default_factory=list)

    @property
    def code(self) -> str:
        return f"{self.base_code}-{self.section}"

    @property
    def name(self) -> str:
        return f"{self.base_name}-{self.section}"

    @property
    def included(self) -> bool:
        return self.category in ("announcement", "email")

    @property
    def corrected(self) -> bool:
        return self.announced is not None


@dataclass
class OtherExam:
    """An exam e-mail about a course the student is not enrolled in."""

    code: str
    name: str
    sender: Person
    details: ExamDetails


@dataclass
class WorldPlan:
    today: date
    zone: str
    domain: str
    university: str
    student: Person
    courses: list[CoursePlan]
    others: list[OtherExam]
    num_distractor_emails: int


def default_distractors(num_courses: int) -> int:
    return 4 + math.ceil(0.6 * num_courses)


def _unique_catalogue(rng: random.Random, count: int) -> list[tuple[str, str]]:
    """`count` (base code, base name) pairs, codes and names each unique."""
    codes = [f"{d}{n}" for d in DEPARTMENTS for n in range(100, 500, 7)]
    names = [f"{lvl} {sub}" for sub in SUBJECTS for lvl in LEVELS]
    if count > min(len(codes), len(names)):
        raise ValueError(f"at most {min(len(codes), len(names))} courses are supported")
    return list(zip(rng.sample(codes, count), rng.sample(names, count), strict=True))


def _categories(rng: random.Random, n: int) -> list[Category]:
    """One category per course: the guaranteed ones first (three announced finals and two
    e-mailed ones, so that two TBD dates and three dated finals fit; an excluded course; every
    category from 15 courses on), the rest drawn by the fixed shares, then shuffled."""
    excluded: list[Category] = ["no_final", "exempt", "past"]
    required: list[Category] = ["announcement", "announcement", "announcement", "email", "email"]
    if n >= 15:
        required += excluded
    else:
        required.append(rng.choice(excluded))
    cats: list[Category] = list(CATEGORY_SHARES)
    drawn = required + rng.choices(cats, weights=[CATEGORY_SHARES[c] for c in cats],
                                   k=n - len(required))
    rng.shuffle(drawn)
    return drawn


def _location(rng: random.Random) -> str:
    return f"Room {rng.randint(1, 4)}{rng.randint(0, 3)}{rng.randint(0, 9)}, {rng.choice(BUILDINGS)}"


class _Slots:
    """Distinct exam start instants (finals pairwise distinct)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[tuple[date, time]] = set()

    def draw(self, first: date, last: date) -> tuple[date, time]:
        span = (last - first).days
        for _ in range(10_000):
            pick = (first + timedelta(days=self.rng.randint(0, span)), self.rng.choice(START_SLOTS))
            if pick not in self.used:
                self.used.add(pick)
                return pick
        raise ValueError("no free exam slot left")


def plan_world(seed_rng: dict[str, random.Random], fake: Faker, num_courses: int,
               num_distractor_emails: int, today: date, zone: str) -> WorldPlan:
    """Draw the whole world. `seed_rng` holds the named child streams."""
    if num_courses < MIN_COURSES:
        raise ValueError(f"num_courses must be at least {MIN_COURSES} (the guaranteed categories)")
    rng = seed_rng["courses"]
    school = fake.last_name()
    domain = f"{school.lower()}.edu"
    first, last = fake.first_name(), fake.last_name()
    student = Person(f"{first} {last}", f"{first.lower()}.{last.lower()}@{domain}")

    people_rng = seed_rng["people"]
    pool_size = max(4, math.ceil(num_courses / 4))
    instructors: list[Person] = []
    seen = {student.email}
    while len(instructors) < pool_size:
        f, l = fake.first_name(), fake.last_name()
        email = f"{f[0].lower()}{l.lower()}@{domain}"
        if email not in seen:
            seen.add(email)
            instructors.append(Person(f"{f} {l}", email))

    catalogue = _unique_catalogue(rng, num_courses + math.ceil(num_courses / 10))
    categories = _categories(rng, num_courses)
    slots = _Slots(rng)
    horizon = today + timedelta(days=60)
    courses: list[CoursePlan] = []
    for (code, name), category in zip(catalogue, categories, strict=False):
        final = None
        if category != "no_final":
            first_day, last_day = ((today - timedelta(days=30), today - timedelta(days=1))
                                   if category == "past" else (today + timedelta(days=1), horizon))
            day, start = slots.draw(first_day, last_day)
            final = ExamDetails(day, start, rng.choice(DURATIONS), _location(rng))
        mid_day = today - timedelta(days=rng.randint(5, 50))
        courses.append(CoursePlan(
            base_code=code, base_name=name, section=rng.randint(1, 4), credits=rng.randint(1, 5),
            exam_type=rng.choice(["Open-book", "Closed-book"]),
            instructor=people_rng.choice(instructors), category=category, final=final,
            midterm=ExamDetails(mid_day, rng.choice(START_SLOTS), rng.choice([60, 75, 90]),
                                _location(rng)),
            coursework=rng.sample(["homework", "office_hours", "reading", "project", "lab"],
                                  rng.randint(1, 3)),
        ))
    _apply_modifiers(seed_rng["modifiers"], courses, slots)
    _break_code_order(courses)

    others = []
    for code, name in catalogue[num_courses:]:
        f, l = fake.first_name(), fake.last_name()
        day, start = slots.draw(today + timedelta(days=1), horizon)
        others.append(OtherExam(f"{code}-{rng.randint(1, 4)}", name,
                                Person(f"{f} {l}", f"{f[0].lower()}{l.lower()}@{domain}"),
                                ExamDetails(day, start, rng.choice(DURATIONS), _location(rng))))
    return WorldPlan(today, zone, domain, f"{school} University", student, courses, others,
                     num_distractor_emails)


def _apply_modifiers(rng: random.Random, courses: list[CoursePlan], slots: _Slots) -> None:
    """TBD locations, TBD dates and corrections, each on distinct included finals. A TBD
    location, a correction and two TBD dates (so the order of TBD rows is exercised) always
    occur. At least three included finals stay fully dated."""
    included = [c for c in courses if c.included]
    rng.shuffle(included)
    counts = {mod: sum(rng.random() < share for _ in included)
              for mod, share in MODIFIER_SHARES.items()}
    counts["location_tbd"] = max(1, counts["location_tbd"])
    counts["corrected"] = max(1, counts["corrected"])
    counts["datetime_tbd"] = max(2, counts["datetime_tbd"])
    counts["datetime_tbd"] = min(counts["datetime_tbd"], max(0, len(included) - 3))
    taken: set[int] = set()
    for mod in ("corrected", "location_tbd", "datetime_tbd"):
        picked = 0
        for course in included:
            if picked == counts[mod]:
                break
            f = course.final
            assert f and f.day and f.start
            free = [s for s in START_SLOTS if (f.day, s) not in slots.used]
            # a correction moves the start within the same day, so that day needs a free slot
            if id(course) in taken or (mod == "corrected" and not free):
                continue
            taken.add(id(course))
            picked += 1
            if mod == "location_tbd":
                course.final = ExamDetails(f.day, f.start, f.duration, None)
            elif mod == "datetime_tbd":
                course.final = ExamDetails(None, None, f.duration, f.location)
            else:
                course.announced = f
                start = rng.choice(free)
                slots.used.add((f.day, start))
                location = _location(rng) if rng.random() < 0.5 else f.location
                course.final = ExamDetails(f.day, start, f.duration, location)


def _break_code_order(courses: list[CoursePlan]) -> None:
    """Make sure sorting the dated rows by course code differs from sorting them by date, so a
    wrong sort key cannot pass the order check by luck."""
    starts = {id(c): c.final.starts_at for c in courses if c.included and c.final and c.final.starts_at}
    dated = [c for c in courses if id(c) in starts]
    by_time = sorted(dated, key=lambda c: starts[id(c)])
    if [c.base_code for c in by_time] != sorted(c.base_code for c in dated):
        return
    a, b = by_time[0], by_time[-1]
    a.final, b.final = b.final, a.final
    a.announced, b.announced = b.announced, a.announced


def truth_rows(plan: WorldPlan) -> list[dict[str, object]]:
    """The expected sheet rows, in the required order."""
    rows = []
    for c in plan.courses:
        if not c.included or c.final is None:
            continue
        f = c.final
        rows.append({
            "Course Code": c.base_code,
            "Course Name": c.base_name,
            "Proctor Name": c.instructor.name,
            "Proctor Email": c.instructor.email,
            "Open-book/Closed-book": c.exam_type,
            "Final Date (MM/DD/YYYY)": f.day.strftime("%m/%d/%Y") if f.day else TBD,
            "Start Time (HH:MM)": f.start.strftime("%H:%M") if f.start else TBD,
            "Duration (minutes)": f.duration,
            "Location": f.location if f.location is not None else TBD,
            "Information Source(Announcement/Email/Message)":
                "Announcement" if c.category == "announcement" else "Email",
            "Course Credit": c.credits,
        })
    dated = [r for r in rows if r["Final Date (MM/DD/YYYY)"] != TBD]
    tbd = [r for r in rows if r["Final Date (MM/DD/YYYY)"] == TBD]
    dated.sort(key=lambda r: (datetime.strptime(str(r["Final Date (MM/DD/YYYY)"]), "%m/%d/%Y"),
                              r["Start Time (HH:MM)"]))
    tbd.sort(key=lambda r: str(r["Course Code"]))
    return dated + tbd
