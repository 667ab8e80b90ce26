"""Canvas server, the tools of the first release: login and profile, courses, assignments and
submissions, grades, quizzes, announcements and discussions."""

from __future__ import annotations

from typing import Any

import pytest

from mock_servers.canvas import domain
from mock_servers.canvas.models import CanvasDiscussionEntry, CanvasSubmission, CanvasUser
from mock_servers.core.db import Database
from mock_servers.core.toolkit import ServerRuntime
from tests.canvas_seed import NOW, PASSWORDS, Ids, call, dump, err, login, make_env, ok


@pytest.fixture
def env(make_world: Any) -> tuple[ServerRuntime, Ids, Database]:
    return make_env(make_world)


# ---------------------------------------------------------------- session and users

def test_health_login_logout(env: Any) -> None:
    rt, ids, _ = env
    health = ok(rt, "canvas_health_check")
    assert list(health) == ["status", "now", "user"]
    assert health["status"] == "ok" and health["now"] == NOW
    assert health["user"]["login_id"] == "alice"
    assert ok(rt, "canvas_get_current_user") == {
        "id": ids.users["alice"], "name": "Alice Example", "email": "alice@uni.edu",
        "login_id": "alice", "logged_in": True}
    assert ok(rt, "canvas_logout") == {"logged_in": False}
    assert ok(rt, "canvas_health_check")["user"] is None
    err(rt, "canvas_get_current_user", "UNAUTHENTICATED")
    err(rt, "canvas_list_courses", "UNAUTHENTICATED")
    text = err(rt, "canvas_login", "UNAUTHENTICATED", login_id="bob", password="wrong")
    assert "wrong" not in text
    err(rt, "canvas_login", "UNAUTHENTICATED", login_id="nobody", password="x")
    err(rt, "canvas_get_user_profile", "UNAUTHENTICATED")
    got = ok(rt, "canvas_login", login_id="bob", password=PASSWORDS["bob"])
    assert got == {"id": ids.users["bob"], "name": "Bob Example", "email": "bob@uni.edu",
                   "login_id": "bob", "logged_in": True}
    assert ok(rt, "canvas_get_current_user")["login_id"] == "bob"


def test_list_users_scope(env: Any) -> None:
    rt, ids, _ = env
    got = ok(rt, "canvas_list_users")
    names = [u["login_id"] for u in got["items"]]
    # alice shares bio, chem, hist, draft: not eve (physics only) and not adam
    assert names == ["alice", "bob", "tina", "tom", "olga"]
    assert list(got["items"][0]) == ["id", "name", "login_id", "email"]
    login(rt, "adam")
    assert ok(rt, "canvas_list_users")["total"] == len(PASSWORDS)


def test_profile_read_and_update(env: Any) -> None:
    rt, ids, db = env
    profile = ok(rt, "canvas_get_user_profile")
    assert list(profile) == ["id", "name", "short_name", "sortable_name", "login_id", "email",
                             "time_zone", "bio", "title"]
    assert profile["sortable_name"] == "Example, Alice" and profile["bio"] is None
    got = ok(rt, "canvas_update_user_profile", bio="Likes cells", time_zone="America/Chicago")
    assert got["bio"] == "Likes cells" and got["time_zone"] == "America/Chicago"
    assert got["name"] == "Alice Example"
    with db.read() as s:
        assert s.get(CanvasUser, ids.users["alice"]).bio == "Likes cells"
    err(rt, "canvas_update_user_profile", "INVALID_ARGUMENT", time_zone="Mars/Olympus")
    err(rt, "canvas_update_user_profile", "INVALID_ARGUMENT", time_zone="localtime")
    err(rt, "canvas_update_user_profile", "INVALID_ARGUMENT", name="  ")
    err(rt, "canvas_update_user_profile", "INVALID_ARGUMENT")
    text = err(rt, "canvas_update_user_profile", "INVALID_ARGUMENT", password="x")
    assert "unknown parameter 'password'" in text
    err(rt, "canvas_update_user_profile", "INVALID_ARGUMENT", login_id="mallory")


