"""The kept course heads (`canvas_kept`): after any sequence of writes every kept head equals the
head built live, and course listings return the very text they return with no kept heads."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mock_servers import prepare_world
from mock_servers.canvas.domain.courses import KEPT, course_heads
from mock_servers.core import sql
from mock_servers.core.db import Database
from mock_servers.core.toolkit import ServerRuntime
from tests.canvas_seed import Ids, call, login, make_env, ok

READERS = ("alice", "tina", "tom", "adam")


def check(db: Database) -> int:
    """Every kept head is the head built now; how many are kept."""
    with db.read() as session:
        found = dict(sql.run(session, f"SELECT id, text FROM {KEPT} WHERE kind = 'course'").fetchall())
        assert found == course_heads(session, list(found))
    return len(found)


def listings(rt: ServerRuntime, ids: Ids) -> list[str]:
    """Every reader's course listings (and the admin's account listing)."""
    texts = []
    for who in READERS:
        login(rt, who)
        for args in ({}, {"include_ended": True}, {"per_page": 1, "page": 2}):
            texts.append(call(rt, "canvas_list_courses", **args).text)
    texts.append(call(rt, "canvas_list_account_courses", account_id=ids.accounts["root"], sort="teacher").text)
    return texts


def forget(state: Path) -> None:
    with sqlite3.connect(state) as conn:
        conn.execute(f"DELETE FROM {KEPT}")


def _step(rt: ServerRuntime, ids: Ids, rng: random.Random, n: int) -> None:
    """One write of a random kind, through the tools (some of them fail, which changes nothing)."""
    course = rng.choice(list(ids.courses.values()))
    user = rng.choice(list(ids.users.values()))
    kind = rng.choice(["course", "enroll", "enroll", "profile", "new course"])
    if kind == "course":
        login(rt, rng.choice(["tina", "adam"]))
        change = rng.choice([{"name": f"Course {n}"}, {"course_code": f"C-{n}"}, {"end_at": "2025-01-10T00:00:00Z"},
                             {"syllabus_body": f"<p>{n}</p>"}])
        call(rt, "canvas_update_course", course_id=course, **change)
    elif kind == "enroll":
        login(rt, "adam")
        call(rt, "canvas_enroll_user", course_id=course, user_id=user,
             role=rng.choice(["TeacherEnrollment", "StudentEnrollment", "TaEnrollment"]),
             enrollment_state=rng.choice(["active", "invited"]))
    elif kind == "profile":
        login(rt, rng.choice(["tina", "tom", "alice"]))
        call(rt, "canvas_update_user_profile", name=f"Person {n}")
    else:
        login(rt, "adam")
        made = ok(rt, "canvas_create_course", account_id=ids.accounts["science"], name=f"New {n}")
        ids.courses[f"new {n}"] = made["id"]


@pytest.mark.slow
@settings(max_examples=15, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1))
def test_kept_heads_stay_exact_under_any_writes(make_world: Any, seed: int) -> None:
    rt, ids, db = make_env(make_world)
    prepare_world(rt.world, ["canvas"])
    rng = random.Random(seed)
    try:
        assert check(db) == len(ids.courses)
        for n in range(8):
            _step(rt, ids, rng, n)
            check(db)
        seen = listings(rt, ids)
        forget(db.path)
        assert listings(rt, ids) == seen
    finally:
        db.dispose()


def test_a_teachers_new_name_drops_the_heads_of_the_courses_they_teach(make_world: Any) -> None:
    rt, ids, db = make_env(make_world)
    prepare_world(rt.world, ["canvas"])
    try:
        login(rt, "tina")
        ok(rt, "canvas_update_user_profile", name="Tina Turner")
        with db.read() as session:
            left = {i for (i,) in sql.run(session, f"SELECT id FROM {KEPT}").fetchall()}
        assert left == set(ids.courses.values()) - {ids.courses["bio"], ids.courses["chem"]}
        names = {c["id"]: [t["name"] for t in c["teachers"]] for c in ok(rt, "canvas_list_courses")["items"]}
        assert names[ids.courses["bio"]] == ["Tina Turner"]
    finally:
        db.dispose()
