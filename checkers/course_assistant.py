"""Checker of course_assistant: the reminders the TA's mailbox sent against ground truth, plus no
side effects (the roster unchanged, no inbox message deleted or moved)."""

from __future__ import annotations

import re

from checkers.kit import SHOWN, Checks, Context, no_side_effects
from checkers.mail import one_each, recipients, sent_mail, subject
from checkers.normalize import E, Si
from checkers.verdict import CheckFailed
from envs.course_assistant import MAIL, REMINDER, TASK


def mentions(text: str, name: str, student_id: str) -> bool:
    """`text` holds the full name (`Si`) and the Student ID as a whole number (exact digits)."""
    return Si(name) in Si(text) and re.search(rf"(?<!\d){re.escape(student_id)}(?!\d)", text) is not None


def body(ctx: Context) -> str:
    """Every message to an expected student names that student and their Student ID."""
    expected = {E(entry["to"]): entry for entry in ctx.answer(MAIL)}
    wrong, judged = [], 0
    for message in sent_mail(ctx):
        for address in message.recipients:
            entry = expected.get(address)
            if entry is None:
                continue
            judged += 1
            if not mentions(message.text, entry["name"], entry["student_id"]):
                wrong.append(f"{address} ({entry['name']}, {entry['student_id']})")
    if wrong:
        raise CheckFailed(f"bodies without the student's full name and Student ID: {wrong[:SHOWN]}"
                          + (f" ... ({len(wrong)})" if len(wrong) > SHOWN else ""))
    return f"all {judged} messages to expected students name them and their Student ID"


CHECKS = Checks(
    TASK,
    recipients=recipients(MAIL),
    one_each=one_each(MAIL),
    subject=subject(REMINDER),
    body=body,
    no_side_effects=no_side_effects(TASK),
)
