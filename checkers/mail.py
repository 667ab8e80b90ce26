"""Mail the agent sent, found by diffing the world against the snapshot frozen at generation:
the rows added to the Sent folder of the agent's own account (`world.meta.accounts["email"]
["address"]`). Shared by the tasks whose output is `SentMail`; their answer entry lists one
expected message per recipient, each a dict with at least `to` (the address):

    CHECKS = Checks(TASK, recipients=recipients("mail"), one_each=one_each("mail"),
                    subject=subject(REMINDER), ...)"""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass

from checkers.kit import SHOWN, CheckFn, Context
from checkers.normalize import E, Si
from checkers.verdict import CheckFailed
from loca.core.outputs import SentMail
from loca.core.world import World
from mock_servers.core import snapshot, sql
from mock_servers.core.db import Database
from mock_servers.email import domain

_TAG = re.compile(r"<[^>]*>")


@dataclass(frozen=True)
class SentMessage:
    """One message the agent sent, as its Sent copy holds it."""

    id: int
    subject: str
    body: str
    html_body: str | None
    to: tuple[str, ...]
    cc: tuple[str, ...]
    bcc: tuple[str, ...]
    attachments: tuple[str, ...]  # file names

    @property
    def recipients(self) -> tuple[str, ...]:
        """Every address it went to (to, cc, bcc), each once, normalised (`E`)."""
        return tuple(dict.fromkeys(E(a) for a in (*self.to, *self.cc, *self.bcc)))

    @property
    def sole_recipient(self) -> str | None:
        """The one address in To when there is no other recipient (no Cc, no Bcc)."""
        return E(self.to[0]) if len(self.recipients) == 1 and len(self.to) == 1 else None

    @property
    def text(self) -> str:
        """The plain body, then the HTML body with its tags stripped."""
        stripped = html.unescape(_TAG.sub(" ", self.html_body)) if self.html_body else ""
        return f"{self.body}\n{stripped}"


def mailbox(world: World) -> str:
    """The address of the agent's own e-mail account."""
    return str(world.meta.accounts["email"]["address"])


def _read_sent(world: World, after: int) -> list[SentMessage]:
    db = Database(world.state_path, readonly=True)
    try:
        with db.read() as session:
            account = domain.find_account(session, mailbox(world))
            folder = domain.find_folder(session, account.id, domain.SENT) if account else None
            if account is None or folder is None:
                raise CheckFailed(f"the mailbox {mailbox(world)} or its {domain.SENT} folder is gone")
            pks = [r[0] for r in sql.run(session, "SELECT id FROM email_message WHERE folder_id = ? "
                                                  "AND id > ? ORDER BY id", (folder.id, after))]
            emails = domain.emails_by_pk(session, account.id, pks)
    finally:
        db.dispose()
    return [SentMessage(int(e["id"]), e["subject"], e["body"], e["html_body"], tuple(e["to"]),
                        tuple(e["cc"]), tuple(e["bcc"]), tuple(a["filename"] for a in e["attachments"]))
            for e in emails]


def sent_mail(ctx: Context) -> list[SentMessage]:
    """What the agent sent since the snapshot, oldest first (memoised per grading)."""

    def read() -> list[SentMessage]:
        before = snapshot.Snapshot.model_validate(ctx.world.read_truth("snapshot.json"))
        return _read_sent(ctx.world, before.tables["email_message"].max_rowid)

    found: list[SentMessage] = ctx.memo(("sent_mail",), read)
    return found


def expected_recipients(ctx: Context, key: str) -> list[str]:
    return [E(entry["to"]) for entry in ctx.answer(key)]


def _show(items: list[str]) -> str:
    return f"{items[:SHOWN]}{' ...' if len(items) > SHOWN else ''} ({len(items)})"


def recipients(key: str) -> CheckFn:
    """Everyone the agent e-mailed (to, cc, bcc; `E`) is exactly the expected set."""

    def check(ctx: Context) -> str:
        got = {a for m in sent_mail(ctx) for a in m.recipients}
        want = set(expected_recipients(ctx, key))
        missing, extra = sorted(want - got), sorted(got - want)
        problems = [f"{what} {_show(items)}" for what, items in (("missing", missing), ("extra", extra)) if items]
        if problems:
            raise CheckFailed("recipients: " + "; ".join(problems))
        return f"mail went to exactly the {len(want)} expected recipients"

    return check


def one_each(key: str) -> CheckFn:
    """Each expected recipient got exactly one message, and was its only recipient (To, no Cc
    or Bcc)."""

    def check(ctx: Context) -> str:
        sent = sent_mail(ctx)
        counts = Counter(a for m in sent for a in m.recipients)
        alone = {m.sole_recipient for m in sent}
        wrong = [f"{a} (in {counts[a]} messages)" for a in expected_recipients(ctx, key) if counts[a] != 1]
        shared = [a for a in expected_recipients(ctx, key) if counts[a] == 1 and a not in alone]
        problems = [f"{what} {_show(items)}" for what, items in
                    (("not exactly one message for", wrong), ("not the only recipient:", shared)) if items]
        if problems:
            raise CheckFailed("; ".join(problems))
        return "one message to each expected recipient, addressed to them alone"

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
        return f"all {len(sent)} sent subjects are {required!r}"

    return check
