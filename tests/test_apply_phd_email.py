"""apply_phd_email: the plan keeps its guarantees at every size; each reply's listing has one
reading (the oracle's reading of it is the ground truth); the files are real; the checker
accepts every documented variant of a right submission and rejects wrong ones, one rule per
test. (Oracle, mutants and lengths at every tier: the generic acceptance suite.)"""

from __future__ import annotations

import asyncio
import hashlib
import io
import itertools
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from pypdf import PdfReader, PdfWriter

from envs.apply_phd_email import FLAT, INSTRUCTION, ROOT_PLACEHOLDER, SUBJECT, TRAP_PAGE
from envs.core.registry import get_task
from generators.apply_phd_email import REPLIES_FROM, REPLIES_UNTIL, make_plan, resolve_params
from generators.apply_phd_email.plan import (
    ACADEMIC,
    LETTERS,
    MIN_INBOX,
    PERSONAL,
    SUPPLEMENTARY,
    Structure,
    WorldPlan,
    counts,
)
from generators.apply_phd_email.tree import listing, required
from loca.core.world import World
from loca.validate import play_script
from scaffolds.oracles.apply_phd_email import ADDRESS, Documents, Knobs, parse_tree
from tests.harness import task_call, world_copy

TASK = get_task("apply_phd_email")


def _plan(n: int, seed: int) -> WorldPlan:
    return make_plan(resolve_params({"num_professors": n}), seed)