# ---------------------------------------------------------------- courses

def test_list_courses(env: Any) -> None:
    rt, ids, _ = env
    got = ok(rt, "canvas_list_courses")
    assert [c["id"] for c in got["items"]] == [ids.courses["bio"], ids.courses["chem"]]
    assert (got["total"], got["has_more"], got["page"], got["per_page"]) == (2, False, 1, 50)
    bio = got["items"][0]
    assert list(bio) == ["id", "name", "course_code", "workflow_state", "account_id", "start_at",
                         "end_at", "time_zone", "is_public", "teachers", "enrollment"]
    assert bio["teachers"] == [{"id": ids.users["tina"], "name": "Tina Example",
                                "email": "tina@uni.edu"}]
    assert bio["enrollment"] == {"type": "StudentEnrollment", "enrollment_state": "active"}
    assert bio["start_at"] == "2025-01-06T00:00:00Z" and bio["is_public"] is False
    second = ok(rt, "canvas_list_courses", page=2, per_page=1)
    assert [c["id"] for c in second["items"]] == [ids.courses["chem"]]
    assert (second["total"], second["has_more"]) == (2, False)
    ended = ok(rt, "canvas_list_courses", include_ended=True)
    assert [c["course_code"] for c in ended["items"]] == ["BIO101-1", "CHEM201-2", "HIST300-1"]
    assert ended["items"][2]["enrollment"]["enrollment_state"] == "completed"
    login(rt, "tina")
    assert ok(rt, "canvas_list_courses")["items"][0]["enrollment"]["type"] == "TeacherEnrollment"


_BIO = ('{"id":1,"name":"Biology 101-1","course_code":"BIO101-1","workflow_state":"available",'
        '"account_id":1,"start_at":"2025-01-06T00:00:00Z","end_at":"2025-05-01T00:00:00Z",'
        '"time_zone":"UTC","is_public":false,"teachers":[{"id":3,"name":"Tina Example",'
        '"email":"tina@uni.edu"}],"enrollment":')
_CHEM = ('{"id":2,"name":"Chemistry 201-2","course_code":"CHEM201-2","workflow_state":"available",'
         '"account_id":1,"start_at":null,"end_at":null,"time_zone":"UTC","is_public":false,'
         '"teachers":[{"id":3,"name":"Tina Example","email":"tina@uni.edu"}],"enrollment":')
_STUDENT = '{"type":"StudentEnrollment","enrollment_state":"active"}'


def test_course_listings_text_is_pinned(env: Any) -> None:
    """The exact text of the course listings: key order, nulls, teachers and the strongest of
    several enrollments (active before completed, then by role)."""
    rt, ids, db = env
    with db.write() as s:
        domain.add_enrollments(s, [
            {"course_id": ids.courses["chem"], "user_id": ids.users["alice"], "type": "TaEnrollment",
             "state": "completed"},
            {"course_id": ids.courses["hist"], "user_id": ids.users["alice"],
             "type": "ObserverEnrollment", "state": "active"}])
    assert call(rt, "canvas_list_courses", include_ended=True).text == (
        f'{{"items":[{_BIO}{_STUDENT}}},{_CHEM}{_STUDENT}}},{{"id":3,"name":"History 300-1",'
        '"course_code":"HIST300-1","workflow_state":"completed","account_id":1,"start_at":null,'
        '"end_at":null,"time_zone":"UTC","is_public":false,"teachers":[],"enrollment":'
        '{"type":"ObserverEnrollment","enrollment_state":"active"}}],"page":1,"per_page":50,'
        '"total":3,"has_more":false}')
    login(rt, "tom")
    assert call(rt, "canvas_list_courses", per_page=1, page=2).text == (
        '{"items":[{"id":4,"name":"Physics 110-1","course_code":"PHYS110-1",'
        '"workflow_state":"available","account_id":2,"start_at":null,"end_at":null,'
        '"time_zone":"UTC","is_public":false,"teachers":[{"id":4,"name":"Tom Example",'
        '"email":"tom@uni.edu"}],"enrollment":{"type":"TeacherEnrollment",'
        '"enrollment_state":"active"}}],"page":2,"per_page":1,"total":2,"has_more":false}')
    login(rt, "adam")
    assert call(rt, "canvas_list_account_courses", account_id=ids.accounts["root"], per_page=3).text == (
        f'{{"items":[{_BIO}null}},{_CHEM}null}},{{"id":5,"name":"Drafting 1-1",'
        '"course_code":"DRAFT1-1","workflow_state":"unpublished","account_id":1,"start_at":null,'
        '"end_at":null,"time_zone":"UTC","is_public":false,"teachers":[],"enrollment":null}],'
        '"page":1,"per_page":3,"total":5,"has_more":true}')


