"""canvas_list_test: the plan keeps its guarantees at every size; the world holds what the task
needs (scores in memory, example rows, classmates' work, the exam distractor); the checker accepts
every documented normalisation of a right answer and rejects wrong ones. (Oracle, mutants and
lengths at every tier: the generic acceptance suite.)"""

from __future__ import annotations

import asyncio
import csv
import io
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from envs.canvas_list_test import ASSIGNMENTS, DEADLINE, EXAMPLE, QUIZZES, SCORE_NOTE
from envs.core.registry import get_task
from generators.canvas_list_test import _render
from generators.canvas_list_test.plan import NOW, WorldPlan, plan_world, ties_disagree, truth_rows
from generators.common import seeded_faker
from loca.core.outputs import TableFile
from loca.core.rng import WorldRng
from loca.core.world import World
from loca.validate import play_script
from tests.harness import task_call
from tests.top_of_scale import read_set_calls, top_world

TASK = get_task("canvas_list_test")


def _plan(n: int, seed: int) -> WorldPlan:
    rngs = WorldRng("canvas_list_test", seed)
    streams = {name: rngs.stream(name) for name in ("catalogue", "items", "policies", "roles")}
    return plan_world(streams, seeded_faker(rngs.stream("faker")), n, _render)


@pytest.mark.parametrize("n", [4, 5, 8, 13, 40, 150, 400])
@pytest.mark.parametrize("seed", range(6))
def test_plan_guarantees(n: int, seed: int) -> None:
    courses = _plan(n, seed).courses
    assert len({c.code for c in courses}) == n and len({c.name for c in courses}) == n
    quizzes, assignments = truth_rows(courses, QUIZZES), truth_rows(courses, ASSIGNMENTS)
    assert quizzes and assignments
    for c in courses:
        for items in (c.quizzes, c.assignments):
            assert len(items) <= 2 and len({i.title for i in items}) == len(items)
        for item in c.quizzes + c.assignments:
            assert item.due.strftime("%H:%M:%S%z") == "23:59:00+0000"
            days = (item.due.date() - NOW.date()).days
            assert 1 <= days <= 21 if item.open else -10 <= days <= -1
    descriptions = [a.description for c in courses for a in c.assignments]
    assert len(set(descriptions)) == len(descriptions)
    assert any('"' in r["description"] for r in assignments) and any("," in d for d in descriptions)
    policies = [c.policy for c in courses if c.policy]
    met = [p for p in policies if p.met]
    assert len(policies) == max(2, round(0.12 * n)) and len(met) == len(policies) - len(policies) // 2
    assert all(1 <= p.threshold - p.score <= 3 for p in policies if not p.met)
    exempt = [c for c in courses if c.exempt]
    assert any(a.listed for c in exempt for a in c.assignments), "ignoring exemptions must add a row"
    assert any(a.listed for c in courses if c.policy and not c.exempt for a in c.assignments)
    plain = [c for c in courses if not c.exempt]
    assert any(a.open and a.submitted for c in plain for a in c.assignments)
    assert any(not a.open and not a.submitted for c in plain for a in c.assignments)
    last = courses[-1]  # beyond the first page of any listing of more than one page
    assert not last.exempt and any(a.listed for a in last.assignments) and any(q.listed for q in last.quizzes)
    assert ties_disagree(quizzes, QUIZZES) or ties_disagree(assignments, ASSIGNMENTS)


def test_same_seed_same_plan() -> None:
    assert truth_rows(_plan(12, 3).courses, QUIZZES) == truth_rows(_plan(12, 3).courses, QUIZZES)
    assert truth_rows(_plan(12, 4).courses, QUIZZES) != truth_rows(_plan(12, 3).courses, QUIZZES)


def test_plain_announcements_never_shift_the_answer(tmp_path: Path) -> None:
    few = TASK.generate(tmp_path / "a", {"num_courses": 9, "num_notes": 0}, 2)
    many = TASK.generate(tmp_path / "b", {"num_courses": 9, "num_notes": 40}, 2)
    assert few.read_truth()["answer"] == many.read_truth()["answer"]
    assert few.meta.content_hash != many.meta.content_hash


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return TASK.generate(tmp_path_factory.mktemp("w") / "w", {"num_courses": 30}, 1)


