"""Generator of apply_phd_email: professors' replies to the student's PhD inquiries (requests for
materials with the tree each wants, requests withdrawn later, research-assistant offers,
rejections, silence), the flat folder of application materials, and the student's profile in
memory.

Scale: `num_professors` (primary); reply types follow by the spec's fixed ratios, and
`num_other_emails` (unrelated notices) follows from it (2 + ceil(n / 10)) unless calibration
sets it to land on a length target.

Every draw comes from the world's named RNG streams; the Faker instances are seeded from their
own streams and only their name data and name/text providers are used (the date providers read
the wall clock)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field
from sqlmodel import Session

from envs.apply_phd_email import ROOT, SUBJECT, TASK
from generators.apply_phd_email.documents import write_documents
from generators.apply_phd_email.mailbox import compose, write_mail
from generators.apply_phd_email.plan import WorldPlan, default_other_emails, plan_world
from generators.apply_phd_email.tree import required
from generators.common import PersonNames, create_world, finish_world, seeded_faker
from loca.core.rng import WorldRng
from loca.core.world import World, WorldMeta
from mock_servers.memory import domain as memory

VERSION = "1"
ZONE = "Asia/Shanghai"
NOW = datetime(2025, 9, 12, 10, 0, tzinfo=ZoneInfo(ZONE))
INQUIRIES_FROM = NOW - timedelta(days=73)
REPLIES_FROM = INQUIRIES_FROM + timedelta(days=21)
REPLIES_UNTIL = NOW - timedelta(hours=1)


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_professors: int = Field(ge=TASK.scale.lo, le=TASK.scale.hi)
    num_other_emails: int | None = Field(default=None, ge=0)

    def resolved(self) -> dict[str, int]:
        others = self.num_other_emails
        return {"num_professors": self.num_professors,
                "num_other_emails": default_other_emails(self.num_professors) if others is None else others}


def resolve_params(params: dict[str, object]) -> dict[str, int]:
    return Params.model_validate(params).resolved()


def root_folder(plan: WorldPlan) -> str:
    return ROOT.format(name=plan.student.person.name.replace(" ", ""), student_id=plan.student.student_id)


def submissions(plan: WorldPlan) -> list[dict[str, Any]]:
    """The answer: per professor whose latest reply asks for materials, the message to send
    (by address): its subject, the ZIP's root folder and every path under it with its source."""
    root = root_folder(plan)
    found = []
    for p in plan.positives:
        assert p.structure is not None and p.address is not None
        found.append({"to": p.address, "subject": SUBJECT, "root": root, "tree": required(p.structure, plan)})
    return sorted(found, key=lambda s: s["to"])


def _write_profile(session: Session, plan: WorldPlan) -> None:
    """The student's profile in the memory graph: full name, student ID, e-mail."""
    s = plan.student
    memory.add_entity(session, s.person.name, "person", [
        f"Full name: {s.person.name}", f"Student ID: {s.student_id}", f"E-mail: {s.person.email}",
        f"Program: M.S. in {s.major}", "Applying for PhD positions starting in fall 2026"])
    memory.add_entity(session, s.university, "university", [f"E-mail domain: {s.domain}"])
    memory.add_relation(session, s.person.name, s.university, "studies_at")


def make_plan(params: dict[str, int], seed: int) -> WorldPlan:
    """The plan of the world of (resolved params, seed)."""
    rngs = WorldRng(TASK.name, seed)
    streams = {name: rngs.stream(name) for name in ("people", "professors", "requests", "timeline", "awards")}
    names = PersonNames(seeded_faker(rngs.stream("faker")), rngs.stream("names"))
    return plan_world(streams, names, params["num_professors"], params["num_other_emails"], REPLIES_FROM,
                      REPLIES_UNTIL)


def generate(root: Path, params: dict[str, object], seed: int, target_tokens: int | None = None) -> World:
    """Build the world directory for (params, seed). Pure in its inputs: same inputs, same
    content hash."""
    p = Params.model_validate(params).resolved()
    rngs = WorldRng(TASK.name, seed)
    plan = make_plan(p, seed)
    meta = WorldMeta(task=TASK.name, seed=seed, params=p, now=NOW.isoformat(), tz=ZONE,
                     target_tokens=target_tokens, generator_version=VERSION)
    world, db = create_world(root, meta, TASK.servers.values())
    mails = compose(rngs.stream("mail"), seeded_faker(rngs.stream("mail_text")), plan, INQUIRIES_FROM)
    with db.write() as session:
        world.meta.accounts["email"] = write_mail(session, plan, mails, rngs.stream("secrets"),
                                                  NOW - timedelta(days=800))
        _write_profile(session, plan)
    db.dispose()
    sources = write_documents(world.workspace, rngs.stream("documents"), plan, NOW - timedelta(days=20))
    awards = sorted(plan.awards, key=lambda a: a.year)
    return finish_world(
        world, TASK, {"mail": submissions(plan)},
        student={"name": plan.student.person.name, "student_id": plan.student.student_id,
                 "email": plan.student.person.email},
        awards=[{"file": a.file, "title": a.title, "year": a.year} for a in awards],
        sources=sources,
        withdrawn=sorted(p.address for p in plan.professors if p.kind == "withdrawn" and p.address))