def test_get_course_and_syllabus(env: Any) -> None:
    rt, ids, _ = env
    got = ok(rt, "canvas_get_course", course_id=ids.courses["bio"])
    assert got["name"] == "Biology 101-1" and got["total_students"] == 2
    assert list(got)[-1] == "total_students"
    assert ok(rt, "canvas_get_course", course_id=str(ids.courses["bio"]))["id"] == ids.courses["bio"]
    assert ok(rt, "canvas_get_syllabus", course_id=ids.courses["bio"]) == {
        "course_id": ids.courses["bio"], "syllabus_body": "<p>Cells</p>"}
    assert ok(rt, "canvas_get_syllabus", course_id=ids.courses["chem"])["syllabus_body"] is None
    err(rt, "canvas_get_course", "PERMISSION_DENIED", course_id=ids.courses["phys"])
    err(rt, "canvas_get_course", "PERMISSION_DENIED", course_id=ids.courses["draft"])
    err(rt, "canvas_get_course", "NOT_FOUND", course_id=999)
    err(rt, "canvas_get_course", "INVALID_ARGUMENT", course_id=True)
    err(rt, "canvas_get_course", "INVALID_ARGUMENT", course_id=1.5)
    login(rt, "adam")
    admin_view = ok(rt, "canvas_get_course", course_id=ids.courses["phys"])
    assert admin_view["enrollment"] is None and admin_view["total_students"] == 1


def test_dashboard_and_cards(env: Any) -> None:
    rt, ids, _ = env
    dash = ok(rt, "canvas_get_dashboard")
    assert list(dash) == ["user", "courses", "upcoming_assignments"]
    assert dash["user"]["login_id"] == "alice"
    assert [c["course_code"] for c in dash["courses"]] == ["BIO101-1", "CHEM201-2"]
    assert [u["assignment"]["name"] for u in dash["upcoming_assignments"]] == [
        "Problem set", "Essay", "Poster"]
    cards = ok(rt, "canvas_get_dashboard_cards")["cards"]
    assert cards[0] == {"id": ids.courses["bio"], "shortName": "Biology 101-1",
                        "originalName": "Biology 101-1", "courseCode": "BIO101-1",
                        "term": "Spring 2025", "href": f"/courses/{ids.courses['bio']}",
                        "enrollmentType": "StudentEnrollment"}
    login(rt, "tom")
    assert [c["enrollmentType"] for c in ok(rt, "canvas_get_dashboard_cards")["cards"]] == [
        "TaEnrollment", "TeacherEnrollment"]


