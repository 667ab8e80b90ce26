"""Generator of canvas_list_test: my Canvas courses with quizzes, assignments, my and my
classmates' submissions, exemption policies announced in some courses (my exam scores are in
memory), and the two CSV files to fill, each holding a header and an example row.

Scale: `num_courses` (primary); `num_notes`, the count of plain course announcements, follows
from it (`NOTES_PER_COURSE` per course) unless calibration sets it to land on a length target.

Every draw comes from the world's named RNG streams; Faker is seeded from one of them and only its
name providers are used (its date providers read the wall clock)."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from sqlmodel import Session

from envs.canvas_list_test import ASSIGNMENTS, QUIZZES, SCORE_NOTE, TASK
from generators.canvas_list_test.plan import NOW, Course, WorldPlan, default_notes, plan_world, truth_rows
from generators.common import create_world, finish_world, seeded_faker, templates
from loca.core.clock import iso_z
from loca.core.outputs import csv_text
from loca.core.rng import WorldRng
from loca.core.world import World, WorldMeta, write_text_atomic
from mock_servers.canvas import domain as canvas
from mock_servers.memory import domain as memory

VERSION = "2"
ZONES = ["America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles"]
TERM_START, TERM_END = datetime(2025, 8, 25, 13, 0, tzinfo=UTC), datetime(2025, 12, 20, 23, 0, tzinfo=UTC)
CLASSMATES = (1, 3)  # how many of my classmates take a given course
CLASSMATE_SUBMITS = 0.5  # a classmate has turned in a given item
NOTE_KINDS = ("office_hours", "reading", "lab", "guest", "study")
NOTE_TITLES = {"office_hours": "Office hours moved this week", "reading": "Reading for next week",
               "lab": "Lab session cancelled", "guest": "Guest lecture", "study": "Study session"}
BUILDINGS = ("Hamilton Hall", "Baker Hall", "Curie Center", "Lovelace Building", "North Pavilion",
             "Turing Hall", "Meyer Library", "Hopper Hall")
TEXTBOOKS = ("the course notes", "the open textbook linked on the course page", "the third edition of the "
             "standard text", "a reader of selected papers")
_TEMPLATES = templates(str(Path(__file__).parent / "templates"))


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_courses: int = Field(ge=TASK.scale.lo, le=TASK.scale.hi)
    num_notes: int | None = Field(default=None, ge=0)

    def resolved(self) -> dict[str, int]:
        notes = default_notes(self.num_courses) if self.num_notes is None else self.num_notes
        return {"num_courses": self.num_courses, "num_notes": notes}


def resolve_params(params: dict[str, object]) -> dict[str, int]:
    return Params.model_validate(params).resolved()


def _render(template: str, values: dict[str, Any]) -> str:
    return _TEMPLATES.get_template(template).render(**values).strip()


def _between(rng: random.Random, start: datetime, end: datetime) -> datetime:
    """A whole minute in [start, end)."""
    return start + timedelta(minutes=rng.randrange(int((end - start).total_seconds() // 60)))


# ---------------------------------------------------------------- announcements

def _office(rng: random.Random) -> dict[str, str]:
    weekday = rng.choice(["Mondays", "Tuesdays", "Wednesdays", "Thursdays"])
    return {"office_hours": f"{weekday} {rng.randint(1, 4)}-{rng.randint(5, 6)} PM",
            "office": f"Room {rng.randint(100, 499)}, {rng.choice(BUILDINGS)}"}


def _course_topics(rng: random.Random, c: Course) -> list[tuple[datetime, str, str]]:
    """(posted, title, message) of a course's welcome, final exam and exemption announcements."""
    view = {"code": c.code, "name": c.name}
    quizzes = rng.choice([10, 15, 20, 25])
    assignments = rng.choice([20, 25, 30, 35, 40])
    topics = [(_between(rng, TERM_START, TERM_START + timedelta(days=2)), f"Welcome to {c.code}!",
               _render("welcome.j2", {"variant": rng.randrange(3), "course": view, "topic": c.topic.lower(),
                                      "instructor": c.instructor.name, "textbook": rng.choice(TEXTBOOKS),
                                      "grading": (quizzes, assignments, 100 - quizzes - assignments),
                                      **_office(rng)}))]
    exam_day = date(2025, 12, rng.randint(8, 19))
    hour = rng.choice([8, 9, 10, 13, 14, 15, 18])
    topics.append((_between(rng, NOW - timedelta(days=20), NOW - timedelta(hours=2)), "Final Exam Announcement",
                   _render("final_exam.j2", {
                       "variant": rng.randrange(3), "course": view, "date": f"{exam_day:%A, %B} {exam_day.day}",
                       "time": f"{hour % 12 or 12}:00 {'AM' if hour < 12 else 'PM'}",
                       "location": f"Room {rng.randint(100, 499)}, {rng.choice(BUILDINGS)}",
                       "exam_type": rng.choice(["closed-book", "open-book"]),
                       "duration": rng.choice([90, 120, 150, 180])})))
    if c.policy is not None:
        title = rng.choice(["Exemption policy for remaining coursework", "Coursework exemption",
                            "Exam score exemption"])
        topics.append((_between(rng, NOW - timedelta(days=25), NOW - timedelta(days=2)), title,
                       _render("exemption.j2", {"variant": c.policy.variant, "course": view,
                                                "threshold": c.policy.threshold})))
    return topics


