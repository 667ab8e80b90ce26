"""Canvas server, the teacher's side: creating and updating courses, assignments and quizzes,
grading, quiz questions and attempts, rubrics."""

from __future__ import annotations

from typing import Any

import pytest
from sqlmodel import select

from mock_servers.canvas import domain
from mock_servers.canvas.domain.quizzes import delete_question
from mock_servers.canvas.models import (
    CanvasGrade,
    CanvasModuleItem,
    CanvasQuizAnswer,
    CanvasQuizQuestion,
    CanvasQuizSubmission,
)
from mock_servers.core.db import Database
from mock_servers.core.toolkit import ServerRuntime
from tests.canvas_seed import Ids, call, dump, err, login, make_env, ok


@pytest.fixture
def env(make_world: Any) -> tuple[ServerRuntime, Ids, Database]:
    return make_env(make_world)


# ---------------------------------------------------------------- courses

def test_create_course(env: Any) -> None:
    rt, ids, _ = env
    root = ids.accounts["root"]
    err(rt, "canvas_create_course", "PERMISSION_DENIED", account_id=root, name="Geology 1-1")
    login(rt, "adam")
    got = ok(rt, "canvas_create_course", account_id=root, name="Geology 1-1",
             start_at="2025-02-01T08:00:00-05:00")
    assert got == {"id": got["id"], "name": "Geology 1-1", "course_code": "Geology 1-1",
                   "workflow_state": "unpublished", "account_id": root,
                   "start_at": "2025-02-01T13:00:00Z", "end_at": None, "time_zone": "UTC",
                   "is_public": False, "teachers": [], "enrollment": None}
    assert got["id"] > max(ids.courses.values())
    err(rt, "canvas_create_course", "NOT_FOUND", account_id=999, name="X")
    err(rt, "canvas_create_course", "INVALID_ARGUMENT", account_id=root, name="X",
        start_at="2025-03-01T00:00:00Z", end_at="2025-02-01T00:00:00Z")
    err(rt, "canvas_create_course", "INVALID_ARGUMENT", account_id=root, name="X", time_zone="Moon/Base")
    err(rt, "canvas_create_course", "INVALID_ARGUMENT", account_id=root, name=" ")
    for field in ("workflow_state", "id"):
        text = err(rt, "canvas_create_course", "INVALID_ARGUMENT", account_id=root, name="X", **{field: 1})
        assert f"unknown parameter '{field}'" in text


def test_update_course(env: Any) -> None:
    rt, ids, _ = env
    bio, chem = ids.courses["bio"], ids.courses["chem"]
    err(rt, "canvas_update_course", "PERMISSION_DENIED", course_id=bio, name="Mine")
    login(rt, "tom")  # a TA of bio
    got = ok(rt, "canvas_update_course", course_id=bio, syllabus_body="<p>New</p>", name="Biology I")
    assert (got["name"], got["course_code"], got["enrollment"]["type"]) == ("Biology I", "BIO101-1", "TaEnrollment")
    assert ok(rt, "canvas_get_syllabus", course_id=bio)["syllabus_body"] == "<p>New</p>"
    err(rt, "canvas_update_course", "INVALID_ARGUMENT", course_id=bio)
    err(rt, "canvas_update_course", "INVALID_ARGUMENT", course_id=bio, end_at="2025-01-01T00:00:00Z")
    assert "unknown parameter 'workflow_state'" in err(
        rt, "canvas_update_course", "INVALID_ARGUMENT", course_id=bio, workflow_state="completed")
    login(rt, "adam")
    ok(rt, "canvas_update_course", course_id=chem, end_at="2025-01-10T00:00:00Z")
    login(rt, "tina")  # chem has ended: its teacher can no longer change it, an admin can
    err(rt, "canvas_update_course", "FAILED_PRECONDITION", course_id=chem, name="Chem")
    login(rt, "adam")
    assert ok(rt, "canvas_update_course", course_id=chem, end_at="2025-06-01T00:00:00Z")["end_at"] == \
        "2025-06-01T00:00:00Z"


# ---------------------------------------------------------------- assignments

