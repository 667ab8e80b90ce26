"""The mail of an apply_phd_email world: the student's inquiries (Sent), every professor's
replies and the unrelated notices (INBOX), written in bulk. Every address a request names (the
professor's own or a department mailbox) has an account, so a submission is delivered like
real mail; nobody logs into those accounts. Other correspondents are outside this mail server."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from faker import Faker
from sqlmodel import Session

from generators.apply_phd_email.plan import FIELDS, UNIVERSITIES, Message, Professor, WorldPlan
from generators.apply_phd_email.text import render
from generators.apply_phd_email.tree import listing
from loca.core.clock import iso_z
from mock_servers.core import sql
from mock_servers.core.db import bulk_insert
from mock_servers.email import domain as mail
from mock_servers.email.models import EmailMessage, EmailRecipient

INBOX, SENT = "INBOX", "Sent"
WITHDRAWAL_REASONS = [
    "I have just learned that the grant that was to fund this position was not renewed, so I will "
    "not be able to take a new PhD student next year.",
    "The position has meanwhile been filled by a candidate who was already working in my lab.",
    "Our department has decided to freeze PhD admissions in my area for the coming year.",
]
REFUSALS = [
    "Unfortunately, I have no open PhD positions in my group for the next academic year, as my "
    "current funding is fully committed.",
    "I am sorry to say that I am not recruiting PhD students this cycle: I will be on sabbatical "
    "for most of next year.",
    "Regrettably, my group is full for the coming year, so I cannot consider new PhD applications "
    "at this time.",
]
FILLERS = [
    "Slides and recordings of previous talks are on the department website.",
    "Graduate students are especially welcome; please forward this message to interested colleagues.",
    "Registration is free but required for catering.",
    "This month: travel grants for conference presentations, a reminder about thesis submission "
    "deadlines, and the results of the graduate student survey.",
    "Accepted papers will be presented as posters, and a best-paper prize will be awarded.",
]
INQUIRY_SUBJECTS = ["PhD application inquiry - {name}", "Prospective PhD student: {name}",
                    "Inquiry about PhD positions in your group"]
NOTICES = {"seminar": "Department seminar this week", "library": "Library: item due soon",
           "newsletter": "Graduate school newsletter", "conference": "Call for papers: {talk}",
           "network": "Planned network maintenance"}
TALKS = ["Scaling Laws Revisited", "Causal Representation Learning", "Efficient Transformers",
         "Robust Optimization in Practice", "Learning on Graphs", "Data-Centric AI"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


@dataclass
class Mail:
    at: datetime
    sender: str
    sender_name: str
    to: str
    subject: str
    body: str
    reply_to: Mail | None = None  # the message this one answers (sets In-Reply-To)
    message_id: str = ""


def _destination(p: Professor) -> str:
    if p.via_office:
        return ("Our department collects all application packages centrally, so please do not send "
                f"your package to me but e-mail it as one ZIP file to our PhD admissions mailbox, {p.address}.")
    return f"Please e-mail your package as one ZIP file to me at {p.address}."


def _reply(rng: random.Random, plan: WorldPlan, message: Message) -> str:
    p = message.professor
    assert p is not None
    common = {"student": plan.student, "prof": p, "variant": rng.randrange(3)}
    if message.event == "request":
        assert p.structure is not None
        return render("request.j2", **common, topic=plan.student.topic, listing=listing(p.structure),
                       destination=_destination(p), destination_first=rng.random() < 0.5)
    if message.event == "withdrawal":
        return render("withdrawal.j2", **common, reason=rng.choice(WITHDRAWAL_REASONS))
    if message.event == "ra_offer":
        return render("ra_offer.j2", **{**common, "variant": rng.randrange(2)}, topic=p.field,
                       start=rng.choice(["in October", "in November", "in January"]))
    return render("no_spots.j2", **common, refusal=rng.choice(REFUSALS))


def _notice(rng: random.Random, fake: Faker, plan: WorldPlan, at: datetime) -> Mail:
    kind = rng.choice(sorted(NOTICES))
    values = {"kind": kind, "student": plan.student, "speaker": fake.name(), "talk": rng.choice(TALKS),
              "weekday": rng.choice(WEEKDAYS), "hour": f"{rng.randint(9, 16)}:00",
              "room": f"Room {rng.randint(101, 450)}", "topic": rng.choice(FIELDS),
              "filler": rng.choice(FILLERS)}
    domain = plan.student.domain
    sender = {"seminar": f"seminars@{domain}", "library": f"library@{domain}",
              "newsletter": f"gradschool@{domain}", "network": f"it-services@{domain}",
              "conference": f"workshop-chairs@{rng.choice(UNIVERSITIES)[1]}"}[kind]
    return Mail(at, sender, sender.split("@")[0].replace("-", " ").title(), plan.student.person.email,
                NOTICES[kind].format(talk=values["talk"]), render("notice.j2", **values))


def compose(rng: random.Random, fake: Faker, plan: WorldPlan, sent_from: datetime) -> list[Mail]:
    """Every message of the world, oldest first: one inquiry to each professor (sent over the
    20 days after `sent_from`), then the inbox as planned."""
    student = plan.student.person
    inquiries: dict[int, Mail] = {}
    for p in plan.professors:
        at = sent_from + timedelta(minutes=rng.randrange(20 * 24 * 60))
        inquiries[id(p)] = Mail(at, student.email, student.name, p.person.email,
                                rng.choice(INQUIRY_SUBJECTS).format(name=student.name),
                                render("inquiry.j2", student=plan.student, prof=p, topic=plan.student.topic,
                                        variant=rng.randrange(2)))
    inbox: list[Mail] = []
    latest: dict[int, Mail] = {}
    for message in plan.inbox:
        sender = message.professor
        if sender is None:
            inbox.append(_notice(rng, fake, plan, message.at))
            continue
        asked = inquiries[id(sender)]
        previous = latest.get(id(sender), asked)
        reply = Mail(message.at, sender.person.email, sender.person.name, student.email, f"Re: {asked.subject}",
                     _reply(rng, plan, message), reply_to=previous)
        latest[id(sender)] = reply
        inbox.append(reply)
    return sorted(inquiries.values(), key=lambda m: m.at) + inbox


def _accounts(session: Session, plan: WorldPlan, secrets: random.Random, created_at: str) -> dict[str, int]:
    """Address -> account id: the student's (with a password of its own) and one per address a
    request names, with the professor's own (accounts nobody logs in to)."""
    student = mail.add_account(session, address=plan.student.person.email, name=plan.student.person.name,
                               password=_secret(secrets), salt=_secret(secrets), created_at=created_at)
    others: dict[str, str] = {}
    for p in plan.professors:
        if p.address is not None:
            others[p.person.email] = p.person.name
            others[p.address] = f"PhD Admissions, {p.department}, {p.university}" if p.via_office else p.person.name
    ids = mail.add_accounts(session, sorted(others.items()), created_at=created_at)
    return {**ids, student.address: int(student.id or 0)}


