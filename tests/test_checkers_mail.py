"""The shared checks of sent mail, on a toy world: what counts is what the mail system
transferred after the snapshot (whatever became of the copies), from the agent's own mailbox;
moving or deleting a sent copy is a change of its own; a templated message is the template
filled in, word for word, with each value where the template puts it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from checkers.kit import Context
from checkers.mail import content, copies_problems, one_each, recipients, sent_mail, subject
from checkers.template import Filled
from checkers.verdict import CheckFailed
from loca.core.outputs import MailTemplate, SentMail
from loca.core.world import INPUTS, World, write_text_atomic
from mock_servers import snapshot_rules
from mock_servers.core import snapshot
from mock_servers.core.db import Database
from mock_servers.email import domain

ME, ANN, BOB, EVE = "me@uni.edu", "ann@uni.edu", "bob@uni.edu", "eve@uni.edu"
OUT = SentMail(subject="weekly-report")
TEMPLATE = ("Subject: Welcome to [Store]\n\nHi [Name],\n\nyour order [Order] of [Amount] is on its way.\n\n"
            "The [Store] team")
TEMPLATED = SentMail(template=MailTemplate("template.md", r"\[[A-Z][a-z]+\]", r"Subject:\s*(.+)"),
                     mentions=r"\bSKU-\d{3}\b", answer="welcome")


def _fill(name: str, order: str) -> dict[str, str]:
    return {"[Store]": "Acme", "[Name]": name, "[Order]": order, "[Amount]": "$12.50"}


@pytest.fixture
def world(make_world: Any) -> tuple[World, Database]:
    """My mailbox with one old sent message; the snapshot and an answer expecting Ann and Bob."""
    made, db = make_world(["email"], accounts={"email": {"address": ME}})
    with db.write() as s:
        domain.add_account(s, address=ME, name="Me", password="pw", salt="salt", created_at="2025-01-01T00:00:00Z")
        domain.add_accounts(s, [(ANN, "Ann"), (BOB, "Bob")], created_at="2025-01-01T00:00:00Z")
        domain.deliver(s, sender=ME, sender_name="Me", to=ANN, subject="old news", body="b",
                       date="2025-01-01T12:00:00Z")
    made.save()
    taken = snapshot.take(made, snapshot_rules(["email"]))
    write_text_atomic(made.truth_dir / "snapshot.json", taken.model_dump_json())
    (made.truth_dir / INPUTS).mkdir()
    write_text_atomic(made.truth_dir / INPUTS / "template.md", TEMPLATE)
    answer = {"mail": [{"to": ANN}, {"to": BOB}],
              "welcome": [{"to": ANN, "fill": _fill("Ann", "1001"), "ids": []},
                          {"to": BOB, "fill": _fill("Bob", "1002"), "ids": ["SKU-007"]}]}
    write_text_atomic(made.truth_dir / "truth.json", json.dumps({"answer": answer}))
    return made, db


def _send(session: Any, to: str, subject: str = OUT.subject or "", body: str = "b", **more: Any) -> None:
    """Send as the agent does, through the tools' send path."""
    me = domain.find_account(session, ME)
    assert me is not None
    domain.send(session, me, to=[to], cc=more.pop("cc", []), bcc=[], subject=subject, body=body,
                html_body=more.pop("html_body", None), date="2025-01-02T00:00:00Z")


def _outcome(world: World, check: Any) -> str | None:
    """None when the check passes, else its failure reason."""
    try:
        check(Context(world))
    except CheckFailed as failed:
        return str(failed)
    return None


def _sent_copy(db: Database, subject: str) -> int:
    with db.read() as s:
        me = domain.find_account(s, ME)
        assert me is not None
        sent = domain.find_folder(s, me.id, domain.SENT)
        assert sent is not None
        return int(s.connection().exec_driver_sql(
            "SELECT id FROM email_message WHERE folder_id = ? AND subject = ? ORDER BY id DESC",
            (sent.id, subject)).fetchone()[0])


