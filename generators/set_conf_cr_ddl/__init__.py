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
from generators.set_conf_cr_ddl.render import Text, conference_text, misc_text, name_pool
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


def _texts(plan: WorldPlan, rngs: WorldRng) -> list[Text]:
    """The sender, subject and body of every e-mail of the plan, in its order."""
    text_rng = rngs.stream("texts")
    fake = seeded_faker(rngs.stream("misc"))
    names = name_pool(fake)
    acronyms = [t.conference.acronym for t in plan.targets]
    return [misc_text(text_rng, fake, names, plan.owner, acronyms) if m.conference is None
            else conference_text(text_rng, names, m) for m in plan.mails]


def _compose(p: dict[str, int], rngs: WorldRng) -> tuple[WorldPlan, list[Text]]:
    plan = plan_world({name: rngs.stream(name) for name in STREAMS}, seeded_faker(rngs.stream("faker")),
                      p["num_target"], p["num_noise"], p["num_misc_emails"])
    return plan, _texts(plan, rngs)


def length_features(params: dict[str, object], seed: int) -> tuple[int, int]:
    """What the world of (params, seed) will hold, without building it: its e-mails, and the
    characters of their senders, subjects and bodies (the length model's features)."""
    _, texts = _compose(resolve_params(params), WorldRng(TASK.name, seed))
    return len(texts), sum(len(t.sender) + len(t.sender_name) + len(t.subject) + len(t.body) for t in texts)


def _write_mail(session: Session, plan: WorldPlan, texts: list[Text], secrets: random.Random) -> dict[str, object]:
    """The owner's account, logged in, and every e-mail delivered to its inbox, oldest first."""
    owner = plan.owner
    account = mail.add_account(session, address=owner.email, name=owner.name, password=_secret(secrets),
                               salt=_secret(secrets), created_at=NOW.replace(year=NOW.year - 3))
    for m, text in zip(plan.mails, texts, strict=True):
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
    plan, texts = _compose(p, rngs)
    meta = WorldMeta(task=TASK.name, seed=seed, params=p, now=NOW.isoformat(), tz=plan.zone,
                     target_tokens=target_tokens, generator_version=VERSION)
    world, db = create_world(root, meta, TASK.servers.values())
    with db.write() as session:
        world.meta.accounts["email"] = _write_mail(session, plan, texts, rngs.stream("secrets"))
        world.meta.accounts["calendar"] = _write_calendar(session, plan)
    db.dispose()
    write_text_atomic(world.workspace / INFO_FILE, info_text(plan))
    return finish_world(world, TASK, {ANSWER_KEY: truth_events(plan)})