def _query(world: World, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(f"file:{world.state_path}?mode=ro", uri=True)
    try:
        return con.execute(statement, params).fetchall()
    finally:
        con.close()


def test_world_holds_scores_examples_classmates_and_distractors(world: World) -> None:
    observations = {o for (o,) in _query(world, "SELECT text FROM kg_observation")}
    codes = dict(_query(world, "SELECT id, course_code FROM canvas_course"))
    exemption = {cid for (cid,) in _query(world, "SELECT course_id FROM canvas_discussion_topic WHERE "
                                                 "lower(message) LIKE '%exempt%'")}
    scores = {o for o in observations if o.startswith("exam score for ")}
    assert len(scores) == len(exemption) >= 2
    assert scores == {SCORE_NOTE.format(code=codes[c], score=o.rsplit(": ", 1)[1])
                      for c in exemption for o in scores if f" {codes[c]}: " in o}
    finals = _query(world, "SELECT course_id FROM canvas_discussion_topic WHERE title = 'Final Exam Announcement'")
    assert sorted(c for (c,) in finals) == sorted(codes)
    for out in (QUIZZES, ASSIGNMENTS):
        rows = list(csv.reader(io.StringIO((world.workspace / out.file).read_text(encoding="utf-8"))))
        assert rows[0] == out.headers and len(rows) == 2 and rows[1][0].endswith(EXAMPLE)
    me = world.meta.accounts["canvas"]["user_id"]
    theirs_only = _query(world, "SELECT count(*) FROM canvas_submission s WHERE s.user_id != ? AND NOT EXISTS "
                                "(SELECT 1 FROM canvas_submission m WHERE m.assignment_id = s.assignment_id "
                                "AND m.user_id = ?)", (me, me))
    assert theirs_only[0][0] > 0
    classmates = _query(world, "SELECT count(DISTINCT user_id) FROM canvas_enrollment WHERE type = "
                               "'StudentEnrollment' AND user_id != ?", (me,))
    assert classmates[0][0] == 3 + 30 // 10


def test_rows_to_list_lie_beyond_the_first_page_of_courses(tmp_path: Path) -> None:
    world = TASK.generate(tmp_path / "w", {"num_courses": 55, "num_notes": 0}, 0)
    first = _call(world, "canvas_canvas_list_courses")
    assert first["has_more"]
    shown = {c["course_code"] for c in first["items"]}
    for out in (QUIZZES, ASSIGNMENTS):
        assert {r["course_code"] for r in world.read_truth()["answer"][out.file]} - shown
    assert TASK.spec.instruction(world).startswith("Now is 2025-09-20T12:00:00Z. ")


def _call(world: World, tool: str, **args: Any) -> Any:
    return task_call(world, TASK, tool, **args)


def test_my_quiz_attempts_show_through_the_tools(world: World) -> None:
    me = world.meta.accounts["canvas"]["user_id"]
    [(quiz_id, course_id)] = _query(world, "SELECT q.id, q.course_id FROM canvas_quiz q JOIN canvas_quiz_submission s "
                                           "ON s.quiz_id = q.id WHERE s.user_id = ? LIMIT 1", (me,))
    done = _call(world, "canvas_canvas_get_quiz_submission", course_id=course_id, quiz_id=quiz_id)
    assert done["workflow_state"] == "complete" and done["user_id"] == me and done["finished_at"]


# ---------------------------------------------------------------- the checker

@pytest.fixture
def solved(tmp_path: Path) -> World:
    world = TASK.generate(tmp_path / "w", {"num_courses": 12}, 5)
    assert asyncio.run(play_script(TASK, world, "oracle")).passed
    return world


def _read(world: World, out: TableFile) -> list[list[str]]:
    return list(csv.reader(io.StringIO((world.workspace / out.file).read_text(encoding="utf-8"), newline="")))


def _write(world: World, out: TableFile, rows: list[list[Any]], **fmt: Any) -> None:
    buf = io.StringIO()
    csv.writer(buf, **fmt).writerows(rows)
    (world.workspace / out.file).write_text(buf.getvalue(), encoding="utf-8")


def _edit(world: World, out: TableFile, edit: Callable[[list[list[str]]], object], **fmt: Any) -> None:
    rows = _read(world, out)
    edit(rows)
    _write(world, out, rows, **fmt)


def _failed(world: World) -> list[str]:
    verdict = TASK.check(world)
    assert not verdict.errored, verdict
    return verdict.failed_names()


def _column(out: TableFile, name: str) -> int:
    return out.headers.index(name)


def test_checker_accepts_documented_normalisations(solved: World) -> None:
    def loosen(rows: list[list[str]]) -> None:
        header = rows[0]
        for row in rows[1:]:
            for i, name in enumerate(header):
                if name in ("credits", "points_possible", "time_limit"):
                    row[i] = f"{row[i]}.0"
                elif name == DEADLINE:
                    row[i] = row[i].replace(":00Z", ":00.000Z")
                else:
                    row[i] = f"  {row[i].replace(' ', '  ')} "
        rows.append([])

    _edit(solved, QUIZZES, loosen, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    _edit(solved, ASSIGNMENTS, loosen)
    path = solved.workspace / ASSIGNMENTS.file
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes() + b"\n\n")
    assert _failed(solved) == []


@pytest.mark.parametrize("out,column,value,check", [
    (QUIZZES, DEADLINE, "{}+00:00", "quiz_values"),        # UTC, but no Z designator
    (QUIZZES, DEADLINE, "{}", "quiz_values"),              # naive local time
    (ASSIGNMENTS, DEADLINE, "2025-09-21T23:59:00Z", "assignment_values"),  # another instant
    (QUIZZES, "points_possible", "20 pts", "quiz_values"),  # a unit in an integer column
    (QUIZZES, "time_limit", "30.5", "quiz_values"),        # not an integer
    (QUIZZES, "scoring_policy", "keep highest", "quiz_values"),
    (ASSIGNMENTS, "course_name", "", "assignment_values"),  # empty where Canvas has a value
])
def test_checker_rejects_wrong_cells(solved: World, out: TableFile, column: str, value: str, check: str) -> None:
    def spoil(rows: list[list[str]]) -> None:
        i = _column(out, column)
        rows[1][i] = value.format(rows[1][i].removesuffix("Z")) if "{}" in value else value

    _edit(solved, out, spoil)
    assert _failed(solved) == [check]


def test_description_quotes_and_commas_must_survive(solved: World) -> None:
    i = _column(ASSIGNMENTS, "description")
    quoted = [r for r in _read(solved, ASSIGNMENTS)[1:] if '"' in r[i]]
    assert quoted, "the world guarantees a description with double quotes"
    _edit(solved, ASSIGNMENTS, lambda rows: [r.__setitem__(i, r[i].replace('"', "'")) for r in rows[1:]])
    assert _failed(solved) == ["assignment_values"]


def test_course_code_is_case_sensitive(solved: World) -> None:
    _edit(solved, QUIZZES, lambda rows: rows[1].__setitem__(0, rows[1][0].lower()))
    assert "quiz_keys" in _failed(solved)


def test_example_row_and_duplicates_are_caught(solved: World) -> None:
    example = ["HIST101-1 (Example)", "History-1 (Example)", "Reading Response 1", "Read.",
               "2025-09-15T23:59:00Z", "10"]
    _edit(solved, ASSIGNMENTS, lambda rows: rows.insert(1, example))
    _edit(solved, QUIZZES, lambda rows: rows.append(rows[1]))
    assert _failed(solved) == ["quiz_keys", "assignment_keys", "order"]


def test_rows_must_follow_the_required_order(solved: World) -> None:
    rows = _read(solved, QUIZZES)
    assert len(rows) >= 3
    _edit(solved, QUIZZES, lambda rows: rows.__setitem__(slice(1, 3), [rows[2], rows[1]]))
    assert _failed(solved) == ["order"]


def test_headers_must_stay_exact(solved: World) -> None:
    _edit(solved, ASSIGNMENTS, lambda rows: rows[0].__setitem__(2, "title"))
    assert "headers" in _failed(solved)


def test_missing_or_unreadable_files_fail_cleanly(solved: World) -> None:
    (solved.workspace / QUIZZES.file).unlink()
    (solved.workspace / ASSIGNMENTS.file).write_bytes(b"\xff\xfe not text")
    failed = _failed(solved)
    assert {"headers", "quiz_keys", "assignment_keys"} <= set(failed)


@pytest.mark.parametrize("tool,args", [
    ("memory_add_observations", {"observations": [{"entityName": "?", "contents": ["exam score for X: 99"]}]}),
    ("canvas_canvas_start_quiz_attempt", {"course_id": 0, "quiz_id": 0}),
])
def test_side_effects_are_caught_but_scratch_files_are_allowed(solved: World, tool: str, args: dict[str, Any]) -> None:
    (solved.workspace / "notes.py").write_text("print('scratch')")
    assert TASK.check(solved).passed
    if tool.startswith("memory"):
        [(name,)] = _query(solved, "SELECT name FROM kg_entity")
        args["observations"][0]["entityName"] = name
    else:
        me = solved.meta.accounts["canvas"]["user_id"]
        args.update(zip(("course_id", "quiz_id"), _query(
            solved, "SELECT course_id, id FROM canvas_quiz q WHERE NOT EXISTS (SELECT 1 FROM "
                    "canvas_quiz_submission s WHERE s.quiz_id = q.id AND s.user_id = ?) LIMIT 1", (me,))[0],
            strict=True))
    _call(solved, tool, **args)
    assert _failed(solved) == ["no_side_effects"]


@pytest.mark.slow
def test_longest_tier_fits_the_tool_call_limit(tmp_path: Path) -> None:
    """At the top of the scale, with the notes of a 2.3M world, the read set (per course: its
    announcement pages, quizzes, assignments and one check per item) stays within the agent
    loop's 500 tool calls."""
    params = {"num_courses": TASK.spec.scale.hi, "num_notes": 14_300}
    world = top_world(TASK, params, tmp_path / "w")
    assert (world.meta.env_description_tokens or 0) > 2_250_000
    assert read_set_calls(TASK, world) <= 470
