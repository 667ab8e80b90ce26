"""The texts of a set_conf_cr_ddl world: deadlines written the many ways organisers write them
(dates, 24- or 12-hour times, AoE, UTC, offsets, IANA zone names) and the e-mails around
them. Every choice comes from the RNG stream it is given; month and weekday names are spelled
here, never taken from the machine's locale."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from pathlib import Path

from faker import Faker
from jinja2 import Template

from generators.common import templates
from generators.set_conf_cr_ddl.entities import NOW, Deadline, Person, Zone, draw_zone
from generators.set_conf_cr_ddl.plan import Mail

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MINUS = "\u2212"
TOPICS = ["Efficient Inference", "Evaluation Methodology", "Fairness and Accountability",
          "Low-Resource Settings", "Interpretability", "Safety and Robustness", "Open Science",
          "Multilingual Models", "Privacy", "Sustainability in Computing"]
JOURNALS = ["Journal of Computational Research", "Transactions on Intelligent Systems",
            "Review of Applied Informatics", "Letters in Data Science"]
_TEMPLATES = templates(str(Path(__file__).parent / "templates"))


def written_date(rng: random.Random, day: date) -> str:
    month = MONTHS[day.month - 1]
    return rng.choice([f"{month} {day.day}, {day.year}",
                       f"{WEEKDAYS[day.weekday()]}, {month} {day.day}, {day.year}",
                       f"{day.day} {month} {day.year}", day.isoformat(),
                       f"{month[:3]} {day.day}, {day.year}"])


def written_time(rng: random.Random, clock: time) -> str:
    if rng.random() < 0.6:
        return f"{clock:%H:%M}"
    return f"{clock.hour % 12 or 12}:{clock:%M} {'AM' if clock.hour < 12 else 'PM'}"


def _offset(rng: random.Random, text: str) -> str:
    return text.replace("-", MINUS) if text.startswith("-") and rng.random() < 0.5 else text


def written_zone(rng: random.Random, zone: Zone) -> str:
    if zone.kind == "aoe":
        return rng.choice(["AoE", f"AoE (UTC{MINUS}12)", "Anywhere on Earth (UTC-12)", "AoE (UTC-12:00)"])
    if zone.kind == "utc":
        return rng.choice(["UTC", "UTC+00:00", "(UTC)"])
    if zone.kind == "offset":
        offset = _offset(rng, zone.name)
        return rng.choice([f"UTC{offset}", f"(UTC{offset})", f"GMT{offset}"])
    return rng.choice([f"{zone.name} time", f"({zone.name})", zone.name])


def when(rng: random.Random, deadline: Deadline) -> str:
    """A deadline as a sentence states it, e.g. "Friday, October 3, 2025 at 11:59 PM AoE"."""
    local = deadline.local
    joiner = rng.choice([", ", " at "])
    return (f"{written_date(rng, local.date())}{joiner}{written_time(rng, local.time())} "
            f"{written_zone(rng, deadline.zone)}")


@cache
def _template(name: str) -> Template:
    """A template loaded once (the environment would check its file on every lookup)."""
    return _TEMPLATES.get_template(name)


def _render(template: str, /, **values: object) -> str:
    return _template(template).render(**values).strip()


@dataclass(frozen=True)
class Text:
    sender: str
    sender_name: str
    subject: str
    body: str


SENDERS = {"instructions": ("publication", "Publication Chairs"),
           "combined": ("publication", "Publication Chairs"),
           "extension": ("pc-chairs", "Program Chairs"), "correction": ("pc-chairs", "Program Chairs"),
           "reminder": ("proceedings", "Proceedings Team"), "cfp": ("workshops", "Workshop Chairs"),
           "registration": ("registration", "Registration"), "update": ("general-chairs", "General Chairs")}
SUBJECTS = {
    "instructions": ["[{label}] Camera-ready instructions for the {track}",
                     "{label} {track}: preparing your camera-ready paper",
                     "Camera-ready submission for {label} ({track})"],
    "combined": ["[{label}] Camera-ready deadlines for accepted papers",
                 "{label}: camera-ready instructions for all tracks"],
    "extension": ["[{label}] Camera-ready deadline extended ({track})",
                  "{label} {track}: extension of the camera-ready deadline"],
    "reminder": ["Reminder: {label} {track} camera-ready deadline",
                 "[{label}] Camera-ready reminder ({track})"],
    "correction": ["[{label}] Correction: camera-ready deadline of the {track}",
                   "Correction to an earlier e-mail ({label} {track})"],
    "cfp": ["[{label}] Call for workshop papers: {topic}", "{label} workshop on {topic}: call for papers"],
    "registration": ["[{label}] Registration is now open", "{label} registration and visa letters"],
    "update": ["[{label}] Conference update: keynotes and venue", "{label} news for participants"],
}


def _later(rng: random.Random, lo_days: int, hi_days: int) -> Deadline:
    """A date of some other kind (registration, hotel, workshop), stated like a deadline."""
    zone = draw_zone(rng)
    day = (NOW + timedelta(days=rng.randint(lo_days, hi_days))).date()
    local = datetime.combine(day, time(23, 59), zone.tz)
    return Deadline("", local.astimezone(UTC), zone)


def _long_date(day: date) -> str:
    return f"{MONTHS[day.month - 1]} {day.day}, {day.year}"


def name_pool(fake: Faker, size: int = 60) -> list[str]:
    """Full names to draw people from (Faker's name provider is slow per call)."""
    return [fake.name() for _ in range(size)]


def conference_text(rng: random.Random, names: list[str], mail: Mail) -> Text:
    """Sender, subject and body of an e-mail from a conference's organisers."""
    conf = mail.conference
    assert conf is not None
    local, title = SENDERS[mail.kind]
    track = mail.deadlines[0].track if mail.deadlines else ""
    topic = rng.choice(TOPICS)
    values: dict[str, object] = {"conf": conf, "track": track, "variant": rng.randrange(3),
                                 "pages": rng.choice([4, 6, 8, 9, 10]), "topic": topic,
                                 "starts": _long_date(conf.starts)}
    if mail.kind in ("instructions", "reminder", "extension", "correction"):
        values["when"] = when(rng, mail.deadlines[0])
        values["variant"] = rng.randrange(3 if mail.kind == "instructions" else 2)
    if mail.previous is not None:
        values["old"] = when(rng, mail.previous)
    if mail.kind == "combined":
        values["lines"] = [(d.track, when(rng, d)) for d in mail.deadlines]
    elif mail.kind == "cfp":
        values["when"] = when(rng, _later(rng, 5, 40))
        values["notify"] = _long_date((NOW + timedelta(days=rng.randint(45, 70))).date())
    elif mail.kind in ("registration", "update"):
        values["when"] = when(rng, _later(rng, 5, 80))
        values["speakers"] = ", ".join(rng.sample(names, rng.randint(2, 3)))
    subject = rng.choice(SUBJECTS[mail.kind]).format(label=conf.label, track=track, topic=topic)
    return Text(f"{local}@{conf.site}", f"{conf.label} {title}", subject, _render(f"{mail.kind}.j2", **values))



def _surname(name: str) -> str:
    """The last word of a name fit for an address: a suffix such as "Jr." is skipped (its dot
    would make the address invalid)."""
    words = name.lower().split()
    return next((w for w in reversed(words) if "." not in w), words[0])

def misc_text(rng: random.Random, fake: Faker, names: list[str], owner: Person, acronyms: list[str]) -> Text:
    """A colleague's note, a review invitation or a newsletter; a colleague may ask about one
    of `acronyms`."""
    kind = rng.choice(["colleague", "colleague", "review", "newsletter"])
    name = rng.choice(names)
    journal = rng.choice(JOURNALS)
    acronym = rng.choice(acronyms) if kind == "colleague" and rng.random() < 0.3 else None
    body = _render("misc.j2", kind=kind, owner_first=owner.first, owner_last=owner.name.split()[-1],
                   text=fake.paragraph(nb_sentences=rng.randint(3, 5)), acronym=acronym,
                   sender_first=name.split()[0], sender_name=name, journal=journal,
                   when=when(rng, _later(rng, 5, 40)), title=fake.sentence(nb_words=5).rstrip("."))
    if kind == "colleague":
        subject = f"{acronym} this year?" if acronym else fake.sentence(nb_words=rng.randint(3, 6)).rstrip(".")
        sender = f"{name.split()[0].lower()}.{_surname(name)}@{_surname(rng.choice(names))}.edu"
        return Text(sender, name, subject, body)
    if kind == "review":
        return Text(f"editorial@{journal.lower().replace(' ', '-')}.org", name,
                    f"Invitation to review for the {journal}", body)
    return Text(f"news@{journal.lower().replace(' ', '-')}.org", journal, f"{journal} newsletter", body)