@pytest.mark.parametrize("n", [10, 20, 40, 90, 180, 285, 360, 750, 4000, TASK.spec.scale.hi])
def test_reply_types_follow_the_fixed_ratios(n: int) -> None:
    c = counts(n)
    assert sum(c.values()) == n
    assert c["positive"] == min(40, max(1, int(n / 10 + 0.5)))
    assert c["withdrawn"] == max(1, c["positive"] // 5)
    assert c["silent"] == int(0.05 * n + 0.5)
    assert 0 <= c["ra_offer"] - c["no_spots"] <= 1 and c["no_spots"] >= 1


@pytest.mark.parametrize("n", [10, 14, 15, 25, 40, 120, 400, 1020, 4000, TASK.spec.scale.hi])
@pytest.mark.parametrize("seed", range(5))
def test_plan_guarantees(n: int, seed: int) -> None:
    plan = _plan(n, seed)
    profs = plan.professors
    assert len(profs) == n and len({p.person.name for p in profs}) == n and len({p.person.email for p in profs}) == n
    positives = plan.positives
    addresses = [p.address for p in positives]
    assert len(set(addresses)) == len(addresses) and not set(addresses) & {plan.student.person.email}
    assert {p.address for p in profs if p.via_office}.isdisjoint(p.person.email for p in profs)
    structures = {p.structure for p in positives}
    assert any(s.merge_awards for s in structures if s)
    if len(positives) >= 2:
        assert len(structures) >= 2 and any(s and not s.merge_awards for s in structures)
    if len(positives) >= 3:
        assert any(p.via_office for p in positives)
    assert all(s and {ACADEMIC, LETTERS} <= set(s.folders) and 2 <= len(s.folders) <= 4 for s in structures)
    years = [a.year for a in plan.awards]
    assert 3 <= len(years) <= 5 and len(set(years)) == len(years) and years != sorted(years)
    assert len({a.title for a in plan.awards}) == len(years)
    lasts = [r.last for r in plan.recommenders.values()]
    assert len(set(lasts)) == 2 and plan.student.person.last not in lasts
    times = [m.at for m in plan.inbox]
    assert times == sorted(times) and len(set(times)) == len(times) and len(times) >= MIN_INBOX
    assert times[0] >= REPLIES_FROM and times[-1] < REPLIES_UNTIL
    events: dict[int, list[str]] = {}
    for m in plan.inbox:
        if m.professor is not None:
            events.setdefault(id(m.professor), []).append(m.event)
    for p in profs:
        expected = {"withdrawn": ["request", "withdrawal"], "positive": ["request"], "silent": []}
        assert events.get(id(p), []) == expected.get(p.kind, [p.kind])
    newest = sorted(plan.inbox, key=lambda m: m.at, reverse=True)
    assert any(m.event == "request" and m.professor and m.professor.kind == "positive"
               for m in newest[TRAP_PAGE:]), "the pagination trap"


def test_an_inbox_too_big_for_the_reply_window_is_refused() -> None:
    with pytest.raises(ValueError, match="do not fit in the 74820 minutes"):
        make_plan({"num_professors": 10, "num_other_emails": 80_000}, 0)


def test_same_seed_same_plan_and_a_distractor_leaves_the_professors_alone() -> None:
    def facts(plan: WorldPlan) -> list[tuple[str, str, str | None]]:
        return [(p.person.email, p.kind, p.address) for p in plan.professors]

    base = make_plan({"num_professors": 60, "num_other_emails": 5}, 2)
    assert facts(base) == facts(make_plan({"num_professors": 60, "num_other_emails": 5}, 2))
    assert facts(base) == facts(make_plan({"num_professors": 60, "num_other_emails": 9}, 2))
    assert facts(base) != facts(make_plan({"num_professors": 60, "num_other_emails": 5}, 3))


def _structures() -> Iterator[Structure]:
    for extra in ([], [PERSONAL], [SUPPLEMENTARY], [PERSONAL, SUPPLEMENTARY]):
        for order in itertools.permutations([ACADEMIC, LETTERS, *extra]):
            for cv in ("CV.pdf", "Resume.pdf"):
                for merge in (True, False):
                    yield Structure(order, cv, merge)


def test_every_listing_reads_back_as_its_required_tree() -> None:
    """The reply's tree has one reading: parsed back, it is exactly the ground truth."""
    plan = _plan(30, 1)
    letters = {file: person.last for file, person in plan.recommenders.items()}
    docs = Documents(letters, [a.file for a in sorted(plan.awards, key=lambda a: a.year)])
    count = 0
    for structure in _structures():
        body = f"Please:\n\n{listing(structure)}\n\nSend it to me."
        assert parse_tree(body, docs, Knobs()) == required(structure, plan)
        count += 1
    assert count == 152


# ---------------------------------------------------------------- a generated world

@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> World:
    return TASK.generate(tmp_path_factory.mktemp("apply") / "w", {"num_professors": 45}, 1)


@pytest.fixture
def world(base: World, tmp_path: Path) -> World:
    return world_copy(base, tmp_path / "w")


def _call(world: World, tool: str, **args: Any) -> Any:
    return task_call(world, TASK, tool, **args)


def _inbox(world: World) -> list[dict[str, Any]]:
    first = _call(world, "email_get_emails", page_size=50)
    emails = first["emails"]
    for page in range(2, first["total_pages"] + 1):
        emails += _call(world, "email_get_emails", page=page, page_size=50)["emails"]
    return emails


def test_replies_have_one_reading(base: World) -> None:
    """A request names exactly one address, the expected one for a standing request; nothing
    else names an address or lists a tree; research-assistant offers mention materials."""
    truth = base.read_truth()
    expected = {s["to"] for s in truth["answer"]["mail"]}
    named = set()
    for email in _inbox(base):
        found = ADDRESS.findall(email["body"])
        if f"{ROOT_PLACEHOLDER}/" in email["body"]:
            assert len(found) == 1
            named.add(found[0])
        else:
            assert found == [], email["body"]
        if "research assistant position" in email["body"]:
            assert "materials" in email["body"]
    assert expected <= named and set(truth["withdrawn"]) <= named and not expected & set(truth["withdrawn"])
    assert INSTRUCTION.endswith("Change nothing else.")


def test_flat_folder_holds_real_files(base: World) -> None:
    truth = base.read_truth()
    folder = base.workspace / FLAT
    for file, digest in truth["sources"].items():
        assert hashlib.sha256((folder / file).read_bytes()).hexdigest() == digest
    photo = Image.open(folder / "Photo.jpg")
    photo.load()
    assert photo.format == "JPEG" and photo.size == (96, 120)
    for award in truth["awards"]:
        text = PdfReader(folder / award["file"]).pages[0].extract_text()
        assert award["title"] in text and text.count(str(award["year"])) == 1
        assert not re.search(r"\d", award["file"])
    assert [a["year"] for a in truth["awards"]] == sorted(a["year"] for a in truth["awards"])
    assert [a["file"] for a in truth["awards"]] != sorted(a["file"] for a in truth["awards"])
    for letter in ("Recommendation_Letter_1.pdf", "Recommendation_Letter_2.pdf"):
        text = PdfReader(folder / letter).pages[0].extract_text()
        signer = text.split("Sincerely,", 1)[1].split()[:2]
        assert any(path.endswith(f"Recommendation_Letter_{signer[1]}.pdf") and source == letter
                   for s in truth["answer"]["mail"] for path, source in s["tree"].items())


# ---------------------------------------------------------------- the checker

def _merged(world: World, files: list[str]) -> bytes:
    writer = PdfWriter()
    for file in files:
        writer.append(str(world.workspace / FLAT / file))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _zip(world: World, submission: dict[str, Any], *, folders: bool = True, extra: dict[str, bytes] | None = None,
         root: str | None = None, edit: dict[str, bytes] | None = None, stored: bool = False) -> bytes:
    """A ZIP of `submission` as the truth describes it, with the given variations."""
    top = root or submission["root"]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED) as zf:
        if folders:
            zf.writestr(f"{top}/", b"")
        for path, source in submission["tree"].items():
            if source is None:
                if folders:
                    zf.writestr(f"{top}/{path}", b"")
                continue
            data = _merged(world, source) if isinstance(source, list) else \
                (world.workspace / FLAT / source).read_bytes()
            zf.writestr(f"{top}/{path}", (edit or {}).get(path, data))
        for path, data in (extra or {}).items():
            zf.writestr(path, data)
    return out.getvalue()