def test_create_and_update_assignment(env: Any) -> None:
    rt, ids, _ = env
    bio = ids.courses["bio"]
    err(rt, "canvas_create_assignment", "PERMISSION_DENIED", course_id=bio, name="Mine")
    login(rt, "tina")
    description = 'Compare "osmosis", diffusion, and transport; cite 2 sources.'
    got = ok(rt, "canvas_create_assignment", course_id=bio, name="Membranes", description=description,
             points_possible=12.5, due_at="2025-02-01T23:59:00Z")
    assert got == {"id": got["id"], "course_id": bio, "name": "Membranes", "description": description,
                   "due_at": "2025-02-01T23:59:00Z", "unlock_at": None, "lock_at": None,
                   "points_possible": 12.5, "submission_types": ["online_text_entry"],
                   "published": False, "html_url": f"/courses/{bio}/assignments/{got['id']}"}
    login(rt, "alice")
    err(rt, "canvas_get_assignment", "NOT_FOUND", course_id=bio, assignment_id=got["id"])
    login(rt, "tina")
    published = ok(rt, "canvas_update_assignment", course_id=bio, assignment_id=got["id"], published=True,
                   due_at="2025-02-02T05:59:00+06:00")
    assert (published["published"], published["due_at"]) == (True, "2025-02-01T23:59:00Z")
    login(rt, "alice")
    assert ok(rt, "canvas_get_assignment", course_id=bio, assignment_id=got["id"])["description"] == description
    login(rt, "tina")
    cases = [({"name": "X", "submission_types": ["fax"]}, "INVALID_ARGUMENT"),
             ({"name": "X", "submission_types": []}, "INVALID_ARGUMENT"),
             ({"name": "X", "points_possible": -1}, "INVALID_ARGUMENT"),
             ({"name": "X", "points_possible": 2e6}, "INVALID_ARGUMENT"),
             ({"name": "X", "due_at": "tomorrow"}, "INVALID_ARGUMENT"),
             ({"name": "X", "id": 5}, "INVALID_ARGUMENT"),
             ({"name": "X", "workflow_state": "published"}, "INVALID_ARGUMENT")]
    for args, code in cases:
        err(rt, "canvas_create_assignment", code, course_id=bio, **args)
    err(rt, "canvas_create_assignment", "PERMISSION_DENIED", course_id=ids.courses["phys"], name="X")
    err(rt, "canvas_update_assignment", "NOT_FOUND", course_id=bio,
        assignment_id=ids.assignments["chem_ps"], name="X")
    err(rt, "canvas_update_assignment", "INVALID_ARGUMENT", course_id=bio, assignment_id=got["id"])
    text = err(rt, "canvas_update_assignment", "FAILED_PRECONDITION", course_id=bio,
               assignment_id=ids.assignments["lab"], published=False)
    assert "submissions" in text


# ---------------------------------------------------------------- grading