def test_enroll_user(env: Any) -> None:
    rt, ids, _ = env
    bio, eve = ids.courses["bio"], ids.users["eve"]
    err(rt, "canvas_enroll_user", "PERMISSION_DENIED", course_id=bio, user_id=eve)
    login(rt, "tina")
    got = ok(rt, "canvas_enroll_user", course_id=bio, user_id=eve)
    assert list(got) == ["id", "course_id", "user_id", "type", "enrollment_state"]
    assert (got["course_id"], got["user_id"], got["type"], got["enrollment_state"]) == (
        bio, eve, "StudentEnrollment", "active")
    err(rt, "canvas_enroll_user", "ALREADY_EXISTS", course_id=bio, user_id=eve)
    ta = ok(rt, "canvas_enroll_user", course_id=bio, user_id=eve, role="TaEnrollment",
            enrollment_state="invited")
    assert (ta["type"], ta["enrollment_state"]) == ("TaEnrollment", "invited")
    err(rt, "canvas_enroll_user", "INVALID_ARGUMENT", course_id=bio, user_id=eve, role="Owner")
    err(rt, "canvas_enroll_user", "NOT_FOUND", course_id=bio, user_id=999)
    err(rt, "canvas_enroll_user", "PERMISSION_DENIED", course_id=ids.courses["phys"], user_id=eve)
    assert ok(rt, "canvas_get_course", course_id=bio)["total_students"] == 3


# ---------------------------------------------------------------- assignments and submissions

def test_assignments(env: Any) -> None:
    rt, ids, _ = env
    bio = ids.courses["bio"]
    got = ok(rt, "canvas_list_assignments", course_id=bio)
    assert [a["name"] for a in got["items"]] == ["Lab report", "Essay", "Poster", "Reading log"]
    essay = got["items"][1]
    assert essay == {"id": ids.assignments["essay"], "course_id": bio, "name": "Essay",
                     "description": "Write, then \"cite\"", "due_at": "2025-01-20T23:59:00Z",
                     "unlock_at": None, "lock_at": None, "points_possible": 10.0,
                     "submission_types": ["online_text_entry", "online_url"], "published": True,
                     "html_url": f"/courses/{bio}/assignments/{ids.assignments['essay']}"}
    assert ok(rt, "canvas_get_assignment", course_id=bio,
              assignment_id=ids.assignments["essay"]) == essay
    err(rt, "canvas_get_assignment", "NOT_FOUND", course_id=bio,
        assignment_id=ids.assignments["hidden"])
    err(rt, "canvas_get_assignment", "NOT_FOUND", course_id=bio,
        assignment_id=ids.assignments["chem_ps"])
    login(rt, "tina")
    staff = ok(rt, "canvas_list_assignments", course_id=bio)
    assert staff["total"] == 5
    assert [a["name"] for a in staff["items"]][-2:] == ["Hidden draft", "Reading log"]


def test_get_submission(env: Any) -> None:
    rt, ids, _ = env
    bio, lab, essay = ids.courses["bio"], ids.assignments["lab"], ids.assignments["essay"]
    mine = ok(rt, "canvas_get_submission", course_id=bio, assignment_id=lab)
    assert list(mine) == ["id", "assignment_id", "user_id", "workflow_state", "submission_type",
                          "body", "url", "attachments", "submitted_at", "attempt", "late",
                          "grade", "score", "graded_at"]
    assert (mine["workflow_state"], mine["score"], mine["grade"], mine["attempt"], mine["late"]) == (
        "graded", 15.0, "15", 1, False)
    blank = ok(rt, "canvas_get_submission", course_id=bio, assignment_id=essay)
    assert blank["id"] is None and blank["workflow_state"] == "unsubmitted"
    assert blank["user_id"] == ids.users["alice"] and blank["attachments"] == []
    err(rt, "canvas_get_submission", "PERMISSION_DENIED", course_id=bio, assignment_id=essay,
        user_id=ids.users["bob"])
    err(rt, "canvas_get_submission", "NOT_FOUND", course_id=ids.courses["chem"], assignment_id=lab)
    login(rt, "tom")
    bobs = ok(rt, "canvas_get_submission", course_id=bio, assignment_id=lab,
              user_id=ids.users["bob"])
    assert bobs["late"] is True and bobs["body"] == "late lab"
    err(rt, "canvas_get_submission", "NOT_FOUND", course_id=bio, assignment_id=lab,
        user_id=ids.users["eve"])