def _send(world: World, to: str, attachments: list[tuple[str, bytes]], subject: str = SUBJECT,
          cc: str | None = None) -> None:
    paths = []
    for name, data in attachments:
        path = world.workspace / "out" / str(len(list(world.workspace.glob("out/*")))) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        paths.append(str(path.relative_to(world.workspace)))
    _call(world, "email_send_email", to=to, subject=subject, body="Materials attached.", attachments=paths,
          **({"cc": cc} if cc else {}))


def _submit_all(world: World, **variation: Any) -> list[dict[str, Any]]:
    submissions = world.read_truth()["answer"]["mail"]
    for s in submissions:
        _send(world, s["to"], [("materials.zip", _zip(world, s, **variation))])
    return submissions


def _failed(world: World) -> list[str]:
    verdict = TASK.check(world)
    assert not verdict.errored, verdict
    return verdict.failed_names()


def test_oracle_passes_and_leaves_its_working_files(world: World) -> None:
    assert asyncio.run(play_script(TASK, world, "oracle")).passed
    assert list(world.workspace.glob("submissions/*.zip"))


def test_checker_accepts_documented_variants(world: World) -> None:
    """No folder entries, OS metadata entries, stored (not deflated) members, an upper-case
    `.ZIP`, a subject with stray spaces: all still right."""
    submissions = world.read_truth()["answer"]["mail"]
    for s in submissions:
        metadata = {f"__MACOSX/{s['root']}/._CV.pdf": b"x", f"{s['root']}/.DS_Store": b"x", "__MACOSX/": b""}
        _send(world, s["to"], [("Materials.ZIP", _zip(world, s, folders=False, extra=metadata, stored=True))],
              subject=f"  {SUBJECT} ")
    assert _failed(world) == []


def _first_file(submission: dict[str, Any], kind: type) -> str:
    return next(path for path, source in submission["tree"].items() if isinstance(source, kind))


