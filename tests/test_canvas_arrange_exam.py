"""canvas_arrange_exam: the plan keeps its guarantees at every size; the published texts leave one
reading of each value; the checker accepts every documented normalisation of a right answer and
rejects wrong ones. (Oracle, mutants and lengths at every tier: the generic acceptance suite.)"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import date, time

import pytest
from openpyxl import load_workbook

from envs.canvas_arrange_exam import SCHEDULE, TBD
from envs.core.registry import get_task
from generators.canvas_arrange_exam.plan import plan_world, truth_rows
from generators.common import seeded_faker
from loca.core.rng import WorldRng
from loca.core.world import World
from loca.validate import play_script
from mock_servers.core.files import save_workbook
from mock_servers.gateway import Gateway
from tests.top_of_scale import read_set_calls, top_world

TASK = get_task("canvas_arrange_exam")
DATE = "Final Date (MM/DD/YYYY)"


def _plan(n: int, seed: int):  # type: ignore[no-untyped-def]
    rngs = WorldRng("canvas_arrange_exam", seed)
    streams = {name: rngs.stream(name) for name in ("courses", "people", "modifiers")}
    return plan_world(streams, seeded_faker(rngs.stream("faker")), n, 10, date(2025, 1, 15),
                      "America/Chicago")


@pytest.mark.parametrize("n", [6, 7, 10, 15, 40, 160, 300, 400])
@pytest.mark.parametrize("seed", range(6))
def test_plan_guarantees(n: int, seed: int) -> None:
    plan = _plan(n, seed)
    courses = plan.courses
    assert len(courses) == n
    assert len({c.base_code for c in courses}) == n and len({c.base_name for c in courses}) == n
    cats = [c.category for c in courses]
    assert cats.count("email") >= 2 and cats.count("announcement") >= 3
    assert any(c in ("no_final", "exempt", "past") for c in cats)
    if n >= 15:
        assert {"no_final", "exempt", "past"} <= set(cats)
    included = [c for c in courses if c.included]
    assert any(c.corrected for c in included)
    assert any(c.final.location is None for c in included)
    starts = [c.final.starts_at for c in courses if c.final and c.final.starts_at]
    assert len(starts) == len(set(starts))
    for c in courses:
        if c.corrected:
            assert c.announced.day == c.final.day and c.announced.start != c.final.start
    rows = truth_rows(plan)
    dated = [r for r in rows if r[DATE] != TBD]
    assert len(rows) - len(dated) >= 2, "the order of TBD-date rows must be exercised"
    assert len(dated) >= 3
    assert [r["Course Code"] for r in dated] != sorted(r["Course Code"] for r in dated)
    assert all(r["Course Code"] not in {o.code.rsplit("-", 1)[0] for o in plan.others} for r in rows)


def test_same_seed_same_plan() -> None:
    assert truth_rows(_plan(12, 3)) == truth_rows(_plan(12, 3))
    assert truth_rows(_plan(12, 4)) != truth_rows(_plan(12, 3))


@pytest.fixture(scope="module")
def world_texts(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, list[str]]:
    """A 40-course world and every announcement and e-mail text in it."""
    world = TASK.generate(tmp_path_factory.mktemp("texts") / "w", {"num_courses": 40}, 2)
    gateway = Gateway(world, TASK.spec.servers)
    try:
        texts = []
        courses = json.loads(asyncio.run(gateway.call("canvas_canvas_list_courses", {"per_page": 100})).text)
        for course in courses["items"]:
            page = asyncio.run(gateway.call("canvas_canvas_list_announcements",
                                            {"course_id": course["id"], "per_page": 100})).text
            texts += [t["message"] for t in json.loads(page)["items"]]
        mail = json.loads(asyncio.run(gateway.call("email_get_emails", {"page_size": 50})).text)
        for n in range(1, mail["total_pages"] + 1):
            page = asyncio.run(gateway.call("email_get_emails", {"page": n, "page_size": 50})).text
            texts += [m["body"] for m in json.loads(page)["emails"]]
    finally:
        gateway.close()
    return world, texts


def test_published_values_have_one_reading(world_texts: tuple[World, list[str]]) -> None:
    """A location is never followed by sentence punctuation and a TBD location is plain `TBD`,
    so a location copied exactly as announced is the expected cell."""
    world, texts = world_texts
    rows = world.read_truth()["answer"][SCHEDULE.file]
    lines = [line.strip() for text in texts for line in text.splitlines()]
    located = [line.split("Location: ", 1)[1] for line in lines if "Location: " in line]
    located += [line.split("New location: ", 1)[1] for line in lines if line.startswith("New location: ")]
    assert located and not [loc for loc in located if loc.endswith((".", ";", ","))]
    assert TBD in located and not [loc for loc in located if loc.startswith(TBD) and loc != TBD]
    assert {r["Location"] for r in rows if r["Location"] != TBD} <= set(located)


def _solved(root, n: int, seed: int) -> World:  # type: ignore[no-untyped-def]
    world = TASK.generate(root, {"num_courses": n}, seed)
    assert asyncio.run(play_script(TASK, world, "oracle")).passed
    return world


@pytest.fixture
def solved(tmp_path) -> World:  # type: ignore[no-untyped-def]
    return _solved(tmp_path / "w", 8, 5)


def _edit_sheet(world: World, edit) -> None:  # type: ignore[no-untyped-def]
    path = world.workspace / SCHEDULE.file
    wb = load_workbook(path)
    edit(wb.worksheets[0])
    save_workbook(wb, path, world.clock.at(0))


def _failed(world: World) -> list[str]:
    return TASK.check(world).failed_names()


def test_checker_accepts_documented_normalisations(solved: World) -> None:
    def loosen(ws) -> None:  # type: ignore[no-untyped-def]
        for row in ws.iter_rows(min_row=2):
            _, _, _, email, kind, day, start, duration, location, source, credit = row
            email.value = email.value.upper()
            kind.value = kind.value.lower().replace("-", " ")
            source.value = source.value.upper()
            location.value = f"  {location.value}  "
            duration.value = str(duration.value)
            credit.value = float(credit.value)
            if day.value != TBD:
                month, dom, year = (int(p) for p in day.value.split("/"))
                day.value = date(year, month, dom) if dom % 2 else f"{month}/{dom}/{year}"
            else:
                day.value = "tbd"
            if start.value not in (TBD, "tbd") and start.value.startswith("0"):
                start.value = start.value[1:]
            elif start.value not in (TBD, "tbd"):
                hour, minute = (int(p) for p in start.value.split(":"))
                start.value = time(hour, minute)

    _edit_sheet(solved, loosen)
    assert _failed(solved) == []


@pytest.mark.parametrize("column,value", [
    (8, "120 min"),       # unit in an integer column
    (6, "2025-02-04"),    # wrong date format
    (7, "2:00 PM"),       # 12-hour time
    (9, ""),              # empty cell where GT has a value
    (9, "Room 228, Darwin Hall."),  # a location with a trailing period is another location
    (5, "Open"),          # not the exam type
])
def test_checker_rejects_wrong_cells(solved: World, column: int, value: str) -> None:
    def spoil(ws) -> None:  # type: ignore[no-untyped-def]
        target = next(r for r in ws.iter_rows(min_row=2) if r[5].value != TBD and r[8].value != TBD)
        target[column - 1].value = value

    _edit_sheet(solved, spoil)
    assert "values" in _failed(solved)


def test_checker_rejects_duplicate_rows(solved: World) -> None:
    _edit_sheet(solved, lambda ws: ws.append([c.value for c in ws[2]]))
    assert "row_keys" in _failed(solved)


def test_tbd_must_stay_tbd_and_only_there(tmp_path) -> None:  # type: ignore[no-untyped-def]
    world = _solved(tmp_path / "w", 8, 1)

    def guess(ws) -> None:  # type: ignore[no-untyped-def]
        for row in ws.iter_rows(min_row=2):
            if row[8].value == TBD:
                row[8].value = "Room 101, Baker Hall"

    _edit_sheet(world, guess)
    assert "values" in _failed(world)


def test_tbd_date_rows_must_be_ordered_by_course_code(solved: World) -> None:
    def swap(ws) -> None:  # type: ignore[no-untyped-def]
        tbd = [r for r in ws.iter_rows(min_row=2) if r[5].value == TBD]
        assert len(tbd) >= 2
        first, second = tbd[0], tbd[1]
        for a, b in zip(first, second, strict=True):
            a.value, b.value = b.value, a.value

    _edit_sheet(solved, swap)
    assert _failed(solved) == ["order"]


def test_side_effects_are_caught_but_scratch_files_are_allowed(solved: World) -> None:
    (solved.workspace / "notes.md").write_text("scratch work")
    assert TASK.check(solved).passed
    gateway = Gateway(solved, TASK.spec.servers)
    try:
        outcome = asyncio.run(gateway.call("email_send_email", {
            "to": "someone@example.com", "subject": "hi", "body": "hello"}))
    finally:
        gateway.close()
    assert not outcome.is_error
    assert _failed(solved) == ["no_side_effects"]


def test_unreadable_workbook_fails_cleanly(solved: World) -> None:
    (solved.workspace / SCHEDULE.file).write_bytes(b"not a zip")
    verdict = TASK.check(solved)
    assert not verdict.passed and not verdict.errored
    assert "file_header" in verdict.failed_names()



def test_notes_never_shift_the_answer(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Plain announcements add length only: same answer, same other rows, and a world without
    them records no `num_notes` (its identity from before the knob)."""
    bare = TASK.generate(tmp_path / "bare", {"num_courses": 12}, 1)
    noted = TASK.generate(tmp_path / "noted", {"num_courses": 12, "num_notes": 150}, 1)
    assert bare.meta.params == {"num_courses": 12, "num_distractor_emails": 12}
    assert noted.meta.params == {**bare.meta.params, "num_notes": 150}
    assert noted.read_truth()["answer"] == bare.read_truth()["answer"]
    count = "SELECT count(*) FROM canvas_discussion_topic"
    assert _rows(noted, count)[0][0] == _rows(bare, count)[0][0] + 150
    assert _rows(noted, "SELECT * FROM email_message") == _rows(bare, "SELECT * FROM email_message")
    welcome = "SELECT max(posted_at) FROM canvas_discussion_topic WHERE title LIKE 'Welcome to %'"
    notes = "SELECT min(posted_at) FROM canvas_discussion_topic WHERE title IN ('Guest lecture', 'Study session')"
    assert _rows(noted, welcome)[0][0] < _rows(noted, notes)[0][0]


@pytest.mark.slow
def test_longest_tier_fits_the_tool_call_limit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """At the top of the scale, with the notes of a 2.3M world, the read set stays well within
    the agent loop's 500 tool calls (one listing per course, e-mail pages of 50)."""
    params = {"num_courses": TASK.spec.scale.hi, "num_notes": 12_800}
    world = top_world(TASK, params, tmp_path / "w")
    assert (world.meta.env_description_tokens or 0) > 2_250_000
    assert read_set_calls(TASK, world) <= 430


def _rows(world: World, query: str) -> list[tuple[object, ...]]:
    con = sqlite3.connect(world.state_path)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()