def test_submit_assignment(env: Any) -> None:
    rt, ids, db = env
    bio, essay, upload = ids.courses["bio"], ids.assignments["essay"], ids.assignments["upload"]
    first = ok(rt, "canvas_submit_assignment", course_id=bio, assignment_id=essay,
               submission_type="online_text_entry", body="<p>My essay</p>")
    assert (first["workflow_state"], first["attempt"], first["body"], first["late"]) == (
        "submitted", 1, "<p>My essay</p>", False)
    assert first["submitted_at"] == "2025-01-15T09:00:01Z"  # a write advances the clock
    second = ok(rt, "canvas_submit_assignment", course_id=bio, assignment_id=essay,
                submission_type="online_url", url="https://example.org/essay")
    assert (second["id"], second["attempt"], second["body"]) == (first["id"], 2, None)
    assert ok(rt, "canvas_get_submission", course_id=bio, assignment_id=essay)["url"] == \
        "https://example.org/essay"
    posted = ok(rt, "canvas_submit_assignment", course_id=bio, assignment_id=upload,
                submission_type="online_upload", file_ids=[ids.files["poster"]])
    assert posted["attachments"] == [{"id": ids.files["poster"], "display_name": "poster.pdf"}]
    again = ok(rt, "canvas_submit_assignment", course_id=bio, assignment_id=upload,
               submission_type="online_upload", file_ids=[ids.files["poster"]] * 2)
    assert (again["attempt"], again["attachments"]) == (2, posted["attachments"])
    cases = [
        ({"assignment_id": essay, "submission_type": "online_upload", "file_ids": [1]}, "INVALID_ARGUMENT"),
        ({"assignment_id": essay, "submission_type": "online_text_entry"}, "INVALID_ARGUMENT"),
        ({"assignment_id": essay, "submission_type": "online_text_entry", "body": " "}, "INVALID_ARGUMENT"),
        ({"assignment_id": essay, "submission_type": "online_text_entry", "body": "x",
          "url": "https://a.b"}, "INVALID_ARGUMENT"),
        ({"assignment_id": essay, "submission_type": "online_url", "url": "ftp://x"}, "INVALID_ARGUMENT"),
        ({"assignment_id": essay, "submission_type": "on_paper"}, "INVALID_ARGUMENT"),
        ({"assignment_id": upload, "submission_type": "online_upload",
          "file_ids": [ids.files["bobs"]]}, "NOT_FOUND"),
        ({"assignment_id": ids.assignments["hidden"], "submission_type": "online_text_entry",
          "body": "x"}, "NOT_FOUND"),
        ({"assignment_id": ids.assignments["phys_hw"], "submission_type": "online_text_entry",
          "body": "x"}, "NOT_FOUND"),
    ]
    for args, code in cases:
        err(rt, "canvas_submit_assignment", code, course_id=bio, **args)
    err(rt, "canvas_submit_assignment", "FAILED_PRECONDITION", course_id=ids.courses["hist"],
        assignment_id=essay, submission_type="online_text_entry", body="x")
    login(rt, "tina")
    err(rt, "canvas_submit_assignment", "PERMISSION_DENIED", course_id=bio, assignment_id=essay,
        submission_type="online_text_entry", body="x")
    with db.read() as s:
        assert s.get(CanvasSubmission, first["id"]).attempt == 2


def test_failed_write_changes_nothing(env: Any) -> None:
    rt, ids, db = env
    before = dump(db)
    err(rt, "canvas_submit_assignment", "NOT_FOUND", course_id=ids.courses["bio"],
        assignment_id=ids.assignments["upload"], submission_type="online_upload",
        file_ids=[ids.files["poster"], ids.files["bobs"]])
    err(rt, "canvas_post_to_discussion", "NOT_FOUND", course_id=ids.courses["bio"],
        topic_id=ids.topics["chem_news"], message="hello")
    assert dump(db) == before
    ok(rt, "canvas_post_to_discussion", course_id=ids.courses["bio"], topic_id=ids.topics["intro"],
       message="hello")
    assert dump(db) != before