@pytest.mark.parametrize("variation,check", [
    ({"root": "Application_Materials"}, "root_folder"),
    ({"extra": {"notes.txt": b"hello"}}, "root_folder"),
])
def test_root_folder_rules(world: World, variation: dict[str, Any], check: str) -> None:
    _submit_all(world, **variation)
    assert _failed(world) == [check]


def test_an_extra_file_breaks_the_tree(world: World) -> None:
    submissions = world.read_truth()["answer"]["mail"]
    _submit_all(world, extra={f"{submissions[0]['root']}/notes.txt": b"hello"})
    assert _failed(world) == ["tree"]


def test_paths_are_case_sensitive(world: World) -> None:
    for s in world.read_truth()["answer"]["mail"]:
        s["tree"] = {path.replace("Academic_Materials", "academic_materials"): source
                     for path, source in s["tree"].items()}
        _send(world, s["to"], [("materials.zip", _zip(world, s))])
    assert _failed(world) == ["tree"]


def test_a_changed_copy_breaks_file_contents(world: World) -> None:
    submissions = world.read_truth()["answer"]["mail"]
    for s in submissions:
        _send(world, s["to"], [("materials.zip", _zip(world, s, edit={_first_file(s, str): b"%PDF-1.4 changed"}))])
    assert _failed(world) == ["file_contents"]


@pytest.mark.parametrize("how", ["file_order", "extra_page"])
def test_merged_awards_rules(world: World, how: str) -> None:
    submissions = world.read_truth()["answer"]["mail"]
    merged = [s for s in submissions if any(isinstance(v, list) for v in s["tree"].values())]
    assert merged
    for s in submissions:
        edit = {}
        if s in merged:
            path = _first_file(s, list)
            files = sorted(s["tree"][path]) if how == "file_order" else [*s["tree"][path], s["tree"][path][0]]
            edit[path] = _merged(world, files)
        _send(world, s["to"], [("materials.zip", _zip(world, s, edit=edit))])
    assert _failed(world) == ["merged_awards"]


@pytest.mark.parametrize("attachments", ["two", "not_zip", "corrupt"])
def test_email_form_rules(world: World, attachments: str) -> None:
    for s in world.read_truth()["answer"]["mail"]:
        good = _zip(world, s)
        files = {"two": [("a.zip", good), ("cv.pdf", b"%PDF")], "not_zip": [("materials.rar", good)],
                 "corrupt": [("materials.zip", good[: len(good) // 2])]}[attachments]
        _send(world, s["to"], files)
    assert "email_form" in _failed(world)


def test_subject_is_case_sensitive(world: World) -> None:
    for s in world.read_truth()["answer"]["mail"]:
        _send(world, s["to"], [("materials.zip", _zip(world, s))], subject="Submit_Material")
    assert _failed(world) == ["email_form"]


def test_recipients_rules(world: World) -> None:
    submissions = _submit_all(world)
    assert _failed(world) == []
    first = submissions[0]
    _send(world, first["to"], [("materials.zip", _zip(world, first))])
    assert _failed(world) == ["recipients"]


def test_a_cc_is_another_recipient(world: World) -> None:
    submissions = world.read_truth()["answer"]["mail"]
    for k, s in enumerate(submissions):
        _send(world, s["to"], [("materials.zip", _zip(world, s))],
              cc=world.read_truth()["student"]["email"] if k == 0 else None)
    assert _failed(world) == ["recipients"]


def test_side_effects_are_caught_but_working_files_are_allowed(world: World) -> None:
    _submit_all(world)
    (world.workspace / "notes.md").write_text("scratch")
    assert _failed(world) == []
    (world.workspace / FLAT / "CV.pdf").write_bytes(b"%PDF-1.4 replaced")
    assert _failed(world) == ["no_side_effects"]


def test_a_deleted_reply_is_a_side_effect(world: World) -> None:
    _submit_all(world)
    newest = _inbox(world)[0]
    _call(world, "email_delete_email", email_id=newest["id"])
    assert _failed(world) == ["no_side_effects"]
