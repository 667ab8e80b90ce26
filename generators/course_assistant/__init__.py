"""Generator of course_assistant: an NLP roster in `nlp_statistics.xlsx`, the TA's credentials
in `email_account.txt`, and the TA's inbox of presentation submissions, near misses and
distractors; every student has a mailbox, so reminders are really delivered.

Scale: `num_students` (primary); `num_distractor_emails` follows from it (ceil(0.15 n)) unless
calibration sets it to land on a length target.

Every draw comes from the world's named RNG streams; Faker is seeded from them and only its
name and text providers are used (its date providers read the wall clock)."""

from __future__ import annotations

import random
from datetime import timedelta
from functools import cache
from pathlib import Path

from faker import Faker
from jinja2 import Template
from openpyxl import Workbook
from pydantic import BaseModel, ConfigDict, Field
from sqlmodel import Session

from envs.course_assistant import (
    CREDENTIALS_FILE,
    MAIL,
    OTHER_COURSE_PREFIX,
    ROSTER_FILE,
    ROSTER_HEADERS,
    ROSTER_SHEET,
    SUBMISSION_PREFIX,
    TASK,
)
from generators.common import PersonNames, create_world, finish_world, seeded_faker, templates
from generators.course_assistant.plan import (
    ANNOUNCED,
    DISTRACTOR,
    NOW,
    OTHER_COURSE,
    PERSONAL,
    QUESTION,
    STREAMS,
    Message,
    Plan,
    default_distractors,
    plan_world,
)
from loca.core.clock import iso_z
from loca.core.credentials import credentials_text
from loca.core.rng import WorldRng
from loca.core.world import World, WorldMeta, write_text_atomic
from mock_servers.core.files import save_workbook
from mock_servers.email import domain as mail

VERSION = "2"
_TEMPLATES = templates(str(Path(__file__).parent / "templates"))
METHODS = ("Contrastive pretraining", "Retrieval-augmented generation", "Instruction tuning",
           "Sparse attention", "Curriculum learning", "Data augmentation", "Knowledge distillation",
           "Prompt ensembling", "Adapter tuning", "Active learning", "Multi-task learning")
PROBLEMS = ("low-resource machine translation", "named entity recognition", "table question answering",
            "abstractive summarisation", "code-switched sentiment analysis", "dialogue state tracking",
            "fact verification", "coreference resolution", "semantic parsing", "hate speech detection")
CV_PROBLEMS = ("object detection in drone footage", "monocular depth estimation", "image captioning",
               "medical image segmentation", "pose estimation for sports video")
QUESTIONS = ("Question about the final presentation", "Extension for the NLP presentation?",
             "nlp-presentation format question")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
DISTRACTOR_KINDS = ("seminar", "grading", "library", "it", "conference", "note")
SERVICES = {"library": ("University Library", "library"), "it": ("IT Services", "it-services")}
CLASS_LIST = "nlp-course-students"  # the class mailing list (outside this mail service)
SENTENCES, COMPANIES = 120, 12  # filler pools per group of messages


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_students: int = Field(ge=TASK.scale.lo, le=TASK.scale.hi)
    num_distractor_emails: int | None = Field(default=None, ge=0)

    def resolved(self) -> dict[str, int]:
        extra = self.num_distractor_emails
        return {"num_students": self.num_students,
                "num_distractor_emails": default_distractors(self.num_students) if extra is None else extra}


def resolve_params(params: dict[str, object]) -> dict[str, int]:
    return Params.model_validate(params).resolved()


@cache
def _template(name: str) -> Template:
    """A template loaded once (the environment would check its file on every lookup)."""
    return _TEMPLATES.get_template(f"{name}.j2")


def _render(template: str, /, **values: object) -> str:
    return _template(template).render(**values).strip()


def _link(rng: random.Random, domain: str) -> str:
    token = "".join(rng.choice("abcdefghijkmnpqrstuvwxyz23456789") for _ in range(10))
    return f"https://slides.{domain}/s/{token}"


class _Texts:
    """The draws of one group of messages: a world stream, person names, and filler prose whose
    sentences and company names are drawn once per world from a seeded Faker, then combined with
    the stream (Faker's pickers cost about a tenth of a millisecond a word, too slow for
    thousands of messages)."""

    def __init__(self, rng: random.Random, fake: Faker) -> None:
        self.rng, self.names = rng, PersonNames(fake, rng)
        self.sentences = [fake.sentence(nb_words=rng.randint(6, 14)) for _ in range(SENTENCES)]
        self.companies = [fake.company() for _ in range(COMPANIES)]

    def paragraph(self, lo: int, hi: int) -> str:
        return " ".join(self.rng.sample(self.sentences, self.rng.randint(lo, hi)))

    def company(self) -> str:
        return self.rng.choice(self.companies)


def _student_mail(texts: _Texts, plan: Plan, m: Message) -> tuple[str, str]:
    """(subject, body) of a message that concerns a student."""
    rng, s = texts.rng, m.student
    assert s is not None
    variant = rng.randrange(3)
    values = {"ta_first": plan.ta.first, "first": s.first, "name": s.name, "student_id": s.student_id,
              "variant": variant, "link": _link(rng, plan.domain),
              "title": f"{rng.choice(METHODS)} for {rng.choice(PROBLEMS)}",
              "cv_title": rng.choice(CV_PROBLEMS).capitalize(),
              "abstract": texts.paragraph(2, 4)}
    if m.kind == QUESTION:
        return QUESTIONS[variant], _render(QUESTION, **values)
    prefix = OTHER_COURSE_PREFIX if m.kind == OTHER_COURSE else SUBMISSION_PREFIX
    return f"{prefix}{s.student_id}-{s.name}", _render(m.kind, **values)


