"""Scripted agents of course_assistant: the oracle (solves through the tools only) and its
failure-mode mutants, each one knob away from the oracle."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from envs.course_assistant import (
    CREDENTIALS_FILE,
    DROPPED,
    ENROLLED,
    MAIL,
    MAX_PAGE,
    REMINDER,
    SUBMISSION_PREFIX,
    SUBMISSION_SUBJECT,
    TRAP_PAGE,
    read_everything,
)
from loca.core.credentials import parse_credentials
from loca.core.script import Mutant, Script, ScriptedAgents, ToolRequest, Tools, call, call_all

ANY_COURSE = re.compile(r"[a-z]+-presentation-(\d{8})-(.+)")
ADDRESS = re.compile(r"<([^<>]+)>$")
SUBJECT = REMINDER.subject or ""


@dataclass(frozen=True)
class Knobs:
    """How an agent deviates from the oracle (all off: the oracle)."""

    first_page_only: bool = False  # M1: reads one inbox page of the default size
    include_dropped: bool = False  # M2: also reminds dropped students
    match_by_name: bool = False  # M3: a submission counts for everyone of that name
    subject: str = SUBJECT  # M4 sends "NLP course emergency"
    one_message: bool = False  # M5: one e-mail to all of them
    body_without_id: bool = False  # the body names the student but not the Student ID
    archive_submissions: bool = False  # tidies the inbox: moves submissions to Archive
    by_sender: bool = False  # a submission counts for its sender's address, not its Student ID
    any_course: bool = False  # counts other courses' presentations as submissions
    cc_me: bool = False  # copies the TA on every reminder


def _sender(display: str) -> str:
    found = ADDRESS.search(display.strip())
    return (found.group(1) if found else display).strip().lower()


def _key(row: dict[str, Any], knobs: Knobs) -> str:
    """What identifies a roster row against a submission."""
    if knobs.match_by_name:
        return " ".join(str(row["Name"]).split()).casefold()
    if knobs.by_sender:
        return str(row["Email"]).strip().lower()
    return str(row["Student ID"]).strip()


def _submitted(emails: list[dict[str, Any]], knobs: Knobs) -> set[str]:
    """The keys (Student IDs, or names, or senders) that have a submission."""
    pattern = ANY_COURSE if knobs.any_course else SUBMISSION_SUBJECT
    done = set()
    for mail in emails:
        found = pattern.fullmatch(mail["subject"].strip())
        if found is None:
            continue
        if knobs.match_by_name:
            done.add(" ".join(found.group(2).split()).casefold())
        elif knobs.by_sender:
            done.add(_sender(mail["from"]))
        else:
            done.add(found.group(1))
    return done


def derive(instruction: str, tools: Tools, knobs: Knobs) -> Script:
    """Log in, read the roster and the inbox's e-mails about presentations; the students to
    remind, by Student ID."""
    page = TRAP_PAGE if knobs.first_page_only else MAX_PAGE
    # every submission's subject names the presentation: a search for it skips the distractors,
    # whose pages would leave too few of the loop's 500 calls for the reminders in a 2M world
    query = None if knobs.first_page_only else PRESENTATION
    _, roster, emails = yield from read_everything(tools, page, knobs.first_page_only, query)
    done = _submitted(emails, knobs)
    statuses = (ENROLLED, DROPPED) if knobs.include_dropped else (ENROLLED,)
    due = [row for row in roster
           if str(row["Status"]).strip().lower() in statuses and _key(row, knobs) not in done]
    entries = [{"to": str(row["Email"]).strip().lower(), "name": str(row["Name"]),
                "student_id": str(row["Student ID"]).strip(), "ids": [str(row["Student ID"]).strip()]} for row in due]
    return {MAIL: sorted(entries, key=lambda e: e["student_id"])}


PRESENTATION = "presentation"  # in the subject of every submission, of this course or another
ASK = (f"Please e-mail your slides as soon as possible with the subject "
       f"{SUBMISSION_PREFIX}<Student ID>-<Name>.\n\nBest regards,\nNLP course TA")


def _who(entry: dict[str, str], knobs: Knobs) -> str:
    return entry["name"] if knobs.body_without_id else f"{entry['name']} (Student ID {entry['student_id']})"


def _body(entry: dict[str, str], knobs: Knobs) -> str:
    return (f"Dear {_who(entry, knobs)},\n\nI have no final presentation submission from you for the NLP "
            f"course. {ASK}")


def _shared_body(entries: list[dict[str, str]], knobs: Knobs) -> str:
    """One reminder to everybody: a line per student, so that it stays within one message's
    size in the largest worlds."""
    listed = "\n".join(f"- {_who(e, knobs)}" for e in entries)
    return (f"Dear students,\n\nI have no final presentation submission for the NLP course from:\n"
            f"{listed}\n\n{ASK}")


def write(instruction: str, tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    """One reminder per student, all sent in one turn."""
    entries = answer[MAIL]
    send = tools("email", "send_email")
    extra: dict[str, str] = {}
    if knobs.cc_me:
        text = yield from call(tools("filesystem", "read_text_file"), {"path": CREDENTIALS_FILE})
        extra["cc"] = parse_credentials(text)[0]
    if knobs.one_message and entries:
        yield from call(send, {"to": ", ".join(e["to"] for e in entries), "subject": knobs.subject,
                               "body": _shared_body(entries, knobs)})
    else:
        yield from call_all([ToolRequest(send, {"to": e["to"], "subject": knobs.subject,
                                                "body": _body(e, knobs), **extra}) for e in entries])
    if knobs.archive_submissions:
        found = yield from call(tools("email", "search_emails"), {"query": SUBMISSION_PREFIX})
        yield from call(tools("email", "move_emails"), {
            "email_ids": [m["id"] for m in found["emails"]], "target_folder": "Archive"})


AGENTS = ScriptedAgents(
    derive=derive,
    write=write,
    oracle=Knobs(),
    mutants={
        "first_page": Mutant(Knobs(first_page_only=True), "recipients"),
        "dropped_too": Mutant(Knobs(include_dropped=True), "recipients"),
        "by_name": Mutant(Knobs(match_by_name=True), "recipients"),
        "subject_words": Mutant(Knobs(subject="NLP course emergency"), "subject"),
        "one_message": Mutant(Knobs(one_message=True), "one_each"),
        "no_student_id": Mutant(Knobs(body_without_id=True), "body"),
        "archives_submissions": Mutant(Knobs(archive_submissions=True), "no_side_effects"),
        "by_sender": Mutant(Knobs(by_sender=True), "recipients"),
        "any_course": Mutant(Knobs(any_course=True), "recipients"),
        "cc_me": Mutant(Knobs(cc_me=True), "one_each"),
    },
    noop_must_fail="recipients",
)