def test_submit_grade(env: Any) -> None:
    rt, ids, db = env
    bio, essay, lab = ids.courses["bio"], ids.assignments["essay"], ids.assignments["lab"]
    bob, alice = ids.users["bob"], ids.users["alice"]
    err(rt, "canvas_submit_grade", "PERMISSION_DENIED", course_id=bio, assignment_id=essay,
        user_id=bob, grade="10")
    login(rt, "tina")
    got = ok(rt, "canvas_submit_grade", course_id=bio, assignment_id=essay, user_id=bob, grade="9",
             comment="Good argument")
    assert (got["workflow_state"], got["grade"], got["score"], got["body"], got["attempt"]) == (
        "graded", "9", 9.0, "bob's essay", 1)
    assert got["graded_at"] == "2025-01-15T09:00:02Z"  # the login was the first write
    cases = [("85%", lab, "85%", 17.0), (7.5, essay, "7.5", 7.5), ("complete", lab, "complete", 20.0),
             ("Incomplete", lab, "incomplete", 0.0), (" 12 ", lab, "12", 12.0), (25, lab, "25", 25.0)]
    for grade, assignment, stored, score in cases:
        got = ok(rt, "canvas_submit_grade", course_id=bio, assignment_id=assignment, user_id=bob, grade=grade)
        assert (got["grade"], got["score"]) == (stored, score), grade
    never = ok(rt, "canvas_submit_grade", course_id=bio, assignment_id=ids.assignments["upload"],
               user_id=alice, grade="4")
    assert (never["workflow_state"], never["submitted_at"], never["score"]) == ("graded", None, 4.0)
    for bad in ("A", "-3", "85%%", "", "nan", "1e999", "ten points", "2000000", "1e10%"):
        err(rt, "canvas_submit_grade", "INVALID_ARGUMENT", course_id=bio, assignment_id=lab, user_id=bob, grade=bad)
    err(rt, "canvas_submit_grade", "INVALID_ARGUMENT", course_id=bio, assignment_id=lab, user_id=bob, grade=True)
    err(rt, "canvas_submit_grade", "INVALID_ARGUMENT", course_id=bio,
        assignment_id=ids.assignments["undated"], user_id=bob, grade="50%")
    for user in (ids.users["tina"], ids.users["olga"], ids.users["eve"], 999):
        err(rt, "canvas_submit_grade", "NOT_FOUND", course_id=bio, assignment_id=lab, user_id=user, grade="1")
    err(rt, "canvas_submit_grade", "NOT_FOUND", course_id=bio, assignment_id=ids.assignments["chem_ps"],
        user_id=alice, grade="1")
    with db.read() as s:
        history = s.exec(select(CanvasGrade).order_by(CanvasGrade.id)).all()
    assert len(history) == 8 and history[0].comment == "Good argument" and history[0].grader_id == ids.users["tina"]
    teacher = ok(rt, "canvas_get_course_grades", course_id=bio)["students"]
    assert teacher[1]["user_id"] == bob and teacher[1]["current_score"] == round(100 * (7.5 + 25) / 30, 2)
    login(rt, "bob")
    notes = ok(rt, "canvas_list_notifications")["items"]
    assert notes[0]["subject"] == "Grade posted: Lab report" and notes[0]["notification_type"] == "grading"
    assert sum(n["subject"].startswith("Grade posted") for n in notes) == 7


# ---------------------------------------------------------------- quizzes

def test_create_update_publish_quiz(env: Any) -> None:
    rt, ids, _ = env
    bio = ids.courses["bio"]
    err(rt, "canvas_create_quiz", "PERMISSION_DENIED", course_id=bio, title="Mine")
    login(rt, "tina")
    quiz = ok(rt, "canvas_create_quiz", course_id=bio, title="Genetics", time_limit=20,
              quiz_type="graded_survey", due_at="2025-02-10T23:59:00Z")
    assert {k: quiz[k] for k in ("title", "quiz_type", "time_limit", "allowed_attempts", "published",
                                 "question_count", "points_possible", "has_access_code", "credits")} == {
        "title": "Genetics", "quiz_type": "graded_survey", "time_limit": 20, "allowed_attempts": 1,
        "published": False, "question_count": 0, "points_possible": 0.0, "has_access_code": False,
        "credits": None}
    qid = quiz["id"]
    got = ok(rt, "canvas_update_quiz", course_id=bio, quiz_id=qid, access_code="open-Sesame-42",
             allowed_attempts=-1, scoring_policy="keep_latest", shuffle_answers=True)
    assert (got["has_access_code"], got["allowed_attempts"], got["scoring_policy"], got["shuffle_answers"]) == (
        True, -1, "keep_latest", True)
    assert "open-Sesame-42" not in call(rt, "canvas_get_quiz", course_id=bio, quiz_id=qid).text
    assert ok(rt, "canvas_update_quiz", course_id=bio, quiz_id=qid, access_code="")["has_access_code"] is False
    for bad in ({"allowed_attempts": 0}, {"allowed_attempts": -2}, {"time_limit": 0},
                {"scoring_policy": "keep_best"}, {"quiz_type": "exam"}, {"question_count": 3},
                {"credits": 2}, {}):
        err(rt, "canvas_update_quiz", "INVALID_ARGUMENT", course_id=bio, quiz_id=qid, **bad)
    err(rt, "canvas_create_quiz", "INVALID_ARGUMENT", course_id=bio, title="X", time_limit=0)
    login(rt, "alice")
    err(rt, "canvas_get_quiz", "NOT_FOUND", course_id=bio, quiz_id=qid)
    login(rt, "tina")
    assert ok(rt, "canvas_publish_quiz", course_id=bio, quiz_id=qid)["published"] is True
    assert ok(rt, "canvas_publish_quiz", course_id=bio, quiz_id=qid)["published"] is True
    err(rt, "canvas_publish_quiz", "NOT_FOUND", course_id=bio, quiz_id=ids.quizzes["q_chem"])
    login(rt, "alice")
    assert ok(rt, "canvas_get_quiz", course_id=bio, quiz_id=qid)["title"] == "Genetics"
    err(rt, "canvas_publish_quiz", "PERMISSION_DENIED", course_id=bio, quiz_id=qid)


