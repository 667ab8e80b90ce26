"""course_assistant: the plan holds every edge case at every size, with the pagination trap; the
inbox, read through the tools, says what the plan says; the mailbox starts logged out; the checker
accepts every documented normalisation of a right answer and rejects wrong ones, one test per
rule. (Oracle, mutants and lengths at every tier: the generic acceptance suite.)"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook

from envs.core.build import build_world
from envs.core.registry import get_task
from envs.course_assistant import (
    CREDENTIALS_FILE,
    DROPPED,
    ENROLLED,
    MAIL,
    OTHER_COURSE_PREFIX,
    REMINDER,
    ROSTER_FILE,
    ROSTER_SHEET,
    SUBMISSION_SUBJECT,
    TRAP_PAGE,
)
from generators.common import PersonNames, seeded_faker
from generators.course_assistant.plan import (
    LATE_DROP,
    OTHER_COURSE,
    PERSONAL_SUBMISSION,
    QUESTION,
    RESUBMISSION,
    STREAMS,
    SUBMISSION,
    UNKNOWN_ID,
    Counts,
    Plan,
    plan_world,
)
from loca.core.credentials import parse_credentials
from loca.core.rng import WorldRng
from loca.core.world import World
from loca.validate import play_script
from mock_servers.core.files import save_workbook
from mock_servers.gateway import Gateway
from tests.harness import task_call

TASK = get_task("course_assistant")
SUBMITTING = (SUBMISSION, RESUBMISSION, LATE_DROP, PERSONAL_SUBMISSION, UNKNOWN_ID)


def _plan(n: int, seed: int, distractors: int = 3) -> Plan:
    rngs = WorldRng("course_assistant", seed)
    names = PersonNames(seeded_faker(rngs.stream("faker_people")), rngs.stream("names"))
    return plan_world({name: rngs.stream(name) for name in STREAMS}, names, n, distractors)


@pytest.mark.parametrize("n", [20, 21, 39, 40, 150, 700, 1400, 4000, TASK.spec.scale.hi])
@pytest.mark.parametrize("seed", range(5))
def test_plan_has_every_edge_case(n: int, seed: int) -> None:
    plan = _plan(n, seed)
    roster = {s.student_id: s for s in plan.students}
    c = Counts.of(n)
    assert len(roster) == n and len({s.email for s in plan.students}) == n
    assert all(re.fullmatch(r"[1-9]\d{7}", i) for i in roster)
    names = Counter(s.name for s in plan.students)
    assert sorted(n for n in names.values() if n > 1) == [2] * c.pairs
    assert plan.ta.email not in {s.email for s in plan.students}
    enrolled = [s for s in plan.students if s.status == ENROLLED]
    assert len(plan.students) - len(enrolled) == c.dropped == round(0.2 * n)
    done = plan.submitted_ids
    assert len([s for s in enrolled if s.student_id in done]) == c.submitters == int(0.7 * len(enrolled) + 1e-9)
    by_kind: dict[str, list[Any]] = {}
    for m in plan.messages:
        by_kind.setdefault(m.kind, []).append(m)
    dropped_done = [m.student for m in by_kind[LATE_DROP] if m.student.status == DROPPED]
    assert dropped_done, "a dropped student submitted anyway"
    assert [s for s in plan.students if s.status == DROPPED and s.student_id not in done]
    resubmitted = Counter(m.student.student_id for m in plan.messages if m.kind in (SUBMISSION, RESUBMISSION))
    assert [i for m in by_kind[RESUBMISSION] if resubmitted[i := m.student.student_id] == 2]
    assert all(m.sender not in {s.email for s in plan.students} and m.student.student_id in roster
               for m in by_kind[PERSONAL_SUBMISSION])
    assert all(m.student.student_id not in roster and m.student.name not in names for m in by_kind[UNKNOWN_ID])
    for kind in (OTHER_COURSE, QUESTION):
        assert by_kind[kind] and all(m.student.status == ENROLLED and m.student.student_id not in done
                                     and m.sender == m.student.email for m in by_kind[kind])
    for submitter, twin in plan.pairs:
        assert submitter.name == twin.name and submitter.student_id in done and twin.student_id not in done
        assert submitter.status == twin.status == ENROLLED
    assert len(plan.recipients()) >= 2
    _assert_trap(plan)


def _assert_trap(plan: Plan) -> None:
    """Beyond the first page of the default listing (newest first) lies the only submission of
    an enrolled student, so reading one page reminds a student who did submit."""
    inbox = sorted(plan.messages, key=lambda m: m.at, reverse=True)
    assert len(inbox) > TRAP_PAGE
    first_page = {m.student.student_id for m in inbox[:TRAP_PAGE] if m.kind in SUBMITTING and m.student}
    later = {m.student.student_id for m in inbox[TRAP_PAGE:] if m.kind in SUBMITTING and m.student}
    enrolled = {s.student_id for s in plan.students if s.status == ENROLLED}
    assert (later - first_page) & enrolled


def test_same_seed_same_plan_and_distractors_move_no_student() -> None:
    assert _plan(60, 3) == _plan(60, 3)
    assert _plan(60, 4).students != _plan(60, 3).students
    few, many = _plan(60, 3, 0), _plan(60, 3, 40)
    assert few.students == many.students and few.recipients() == many.recipients()
    assert [m for m in few.messages if m.kind != "distractor"] == [m for m in many.messages if m.kind != "distractor"]


# ------------------------------------------------------------------ a generated world

def _call(world: World, name: str, **args: Any) -> Any:
    return task_call(world, TASK, name, **args)


def _login(world: World) -> None:
    address, password = parse_credentials(_call(world, "filesystem_read_text_file", path=CREDENTIALS_FILE))
    _call(world, "email_login", email=address, password=password)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> World:
    return asyncio.run(build_world(TASK, tmp_path_factory.mktemp("ca") / "w", {"num_students": 60}, 2))


def test_world_starts_logged_out_and_the_inbox_says_what_the_plan_says(built: World) -> None:
    gateway = Gateway(built, TASK.spec.servers)
    try:
        outcome = asyncio.run(gateway.call("email_get_emails", {}))
    finally:
        gateway.close()
    assert outcome.is_error and outcome.text.startswith("Error [UNAUTHENTICATED]")
    _login(built)
    first = _call(built, "email_get_emails", page_size=50)
    emails = list(first["emails"])
    for page in range(2, first["total_pages"] + 1):
        emails += _call(built, "email_get_emails", page_size=50, page=page)["emails"]
    subjects = [m["subject"] for m in emails]
    ids = {found.group(1) for s in subjects if (found := SUBMISSION_SUBJECT.fullmatch(s))}
    roster = load_workbook(built.workspace / ROSTER_FILE, read_only=True)[ROSTER_SHEET]
    rows = [r for r in roster.iter_rows(min_row=2, values_only=True)]
    due = sorted((r[1], r[2]) for r in rows if r[3] == ENROLLED and r[1] not in ids)
    assert due == sorted((e["student_id"], e["to"]) for e in built.read_truth()["answer"][MAIL])
    near = [s for s in subjects if "presentation" in s.lower() and not SUBMISSION_SUBJECT.fullmatch(s)]
    assert any(s.startswith(OTHER_COURSE_PREFIX) for s in near) and len(near) >= 2
    assert not [s for s in near if SUBMISSION_SUBJECT.fullmatch(s.strip().lower())], "no case-only near miss"


# ------------------------------------------------------------------ the checker

@pytest.fixture
def world(tmp_path: Path) -> World:
    """A world of 40 students with its mailbox logged in and nothing sent yet."""
    made = TASK.generate(tmp_path / "w", {"num_students": 40}, 5)
    _login(made)
    return made


def _failed(world: World) -> list[str]:
    verdict = TASK.check(world)
    assert not verdict.errored, verdict
    return verdict.failed_names()


def _due(world: World) -> list[dict[str, str]]:
    due: list[dict[str, str]] = world.read_truth()["answer"][MAIL]
    return due


def _send_all(world: World, **overrides: Any) -> None:
    for e in _due(world):
        args = {"to": e["to"], "subject": REMINDER.subject,
                "body": f"Dear {e['name']}, Student ID {e['student_id']}: please submit."}
        _call(world, "email_send_email", **{**args, **{k: v(e) if callable(v) else v for k, v in overrides.items()}})


def test_oracle_passes_and_noop_fails(tmp_path: Path) -> None:
    made = TASK.generate(tmp_path / "w", {"num_students": 40}, 1)
    assert asyncio.run(play_script(TASK, made, "oracle")).passed
    made = TASK.generate(tmp_path / "w", {"num_students": 40}, 1)
    # with no message sent, `subject` and `body` have nothing to judge: they fail too
    assert asyncio.run(play_script(TASK, made, "noop")).failed_names() == ["recipients", "one_each", "subject",
                                                                           "body"]


def test_checker_accepts_documented_normalisations(world: World) -> None:
    _send_all(world, to=lambda e: f"\"{e['name']}\" <{e['to'].upper()}>", subject=" NLP-Course-EMERGENCY ",
              body=lambda e: f"Hello {e['name'].upper().replace(' ', '   ')}!\nYour ID: {e['student_id']}.")
    assert _failed(world) == []


def test_checker_reads_a_name_and_id_given_only_in_html(world: World) -> None:
    _send_all(world, body="Please see below.",
              html_body=lambda e: f"<p>Dear <b>{e['name']}</b>,</p><p>ID&nbsp;<i>{e['student_id']}</i></p>")
    assert _failed(world) == []


def test_missing_student_fails_recipients(world: World) -> None:
    due = _due(world)
    for e in due[1:]:
        _call(world, "email_send_email", to=e["to"], subject=REMINDER.subject,
              body=f"{e['name']} {e['student_id']}")
    assert _failed(world) == ["recipients", "one_each"]


def test_extra_recipient_fails_recipients(world: World) -> None:
    _send_all(world)
    roster = load_workbook(world.workspace / ROSTER_FILE, read_only=True)[ROSTER_SHEET]
    dropped = next(r for r in roster.iter_rows(min_row=2, values_only=True) if r[3] == DROPPED)
    _call(world, "email_send_email", to=dropped[2], subject=REMINDER.subject, body=f"{dropped[0]} {dropped[1]}")
    assert _failed(world) == ["recipients"]


def test_second_message_or_a_cc_fails_one_each(world: World) -> None:
    _send_all(world)
    first = _due(world)[0]
    _call(world, "email_send_email", to=first["to"], subject=REMINDER.subject,
          body=f"{first['name']} {first['student_id']} (reminder again)")
    assert _failed(world) == ["one_each"]


def test_shared_message_fails_one_each(world: World) -> None:
    due = _due(world)
    _send_all(world)
    # two of them again, in one shared message
    _call(world, "email_send_email", to=f"{due[0]['to']}, {due[1]['to']}", subject=REMINDER.subject,
          body=" ".join(f"{e['name']} {e['student_id']}" for e in due[:2]))
    assert _failed(world) == ["one_each", "body"]  # each copy also names the other student's ID


def test_bcc_counts_as_a_recipient(world: World) -> None:
    _send_all(world, bcc="someone@elsewhere.org")
    assert _failed(world) == ["recipients", "one_each"]


def test_wrong_subject_fails_subject(world: World) -> None:
    _send_all(world, subject="NLP course emergency")
    assert _failed(world) == ["subject"]


@pytest.mark.parametrize("body", [
    lambda e: f"Dear {e['name']}, please submit.",  # no ID
    lambda e: f"Dear student {e['student_id']}, please submit.",  # no name
    lambda e: f"Dear {e['name']}, ID 9{e['student_id']}.",  # the ID inside a longer number
    lambda e: f"Dear {e['name'].split()[0]}, ID {e['student_id']}.",  # first name only
])
def test_body_without_full_name_or_id_fails_body(world: World, body: Any) -> None:
    _send_all(world, body=body)
    assert _failed(world) == ["body"]


def test_other_students_id_fails_body(world: World) -> None:
    due = _due(world)
    for e, other in zip(due, due[1:] + due[:1], strict=True):
        _call(world, "email_send_email", to=e["to"], subject=REMINDER.subject,
              body=f"{e['name']} {other['student_id']}")
    assert _failed(world) == ["body"]


@pytest.mark.slow
def test_moved_deleted_or_drafted_mail_and_roster_edits_fail_no_side_effects(tmp_path: Path) -> None:
    def fresh() -> World:
        made = TASK.generate(tmp_path / "w", {"num_students": 40}, 5)
        _login(made)
        _send_all(made)
        return made

    inbox_id = lambda w: _call(w, "email_get_emails")["emails"][0]["id"]  # noqa: E731
    for act in (lambda w: _call(w, "email_move_email", email_id=inbox_id(w), target_folder="Archive"),
                lambda w: _call(w, "email_delete_email", email_id=inbox_id(w)),
                lambda w: _call(w, "email_save_draft", subject="later", body="draft")):
        made = fresh()
        act(made)
        assert _failed(made) == ["no_side_effects"]
    made = fresh()
    path = made.workspace / ROSTER_FILE
    wb = load_workbook(path)
    wb[ROSTER_SHEET]["E1"] = "Reminded"
    save_workbook(wb, path, made.clock.at(0))
    assert _failed(made) == ["no_side_effects"]


def test_reading_and_scratch_files_are_no_side_effects(world: World) -> None:
    _send_all(world)
    _call(world, "email_read_email", email_id=_call(world, "email_get_emails")["emails"][0]["id"])
    (world.workspace / "notes.txt").write_text("done")
    assert _failed(world) == []


def test_mail_sent_before_the_snapshot_is_not_the_agents(world: World) -> None:
    """The TA's announcement to the class list sits in Sent from the start; it counts for nothing."""
    sent = _call(world, "email_get_emails", folder="Sent")
    assert sent["total"] == 1 and "presentation" in sent["emails"][0]["subject"]
    assert _failed(world) == ["recipients", "one_each", "subject", "body"]



