"""The shared checks of sent mail, on a toy world: only messages sent after the snapshot count,
from the agent's own mailbox, and each factory judges what its name says."""

from __future__ import annotations

import json
from typing import Any

import pytest

from checkers.kit import Context
from checkers.mail import one_each, recipients, sent_mail, subject
from checkers.verdict import CheckFailed
from loca.core.outputs import SentMail
from loca.core.world import World, write_text_atomic
from mock_servers import snapshot_ignore
from mock_servers.core import snapshot
from mock_servers.core.db import Database
from mock_servers.email import domain

ME, ANN, BOB = "me@uni.edu", "ann@uni.edu", "bob@uni.edu"
OUT = SentMail(subject="weekly-report")


@pytest.fixture
def world(make_world: Any) -> tuple[World, Database]:
    """My mailbox with one old sent message; the snapshot and an answer expecting Ann and Bob."""
    made, db = make_world(["email"], accounts={"email": {"address": ME}})
    with db.write() as s:
        domain.add_account(s, address=ME, name="Me", password="pw", salt="salt", created_at="2025-01-01T00:00:00Z")
        domain.add_accounts(s, [(ANN, "Ann"), (BOB, "Bob")], created_at="2025-01-01T00:00:00Z")
        _send(s, ANN, "old news")
    made.save()
    taken = snapshot.take(made, snapshot_ignore(["email"]))
    write_text_atomic(made.truth_dir / "snapshot.json", taken.model_dump_json())
    write_text_atomic(made.truth_dir / "truth.json", json.dumps({"answer": {"mail": [{"to": ANN}, {"to": BOB}]}}))
    return made, db


def _send(session: Any, to: str, subject: str = OUT.subject or "", **more: Any) -> None:
    domain.deliver(session, sender=ME, sender_name="Me", to=to, subject=subject, body="b",
                   date="2025-01-02T00:00:00Z", **more)


def _outcome(world: World, check: Any) -> str | None:
    """None when the check passes, else its failure reason."""
    try:
        check(Context(world))
    except CheckFailed as failed:
        return str(failed)
    return None


def test_only_mail_sent_after_the_snapshot_counts(world: tuple[World, Database]) -> None:
    made, db = world
    assert sent_mail(Context(made)) == []
    with db.write() as s:
        _send(s, f"Ann <{ANN.upper()}>")
        domain.deliver(s, sender=ANN, sender_name="Ann", to=BOB, subject=OUT.subject or "", body="b",
                       date="2025-01-02T00:00:00Z")  # someone else's mail
    sent = sent_mail(Context(made))
    assert [(m.recipients, m.sole_recipient, m.subject) for m in sent] == [((ANN,), ANN, OUT.subject)]


def test_each_check_judges_its_rule(world: tuple[World, Database]) -> None:
    made, db = world
    with db.write() as s:
        _send(s, ANN)
    assert "missing ['bob@uni.edu']" in (_outcome(made, recipients("mail")) or "")
    with db.write() as s:
        _send(s, BOB, subject="Weekly-Report ", cc=ME)
    assert "extra ['me@uni.edu']" in (_outcome(made, recipients("mail")) or "")
    assert "not the only recipient: ['bob@uni.edu']" in (_outcome(made, one_each("mail")) or "")
    assert _outcome(made, subject(OUT)) is None  # `Si`: case and outer spaces do not matter
    with db.write() as s:
        _send(s, ANN, subject="weekly report")
    assert "not exactly one message for ['ann@uni.edu (in 2 messages)']" in (_outcome(made, one_each("mail")) or "")
    assert "'weekly report'" in (_outcome(made, subject(OUT)) or "")


def test_right_mail_passes_every_check(world: tuple[World, Database]) -> None:
    made, db = world
    with db.write() as s:
        _send(s, ANN)
        _send(s, BOB)
    assert [_outcome(made, c) for c in (recipients("mail"), one_each("mail"), subject(OUT))] == [None] * 3
    with pytest.raises(ValueError):
        subject(SentMail())