def test_upcoming_assignments(env: Any) -> None:
    rt, ids, _ = env
    got = ok(rt, "canvas_get_upcoming_assignments")
    assert got["count"] == 3 and list(got) == ["items", "count"]
    first = got["items"][0]
    assert first["course"] == {"id": ids.courses["chem"], "name": "Chemistry 201-2",
                               "course_code": "CHEM201-2"}
    assert first["assignment"]["name"] == "Problem set"
    assert ok(rt, "canvas_get_upcoming_assignments", limit=1)["count"] == 1
    err(rt, "canvas_get_upcoming_assignments", "INVALID_ARGUMENT", limit=51)
    err(rt, "canvas_get_upcoming_assignments", "INVALID_ARGUMENT", limit=0)


def test_grades(env: Any) -> None:
    rt, ids, _ = env
    bio = ids.courses["bio"]
    mine = ok(rt, "canvas_get_course_grades", course_id=bio)
    # graded: lab 15/20 -> 75 (C); final: 15 / (10 + 20 + 5) -> 42.86 (F)
    assert {k: mine[k] for k in ("course_id", "current_score", "final_score", "current_grade",
                                  "final_grade")} == {
        "course_id": bio, "current_score": 75.0, "final_score": 42.86, "current_grade": "C",
        "final_grade": "F"}
    assert mine["assignments"][0] == {"assignment_id": ids.assignments["lab"], "score": 15.0,
                                      "grade": "15"}
    assert [a["assignment_id"] for a in mine["assignments"]] == [
        ids.assignments[k] for k in ("lab", "essay", "upload", "undated")]
    assert mine["assignments"][1]["score"] is None
    overall = ok(rt, "canvas_get_user_grades")["courses"]
    assert overall == [
        {"course_id": bio, "name": "Biology 101-1", "current_score": 75.0, "final_score": 42.86,
         "current_grade": "C", "final_grade": "F"},
        {"course_id": ids.courses["chem"], "name": "Chemistry 201-2", "current_score": None,
         "final_score": 0.0, "current_grade": None, "final_grade": "F"}]
    login(rt, "tina")
    teacher = ok(rt, "canvas_get_course_grades", course_id=bio)
    assert teacher == {"course_id": bio, "students": [
        {"user_id": ids.users["alice"], "name": "Alice Example", "current_score": 75.0,
         "final_score": 42.86},
        {"user_id": ids.users["bob"], "name": "Bob Example", "current_score": 90.0,
         "final_score": 51.43}]}
    assert ok(rt, "canvas_get_user_grades") == {"courses": []}
    login(rt, "olga")
    err(rt, "canvas_get_course_grades", "PERMISSION_DENIED", course_id=bio)


# ---------------------------------------------------------------- quizzes

def test_quizzes(env: Any) -> None:
    rt, ids, _ = env
    bio = ids.courses["bio"]
    got = ok(rt, "canvas_list_quizzes", course_id=bio)
    assert got["total"] == 1
    assert got["items"][0] == {
        "id": ids.quizzes["q1"], "course_id": bio, "title": "Cells quiz", "description": None,
        "quiz_type": "assignment", "time_limit": 30, "allowed_attempts": 2,
        "scoring_policy": "keep_highest", "shuffle_answers": False, "points_possible": 15.0,
        "question_count": 5, "due_at": "2025-01-22T23:59:00Z", "published": True,
        "has_access_code": True, "credits": 3}
    assert ok(rt, "canvas_get_quiz", course_id=bio, quiz_id=ids.quizzes["q1"]) == got["items"][0]
    err(rt, "canvas_get_quiz", "NOT_FOUND", course_id=bio, quiz_id=ids.quizzes["q_chem"])
    err(rt, "canvas_get_quiz", "NOT_FOUND", course_id=bio, quiz_id=ids.quizzes["q_hidden"])
    err(rt, "canvas_list_quizzes", "PERMISSION_DENIED", course_id=ids.courses["phys"])
    login(rt, "tom")
    staff = ok(rt, "canvas_list_quizzes", course_id=bio)["items"]
    assert [q["title"] for q in staff] == ["Cells quiz", "Draft quiz"]


