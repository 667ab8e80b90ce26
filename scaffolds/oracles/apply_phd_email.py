"""Scripted agents of apply_phd_email: the oracle (reads memory, the whole inbox and the PDFs
through the tools, builds every requested ZIP in the workspace and sends it) and its
failure-mode mutants, each one knob away from the oracle."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from envs.apply_phd_email import (
    AWARD_PLACEHOLDER,
    FLAT,
    LETTER_PLACEHOLDER,
    LISTING_INDENT,
    MERGED_AWARDS,
    ROOT,
    ROOT_PLACEHOLDER,
    SUBJECT,
    TRAP_PAGE,
    read_everything,
)
from loca.core.script import Mutant, Script, ScriptedAgents, Tools, call

ADDRESS = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
NUMBERED = re.compile(r"^\d+_")
BUILD = "submissions"  # the working folder in the workspace
Tree = dict[str, Any]  # path under the root (folders end in /) -> source file, merged sources, or None


@dataclass(frozen=True)
class Knobs:
    """How an agent deviates from the oracle (all off: the oracle)."""

    first_page_only: bool = False  # M5: reads one inbox page of the default size
    with_student_id: bool = True  # M1: the root folder lacks the student ID
    swap_letters: bool = False  # M2: each letter named after the other recommender
    awards_by_file_name: bool = False  # M3: merges the certificates in file-name order
    honour_withdrawals: bool = True  # M4: also submits to professors who withdrew
    answer_ra_offers: bool = False  # takes the newest research-assistant offer for a request
    numbered_folders: bool = True  # drops the `01_` prefixes of the top folders
    subject: str = SUBJECT  # the subject it sends with
    archive_replies: bool = False  # files the replies away into Archive afterwards


@dataclass(frozen=True)
class Documents:
    """What the PDFs of the flat folder say: the signer's last name per letter file and the
    award files in the order to merge them."""

    letters: dict[str, str]
    awards: list[str]


def _profile(graph: dict[str, Any]) -> dict[str, str]:
    facts = {}
    for entity in graph["entities"]:
        for observation in entity["observations"]:
            key, _, value = observation.partition(": ")
            facts[key] = value
    return facts


def _documents(texts: dict[str, str], knobs: Knobs) -> Documents:
    letters, years = {}, {}
    for name, text in texts.items():
        if name.startswith("Recommendation_Letter_"):
            signature = text.split("Sincerely,", 1)[1].strip().splitlines()[0]
            letters[name] = signature.split()[-1]
        elif name.startswith("Award_Certificate_"):
            found = re.search(r"\bin (\d{4})\b", text)
            if found is None:
                raise ValueError(f"{name} states no award year")
            years[name] = int(found.group(1))
    if knobs.swap_letters:
        first, second = sorted(letters)
        letters[first], letters[second] = letters[second], letters[first]
    awards = sorted(years) if knobs.awards_by_file_name else sorted(years, key=lambda f: years[f])
    return Documents(letters, awards)


def parse_tree(body: str, docs: Documents, knobs: Knobs) -> Tree:
    """The tree a reply lists below the root placeholder, each file with its source."""
    lines = body.split(f"{ROOT_PLACEHOLDER}/\n", 1)[1].splitlines()
    tree: Tree = {}
    folders: list[str] = []
    for line in lines:
        if not line.startswith(LISTING_INDENT):
            break
        depth = (len(line) - len(line.lstrip(" "))) // len(LISTING_INDENT)
        name, _, note = line.strip().partition("  (")
        folders = folders[:depth - 1]
        if depth == 1 and not knobs.numbered_folders:
            name = NUMBERED.sub("", name)
        prefix = "".join(folders)
        if name.endswith("/"):
            tree[prefix + name] = None
            folders.append(name)
        elif name == LETTER_PLACEHOLDER:
            tree.update({f"{prefix}Recommendation_Letter_{last}.pdf": file for file, last in docs.letters.items()})
        elif name == AWARD_PLACEHOLDER:
            tree.update({prefix + file: file for file in docs.awards})
        elif name == MERGED_AWARDS:
            tree[prefix + name] = list(docs.awards)
        else:
            renamed = re.match(r"your (\S+), renamed", note)
            tree[prefix + name] = renamed.group(1) if renamed else name
    return dict(sorted(tree.items()))


def _sender(email: dict[str, Any]) -> str:
    found = ADDRESS.findall(email["from"])
    return found[-1].lower()


def _requests(emails: list[dict[str, Any]], knobs: Knobs) -> list[dict[str, Any]]:
    """The replies to act on: per sender, the latest reply if it asks for materials (with
    mutant knobs: also earlier requests since withdrawn, or the newest research-assistant
    offer)."""
    by_sender: dict[str, list[dict[str, Any]]] = {}
    for email in sorted(emails, key=lambda e: (e["date"], int(e["id"]))):
        by_sender.setdefault(_sender(email), []).append(email)
    chosen, offers = [], []
    for replies in by_sender.values():
        asking = [r for r in replies if f"{ROOT_PLACEHOLDER}/" in r["body"]]
        if asking and (asking[-1] is replies[-1] or not knobs.honour_withdrawals):
            chosen.append(asking[-1])
        elif "research assistant position" in replies[-1]["body"]:
            offers.append(replies[-1])
    if knobs.answer_ra_offers and offers:
        chosen.append(max(offers, key=lambda e: (e["date"], int(e["id"]))))
    return chosen


def derive(instruction: str, tools: Tools, knobs: Knobs) -> Script:
    """Read everything; the answer: per submission its address, subject, root and tree."""
    graph, emails, _files, texts = yield from read_everything(
        tools, page_size=TRAP_PAGE if knobs.first_page_only else 50, first_page_only=knobs.first_page_only)
    facts = _profile(graph)
    name = facts["Full name"].replace(" ", "")
    root = ROOT.format(name=name, student_id=facts["Student ID"])
    if not knobs.with_student_id:
        root = root.removesuffix(f"_{facts['Student ID']}")
    docs = _documents(texts, knobs)
    found: list[tuple[str, Tree | None]] = []
    for reply in _requests(emails, knobs):
        if f"{ROOT_PLACEHOLDER}/" in reply["body"]:
            [address] = ADDRESS.findall(reply["body"])
            found.append((address.lower(), parse_tree(reply["body"], docs, knobs)))
        else:
            found.append((_sender(reply), None))
    model = next((t for _, t in found if t is not None), {})
    return {"mail": sorted(({"to": to, "subject": SUBJECT, "root": root, "tree": model if t is None else t}
                            for to, t in found), key=lambda s: s["to"])}


BUILD_SCRIPT = """\
import json, os, shutil, zipfile
for job in json.loads({plan!r}):
    shutil.rmtree(job["base"], ignore_errors=True)
    for path, source in job["tree"].items():
        target = os.path.join(job["base"], job["root"], path)
        if source is None:
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(source, target)
    with zipfile.ZipFile(job["zip"], "w", zipfile.ZIP_DEFLATED) as archive:
        for folder, dirs, files in os.walk(job["base"]):
            dirs.sort()
            for name in dirs + sorted(files):
                path = os.path.join(folder, name)
                entry = os.path.relpath(path, job["base"]) + ("/" if name in dirs else "")
                archive.write(path, entry)
    print(job["zip"], len(job["tree"]))