def test_delete_quiz_removes_everything_it_owns(env: Any) -> None:
    rt, ids, db = env
    bio, q1, hidden = ids.courses["bio"], ids.quizzes["q1"], ids.quizzes["q_hidden"]
    err(rt, "canvas_delete_quiz", "PERMISSION_DENIED", course_id=bio, quiz_id=q1)
    login(rt, "tina")
    assert ok(rt, "canvas_delete_quiz", course_id=bio, quiz_id=q1) == {"deleted": True, "quiz_id": q1}
    assert ok(rt, "canvas_delete_quiz", course_id=bio, quiz_id=hidden) == {"deleted": True, "quiz_id": hidden}
    err(rt, "canvas_delete_quiz", "NOT_FOUND", course_id=bio, quiz_id=q1)
    err(rt, "canvas_get_quiz", "NOT_FOUND", course_id=bio, quiz_id=q1)
    with db.read() as s:
        assert not s.exec(select(CanvasQuizSubmission)).all()
        assert not s.exec(select(CanvasQuizQuestion)).all() and not s.exec(select(CanvasQuizAnswer)).all()
        assert s.get(CanvasModuleItem, ids.items["quiz"]) is None
    week2 = ok(rt, "canvas_get_module", course_id=bio, module_id=ids.modules["week2"])
    assert week2["items_count"] == 1
    again = ok(rt, "canvas_create_quiz", course_id=bio, title="Again")
    assert again["id"] > max(ids.quizzes.values())  # ids are never reused


def test_quiz_attempts(env: Any) -> None:
    rt, ids, db = env
    bio, q1 = ids.courses["bio"], ids.quizzes["q1"]
    got = ok(rt, "canvas_start_quiz_attempt", course_id=bio, quiz_id=q1)
    assert got == {"id": got["id"], "quiz_id": q1, "user_id": ids.users["alice"], "attempt": 1,
                   "started_at": "2025-01-15T09:00:01Z", "workflow_state": "untaken"}
    assert "in progress" in err(rt, "canvas_start_quiz_attempt", "FAILED_PRECONDITION", course_id=bio, quiz_id=q1)
    with db.read() as s:
        stored = s.get(CanvasQuizSubmission, got["id"])
        assert (stored.user_id, stored.workflow_state) == (ids.users["alice"], "untaken")
    err(rt, "canvas_start_quiz_attempt", "NOT_FOUND", course_id=bio, quiz_id=ids.quizzes["q_hidden"])
    err(rt, "canvas_start_quiz_attempt", "NOT_FOUND", course_id=bio, quiz_id=ids.quizzes["q_chem"])
    login(rt, "bob")  # one of two attempts used
    assert ok(rt, "canvas_start_quiz_attempt", course_id=bio, quiz_id=q1)["attempt"] == 2
    with db.write() as s:
        row = s.exec(select(CanvasQuizSubmission).where(CanvasQuizSubmission.attempt == 2)).one()
        row.workflow_state = "complete"
    text = err(rt, "canvas_start_quiz_attempt", "FAILED_PRECONDITION", course_id=bio, quiz_id=q1)
    assert "all 2 allowed attempts" in text
    login(rt, "tina")
    err(rt, "canvas_start_quiz_attempt", "PERMISSION_DENIED", course_id=bio, quiz_id=q1)
    login(rt, "olga")
    err(rt, "canvas_start_quiz_attempt", "PERMISSION_DENIED", course_id=bio, quiz_id=q1)


