"""Checker of course_assistant: the reminders the TA's mailbox sent against ground truth, plus no
side effects (the roster unchanged, no inbox message deleted or moved)."""

from __future__ import annotations

from checkers.kit import SHOWN, Checks, Context, judged
from checkers.mail import mention_problems, one_each, paired, recipients, subject
from checkers.normalize import Si
from checkers.side_effects import no_side_effects
from checkers.verdict import CheckFailed
from envs.course_assistant import MAIL, REMINDER, TASK


def body(ctx: Context) -> str:
    """Every message to an expected student names that student (`Si`) and their Student ID,
    and no other Student ID."""
    wrong = [f"{m.sole_recipient or list(m.recipients)} ({entry['name']}, {entry['student_id']}): "
             + "; ".join(problems) for entry, m in paired(ctx, REMINDER)
             if (problems := ([] if Si(entry["name"]) in Si(m.text) else ["no full name"])
                 + mention_problems(REMINDER, entry, m))]
    if wrong:
        raise CheckFailed(f"bodies without the student's full name and Student ID alone: {wrong[:SHOWN]}"
                          + (f" ... ({len(wrong)})" if len(wrong) > SHOWN else ""))
    count = len(paired(ctx, REMINDER))
    judged(count, len(ctx.answer(MAIL)), "reminders")
    return f"all {count} messages to expected students name them and their Student ID alone"


CHECKS = Checks(
    TASK,
    recipients=recipients(REMINDER),
    one_each=one_each(REMINDER),
    subject=subject(REMINDER),
    body=body,
    no_side_effects=no_side_effects(TASK),
)
