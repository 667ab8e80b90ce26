"""Checker of apply_phd_email: the messages the student sent (`checkers.mail`: what the mail
system transferred since the snapshot), each ZIP read from the attachment bytes as sent and compared
with the tree its professor asked for, plus no side effects. OS metadata entries
(`__MACOSX/`, `.DS_Store`, `._*`, `Thumbs.db`, `desktop.ini`) are ignored everywhere."""

from __future__ import annotations

import hashlib
import io
import re
import sqlite3
import zipfile
from dataclasses import dataclass
from typing import Any

from pypdf import PdfReader

from checkers import mail as mail_checks
from checkers.kit import SHOWN, Checks, Context, fail_on, judged
from checkers.mail import SentMessage, sent_mail
from checkers.normalize import E, S
from checkers.side_effects import no_side_effects
from checkers.verdict import CheckFailed
from envs.apply_phd_email import SUBMISSION, TASK
from mock_servers.email import domain as mail

METADATA_FILES = {".DS_Store", "Thumbs.db", "desktop.ini"}
MAX_ENTRIES = 10_000
MAX_UNPACKED = 256 * 1024 * 1024  # bytes a ZIP may expand to before it is refused as unreadable
ANSWER = "mail"  # the answer entry: one expected submission per address
_WS = re.compile(r"\s+")


def _attachments(ctx: Context, message: SentMessage) -> list[mail.Attachment]:
    """The attachments of a sent message, with their bytes, as sent (memoised)."""

    def read() -> list[mail.Attachment]:
        conn = sqlite3.connect(f"file:{ctx.world.state_path}?mode=ro", uri=True)
        try:
            return mail.transfer_attachments(conn, message.id)
        finally:
            conn.close()

    found: list[mail.Attachment] = ctx.memo(("attachments", message.id), read)
    return found


# ---------------------------------------------------------------- the ZIP of a message

@dataclass(frozen=True)
class Archive:
    """A readable ZIP: its entries (metadata left out; folders end in `/`, implied folders
    included) and the bytes of each file entry."""

    files: dict[str, bytes]
    folders: frozenset[str]

    @property
    def tops(self) -> set[str]:
        return {p.split("/", 1)[0] + ("/" if "/" in p else "") for p in [*self.files, *self.folders]}

    def under(self, top: str) -> set[str]:
        """Every path below the top-level folder `top` (without its `/`), relative to it."""
        prefix = f"{top}/"
        return {p[len(prefix):] for p in [*self.files, *self.folders] if p.startswith(prefix) and p != prefix}


def _metadata(path: str) -> bool:
    parts = [p for p in path.split("/") if p]
    return any(p == "__MACOSX" for p in parts) or (bool(parts) and (
        parts[-1] in METADATA_FILES or parts[-1].startswith("._")))


def _unpack(data: bytes) -> Archive:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_ENTRIES or sum(i.file_size for i in infos) > MAX_UNPACKED:
                raise CheckFailed(f"the ZIP holds {len(infos)} entries expanding to "
                                  f"{sum(i.file_size for i in infos)} bytes; too large to read")
            files: dict[str, bytes] = {}
            folders: set[str] = set()
            for info in infos:
                name = info.filename.replace("\\", "/").removeprefix("./")
                if not name.strip("/") or _metadata(name):
                    continue
                if info.is_dir():
                    folders.add(name.rstrip("/") + "/")
                else:
                    files[name] = zf.read(info)
    except CheckFailed:
        raise
    except Exception as exc:  # any corruption the zipfile module reports
        raise CheckFailed(f"the ZIP cannot be read: {type(exc).__name__}: {exc}") from None
    for path in files:
        parts = path.split("/")[:-1]
        folders.update("/".join(parts[:k]) + "/" for k in range(1, len(parts) + 1))
    return Archive(files, frozenset(folders))


def archive(ctx: Context, message: SentMessage) -> Archive:
    """The message's single ZIP attachment, unpacked (memoised); CheckFailed when there is
    not exactly one `*.zip` attachment or it cannot be read."""

    def read() -> Archive:
        if len(message.attachments) != 1:
            raise CheckFailed(f"{len(message.attachments)} attachments, expected exactly one ZIP")
        if not message.attachments[0].lower().endswith(f".{SUBMISSION.attachment}"):
            raise CheckFailed(f"the attachment {message.attachments[0]!r} is not a .zip file")
        return _unpack(_attachments(ctx, message)[0].data)

    found: Archive = ctx.memo(("zip", message.id), read)
    return found


def submissions(ctx: Context) -> list[tuple[dict[str, Any], SentMessage]]:
    """(expected submission, a message sent to its address) for every such message."""
    expected = {E(s["to"]): s for s in ctx.answer(ANSWER)}
    return [(expected[a], m) for m in sent_mail(ctx) for a in m.recipients if a in expected]


def _root(box: Archive, expected: str) -> str:
    """The folder the tree is read under: the archive's single top-level folder (whatever its
    name: that is `root_folder`'s business), else the expected one."""
    tops = box.tops
    if len(tops) == 1 and next(iter(tops)).endswith("/"):
        return next(iter(tops)).rstrip("/")
    if f"{expected}/" in tops:
        return expected
    raise CheckFailed(f"no single root folder to compare (top-level entries: {sorted(tops)[:SHOWN]})")