def test_quiz_questions(env: Any) -> None:
    rt, ids, _ = env
    bio, hidden = ids.courses["bio"], ids.quizzes["q_hidden"]
    err(rt, "canvas_get_quiz_questions", "PERMISSION_DENIED", course_id=bio, quiz_id=ids.quizzes["q1"])
    login(rt, "tina")
    listed = ok(rt, "canvas_get_quiz_questions", course_id=bio, quiz_id=hidden)
    assert [q["question_name"] for q in listed["items"]] == ["Nucleus", "Question"]
    first = listed["items"][0]
    assert list(first) == ["id", "quiz_id", "position", "question_name", "question_text", "question_type",
                           "points_possible", "answers"]
    assert [(a["text"], a["weight"]) for a in first["answers"]] == [("Nucleus", 100.0), ("Membrane", 0.0)]
    added = ok(rt, "canvas_add_quiz_question", course_id=bio, quiz_id=hidden, question_text="Cells divide by?",
               question_type="true_false_question", points_possible=3,
               answers=[{"text": "Mitosis", "weight": 100}, {"text": "Magic", "comments": "No."}])
    assert (added["position"], added["points_possible"], added["quiz_id"]) == (3, 3.0, hidden)
    quiz = ok(rt, "canvas_get_quiz", course_id=bio, quiz_id=hidden)
    assert (quiz["question_count"], quiz["points_possible"]) == (3, 10.0)
    assert ok(rt, "canvas_delete_quiz_question", course_id=bio, quiz_id=hidden, question_id=added["id"]) == {
        "deleted": True, "question_id": added["id"]}
    err(rt, "canvas_delete_quiz_question", "NOT_FOUND", course_id=bio, quiz_id=hidden, question_id=added["id"])
    err(rt, "canvas_delete_quiz_question", "NOT_FOUND", course_id=bio, quiz_id=ids.quizzes["q1"],
        question_id=ids.questions["mc"])
    again = ok(rt, "canvas_add_quiz_question", course_id=bio, quiz_id=hidden, question_text="Again?",
               question_type="essay_question")
    assert again["id"] > added["id"] and again["position"] == 3  # no id reused after a delete
    assert min(a["id"] for a in added["answers"]) > max(a["id"] for a in first["answers"])
    quiz = ok(rt, "canvas_get_quiz", course_id=bio, quiz_id=hidden)
    assert (quiz["question_count"], quiz["points_possible"]) == (3, 8.0)


def test_quiz_question_rules_and_updates(env: Any) -> None:
    rt, ids, _ = env
    bio, hidden, mc = ids.courses["bio"], ids.quizzes["q_hidden"], ids.questions["mc"]
    login(rt, "tina")
    bad = [{"question_type": "multiple_choice_question", "answers": [{"text": "only", "weight": 100}]},
           {"question_type": "multiple_choice_question", "answers": [{"text": "a"}, {"text": "b"}]},
           {"question_type": "true_false_question", "answers": [{"text": "a", "weight": 100}, {"text": "b"},
                                                                {"text": "c"}]},
           {"question_type": "essay_question", "answers": [{"text": "a", "weight": 100}]},
           {"question_type": "numerical_question", "answers": [{"text": "ten", "weight": 100}]},
           {"question_type": "short_answer_question", "answers": []},
           {"answers": [{"text": "a", "weight": 150}, {"text": "b"}]},
           {"answers": [{"text": "a", "weight": 100, "id": 3}, {"text": "b"}]},
           {"answers": [{"text": " ", "weight": 100}, {"text": "b"}]},
           {"question_type": "matching_question"}, {"points_possible": -1}]
    for args in bad:
        err(rt, "canvas_add_quiz_question", "INVALID_ARGUMENT", course_id=bio, quiz_id=hidden,
            question_text="Q?", **args)
    ok(rt, "canvas_add_quiz_question", course_id=bio, quiz_id=hidden, question_text="2+2?",
       question_type="numerical_question", answers=[{"text": "4", "weight": 100}])
    got = ok(rt, "canvas_update_quiz_question", course_id=bio, quiz_id=hidden, question_id=mc,
             question_text="Where is most DNA?", points_possible=4,
             answers=[{"text": "Nucleus", "weight": 100}, {"text": "Ribosome"}, {"text": "Wall"}])
    assert (got["question_text"], got["points_possible"], len(got["answers"])) == ("Where is most DNA?", 4.0, 3)
    assert ok(rt, "canvas_get_quiz", course_id=bio, quiz_id=hidden)["points_possible"] == 10.0
    err(rt, "canvas_update_quiz_question", "INVALID_ARGUMENT", course_id=bio, quiz_id=hidden, question_id=mc)
    err(rt, "canvas_update_quiz_question", "INVALID_ARGUMENT", course_id=bio, quiz_id=hidden, question_id=mc,
        question_type="essay_question")
    err(rt, "canvas_update_quiz_question", "INVALID_ARGUMENT", course_id=bio, quiz_id=hidden,
        question_id=ids.questions["essay"], answers=[{"text": "x", "weight": 100}])
    err(rt, "canvas_update_quiz_question", "NOT_FOUND", course_id=bio, quiz_id=ids.quizzes["q1"], question_id=mc)


