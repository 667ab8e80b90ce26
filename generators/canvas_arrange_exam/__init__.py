"""Generator of canvas_arrange_exam: final exams scattered over Canvas announcements and
instructor e-mails, to be compiled into `exam_schedule.xlsx`.

Scale: `num_courses` (primary); `num_distractor_emails` follows from it (4 + ceil(0.6 n)) unless
calibration sets it. `num_notes` (the fine knob, default 0) adds plain course announcements: they
carry the long tiers, since each course costs the agent a tool call while a course's notes come
in the same listing (a 2M world thus stays within the agent loop's tool-call limit).

Every draw comes from the world's named RNG streams; Faker is seeded from one of them and only its
name/text providers are used (its date providers read the wall clock)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from functools import cache
from pathlib import Path
from zoneinfo import ZoneInfo

from faker import Faker
from jinja2 import Template
from openpyxl import Workbook
from pydantic import BaseModel, ConfigDict, Field
from sqlmodel import Session

from envs.canvas_arrange_exam import SCHEDULE, TASK, TBD, TRAP_PAGE
from generators.canvas_arrange_exam.plan import (
    CoursePlan,
    ExamDetails,
    WorldPlan,
    default_distractors,
    plan_world,
    truth_rows,
)
from generators.common import create_world, finish_world, seeded_faker, templates
from loca.core.clock import iso_z
from loca.core.rng import WorldRng
from loca.core.world import World, WorldMeta
from mock_servers.canvas import domain as canvas
from mock_servers.canvas.models import CanvasCourse, CanvasDiscussionTopic, CanvasEnrollment
from mock_servers.core.db import bulk_insert
from mock_servers.core.files import save_workbook
from mock_servers.email import domain as mail
from mock_servers.memory import domain as memory

VERSION = "3"
ZONES = ["America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles"]
LOCAL_NOW = datetime(2025, 1, 15, 9, 0)
MIN_INBOX = TRAP_PAGE + 2
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_TEMPLATES = templates(str(Path(__file__).parent / "templates"))


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_courses: int = Field(ge=TASK.scale.lo, le=TASK.scale.hi)
    num_distractor_emails: int | None = Field(default=None, ge=0)
    num_notes: int = Field(default=0, ge=0)

    def resolved(self) -> dict[str, int]:
        extra = self.num_distractor_emails
        return {"num_courses": self.num_courses,
                "num_distractor_emails": default_distractors(self.num_courses) if extra is None else extra,
                "num_notes": self.num_notes}


def identity(params: dict[str, int]) -> dict[str, int]:
    """The params a world records: `num_notes` only when it adds notes, so that worlds without
    notes keep the identity (and content hash) they had before the knob existed."""
    return {k: v for k, v in params.items() if k != "num_notes" or v}


def resolve_params(params: dict[str, object]) -> dict[str, int]:
    return Params.model_validate(params).resolved()


# ---------------------------------------------------------------- text formats

def _fmt_date(rng: random.Random, day: date | None) -> str:
    if day is None:
        return "TBD (to be announced)"
    style = rng.randrange(3)
    if style == 0:
        return f"{day:%A}, {day:%B} {day.day}, {day.year}"
    if style == 1:
        return f"{day:%b} {day.day}, {day.year}"
    return day.isoformat()


def _fmt_time(rng: random.Random, start: time | None) -> str:
    if start is None:
        return "TBD"
    if rng.random() < 0.5:
        return f"{start:%H:%M}"
    hour = start.hour % 12 or 12
    return f"{hour}:{start:%M} {'AM' if start.hour < 12 else 'PM'}"


def _fmt_duration(rng: random.Random, minutes: int) -> str:
    if minutes % 30 == 0 and rng.random() < 0.5:
        hours = minutes / 60
        text = f"{hours:g}"
        return f"{text} hour{'s' if hours != 1 else ''}"
    return f"{minutes} minutes"


def _fmt_location(location: str | None) -> str:
    return TBD if location is None else location


def _details(rng: random.Random, d: ExamDetails) -> dict[str, str]:
    return {"date": _fmt_date(rng, d.day), "time": _fmt_time(rng, d.start),
            "duration": _fmt_duration(rng, d.duration), "location": _fmt_location(d.location)}


def _changes(rng: random.Random, before: ExamDetails, after: ExamDetails) -> str:
    """What a correction says, one changed field per line, no sentence punctuation after a
    value (so a value copied exactly as announced has one reading)."""
    lines = [f"New start time: {_fmt_time(rng, after.start)}"]
    if after.location != before.location:
        lines.append(f"New location: {_fmt_location(after.location)}")
    return "\n".join(lines)


@cache
def _template(name: str) -> Template:
    """A template, loaded once (the environment would check the file's time at every use)."""
    return _TEMPLATES.get_template(name)


def _render(template: str, /, **values: object) -> str:
    return _template(template).render(**values).strip()


# ---------------------------------------------------------------- world building

@dataclass
class _Clock:
    zone: ZoneInfo
    now_local: datetime

    def utc(self, local: datetime) -> str:
        return iso_z(local.replace(tzinfo=self.zone))

    def before_now(self, rng: random.Random, lo_days: float, hi_days: float) -> datetime:
        return self.now_local - timedelta(minutes=rng.randint(int(lo_days * 1440), int(hi_days * 1440)))


NOTE_KINDS = ("office_hours", "reading", "lab", "guest", "study")
NOTE_TITLES = {"office_hours": "Office hours moved this week", "reading": "Reading for next week",
               "lab": "Lab session cancelled", "guest": "Guest lecture", "study": "Study session"}
GUESTS = ("Dr. Lena Ortiz", "Prof. Sam Whitfield", "Dr. Amara Okafor", "Prof. Jun Tanaka")


def _note(rng: random.Random, clock: _Clock) -> tuple[datetime, str, str]:
    """A plain announcement (no exam, date or credit the task asks for), posted after every
    course's welcome."""
    kind = rng.choice(NOTE_KINDS)
    day = clock.now_local + timedelta(days=rng.randint(1, 14))
    text = _render("note.j2", kind=kind, chapter=rng.randint(2, 14), day=f"{day:%A, %B} {day.day}",
                   weekday=f"{day:%A}", hour=f"{rng.randint(3, 7)} PM", guest=rng.choice(GUESTS),
                   office_hours=f"{rng.choice(WEEKDAYS)} {rng.randint(1, 4)}-{rng.randint(5, 6)} PM",
                   office=f"Room {rng.randint(100, 499)}, {rng.choice(['Hamilton Hall', 'Baker Hall'])}")
    return clock.before_now(rng, 0.1, 37), NOTE_TITLES[kind], text


def _course_topics(rng: random.Random, clock: _Clock, c: CoursePlan) -> list[tuple[datetime, str, str]]:
    """(posted local time, title, message) of every announcement of a course."""
    term_start = clock.now_local - timedelta(days=40)
    welcome_at = term_start + timedelta(hours=rng.randint(8, 60))
    course_view = {"name": c.name, "code": c.code, "credits": c.credits, "instructor": c.instructor}
    office = f"Office {rng.randint(100, 499)}, {rng.choice(['Hamilton Hall', 'Baker Hall', 'Turing Hall'])}"
    weekday = rng.choice(['Mondays', 'Tuesdays', 'Wednesdays', 'Thursdays'])
    hours = f"{weekday} {rng.randint(1, 4)}-{rng.randint(5, 6)} PM"
    exam_phrase = None if c.category == "no_final" else c.exam_type.lower()
    topics = [(welcome_at, f"Welcome to {c.code}!", _render(
        "welcome.j2", variant=rng.randrange(3), course=course_view, exam_phrase=exam_phrase,
        office_hours=hours, office=office))]
    titles = {"homework": "Homework {n} posted", "office_hours": "Office hours moved this week",
              "reading": "Reading for next week", "project": "Final project due date",
              "lab": "Lab session cancelled"}
    for number, kind in enumerate(c.coursework, start=1):
        due = clock.now_local + timedelta(days=rng.randint(-10, 30))
        topics.append((clock.before_now(rng, 0.5, 30), titles[kind].format(n=number), _render(
            "coursework.j2", kind=kind, number=number, due=f"{due:%B} {due.day}",
            office_hours=hours, office=office, reading=f"chapter {rng.randint(2, 12)} of the course notes",
            weight=rng.choice([20, 25, 30, 40]))))
    assert c.midterm is not None and c.midterm.day is not None
    mid_posted = datetime.combine(c.midterm.day, time(9)) - timedelta(days=rng.randint(3, 10))
    topics.append((max(mid_posted, welcome_at + timedelta(hours=2)), f"Midterm exam: {c.code}",
                   _render("midterm.j2", course=course_view, units=rng.randint(3, 6),
                           **_details(rng, c.midterm))))
    if c.category == "no_final":
        topics.append((clock.before_now(rng, 1, 30), f"No final exam in {c.code}",
                       _render("no_final.j2", course=course_view)))
    elif c.category in ("announcement", "exempt", "past"):
        assert c.final is not None
        first = c.announced or c.final
        if c.category == "past" and first.day:
            posted = datetime.combine(first.day, time(10)) - timedelta(days=rng.randint(3, 8))
        else:
            posted = clock.before_now(rng, 2, 20)
        posted = max(posted, welcome_at + timedelta(hours=3))
        topics.append((posted, f"Final exam details: {c.code}", _render(
            "final.j2", variant=rng.randrange(3), course=course_view, **_details(rng, first))))
        if c.announced is not None:
            fix_at = posted + (clock.now_local - posted) * rng.uniform(0.3, 0.9)
            topics.append((fix_at, f"Correction: final exam of {c.code}", _render(
                "correction.j2", course=course_view, changes=_changes(rng, c.announced, c.final))))
    return topics


@dataclass
class _Mail:
    at: datetime
    sender: str
    sender_name: str
    subject: str
    body: str
    key: bool = False  # carries ground truth (exam, correction or exemption details)
    movable: bool = False  # may be dated earlier without breaking latest-wins


def _mails(rng: random.Random, fake_rng: random.Random, plan: WorldPlan, clock: _Clock,
           fake: Faker) -> list[_Mail]:
    student_first = plan.student.name.split()[0]
    out: list[_Mail] = []
    for c in plan.courses:
        course_view = {"name": c.name, "code": c.code, "instructor": c.instructor}
        if c.category == "email":
            assert c.final is not None
            first = c.announced or c.final
            at = clock.before_now(rng, 2, 25)
            out.append(_Mail(at, c.instructor.email, c.instructor.name,
                             rng.choice([f"{c.code} final exam details",
                                         f"Final exam arrangements for {c.code}"]),
                             _render("exam_email.j2", variant=rng.randrange(2), course=course_view,
                                     student_first=student_first, **_details(rng, first)),
                             key=True, movable=True))
            if c.announced is not None:
                fix_at = at + (clock.now_local - at) * rng.uniform(0.3, 0.9)
                out.append(_Mail(fix_at, c.instructor.email, c.instructor.name,
                                 f"Correction: {c.code} final exam",
                                 _render("correction_email.j2", course=course_view,
                                         student_first=student_first,
                                         changes=_changes(rng, c.announced, c.final)), key=True))
        elif c.category == "exempt":
            out.append(_Mail(clock.before_now(rng, 1, 20), c.instructor.email, c.instructor.name,
                             f"{c.code}: final exam exemption",
                             _render("exempt_email.j2", course=course_view,
                                     student_first=student_first), key=True, movable=True))
    for o in plan.others:
        out.append(_Mail(clock.before_now(rng, 1, 25), o.sender.email, o.sender.name,
                         f"{o.code} final exam information",
                         _render("other_exam_email.j2", code=o.code, name=o.name,
                                 sender_name=o.sender.name, **_details(rng, o.details))))
    distractors = max(plan.num_distractor_emails, MIN_INBOX - len(out))
    out.extend(_distractor(fake_rng, fake, clock, student_first) for _ in range(distractors))
    _pagination_trap(out)
    return out


def _distractor(rng: random.Random, fake: Faker, clock: _Clock, student_first: str) -> _Mail:
    kind = rng.choice(["shop", "club", "job", "study", "note"])
    sender_name = fake.name()
    company = fake.company()
    values = dict(kind=kind, student_first=student_first, sender_name=sender_name, company=company,
                  product=rng.choice(["laptop", "headphone", "backpack", "coffee", "sneaker"]),
                  day=rng.choice(WEEKDAYS), percent=rng.choice([10, 15, 20, 30]),
                  code=fake.bothify("SAVE##??").upper(), amount=rng.choice([25, 35, 50]),
                  club=rng.choice(["chess", "robotics", "hiking", "film", "debate", "astronomy"]),
                  hour=f"{rng.randint(4, 8)}:00 PM", place=f"{fake.last_name()} Hall lounge",
                  job=fake.job(), weekday=rng.choice(WEEKDAYS), text=fake.paragraph(nb_sentences=4))
    subjects = {"shop": f"{company}: sale ends soon", "club": "Club meeting this week",
                "job": f"Summer internships at {company}", "study": "Finals week study group?",
                "note": fake.sentence(nb_words=6).rstrip(".")}
    if kind == "shop":
        sender = f"news@{fake.domain_name()}"
    else:
        sender = fake.free_email()
    return _Mail(clock.before_now(rng, 0.1, 30), sender, sender_name, subjects[kind],
                 _render("distractor_email.j2", **values))


def _pagination_trap(mails: list[_Mail]) -> None:
    """At least one e-mail carrying ground truth lies beyond the newest `TRAP_PAGE`."""
    newest = sorted(mails, key=lambda m: m.at, reverse=True)
    if any(m.key for m in newest[TRAP_PAGE:]):
        return
    movable = [m for m in newest if m.movable]
    oldest = newest[-1].at
    movable[-1].at = oldest - timedelta(hours=1)


def _write_canvas(session: Session, plan: WorldPlan, clock: _Clock, rng: random.Random,
                  salt_rng: random.Random, notes_rng: random.Random, num_notes: int) -> dict[str, object]:
    account = canvas.add_account(session, name=plan.university)
    student = canvas.add_user(session, name=plan.student.name, login_id=plan.student.email,
                              email=plan.student.email, password=_secret(salt_rng),
                              salt=_secret(salt_rng), time_zone=plan.zone)
    assert student.id is not None
    instructors = sorted({c.instructor for c in plan.courses}, key=lambda p: p.email)
    canvas.add_users(session, [{"id": student.id + i, "name": p.name, "login_id": p.email, "email": p.email,
                                "password": _secret(salt_rng), "salt": _secret(salt_rng),
                                "time_zone": plan.zone} for i, p in enumerate(instructors, start=1)])
    teachers = {p.email: student.id + i for i, p in enumerate(instructors, start=1)}
    start = clock.utc(clock.now_local - timedelta(days=40))
    end = clock.utc(clock.now_local + timedelta(days=75))
    per_course = [_course_topics(rng, clock, c) for c in plan.courses]
    for _ in range(num_notes):
        per_course[notes_rng.randrange(len(plan.courses))].append(_note(notes_rng, clock))
    courses, enrollments, topics = [], [], []
    for course_id, (c, course_topics) in enumerate(zip(plan.courses, per_course, strict=True), start=1):
        courses.append({"id": course_id, "account_id": account.id, "name": c.name,
                        "course_code": c.code, "workflow_state": "available", "start_at": start,
                        "end_at": end, "time_zone": plan.zone, "is_public": False,
                        "term": "Spring 2025"})
        teacher = teachers[c.instructor.email]
        for user_id, kind in ((student.id, "StudentEnrollment"), (teacher, "TeacherEnrollment")):
            enrollments.append({"course_id": course_id, "user_id": user_id, "type": kind,
                                "enrollment_state": "active"})
        for posted, title, message in sorted(course_topics):
            topics.append({"course_id": course_id, "title": title, "message": message,
                           "posted_at": clock.utc(posted), "author_id": teacher,
                           "is_announcement": True, "published": True})
    bulk_insert(session, CanvasCourse, courses)
    bulk_insert(session, CanvasEnrollment, enrollments)
    bulk_insert(session, CanvasDiscussionTopic, topics)
    canvas.log_in(session, student.id)
    return {"user_id": student.id, "login_id": plan.student.email}


def _write_mail(session: Session, plan: WorldPlan, mails: list[_Mail], clock: _Clock,
                salt_rng: random.Random) -> dict[str, object]:
    account = mail.add_account(session, address=plan.student.email, name=plan.student.name,
                               password=_secret(salt_rng), salt=_secret(salt_rng),
                               created_at=clock.utc(clock.now_local - timedelta(days=400)))
    for m in sorted(mails, key=lambda m: m.at):
        mail.deliver(session, sender=m.sender, sender_name=m.sender_name, to=[plan.student.email],
                     subject=m.subject, body=m.body, date=clock.utc(m.at))
    assert account.id is not None
    mail.log_in(session, account.id)
    return {"address": plan.student.email}


def _write_profile(session: Session, plan: WorldPlan, rng: random.Random) -> None:
    """The student's profile in the memory graph: name, e-mail, student ID."""
    memory.add_entity(session, plan.student.name, "student", [
        f"E-mail: {plan.student.email}", f"Student ID: {rng.randrange(10**7, 10**8)}",
        f"University: {plan.university}"])


def _secret(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghjkmnpqrstuvwxyz23456789") for _ in range(16))


def _write_workspace(world: World) -> None:
    wb = Workbook()
    ws = wb.active
    ws.title = SCHEDULE.sheet
    ws.append(SCHEDULE.headers)
    save_workbook(wb, world.workspace / SCHEDULE.file, world.clock.at(0))


def generate(root: Path, params: dict[str, object], seed: int,
             target_tokens: int | None = None) -> World:
    """Build the world directory for (params, seed). Pure in its inputs: same inputs, same
    content hash."""
    p = Params.model_validate(params).resolved()
    rngs = WorldRng(TASK.name, seed)
    zone = rngs.stream("zone").choice(ZONES)
    zone_info = ZoneInfo(zone)
    now_utc = LOCAL_NOW.replace(tzinfo=zone_info)
    clock = _Clock(zone_info, LOCAL_NOW)
    fake = seeded_faker(rngs.stream("faker"))
    plan = plan_world({name: rngs.stream(name) for name in ("courses", "people", "modifiers")},
                      fake, p["num_courses"], p["num_distractor_emails"], LOCAL_NOW.date(), zone)
    meta = WorldMeta(task=TASK.name, seed=seed, params=identity(p), now=now_utc.isoformat(), tz=zone,
                     target_tokens=target_tokens, generator_version=VERSION)
    world, db = create_world(root, meta, TASK.servers.values())
    mails = _mails(rngs.stream("mail"), rngs.stream("distractors"), plan, clock, fake)
    with db.write() as session:
        world.meta.accounts["canvas"] = _write_canvas(session, plan, clock, rngs.stream("topics"),
                                                      rngs.stream("secrets"), rngs.stream("notes"),
                                                      p["num_notes"])
        world.meta.accounts["email"] = _write_mail(session, plan, mails, clock, rngs.stream("secrets2"))
        _write_profile(session, plan, rngs.stream("profile"))
    _write_workspace(world)
    db.dispose()
    return finish_world(world, TASK, {SCHEDULE.file: truth_rows(plan)})