def test_get_quiz_submission(env: Any) -> None:
    """The caller's latest attempt, or an untaken placeholder; others' only for staff."""
    rt, ids, db = env
    bio, q1 = ids.courses["bio"], ids.quizzes["q1"]
    blank = ok(rt, "canvas_get_quiz_submission", course_id=bio, quiz_id=q1)
    assert blank == {"id": None, "quiz_id": q1, "user_id": ids.users["alice"], "attempt": None,
                     "workflow_state": "untaken", "started_at": None, "finished_at": None, "score": None}
    started = ok(rt, "canvas_start_quiz_attempt", course_id=bio, quiz_id=q1)
    mine = ok(rt, "canvas_get_quiz_submission", course_id=bio, quiz_id=q1)
    assert (mine["id"], mine["attempt"], mine["workflow_state"], mine["finished_at"]) == (
        started["id"], 1, "untaken", None)
    with db.write() as s:  # bob turns in a second attempt
        domain.add_quiz_submission(s, quiz_id=q1, user_id=ids.users["bob"], attempt=2,
                                   started_at="2025-01-14T10:00:00Z", finished_at="2025-01-14T10:25:00Z",
                                   score=14, workflow_state="pending_review")
    err(rt, "canvas_get_quiz_submission", "PERMISSION_DENIED", course_id=bio, quiz_id=q1,
        user_id=ids.users["bob"])
    err(rt, "canvas_get_quiz_submission", "NOT_FOUND", course_id=bio, quiz_id=ids.quizzes["q_hidden"])
    err(rt, "canvas_get_quiz_submission", "NOT_FOUND", course_id=bio, quiz_id=ids.quizzes["q_chem"])
    err(rt, "canvas_get_quiz_submission", "PERMISSION_DENIED", course_id=ids.courses["phys"], quiz_id=q1)
    login(rt, "bob")
    bobs = ok(rt, "canvas_get_quiz_submission", course_id=bio, quiz_id=q1)
    assert (bobs["attempt"], bobs["workflow_state"], bobs["score"], bobs["finished_at"]) == (
        2, "pending_review", 14.0, "2025-01-14T10:25:00Z")
    login(rt, "tom")  # a TA reads a student's attempts, not his own (he is no student)
    assert ok(rt, "canvas_get_quiz_submission", course_id=bio, quiz_id=q1, user_id=ids.users["bob"]) == bobs
    assert ok(rt, "canvas_get_quiz_submission", course_id=bio, quiz_id=ids.quizzes["q_hidden"],
              user_id=ids.users["alice"])["id"] is None
    err(rt, "canvas_get_quiz_submission", "NOT_FOUND", course_id=bio, quiz_id=q1)
    err(rt, "canvas_get_quiz_submission", "NOT_FOUND", course_id=bio, quiz_id=q1, user_id=ids.users["eve"])
    login(rt, "olga")  # an observer is no teacher
    err(rt, "canvas_get_quiz_submission", "PERMISSION_DENIED", course_id=bio, quiz_id=q1,
        user_id=ids.users["alice"])


# ---------------------------------------------------------------- discussions and announcements