def test_question_ids_come_from_a_sequence(make_world: Any) -> None:
    """Reference defect: ids were len+1, so a delete made the next question reuse an id."""
    _, db = make_world(["canvas"])
    with db.write() as s:
        account = domain.add_account(s, "A").id
        course = domain.add_course(s, account_id=account, name="C").id
        quiz = domain.add_quiz(s, course_id=course, title="Q").id
        first = domain.add_question(s, quiz_id=quiz, question_text="1", question_type="essay_question")
        second = domain.add_question(s, quiz_id=quiz, question_text="2", question_type="essay_question")
    with db.write() as s:
        delete_question(s, second)
        third = domain.add_question(s, quiz_id=quiz, question_text="3", question_type="essay_question")
    assert third.id not in {first.id, second.id} and third.position == 2


# ---------------------------------------------------------------- rubrics

def test_rubrics(env: Any) -> None:
    rt, ids, db = env
    bio, rubric = ids.courses["bio"], ids.rubrics["essay"]
    listed = ok(rt, "canvas_list_rubrics", course_id=bio)
    assert listed["items"] == [{"id": rubric, "title": "Essay rubric", "points_possible": 10.0, "criteria_count": 2},
                               {"id": ids.rubrics["lab"], "title": "Lab rubric", "points_possible": 5.0,
                                "criteria_count": 1}]
    got = ok(rt, "canvas_get_rubric", course_id=bio, rubric_id=rubric)
    assert list(got) == ["id", "title", "description", "points_possible", "free_form_criterion_comments",
                         "hide_score_total", "criteria"]
    assert got["criteria"][0]["ratings"] == [{"description": "Full Marks", "points": 6.0},
                                             {"description": "No Marks", "points": 0.0}]
    assert list(got["criteria"][1]) == ["id", "description", "long_description", "points",
                                        "criterion_use_range", "ratings"]
    err(rt, "canvas_get_rubric", "NOT_FOUND", course_id=ids.courses["chem"], rubric_id=rubric)
    criteria = [{"description": "Data", "points": 5, "long_description": "Tables and plots",
                 "ratings": [{"description": "Some", "points": 2}, {"description": "All", "points": 5}]},
                {"description": "Conclusion", "points": 2.5, "criterion_use_range": True}]
    err(rt, "canvas_create_rubric", "PERMISSION_DENIED", course_id=bio, title="Lab", criteria=criteria)
    login(rt, "tina")
    made = ok(rt, "canvas_create_rubric", course_id=bio, title="Lab", criteria=criteria, hide_score_total=True)
    assert (made["points_possible"], made["hide_score_total"]) == (7.5, True)
    assert [r["points"] for r in made["criteria"][0]["ratings"]] == [5.0, 2.0]
    assert made["criteria"][1]["criterion_use_range"] is True
    before = dump(db)
    for bad in ([], [{"description": "X", "points": 1, "ratings": [{"description": "Too much", "points": 2}]}],
                [{"description": "X", "points": -1}], [{"description": "X"}],
                [{"description": "X", "points": 1, "id": 4}]):
        err(rt, "canvas_create_rubric", "INVALID_ARGUMENT", course_id=bio, title="Bad", criteria=bad)
    assert dump(db) == before
    assert ok(rt, "canvas_list_rubrics", course_id=bio)["total"] == 3