def _note(rng: random.Random, c: Course, kinds: list[str]) -> tuple[datetime, str, str]:
    """A plain announcement of a kind the course has not had yet, while there is one."""
    kind = rng.choice([k for k in NOTE_KINDS if k not in kinds] or NOTE_KINDS)
    kinds.append(kind)
    day = NOW + timedelta(days=rng.randint(1, 14))
    text = _render("note.j2", {"kind": kind, "chapter": rng.randint(2, 14), "day": f"{day:%A, %B} {day.day}",
                               "weekday": f"{day:%A}", "topic": c.topic.lower(), "hour": f"{rng.randint(3, 7)} PM",
                               "guest": rng.choice(["Dr. Lena Ortiz", "Prof. Sam Whitfield", "Dr. Amara Okafor",
                                                    "Prof. Jun Tanaka"]), **_office(rng)})
    return _between(rng, TERM_START + timedelta(days=3), NOW), NOTE_TITLES[kind], text


def _topic_rows(plan: WorldPlan, teachers: dict[str, int], rng: random.Random, notes_rng: random.Random,
                num_notes: int) -> list[dict[str, Any]]:
    per_course = [_course_topics(rng, c) for c in plan.courses]
    kinds: list[list[str]] = [[] for _ in plan.courses]
    for _ in range(num_notes):
        i = notes_rng.randrange(len(plan.courses))
        per_course[i].append(_note(notes_rng, plan.courses[i], kinds[i]))
    return [{"course_id": cid, "title": title, "message": message, "posted_at": posted,
             "author_id": teachers[c.instructor.email], "is_announcement": True}
            for cid, (c, topics) in enumerate(zip(plan.courses, per_course, strict=True), start=1)
            for posted, title, message in sorted(topics)]


# ---------------------------------------------------------------- people and work