def write_mail(session: Session, plan: WorldPlan, mails: list[Mail], secrets: random.Random,
               created_at: datetime) -> dict[str, Any]:
    """Accounts and every message copy (the sender's in Sent, the recipient's in INBOX, where
    they have accounts), ids in order of arrival, Message-IDs shaped like the server's; the
    student is logged in. Rows go in bulk: `mail.deliver` costs about half a millisecond a
    message, and a 256K world holds two thousand messages."""
    accounts = _accounts(session, plan, secrets, iso_z(created_at))
    folders = {(a, name): f for f, a, name in sql.run(session, "SELECT id, account_id, name FROM email_folder")}
    messages: list[dict[str, Any]] = []
    recipients: list[dict[str, Any]] = []
    for seq, m in enumerate(mails, start=1):
        date = iso_z(m.at)
        m.message_id = f"<{date.replace('-', '').replace(':', '').rstrip('Z')}.{seq:06d}@{m.sender.split('@')[1]}>"
        common = {"message_id": m.message_id, "in_reply_to": m.reply_to.message_id if m.reply_to else None,
                  "from_addr": m.sender, "from_name": m.sender_name, "date": date, "subject": m.subject,
                  "body": m.body, "html_body": None, "important": False}
        for owner, folder, read in ((m.sender, SENT, True), (m.to, INBOX, False)):
            if owner in accounts:
                pk = len(messages) + 1
                messages.append({**common, "id": pk, "account_id": accounts[owner],
                                 "folder_id": folders[(accounts[owner], folder)], "read": read})
                recipients.append({"message_pk": pk, "kind": "to", "address": m.to})
    bulk_insert(session, EmailMessage, messages)
    bulk_insert(session, EmailRecipient, recipients)
    sql.run(session, "INSERT INTO email_counter (id, issued) VALUES (1, ?)", (len(mails),))
    mail.log_in(session, accounts[plan.student.person.email])
    return {"address": plan.student.person.email}


def _secret(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghjkmnpqrstuvwxyz23456789") for _ in range(16))