def test_only_mail_sent_after_the_snapshot_counts(world: tuple[World, Database]) -> None:
    made, db = world
    assert sent_mail(Context(made)) == []
    with db.write() as s:
        _send(s, f"Ann <{ANN.upper()}>")
        domain.deliver(s, sender=ANN, sender_name="Ann", to=BOB, subject=OUT.subject or "", body="b",
                       date="2025-01-02T00:00:00Z")  # someone else's mail
    sent = sent_mail(Context(made))
    assert [(m.recipients, m.sole_recipient, m.subject) for m in sent] == [((ANN,), ANN, OUT.subject)]


def test_a_covered_up_message_still_counts_and_the_cover_up_is_a_change(world: tuple[World, Database]) -> None:
    """Mailing the wrong person, then deleting the Sent copy for good, hides nothing: the
    recipient check sees the message and the copies rule names the deletion."""
    made, db = world
    with db.write() as s:
        _send(s, ANN)
        _send(s, BOB)
        _send(s, EVE, subject="oops")  # EVE has no account here: the Sent copy is the only copy
    pk = _sent_copy(db, "oops")
    with db.write() as s:
        me = domain.find_account(s, ME)
        assert me is not None
        domain.discard(s, me.id, [pk])  # to Trash
        domain.discard(s, me.id, [pk])  # and gone
    assert "extra ['eve@uni.edu']" in (_outcome(made, recipients(OUT)) or "")
    assert copies_problems(Context(made)) == ["the copy of sent message 'oops' in me@uni.edu Sent was deleted"]


def test_a_moved_sent_copy_is_still_sent_but_a_change(world: tuple[World, Database]) -> None:
    made, db = world
    with db.write() as s:
        _send(s, ANN)
        _send(s, BOB)
    pk = _sent_copy(db, OUT.subject or "")
    with db.write() as s:
        me = domain.find_account(s, ME)
        assert me is not None
        archive = domain.find_folder(s, me.id, "Archive")
        assert archive is not None
        domain.move_messages(s, [pk], archive.id)
    assert _outcome(made, recipients(OUT)) is None
    assert copies_problems(Context(made)) == [
        "the copy of sent message 'weekly-report' in me@uni.edu Sent was moved to me@uni.edu Archive"]


def test_each_check_judges_its_rule(world: tuple[World, Database]) -> None:
    made, db = world
    with db.write() as s:
        _send(s, ANN)
    assert "missing ['bob@uni.edu']" in (_outcome(made, recipients(OUT)) or "")
    with db.write() as s:
        _send(s, BOB, subject="Weekly-Report ", cc=[ME])
    assert "extra ['me@uni.edu']" in (_outcome(made, recipients(OUT)) or "")
    assert "not the only recipient: ['bob@uni.edu']" in (_outcome(made, one_each(OUT)) or "")
    assert _outcome(made, subject(OUT)) is None  # `Si`: case and outer spaces do not matter
    with db.write() as s:
        _send(s, ANN, subject="weekly report")
    assert "not exactly one message for ['ann@uni.edu (in 2 messages)']" in (_outcome(made, one_each(OUT)) or "")
    assert "'weekly report'" in (_outcome(made, subject(OUT)) or "")
    assert copies_problems(Context(made)) == []


def test_right_mail_passes_every_check(world: tuple[World, Database]) -> None:
    made, db = world
    with db.write() as s:
        _send(s, ANN)
        _send(s, BOB)
    assert [_outcome(made, c) for c in (recipients(OUT), one_each(OUT), subject(OUT))] == [None] * 3
    with pytest.raises(ValueError):
        subject(SentMail())


def _welcome(name: str, order: str, amount: str = "$12.50", sku: str = "") -> str:
    return (f"Hi {name},\n\nyour order {order} of {amount} is on its way.{sku}\n\nThe Acme team")