"""


def write(instruction: str, tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    """Merge the certificates (once per order), build every tree and its ZIP with one script,
    then send each ZIP."""
    merged: dict[tuple[str, ...], str] = {}
    for submission in answer["mail"]:
        for sources in submission["tree"].values():
            if isinstance(sources, list) and tuple(sources) not in merged:
                target = merged[tuple(sources)] = f"{BUILD}/merged_{len(merged) + 1}.pdf"
                yield from call(tools("pdf_tools", "merge_pdfs"), {
                    "pdf_paths": [f"{FLAT}/{s}" for s in sources], "output_path": target})
    jobs = [{"base": f"{BUILD}/{k:02d}", "zip": f"{BUILD}/submission_{k:02d}.zip", "root": s["root"],
             "tree": {path: None if src is None else merged[tuple(src)] if isinstance(src, list) else f"{FLAT}/{src}"
                      for path, src in s["tree"].items()}}
            for k, s in enumerate(answer["mail"], start=1)]
    if jobs:
        report = yield from call(tools("python_execute", "python_execute"),
                                 {"code": BUILD_SCRIPT.format(plan=json.dumps(jobs))})
        if "Return code: 0" not in report:
            raise RuntimeError(f"building the ZIP files failed:\n{report}")
    for submission, job in zip(answer["mail"], jobs, strict=True):
        yield from call(tools("email", "send_email"), {
            "to": submission["to"], "subject": knobs.subject, "attachments": [job["zip"]],
            "body": "Dear Professor,\n\nPlease find my application materials attached as one ZIP file.\n\n"
                    "Best regards"})
    if knobs.archive_replies:
        page = yield from call(tools("email", "get_emails"), {"folder": "INBOX", "page_size": 50})
        ids = [e["id"] for e in page["emails"]]
        yield from call(tools("email", "move_emails"), {"email_ids": ids, "target_folder": "Archive"})


AGENTS = ScriptedAgents(
    derive=derive,
    write=write,
    oracle=Knobs(),
    mutants={
        "no_student_id": Mutant(Knobs(with_student_id=False), "root_folder"),
        "swapped_letters": Mutant(Knobs(swap_letters=True), "file_contents"),
        "awards_by_file_name": Mutant(Knobs(awards_by_file_name=True), "merged_awards"),
        "withdrawn_too": Mutant(Knobs(honour_withdrawals=False), "recipients"),
        "first_page": Mutant(Knobs(first_page_only=True), "recipients"),
        "ra_offers_too": Mutant(Knobs(answer_ra_offers=True), "recipients"),
        "unnumbered_folders": Mutant(Knobs(numbered_folders=False), "tree"),
        "wrong_subject": Mutant(Knobs(subject="PhD application materials"), "email_form"),
        "archives_replies": Mutant(Knobs(archive_replies=True), "no_side_effects"),
    },
    noop_must_fail="recipients",
)
