"""Mail the agent sent, as the mail system transferred it (`email_transfer`: every message sent
through the tools since the snapshot, whatever became of its copies), and the checks of a
`SentMail` output. Its answer entry lists one expected message each: a dict with `to` (the
address) and, as the output asks, `subject`, `fill` (the template's values by placeholder) and
`ids` (the entity ids the message names); `SentMail.answer` names that entry:

    CHECKS = Checks(TASK, recipients=recipients(OUT), one_each=one_each(OUT), content=content(OUT), ...)"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from checkers.kit import SHOWN, CheckFn, Context, judged
from checkers.normalize import E, S, Si
from checkers.template import Filled, html_text
from checkers.verdict import CheckFailed
from loca.core.outputs import SentMail, fill
from loca.core.world import INPUTS, World
from mock_servers.core import snapshot
from mock_servers.email import domain

Entry = Mapping[str, Any]


@dataclass(frozen=True)
class SentMessage(domain.Transfer):
    """One message the agent sent, as it was sent (its id is its transfer's)."""

    @classmethod
    def of(cls, transfer: domain.Transfer) -> SentMessage:
        return cls(**{f.name: getattr(transfer, f.name) for f in fields(transfer)})

    @property
    def recipients(self) -> tuple[str, ...]:
        """Every address it went to (to, cc, bcc), each once, normalised (`E`)."""
        return tuple(dict.fromkeys(E(a) for a in (*self.to, *self.cc, *self.bcc)))

    @property
    def sole_recipient(self) -> str | None:
        """The one address in To when there is no other recipient (no Cc, no Bcc)."""
        return E(self.to[0]) if len(self.recipients) == 1 and len(self.to) == 1 else None

    @property
    def bodies(self) -> tuple[str, ...]:
        """The plain body, then the text the HTML body shows (when there is one)."""
        return (self.body,) if self.html_body is None else (self.body, html_text(self.html_body))

    @property
    def text(self) -> str:
        """Everything the body shows, plain and HTML."""
        return "\n".join(self.bodies)


def mailbox(world: World) -> str:
    """The address of the agent's own e-mail account."""
    return str(world.meta.accounts["email"]["address"])


def _read_sent(world: World, after: int) -> list[SentMessage]:
    conn = sqlite3.connect(f"file:{world.state_path}?mode=ro", uri=True)
    try:
        found = domain.transfers(conn, after)
    finally:
        conn.close()
    return [SentMessage.of(t) for t in found]


def _before(ctx: Context) -> snapshot.Snapshot:
    found: snapshot.Snapshot = ctx.memo(("snapshot",), lambda: snapshot.Snapshot.model_validate(
        ctx.world.read_truth("snapshot.json")))
    return found


def sent_mail(ctx: Context) -> list[SentMessage]:
    """What the agent sent since the snapshot, oldest first (memoised per grading)."""
    found: list[SentMessage] = ctx.memo(("sent_mail",), lambda: _read_sent(
        ctx.world, _before(ctx).tables["email_transfer"].max_rowid))
    return found


def copies_problems(ctx: Context) -> list[str]:
    """What became of the copies of the mail sent since the snapshot that should not have:
    copies moved, changed or deleted, and copies no send made."""
    tables = _before(ctx).tables
    conn = sqlite3.connect(f"file:{ctx.world.state_path}?mode=ro", uri=True)
    try:
        return domain.copy_problems(conn, tables["email_message"].max_rowid, tables["email_transfer"].max_rowid)
    finally:
        conn.close()


def _show(items: list[str]) -> str:
    return f"{items[:SHOWN]}{' ...' if len(items) > SHOWN else ''} ({len(items)})"


def _entries(ctx: Context, out: SentMail) -> list[Entry]:
    found: list[Entry] = ctx.answer(out.answer)
    return found


def expected_recipients(ctx: Context, out: SentMail) -> list[str]:
    return [E(entry["to"]) for entry in _entries(ctx, out)]


def recipients(out: SentMail) -> CheckFn:
    """Everyone the agent e-mailed (to, cc, bcc; `E`) is exactly the expected set, and every
    message left from the agent's own address."""

    def check(ctx: Context) -> str:
        sent = sent_mail(ctx)
        got = {a for m in sent for a in m.recipients}
        want = set(expected_recipients(ctx, out))
        missing, extra = sorted(want - got), sorted(got - want)
        others = sorted({m.sender for m in sent if E(m.sender) != E(mailbox(ctx.world))})
        problems = [f"{what} {_show(items)}" for what, items in
                    (("missing", missing), ("extra", extra), ("sent from", others)) if items]
        if problems:
            raise CheckFailed("recipients: " + "; ".join(problems))
        return f"mail went to exactly the {len(want)} expected recipients"

    return check


def expected_subject(ctx: Context, out: SentMail, entry: Entry) -> str | None:
    """The subject `entry`'s message must have: the entry's, the output's, or the template's
    subject line filled with the entry's values; None when nothing fixes it."""
    if "subject" in entry:
        return str(entry["subject"])
    if out.subject is not None:
        return out.subject
    if out.template is not None:
        return fill(template_parts(ctx, out)[0], entry["fill"])
    return None


def _by_recipient(ctx: Context, out: SentMail) -> bool:
    """Whether the entries are told apart by their recipients (else by recipient and subject)."""
    addresses = expected_recipients(ctx, out)
    return len(set(addresses)) == len(addresses)


def _entry_key(ctx: Context, out: SentMail, entry: Entry) -> tuple[str, ...]:
    to = E(entry["to"])
    return (to,) if _by_recipient(ctx, out) else (to, S(expected_subject(ctx, out, entry)))


def _message_key(ctx: Context, out: SentMail, message: SentMessage) -> tuple[str, ...]:
    """The key of the one entry a message is for, when sent to one address alone."""
    to = message.sole_recipient or ", ".join(message.recipients)
    return (to,) if _by_recipient(ctx, out) else (to, S(message.subject))


def paired(ctx: Context, out: SentMail) -> list[tuple[Entry, SentMessage]]:
    """(expected entry, a message sent for it) for every message that goes with an entry: one
    of its recipients is the entry's, and where entries share a recipient, its subject (`S`)
    is the entry's too."""
    by_recipient = _by_recipient(ctx, out)
    entries = {_entry_key(ctx, out, e): e for e in _entries(ctx, out)}
    return [(entries[k], m) for m in sent_mail(ctx) for a in m.recipients
            if (k := (a,) if by_recipient else (a, S(m.subject))) in entries]


def one_each(out: SentMail) -> CheckFn:
    """Each expected message was sent exactly once, to its recipient alone (To, no Cc or
    Bcc); where entries share a recipient, each is told apart by its subject, and every message
    goes with an entry."""

    def check(ctx: Context) -> str:
        sent = sent_mail(ctx)
        if _by_recipient(ctx, out):
            counts = Counter(a for m in sent for a in m.recipients)
            alone = {m.sole_recipient for m in sent}
            wrong = [f"{a} (in {counts[a]} messages)" for a in expected_recipients(ctx, out) if counts[a] != 1]
            shared = [a for a in expected_recipients(ctx, out) if counts[a] == 1 and a not in alone]
            what = "not the only recipient:"
        else:
            keys = Counter(_message_key(ctx, out, m) for m in sent)
            want = [_entry_key(ctx, out, e) for e in _entries(ctx, out)]
            wrong = [f"{' / '.join(k)} (in {keys[k]} messages)" for k in want if keys[k] != 1]
            shared = [f"#{m.id} {m.subject!r} to {list(m.recipients)}" for m in sent
                      if _message_key(ctx, out, m) not in set(want)]
            what = "messages that go with no expected one:"
        problems = [f"{label} {_show(items)}" for label, items in
                    (("not exactly one message for", wrong), (what, shared)) if items]
        if problems:
            raise CheckFailed("; ".join(problems))
        return f"one message for each of the {len(_entries(ctx, out))} expected, addressed to its recipient alone"

    return check


def subject(out: SentMail) -> CheckFn:
    """Every sent subject equals the required one (`Si`)."""
    if out.subject is None:
        raise ValueError("this output fixes no subject")
    required = out.subject

    def check(ctx: Context) -> str:
        sent = sent_mail(ctx)
        wrong = sorted({m.subject for m in sent if Si(m.subject) != Si(required)})
        if wrong:
            raise CheckFailed(f"subjects other than {required!r}: {_show(wrong)}")
        judged(len(sent), len(_entries(ctx, out)), "messages")
        return f"all {len(sent)} sent subjects are {required!r}"

    return check


def template_parts(ctx: Context, out: SentMail) -> tuple[str, str]:
    """(subject line, body) of the output's template as the world was generated with it."""
    template = out.template
    assert template is not None
    found: tuple[str, str] = ctx.memo(("template", template.file), lambda: template.parts(
        ctx.world.read_truth_text(f"{INPUTS}/{template.file}")))
    return found


def template_problems(ctx: Context, out: SentMail, entry: Entry, message: SentMessage) -> list[str]:
    """A placeholder left, or a body that is not the output's template filled with the entry's
    values (plain or HTML)."""
    if out.template is None:
        return []
    problems = []
    if left := sorted(set(re.findall(out.template.placeholder, f"{message.subject}\n{message.text}"))):
        problems.append(f"placeholders left: {left}")
    filled = Filled(template_parts(ctx, out)[1], out.template.placeholder, entry["fill"])
    if not any(filled.matches(body) for body in message.bodies):
        problems.append(f"the body is not the filled template: {filled.mismatch(message.bodies[-1])}")
    return problems


def mention_problems(out: SentMail, entry: Entry, message: SentMessage) -> list[str]:
    """Entity ids (`out.mentions`) the message names beyond the entry's `ids`, or fails to name."""
    if out.mentions is None:
        return []
    named = set(re.findall(out.mentions, f"{message.subject}\n{message.text}"))
    allowed = {str(i) for i in entry.get("ids", ())}
    return ([f"names {sorted(named - allowed)} it should not"] if named - allowed else []) + \
        ([f"does not name {sorted(allowed - named)}"] if allowed - named else [])


def message_problems(ctx: Context, out: SentMail, entry: Entry, message: SentMessage) -> list[str]:
    """What is wrong with one message against its entry: the subject (`S`), the body as the
    filled template, a placeholder left, an entity id it should not name or fails to."""
    want = expected_subject(ctx, out, entry)
    wrong_subject = [f"subject {message.subject!r}, expected {want!r}"] \
        if want is not None and S(message.subject) != S(want) else []
    return wrong_subject + template_problems(ctx, out, entry, message) + mention_problems(out, entry, message)


def content(out: SentMail) -> CheckFn:
    """Every message that goes with an expected one has its subject and is that entry's filled
    template (when the output has one), with no placeholder left, naming exactly the entity ids
    it should (when the output names a pattern for them)."""

    def check(ctx: Context) -> str:
        pairs = paired(ctx, out)
        judged(len(pairs), len(_entries(ctx, out)), "messages")
        wrong = [f"to {m.sole_recipient or list(m.recipients)} ({m.subject!r}): {'; '.join(p)}"
                 for entry, m in pairs if (p := message_problems(ctx, out, entry, m))]
        if wrong:
            raise CheckFailed(f"{len(wrong)} messages are wrong: {_show(wrong)}")
        return f"all {len(pairs)} messages that go with an expected one are right"

    return check