@pytest.mark.parametrize(("body", "html", "passes"), [
    (_welcome("Bob", "1002", sku=" SKU-007"), None, False),  # a word the template does not have
    ("HI BOB, YOUR ORDER 1002 OF $12.50 IS ON ITS WAY. THE ACME TEAM SKU-007", None, False),  # a value's case counts
])
def test_extra_text_or_wrong_case_of_a_value_fails(world: tuple[World, Database], body: str, html: str | None,
                                                  passes: bool) -> None:
    made, db = world
    with db.write() as s:
        _send(s, ANN, "Welcome to Acme", _welcome("Ann", "1001"))
        _send(s, BOB, "Welcome to Acme", body, html_body=html)
    assert (_outcome(made, content(TEMPLATED)) is None) is passes


@pytest.mark.parametrize(("name", "order", "amount", "why"), [
    ("Ann Lee", "1001", "$12.50", "expected the template's word 'your' after 'Hi Ann'"),  # full name for the first
    ("Ann", "$12.50", "1001", "expected the value '1001' after 'Ann your order'"),  # two values swapped
    ("Ann", "1001", "[Amount]", "placeholders left: ['[Amount]']"),
])
def test_values_must_stand_where_the_template_puts_them(world: tuple[World, Database], name: str, order: str,
                                                        amount: str, why: str) -> None:
    made, db = world
    with db.write() as s:
        _send(s, ANN, "Welcome to Acme", _welcome(name, order, amount))
        _send(s, BOB, "Welcome to Acme", _welcome("Bob", "1002", sku=""))
    assert why in (_outcome(made, content(TEMPLATED)) or "")


def test_allowed_renderings_of_the_filled_template_pass(world: tuple[World, Database]) -> None:
    """Prose case, line breaks, Markdown or HTML markup between words: all free."""
    made, db = world
    html = ("<html><head><style>p {color: red}</style></head><body><p>HI <b>Bob</b>,</p><ul><li>Your ORDER "
            "1002 of $12.50 is on its way. SKU-007</li></ul><p>The Acme Team</p></body></html>")
    with db.write() as s:
        _send(s, ANN, " welcome to Acme ", "**hi** Ann,  your order 1001 of $12.50 is on its way.\nThe Acme team")
        _send(s, BOB, "Welcome to Acme", "see the HTML part", html_body=html)
    assert _outcome(made, content(TEMPLATED)) is not None  # Bob's names SKU-007, but the template does not
    filled = Filled("Hi [Name],\n\nyour order [Order] of [Amount] is on its way. [Sku]\n\nThe [Store] team",
                    r"\[[A-Z][a-z]+\]", {**_fill("Bob", "1002"), "[Sku]": "SKU-007"})
    assert filled.matches("hi Bob your order 1002 of $12.50 is on its way SKU-007 the Acme TEAM")
    assert not filled.matches("hi Bobby your order 1002 of $12.50 is on its way SKU-007 the Acme team")


def test_invented_or_missing_entity_ids_fail(world: tuple[World, Database]) -> None:
    made, db = world
    out = SentMail(mentions=r"\bSKU-\d{3}\b", answer="welcome")
    with db.write() as s:
        _send(s, ANN, "x", "about SKU-123")  # Ann's message may name none
        _send(s, BOB, "x", "nothing")
    found = _outcome(made, content(out)) or ""
    assert "names ['SKU-123'] it should not" in found and "does not name ['SKU-007']" in found


def test_an_address_filled_in_may_be_written_in_any_case() -> None:
    filled = Filled("Contact: {contact}. Thanks, {name}", r"\{[a-z]+\}", {"{contact}": "ann@x.org", "{name}": "Ann"})
    assert filled.matches("Contact: ANN@X.ORG. Thanks, Ann")
    assert not filled.matches("Contact: ann@x.org. Thanks, ANN")
