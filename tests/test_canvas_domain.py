"""The Canvas domain layer as generators use it: insert functions check their values, and the
bulk inserts build a large world quickly."""

from __future__ import annotations

import time
from typing import Any

import pytest
from sqlmodel import func, select

from mock_servers.canvas import domain
from mock_servers.canvas.models import CanvasQuizSubmission, CanvasSubmission
from mock_servers.canvas.server import toolbox
from mock_servers.core.errors import ToolFailure
from mock_servers.core.toolkit import ServerRuntime
from tests.canvas_seed import ok


def test_insert_functions_check_their_values(make_world: Any) -> None:
    _, db = make_world(["canvas"])
    with pytest.raises(ToolFailure), db.write() as s:
        domain.add_course(s, account_id=domain.add_account(s, "A").id, name="X", course_code="X",
                          time_zone="Nowhere/City")
    with db.write() as s:
        account = domain.add_account(s, "A")
        sub = domain.add_account(s, "B", parent_account_id=account.id)
        assert (sub.parent_account_id, sub.root_account_id) == (account.id, account.id)
        user = domain.add_user(s, name="Ann Lee", login_id="ann", email="a@x", password="pw", salt="s")
        assert user.password_hash != "pw" and "pw$" not in user.password_hash
        course = domain.add_course(s, account_id=account.id, name="C", course_code="C",
                                   start_at="2025-01-01T08:00:00+02:00")
        assert course.start_at == "2025-01-01T06:00:00Z"
        domain.enroll(s, course_id=course.id, user_id=user.id)
        checks = [
            (lambda: domain.enroll(s, course_id=course.id, user_id=user.id), "already has"),
            (lambda: domain.add_assignment(s, course_id=course.id, name="A", submission_types=["fax"]),
             "submission type"),
            (lambda: domain.add_assignment(s, course_id=course.id, name="A", due_at="next week"), "ISO 8601"),
            (lambda: domain.add_assignment(s, course_id=course.id, name="A", points_possible=-1), "from 0 to"),
            (lambda: domain.add_quiz(s, course_id=course.id, title="Q", allowed_attempts=0), "allowed_attempts"),
            (lambda: domain.add_quiz(s, course_id=course.id, title="Q", time_limit=10**7), "time_limit"),
            (lambda: domain.add_quiz(s, course_id=course.id, title="Q", credits=float("inf")), "credits"),
            (lambda: domain.add_quiz(s, course_id=course.id, title="Q", scoring_policy="best"), "scoring_policy"),
            (lambda: domain.add_quiz_submission(s, quiz_id=1, user_id=user.id, started_at="x"), "ISO 8601"),
            (lambda: domain.add_course(s, account_id=account.id, name="C", start_at="2025-02-01T00:00:00Z",
                                       end_at="2025-01-01T00:00:00Z"), "before"),
            (lambda: domain.add_calendar_event(s, title="E", start_at="2025-01-01T00:00:00Z"), "exactly one"),
            (lambda: domain.add_file(s, display_name="f", data=b"", created_at="2025-01-01T00:00:00Z",
                                     course_id=course.id, folder_id=99), "folder 99"),
            (lambda: domain.add_module_item(s, module_id=99, title="I", type="Page"), "module 99"),
            (lambda: domain.add_user(s, name="Bo", login_id="bo", password="", salt="s"), "password"),
        ]
        for make, message in checks:
            with pytest.raises(ToolFailure, match=message):
                make()


def _bulk_world(s: Any, courses: int, students: int) -> dict[str, int]:
    """A canvas_list_test-sized world: per course two quizzes and two assignments (descriptions
    with commas and quotes), submissions of several students and quiz attempts."""
    account = domain.add_account(s, "University").id
    domain.add_users(s, [{"id": i, "name": f"Student {i}", "login_id": f"s{i}", "password": None, "salt": ""}
                         for i in range(1, students + 1)])
    domain.add_courses(s, [{"id": c, "account_id": account, "name": f"Course {c}-1", "course_code": f"C{c}-1",
                            "start_at": "2025-09-01T00:00:00Z"} for c in range(1, courses + 1)])
    domain.add_enrollments(s, [{"course_id": c, "user_id": u} for c in range(1, courses + 1)
                               for u in range(1, students + 1)])
    items = [(c, k, 2 * (c - 1) + k) for c in range(1, courses + 1) for k in (1, 2)]
    domain.add_assignments(s, [{"id": i, "course_id": c, "name": f"Essay {k}", "points_possible": 100,
                                "description": f'Write "{k}", then revise, and submit', "due_at":
                                f"2025-09-{20 + k}T23:59:00Z"} for c, k, i in items])
    domain.add_quizzes(s, [{"id": i, "course_id": c, "title": f"Quiz {k}", "credits": 3, "time_limit": 30,
                            "allowed_attempts": -1, "scoring_policy": "keep_average", "points_possible": 25,
                            "question_count": 10, "due_at": "2025-09-25T23:59:00Z"} for c, k, i in items])
    domain.add_submissions(s, [{"assignment_id": i, "user_id": u, "submission_type": "online_text_entry",
                                "body": "done", "submitted_at": "2025-09-19T10:00:00Z"}
                               for _, _, i in items for u in range(2, students + 1)])
    domain.add_quiz_submissions(s, [{"quiz_id": i, "user_id": u, "started_at": "2025-09-19T10:00:00Z",
                                     "finished_at": "2025-09-19T10:20:00Z", "score": 20.0}
                                    for _, _, i in items for u in range(2, students + 1)])
    domain.log_in(s, 1)
    return {"items": len(items)}


def test_bulk_inserts_build_a_large_world_fast(make_world: Any) -> None:
    world, db = make_world(["canvas"], now="2025-09-20T12:00:00Z")
    started = time.perf_counter()
    with db.write() as s:
        counts = _bulk_world(s, courses=135, students=17)
    elapsed = time.perf_counter() - started
    assert elapsed < 5.0, f"bulk generation took {elapsed:.2f}s"
    with db.read() as s:
        assert s.exec(select(func.count()).select_from(CanvasSubmission)).one() == counts["items"] * 16
        assert s.exec(select(func.count()).select_from(CanvasQuizSubmission)).one() == counts["items"] * 16
    rt = ServerRuntime(toolbox, world, {})
    assert ok(rt, "canvas_list_courses", per_page=100)["total"] == 135
    quiz = ok(rt, "canvas_list_quizzes", course_id=135)["items"][0]
    assert (quiz["credits"], quiz["allowed_attempts"], quiz["scoring_policy"], quiz["question_count"]) == (
        3, -1, "keep_average", 10)
    essay = ok(rt, "canvas_get_assignment", course_id=135, assignment_id=269)
    assert essay["description"] == 'Write "1", then revise, and submit'
    mine = ok(rt, "canvas_get_submission", course_id=135, assignment_id=269)
    assert mine["workflow_state"] == "unsubmitted"


def test_bulk_inserts_check_every_row(make_world: Any) -> None:
    _, db = make_world(["canvas"])
    with pytest.raises(ToolFailure, match="scoring_policy"), db.write() as s:
        account = domain.add_account(s, "A").id
        course = domain.add_course(s, account_id=account, name="C").id
        domain.add_quizzes(s, [{"course_id": course, "title": "ok"},
                               {"course_id": course, "title": "bad", "scoring_policy": "best"}])