def _each(ctx: Context, judge: Any) -> list[str]:
    """`judge(submission, archive)` -> problem or None, over every submission with a
    readable ZIP; the problems found, prefixed by the address."""
    problems = []
    found = submissions(ctx)
    judged(len(found), len(ctx.answer(ANSWER)), "submissions")
    for want, sent in found:
        try:
            problem = judge(want, archive(ctx, sent))
        except CheckFailed as exc:
            problem = str(exc)
        if problem:
            problems.append(f"{want['to']}: {problem}")
    return problems


# ---------------------------------------------------------------- checks

_EXACTLY_EXPECTED, _ONE_EACH = mail_checks.recipients(SUBMISSION), mail_checks.one_each(SUBMISSION)


def recipients(ctx: Context) -> str:
    """The recipients of all sent mail are exactly the expected addresses, one message each,
    each message to its address alone (To; no Cc or Bcc): nothing else sent."""
    return f"{_EXACTLY_EXPECTED(ctx)}; {_ONE_EACH(ctx)}"


def email_form(ctx: Context) -> str:
    """Every sent message: subject `submit_material` (S), exactly one attachment, a readable
    `*.zip`."""
    problems = []
    for m in sent_mail(ctx):
        if S(m.subject) != SUBMISSION.subject:
            problems.append(f"to {', '.join(m.recipients)}: subject {m.subject!r}")
            continue
        try:
            archive(ctx, m)
        except CheckFailed as exc:
            problems.append(f"to {', '.join(m.recipients)}: {exc}")
    fail_on(problems)
    judged(len(sent_mail(ctx)), len(ctx.answer(ANSWER)), "submissions")
    return f"{len(sent_mail(ctx))} messages with the subject and one readable ZIP each"


def root_folder(ctx: Context) -> str:
    """The ZIP holds exactly one top-level entry: a folder named exactly as expected."""

    def judge(want: dict[str, Any], box: Archive) -> str | None:
        tops = box.tops
        return None if tops == {f"{want['root']}/"} else f"top-level entries {sorted(tops)[:SHOWN]}, " \
                                                            f"expected only the folder {want['root']}/"

    fail_on(_each(ctx, judge))
    return "every ZIP has the one expected root folder"


def tree(ctx: Context) -> str:
    """The folders and files under the root folder are exactly the requested ones
    (case-sensitive paths)."""

    def judge(want: dict[str, Any], box: Archive) -> str | None:
        got, expected = box.under(_root(box, want["root"])), set(want["tree"])
        missing, extra = sorted(expected - got), sorted(got - expected)
        if not missing and not extra:
            return None
        return "; ".join(f"{what} {items[:SHOWN]}" for what, items in (("missing", missing), ("extra", extra)) if items)

    fail_on(_each(ctx, judge))
    return "every ZIP holds exactly the requested tree"


def file_contents(ctx: Context) -> str:
    """Every requested file that is a copy is byte-identical (SHA-256) to its source."""
    sources = ctx.truth["sources"]

    def judge(want: dict[str, Any], box: Archive) -> str | None:
        root = _root(box, want["root"])
        wrong = [path for path, source in want["tree"].items() if isinstance(source, str)
                 and f"{root}/{path}" in box.files
                 and hashlib.sha256(box.files[f"{root}/{path}"]).hexdigest() != sources[source]]
        return f"not identical to their sources: {wrong[:SHOWN]}" if wrong else None

    fail_on(_each(ctx, judge))
    return "every copied file is identical to its source"


def _squeezed(text: str) -> str:
    return _WS.sub("", text)


def merged_awards(ctx: Context) -> str:
    """Where the awards are requested as one PDF: exactly one page per certificate, page i
    showing the i-th oldest award's title and year (whitespace ignored)."""
    awards = {a["file"]: a for a in ctx.truth["awards"]}

    def judge(want: dict[str, Any], box: Archive) -> str | None:
        root = _root(box, want["root"])
        for path, source in want["tree"].items():
            data = box.files.get(f"{root}/{path}") if isinstance(source, list) else None
            if data is None:
                continue
            try:
                pages = [_squeezed(page.extract_text() or "") for page in PdfReader(io.BytesIO(data)).pages]
            except Exception as exc:  # any damage pypdf reports
                return f"{path} is not a readable PDF ({type(exc).__name__})"
            if len(pages) != len(source):
                return f"{path} has {len(pages)} pages, expected {len(source)}"
            for number, (page, file) in enumerate(zip(pages, source, strict=True), start=1):
                award = awards[file]
                if _squeezed(award["title"]) not in page or str(award["year"]) not in page:
                    return f"{path} page {number} is not the certificate of {award['title']} ({award['year']})"
        return None

    fail_on(_each(ctx, judge))
    return "every merged awards PDF has one certificate per page, oldest first"


CHECKS = Checks(
    TASK,
    recipients=recipients,
    email_form=email_form,
    root_folder=root_folder,
    tree=tree,
    file_contents=file_contents,
    merged_awards=merged_awards,
    no_side_effects=no_side_effects(TASK),
)