def _sent_copy(world: World, to: str) -> str:
    found = _call(world, "email_get_emails", folder="Sent", page_size=50)["emails"]
    return str(next(m["id"] for m in found if to in m["to"]))


@pytest.mark.parametrize("cover", ["delete", "archive"])
def test_mailing_a_dropped_student_and_hiding_the_sent_copy_still_fails(world: World, cover: str) -> None:
    """The reminder a dropped student got is still sent when its Sent copy is deleted for good or
    archived: `recipients` sees it, and hiding the copy is a change of its own."""
    _send_all(world)
    roster = load_workbook(world.workspace / ROSTER_FILE, read_only=True)[ROSTER_SHEET]
    dropped = next(r for r in roster.iter_rows(min_row=2, values_only=True) if r[3] == DROPPED)
    _call(world, "email_send_email", to=dropped[2], subject=REMINDER.subject, body=f"{dropped[0]} {dropped[1]}")
    copy = _sent_copy(world, dropped[2])
    if cover == "delete":
        _call(world, "email_delete_email", email_id=copy)
        _call(world, "email_delete_email", email_id=copy)  # from Trash: gone for good
    else:
        _call(world, "email_move_email", email_id=copy, target_folder="Archive")
    assert _failed(world) == ["recipients", "no_side_effects"]


def test_right_reminders_whose_sent_copies_were_archived_are_sent(world: World) -> None:
    """Moving the agent's own Sent copies hides nothing: every reminder still counts as sent,
    and the move is reported as a side effect, not as missing mail."""
    _send_all(world)
    for e in _due(world)[:2]:
        _call(world, "email_move_email", email_id=_sent_copy(world, e["to"]), target_folder="Archive")
    assert _failed(world) == ["no_side_effects"]