def _distractor(fake: _Texts, plan: Plan) -> tuple[str, str, str, str]:
    """(sender, sender name, subject, body) of a message unrelated to the presentations."""
    rng = fake.rng
    kind = rng.choice(DISTRACTOR_KINDS)
    sender_name, company = fake.names.full(), fake.company()
    values = {"kind": kind, "ta_first": plan.ta.first, "sender_name": sender_name, "company": company,
              "speaker": fake.names.full(), "topic": rng.choice(PROBLEMS), "weekday": rng.choice(WEEKDAYS),
              "hour": f"{rng.randint(1, 5)}:00 PM", "place": f"Room {rng.randint(100, 450)}",
              "text": fake.paragraph(2, 5)}
    subjects = {"seminar": f"NLP seminar this {values['weekday']}: {values['topic']}",
                "grading": "Midterm grades of your tutorial group", "library": "Reminder: items due soon",
                "it": f"Planned maintenance on {values['weekday']}",
                "conference": f"Call for papers: {company} workshop on {values['topic']}",
                "note": fake.paragraph(1, 1).rstrip(".")}
    if kind in SERVICES:
        sender_name, mailbox = SERVICES[kind]
        sender = f"{mailbox}@{plan.domain}"
    elif kind == "grading":
        sender = f"{sender_name.split()[-1].lower()}.office@{plan.domain}"
    else:
        first, last = sender_name.lower().split(maxsplit=1)
        sender = f"{first}.{last}{rng.randint(1, 99)}@{rng.choice(PERSONAL)}"
    return sender, sender_name, subjects[kind], _render("distractor", **values)


def _write_mail(session: Session, plan: Plan, rngs: WorldRng, password: str, salt: str) -> None:
    ta = plan.ta
    mail.add_account(session, address=ta.email, name=ta.name, password=password, salt=salt,
                     created_at=iso_z(NOW - timedelta(days=400)))
    mail.add_accounts(session, [(s.email, s.name) for s in plan.students],
                      created_at=iso_z(NOW - timedelta(days=120)))
    due = NOW - timedelta(days=1)
    mail.deliver(session, sender=ta.email, sender_name=ta.name, to=[f"{CLASS_LIST}@{plan.domain}"],
                 subject="NLP final presentation: how to submit",
                 body=_render("announcement", due=f"{due:%A, %B} {due.day}", prefix=SUBMISSION_PREFIX,
                              example_id="12345678", example_name="Ada Example", ta_name=ta.name),
                 date=iso_z(ANNOUNCED))
    texts = _Texts(rngs.stream("texts"), seeded_faker(rngs.stream("faker_texts")))
    others = _Texts(rngs.stream("distractor_texts"), seeded_faker(rngs.stream("faker_distractors")))
    for m in plan.messages:
        if m.kind == DISTRACTOR:
            sender, sender_name, subject, body = _distractor(others, plan)
        else:
            (subject, body), sender, sender_name = _student_mail(texts, plan, m), m.sender, m.sender_name
        mail.deliver(session, sender=sender, sender_name=sender_name, to=[ta.email], subject=subject,
                     body=body, date=iso_z(m.at), read=m.at < NOW - timedelta(days=2))


def _secret(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghjkmnpqrstuvwxyz23456789") for _ in range(16))


def _write_workspace(world: World, plan: Plan, password: str) -> None:
    wb = Workbook()
    ws = wb.active
    ws.title = ROSTER_SHEET
    ws.append(list(ROSTER_HEADERS))
    for s in plan.students:
        ws.append([s.name, s.student_id, s.email, s.status])
    save_workbook(wb, world.workspace / ROSTER_FILE, world.clock.at(0))
    write_text_atomic(world.workspace / CREDENTIALS_FILE,
                      credentials_text("NLP course TA mailbox", plan.ta.email, password, plan.domain))


def generate(root: Path, params: dict[str, object], seed: int,
             target_tokens: int | None = None) -> World:
    """Build the world directory for (params, seed). Pure in its inputs: same inputs, same
    content hash."""
    p = Params.model_validate(params).resolved()
    rngs = WorldRng(TASK.name, seed)
    streams = {name: rngs.stream(name) for name in STREAMS}
    names = PersonNames(seeded_faker(rngs.stream("faker_people")), rngs.stream("names"))
    secrets = rngs.stream("secrets")
    password, salt = _secret(secrets), _secret(secrets)
    plan = plan_world(streams, names, p["num_students"], p["num_distractor_emails"])
    meta = WorldMeta(task=TASK.name, seed=seed, params=p, now=iso_z(NOW), tz="UTC",
                     target_tokens=target_tokens, generator_version=VERSION,
                     accounts={"email": {"address": plan.ta.email}})
    world, db = create_world(root, meta, TASK.servers.values())
    with db.write() as session:
        _write_mail(session, plan, rngs, password, salt)
    db.dispose()
    _write_workspace(world, plan, password)
    answer = [{"to": s.email, "name": s.name, "student_id": s.student_id, "ids": [s.student_id]}
              for s in plan.recipients()]
    return finish_world(world, TASK, {MAIL: answer})