def test_announcements_order_and_paging(env: Any) -> None:
    rt, ids, _ = env
    bio = ids.courses["bio"]
    got = ok(rt, "canvas_list_announcements", course_id=bio)
    assert [t["id"] for t in got["items"]] == [ids.topics["fix"], ids.topics["final"],
                                               ids.topics["welcome"]]
    assert list(got) == ["items", "page", "per_page", "total", "has_more"]
    topic = got["items"][0]
    assert topic == {"id": ids.topics["fix"], "course_id": bio, "title": "Final exam correction",
                     "message": "<p>Final exam correction</p>", "posted_at": "2025-01-12T09:00:00Z",
                     "author": {"id": ids.users["tina"], "name": "Tina Example"},
                     "is_announcement": True, "discussion_subentry_count": 0, "published": True}
    pages = [ok(rt, "canvas_list_announcements", course_id=bio, page=p, per_page=2)
             for p in (1, 2, 3)]
    assert [(p["total"], p["has_more"], len(p["items"])) for p in pages] == [
        (3, True, 2), (3, False, 1), (3, False, 0)]
    assert [t["id"] for p in pages for t in p["items"]] == [t["id"] for t in got["items"]]
    for bad in ({"per_page": 0}, {"per_page": 101}, {"page": 0}):
        text = err(rt, "canvas_list_announcements", "INVALID_ARGUMENT", course_id=bio, **bad)
        assert next(iter(bad)) in text
    assert "100" in err(rt, "canvas_list_announcements", "INVALID_ARGUMENT", course_id=bio,
                        per_page=101)
    assert ok(rt, "canvas_list_announcements", course_id=bio, per_page=100)["per_page"] == 100
    text = err(rt, "canvas_list_announcements", "INVALID_ARGUMENT", course_id=bio, limit=5)
    assert "unknown parameter 'limit'; allowed: course_id, page, per_page" in text
    login(rt, "tina")
    assert ok(rt, "canvas_list_announcements", course_id=bio)["total"] == 4


def test_discussions(env: Any) -> None:
    rt, ids, db = env
    bio, intro = ids.courses["bio"], ids.topics["intro"]
    listed = ok(rt, "canvas_list_discussion_topics", course_id=bio)
    assert [t["title"] for t in listed["items"]] == ["Introduce yourself"]
    assert listed["items"][0]["discussion_subentry_count"] == 1
    got = ok(rt, "canvas_get_discussion_topic", course_id=bio, topic_id=intro)
    assert got["entries"] == [{"id": 1, "user": {"id": ids.users["bob"], "name": "Bob Example"},
                               "message": "Hi, Bob", "created_at": "2025-01-08T10:00:00Z"}]
    assert got["entries_total"] == 1 and list(got)[-2:] == ["entries", "entries_total"]
    posted = ok(rt, "canvas_post_to_discussion", course_id=bio, topic_id=intro, message="Hi all")
    assert posted == {"id": 2, "topic_id": intro, "user_id": ids.users["alice"],
                      "message": "Hi all", "created_at": "2025-01-15T09:00:01Z"}
    again = ok(rt, "canvas_get_discussion_topic", course_id=bio, topic_id=intro)
    assert again["discussion_subentry_count"] == 2 and again["entries"][-1]["message"] == "Hi all"
    with db.read() as s:
        assert s.get(CanvasDiscussionEntry, 2).message == "Hi all"
    err(rt, "canvas_get_discussion_topic", "NOT_FOUND", course_id=bio,
        topic_id=ids.topics["chem_news"])
    err(rt, "canvas_get_discussion_topic", "NOT_FOUND", course_id=bio, topic_id=ids.topics["secret"])
    err(rt, "canvas_post_to_discussion", "INVALID_ARGUMENT", course_id=bio, topic_id=intro,
        message=" ")
    err(rt, "canvas_list_discussion_topics", "PERMISSION_DENIED", course_id=ids.courses["phys"])
    login(rt, "olga")
    err(rt, "canvas_post_to_discussion", "PERMISSION_DENIED", course_id=bio, topic_id=intro,
        message="x")