def _secret(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghjkmnpqrstuvwxyz23456789") for _ in range(16))


def _users(session: Session, plan: WorldPlan, zone: str, rng: random.Random) -> tuple[int, dict[str, int], list[int]]:
    """Me (the only one who can log in), the instructors and my classmates: (my id, teacher
    ids by e-mail, classmate ids)."""
    me = canvas.add_user(session, name=plan.student.name, login_id=plan.student.email,
                         email=plan.student.email, password=_secret(rng), salt=_secret(rng), time_zone=zone)
    assert me.id is not None
    instructors = sorted({c.instructor for c in plan.courses}, key=lambda p: p.email)
    people = instructors + plan.others
    canvas.add_users(session, [{"id": me.id + i, "name": p.name, "login_id": p.email, "email": p.email,
                                "password": None, "salt": "", "time_zone": zone}
                               for i, p in enumerate(people, start=1)])
    ids = {p.email: me.id + i for i, p in enumerate(people, start=1)}
    return me.id, {p.email: ids[p.email] for p in instructors}, [ids[p.email] for p in plan.others]


def _classmates(rng: random.Random, plan: WorldPlan, others: list[int]) -> list[list[int]]:
    """Per course, the classmates who take it."""
    return [sorted(rng.sample(others, rng.randint(*CLASSMATES))) for _ in plan.courses]


def _turned_in(rng: random.Random, due: datetime) -> datetime:
    """When an item due at `due` was turned in: a few hours to days before the deadline (and
    before now)."""
    return min(due, NOW) - timedelta(minutes=rng.randint(60, 6 * 1440))


def _work(rng: random.Random, plan: WorldPlan, me: int, classmates: list[list[int]]) -> dict[str, list[dict[str, Any]]]:
    """Quizzes, assignments, and the submissions and attempts of mine and of my classmates (the
    first listed assignment of the last course always has one of theirs)."""
    rows: dict[str, list[dict[str, Any]]] = {"quizzes": [], "assignments": [], "submissions": [], "attempts": []}
    for cid, (c, mates) in enumerate(zip(plan.courses, classmates, strict=True), start=1):
        for q in c.quizzes:
            qid = len(rows["quizzes"]) + 1
            rows["quizzes"].append({
                "id": qid, "course_id": cid, "title": q.title, "description": q.description,
                "time_limit": q.time_limit, "allowed_attempts": q.attempts, "scoring_policy": q.scoring,
                "points_possible": q.points, "question_count": q.questions, "due_at": q.due, "credits": q.credits})
            takers = [me] * q.submitted + [m for m in mates if rng.random() < CLASSMATE_SUBMITS]
            for user in takers:
                start = _turned_in(rng, q.due)
                rows["attempts"].append({
                    "quiz_id": qid, "user_id": user, "started_at": start,
                    "finished_at": start + timedelta(minutes=rng.randint(3, q.time_limit)),
                    "score": round(q.points * rng.uniform(0.4, 1.0))})
        trap = c is plan.courses[-1]
        for a in c.assignments:
            aid = len(rows["assignments"]) + 1
            rows["assignments"].append({
                "id": aid, "course_id": cid, "name": a.title, "description": a.description, "due_at": a.due,
                "points_possible": a.points, "submission_types": list(a.types)})
            takers = [m for m in mates if rng.random() < CLASSMATE_SUBMITS]
            if trap and a.listed and not takers:
                takers, trap = [mates[0]], False
            for user in [me] * a.submitted + takers:
                at = _turned_in(rng, a.due)
                graded = at < NOW - timedelta(days=2) and rng.random() < 0.5
                score = round(a.points * rng.uniform(0.5, 1.0))
                rows["submissions"].append({
                    "assignment_id": aid, "user_id": user, "submission_type": "online_text_entry",
                    "body": f"<p>Submission for {a.title}.</p>", "submitted_at": at,
                    **({"grade": str(score), "score": score, "graded_at": at + timedelta(days=2)} if graded else {})})
    return rows


def _write_canvas(session: Session, plan: WorldPlan, p: dict[str, int], zone: str,
                  rngs: WorldRng) -> dict[str, object]:
    account = canvas.add_account(session, name=plan.university)
    me, teachers, others = _users(session, plan, zone, rngs.stream("secrets"))
    canvas.add_courses(session, [{
        "id": cid, "account_id": account.id, "name": c.name, "course_code": c.code, "start_at": TERM_START,
        "end_at": TERM_END, "time_zone": zone, "term": "Fall 2025"} for cid, c in enumerate(plan.courses, start=1)])
    classmates = _classmates(rngs.stream("classmates"), plan, others)
    canvas.add_enrollments(session, [
        {"course_id": cid, "user_id": user, "type": kind}
        for cid, (c, mates) in enumerate(zip(plan.courses, classmates, strict=True), start=1)
        for user, kind in [(me, "StudentEnrollment"), (teachers[c.instructor.email], "TeacherEnrollment"),
                           *((m, "StudentEnrollment") for m in mates)]])
    work = _work(rngs.stream("work"), plan, me, classmates)
    canvas.add_quizzes(session, work["quizzes"])
    canvas.add_assignments(session, work["assignments"])
    canvas.add_submissions(session, work["submissions"])
    canvas.add_quiz_submissions(session, work["attempts"])
    canvas.add_topics(session, _topic_rows(plan, teachers, rngs.stream("topics"), rngs.stream("notes"),
                                           p["num_notes"]))
    canvas.log_in(session, me)
    return {"user_id": me, "login_id": plan.student.email}


def _write_profile(session: Session, plan: WorldPlan, rng: random.Random) -> None:
    """My profile in the memory graph, with my exam score in every course that announces an
    exemption policy."""
    scores = [SCORE_NOTE.format(code=c.code, score=c.policy.score) for c in plan.courses if c.policy]
    memory.add_entity(session, plan.student.name, "student", [
        f"E-mail: {plan.student.email}", f"Student ID: {rng.randrange(10**7, 10**8)}",
        f"University: {plan.university}", *scores])


def _write_workspace(world: World, plan: WorldPlan) -> None:
    """Each file: its header and one example row."""
    code, name = plan.example
    deadline = "2025-09-15T23:59:00Z"
    write_text_atomic(world.workspace / QUIZZES.file, csv_text(QUIZZES.headers, [
        [code, name, 3, "Quiz 1", 10, 30, 2, "keep_highest", 20, deadline]]))
    write_text_atomic(world.workspace / ASSIGNMENTS.file, csv_text(ASSIGNMENTS.headers, [
        [code, name, "Reading Response 1",
         'Read "Chapter 1, Sections 1-2" and summarize it, in about 300 words.', deadline, 10]]))


def generate(root: Path, params: dict[str, object], seed: int, target_tokens: int | None = None) -> World:
    """Build the world directory for (params, seed). Pure in its inputs: same inputs, same
    content hash."""
    p = resolve_params(params)
    rngs = WorldRng(TASK.name, seed)
    zone = rngs.stream("zone").choice(ZONES)
    plan = plan_world({name: rngs.stream(name) for name in ("catalogue", "items", "policies", "roles")},
                      seeded_faker(rngs.stream("faker")), p["num_courses"], _render)
    meta = WorldMeta(task=TASK.name, seed=seed, params=p, now=iso_z(NOW), tz=zone,
                     target_tokens=target_tokens, generator_version=VERSION)
    world, db = create_world(root, meta, TASK.servers.values())
    with db.write() as session:
        world.meta.accounts["canvas"] = _write_canvas(session, plan, p, zone, rngs)
        _write_profile(session, plan, rngs.stream("profile"))
    _write_workspace(world, plan)
    db.dispose()
    answer = {out.file: truth_rows(plan.courses, out) for out in (QUIZZES, ASSIGNMENTS)}
    return finish_world(world, TASK, answer)
