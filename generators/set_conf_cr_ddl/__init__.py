"""Generator of set_conf_cr_ddl: a researcher's mailbox full of conference e-mails (camera-ready
instructions per track, extensions, UTC corrections, reminders, other tracks' and other
conferences' deadlines, calls for papers, registration notices, updates), a calendar with a few
events, and `conference_info.txt` naming the (conference, track) pairs whose final camera-ready
deadlines must go into the calendar.

Scale: `num_target` (primary); `num_noise` = round(1.4 t) and `num_misc_emails` (everyday
e-mails, 2 + ceil(t/2)) follow from it unless given; calibration may set `num_misc_emails` to
land on a length target.

Every draw comes from the world's named RNG streams; Faker is seeded from one of them and only
its name/text providers are used (its date providers read the wall clock)."""

from __future__ import annotations

import random
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from sqlmodel import Session

from envs.set_conf_cr_ddl import ANSWER_KEY, INFO_FILE, TASK
from generators.common import create_world, finish_world, seeded_faker
from generators.set_conf_cr_ddl.entities import NOW
from generators.set_conf_cr_ddl.plan import (
    MIN_NOISE,
    WorldPlan,
    default_misc,
    default_noise,
    info_text,
    plan_world,
    truth_events,
)
from generators.set_conf_cr_ddl.render import conference_text, misc_text, name_pool
from loca.core.rng import WorldRng
from loca.core.world import World, WorldMeta, write_text_atomic
from mock_servers.calendar import domain as calendar
from mock_servers.email import domain as mail

VERSION = "2"
STREAMS = ("acronyms", "targets", "noise", "times", "events")


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_target: int = Field(ge=TASK.scale.lo, le=TASK.scale.hi)
    num_noise: int | None = Field(default=None, ge=MIN_NOISE)
    num_misc_emails: int | None = Field(default=None, ge=0)

    def resolved(self) -> dict[str, int]:
        t = self.num_target
        return {"num_target": t,
                "num_noise": default_noise(t) if self.num_noise is None else self.num_noise,
                "num_misc_emails": default_misc(t) if self.num_misc_emails is None else self.num_misc_emails}


def resolve_params(params: dict[str, object]) -> dict[str, int]:
    return Params.model_validate(params).resolved()


def _secret(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghjkmnpqrstuvwxyz23456789") for _ in range(16))


def _write_mail(session: Session, plan: WorldPlan, text_rng: random.Random, secrets: random.Random,
                fake_rng: random.Random) -> dict[str, object]:
    """The owner's account, logged in, and every e-mail delivered to its inbox, oldest first."""
    owner = plan.owner
    account = mail.add_account(session, address=owner.email, name=owner.name, password=_secret(secrets),
                               salt=_secret(secrets), created_at=NOW.replace(year=NOW.year - 3))
    fake = seeded_faker(fake_rng)
    names = name_pool(fake)
    acronyms = [t.conference.acronym for t in plan.targets]
    for m in plan.mails:
        text = (misc_text(text_rng, fake, names, owner, acronyms) if m.conference is None
                else conference_text(text_rng, names, m))
        mail.deliver(session, sender=text.sender, sender_name=text.sender_name, to=[owner.email],
                     subject=text.subject, body=text.body, date=m.at)
    assert account.id is not None
    mail.log_in(session, account.id)
    return {"address": owner.email}


def _write_calendar(session: Session, plan: WorldPlan) -> dict[str, object]:
    owner = calendar.Person(plan.owner.email, plan.owner.name)
    for e in sorted(plan.events, key=lambda e: e.created):
        calendar.add_event(session, summary=e.summary, start=e.start, end=e.end, default_zone=plan.zone,
                           created=e.created, creator=owner, description=e.description,
                           location=e.location)
    return {"email": owner.email, "name": owner.name}


def generate(root: Path, params: dict[str, object], seed: int,
             target_tokens: int | None = None) -> World:
    """Build the world directory for (params, seed). Pure in its inputs: same inputs, same
    content hash."""
    p = Params.model_validate(params).resolved()
    rngs = WorldRng(TASK.name, seed)
    fake = seeded_faker(rngs.stream("faker"))
    plan = plan_world({name: rngs.stream(name) for name in STREAMS}, fake, p["num_target"],
                      p["num_noise"], p["num_misc_emails"])
    meta = WorldMeta(task=TASK.name, seed=seed, params=p, now=NOW.isoformat(), tz=plan.zone,
                     target_tokens=target_tokens, generator_version=VERSION)
    world, db = create_world(root, meta, TASK.servers.values())
    with db.write() as session:
        world.meta.accounts["email"] = _write_mail(session, plan, rngs.stream("texts"),
                                                   rngs.stream("secrets"), rngs.stream("misc"))
        world.meta.accounts["calendar"] = _write_calendar(session, plan)
    db.dispose()
    write_text_atomic(world.workspace / INFO_FILE, info_text(plan))
    return finish_world(world, TASK, {ANSWER_KEY: truth_events(plan)})

