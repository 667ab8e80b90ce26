"""Canvas server, account administration: accounts, the courses and users of an account with
their filters and sorts, new users, and account reports."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from sqlmodel import select

from mock_servers.canvas.models import CanvasAccountReport, CanvasFile, CanvasUser
from mock_servers.core.db import Database
from mock_servers.core.toolkit import ServerRuntime
from tests.canvas_seed import Ids, call, err, login, make_env, ok


@pytest.fixture
def env(make_world: Any) -> tuple[ServerRuntime, Ids, Database]:
    rt, ids, db = make_env(make_world)
    login(rt, "adam")
    return rt, ids, db


def test_accounts_are_for_admins(env: Any) -> None:
    rt, ids, _ = env
    root, science = ids.accounts["root"], ids.accounts["science"]
    assert ok(rt, "canvas_get_account", account_id=science) == {
        "id": science, "name": "College of Science", "parent_account_id": root, "root_account_id": root,
        "workflow_state": "active"}
    assert ok(rt, "canvas_list_sub_accounts", account_id=root)["items"] == [
        {"id": science, "name": "College of Science", "parent_account_id": root}]
    assert ok(rt, "canvas_list_sub_accounts", account_id=science)["total"] == 0
    err(rt, "canvas_get_account", "NOT_FOUND", account_id=999)
    login(rt, "tina")
    for tool in ("canvas_get_account", "canvas_list_sub_accounts", "canvas_list_account_courses",
                 "canvas_list_account_users", "canvas_get_account_reports"):
        err(rt, tool, "PERMISSION_DENIED", account_id=root)


def test_account_courses_filters_and_sorts(env: Any) -> None:
    """Reference defect: this tool always failed, and its filters and sorts were ignored."""
    rt, ids, _ = env
    root, c = ids.accounts["root"], ids.courses
    empty = ok(rt, "canvas_create_course", account_id=root, name="Astronomy 1-1")["id"]

    def listed(**args: Any) -> list[int]:
        return [x["id"] for x in ok(rt, "canvas_list_account_courses", account_id=args.pop("account_id", root),
                                    **args)["items"]]

    assert listed() == [empty, c["bio"], c["chem"], c["draft"], c["hist"], c["phys"]]
    assert listed(account_id=ids.accounts["science"]) == [c["phys"]]
    assert listed(with_enrollments=False) == [empty]
    assert listed(with_enrollments=True, published=False) == [c["draft"]]
    assert listed(published=True) == [c["bio"], c["chem"], c["hist"], c["phys"]]
    assert listed(completed=True) == [c["hist"]]
    assert c["hist"] not in listed(completed=False)
    assert listed(search_term="chem") == [c["chem"]]
    assert listed(search_term="bio101") == listed(search_term="SIS-B") == [c["bio"]]
    assert listed(search_term="1_1") == [] and listed(search_term="%%") == []
    assert listed(sort="teacher") == [c["bio"], c["chem"], c["phys"], c["hist"], c["draft"], empty]
    assert listed(sort="teacher", order="desc") == [c["phys"], c["chem"], c["bio"], empty, c["draft"], c["hist"]]
    assert listed(sort="sis_course_id")[0] == c["bio"]
    assert listed(sort="account_name")[0] == c["phys"]
    assert listed(sort="course_name", order="desc")[0] == c["phys"]
    page = ok(rt, "canvas_list_account_courses", account_id=root, per_page=4, page=2)
    assert (page["total"], len(page["items"]), page["has_more"]) == (6, 2, False)
    assert page["items"][0]["teachers"] == [] and list(page["items"][0])[-1] == "enrollment"
    for bad in ({"search_term": "x"}, {"sort": "created_at"}, {"order": "up"}, {"published": "maybe"}):
        err(rt, "canvas_list_account_courses", "INVALID_ARGUMENT", account_id=root, **bad)


def test_account_users_filters_and_sorts(env: Any) -> None:
    rt, ids, _ = env
    root, u = ids.accounts["root"], ids.users

    def listed(**args: Any) -> list[int]:
        return [x["id"] for x in ok(rt, "canvas_list_account_users", account_id=args.pop("account_id", root),
                                    **args)["items"]]

    assert listed() == [u[n] for n in ("adam", "alice", "bob", "eve", "olga", "tina", "tom")]
    assert listed(account_id=ids.accounts["science"]) == [u["eve"], u["tom"]]
    assert listed(sort="sis_id")[:2] == [u["bob"], u["alice"]]
    assert listed(sort="last_login", order="desc")[:3] == [u["adam"], u["alice"], u["bob"]]  # adam just logged in
    assert listed(search_term="ali") == [u["alice"]]
    assert listed(search_term="S-100", sort="email", order="desc") == [u["bob"], u["alice"]]
    got = ok(rt, "canvas_list_account_users", account_id=root, per_page=1)
    assert list(got["items"][0]) == ["id", "name", "short_name", "sortable_name", "login_id", "email", "time_zone"]
    err(rt, "canvas_list_account_users", "INVALID_ARGUMENT", account_id=root, sort="name")
    err(rt, "canvas_list_account_users", "NOT_FOUND", account_id=999)


def test_create_user_hashes_the_pseudonym_password(env: Any) -> None:
    """Reference defect: create_user ignored pseudonym.password and stored passwords in clear."""
    rt, ids, db = env
    root = ids.accounts["root"]
    got = ok(rt, "canvas_create_user", account_id=root, user={"name": "Nina Patel", "time_zone": "Asia/Kolkata"},
             pseudonym={"unique_id": "nina@uni.edu", "password": "nina-Pass-77", "sis_user_id": "S-2001",
                        "send_confirmation": True})
    assert got == {"id": got["id"], "name": "Nina Patel", "short_name": "Nina Patel",
                   "sortable_name": "Patel, Nina", "login_id": "nina@uni.edu", "email": "nina@uni.edu",
                   "time_zone": "Asia/Kolkata"}
    with db.read() as s:
        stored = s.get(CanvasUser, got["id"])
    assert stored.password_hash.startswith("pbkdf2_sha256$") and "nina-Pass-77" not in stored.password_hash
    assert (stored.account_id, stored.sis_user_id) == (root, "S-2001")
    assert got["id"] in [x["id"] for x in ok(rt, "canvas_list_account_users", account_id=root)["items"]]
    quiet = ok(rt, "canvas_create_user", account_id=ids.accounts["science"], user={"name": "Kai"},
               pseudonym={"unique_id": "kai"})
    assert (quiet["email"], quiet["sortable_name"]) == (None, "Kai")
    err(rt, "canvas_login", "UNAUTHENTICATED", login_id="kai", password="")
    ok(rt, "canvas_login", login_id="nina@uni.edu", password="nina-Pass-77")
    assert ok(rt, "canvas_list_notifications")["items"][0]["notification_type"] == "registration"
    login(rt, "adam")
    cases = [({"user": {"name": "X"}, "pseudonym": {"unique_id": "nina@uni.edu"}}, "ALREADY_EXISTS"),
             ({"user": {"name": "X"}, "pseudonym": {"unique_id": "x1", "sis_user_id": "S-1001"}}, "ALREADY_EXISTS"),
             ({"user": {"name": "X", "password": "p"}, "pseudonym": {"unique_id": "x2"}}, "INVALID_ARGUMENT"),
             ({"user": {"name": "X"}, "pseudonym": {"unique_id": "x3", "password_hash": "h"}}, "INVALID_ARGUMENT"),
             ({"user": {"name": "X", "time_zone": "Nowhere"}, "pseudonym": {"unique_id": "x4"}}, "INVALID_ARGUMENT"),
             ({"user": {"name": " "}, "pseudonym": {"unique_id": "x5"}}, "INVALID_ARGUMENT"),
             ({"user": {"name": "X"}, "pseudonym": {"unique_id": "x6", "password": ""}}, "INVALID_ARGUMENT"),
             ({"user": {"name": "X"}, "pseudonym": {"unique_id": "x7"}, "id": 3}, "INVALID_ARGUMENT"),
             ({"user": {"name": "X"}, "pseudonym": {"unique_id": "x8"}, "account_id": 999}, "NOT_FOUND")]
    for args, code in cases:
        text = err(rt, "canvas_create_user", code, **{"account_id": root, **args})
        assert "nina-Pass" not in text
    assert "user.password" in call(rt, "canvas_create_user", account_id=root, user={"name": "X", "password": "p"},
                                   pseudonym={"unique_id": "x9"}).text
    login(rt, "tina")
    err(rt, "canvas_create_user", "PERMISSION_DENIED", account_id=root, user={"name": "X"},
        pseudonym={"unique_id": "x10"})


def _csv_of(db: Database, file_id: int) -> list[list[str]]:
    with db.read() as s:
        return list(csv.reader(io.StringIO(s.get(CanvasFile, file_id).data.decode())))


def test_account_reports_produce_stored_csv_files(env: Any) -> None:
    """Reference defect: create_account_report was an unstored stub."""
    rt, ids, db = env
    root = ids.accounts["root"]
    reports = ok(rt, "canvas_get_account_reports", account_id=root)["reports"]
    assert [r["report"] for r in reports] == ["grade_export_csv", "last_user_access_csv", "unpublished_courses_csv"]
    assert reports[0]["parameters"]["include_deleted"]["required"] is False
    made = ok(rt, "canvas_create_account_report", account_id=root, report="unpublished_courses_csv")
    assert (made["status"], made["report"], made["created_at"]) == ("complete", "unpublished_courses_csv",
                                                                    "2025-01-15T09:00:02Z")
    assert made["file"]["content_type"] == "text/csv" and made["file"]["display_name"].endswith(".csv")
    assert ok(rt, "canvas_get_file", file_id=made["file"]["id"]) == made["file"]
    assert _csv_of(db, made["file"]["id"]) == [
        ["course id", "course sis id", "short name", "long name", "account id", "term id"],
        [str(ids.courses["draft"]), "", "DRAFT1-1", "Drafting 1-1", str(root), ""]]
    grades = ok(rt, "canvas_create_account_report", account_id=root, report="grade_export_csv",
                parameters={"enrollment_term_id": 7})
    rows = _csv_of(db, grades["file"]["id"])
    assert rows[0][:3] == ["student name", "student id", "student sis"]
    assert [(r[0], r[3], r[7]) for r in rows[1:]] == [("Alice Example", "Biology 101-1", "75.0"),
                                                      ("Bob Example", "Biology 101-1", "90.0"),
                                                      ("Alice Example", "Chemistry 201-2", "")]
    deleted = ok(rt, "canvas_create_account_report", account_id=root, report="grade_export_csv",
                 parameters={"include_deleted": True})
    assert ("Alice Example", "History 300-1", "completed") in [
        (r[0], r[3], r[9]) for r in _csv_of(db, deleted["file"]["id"])]
    access = ok(rt, "canvas_create_account_report", account_id=ids.accounts["science"],
                report="last_user_access_csv")
    assert [r[2] for r in _csv_of(db, access["file"]["id"])] == ["user name", "Eve Example", "Tom Example"]
    with db.read() as s:
        stored = s.exec(select(CanvasAccountReport).order_by(CanvasAccountReport.id)).all()
    assert [(r.report, r.file_id) for r in stored][0] == ("unpublished_courses_csv", made["file"]["id"])
    assert stored[1].parameters == '{"enrollment_term_id": 7}' and len(stored) == 4
    err(rt, "canvas_create_account_report", "INVALID_ARGUMENT", account_id=root, report="sis_export_csv")
    err(rt, "canvas_create_account_report", "INVALID_ARGUMENT", account_id=root, report="unpublished_courses_csv",
        parameters={"include_deleted": True})
    err(rt, "canvas_create_account_report", "INVALID_ARGUMENT", account_id=root, report="grade_export_csv",
        parameters={"term": 7})
    login(rt, "alice")
    err(rt, "canvas_create_account_report", "PERMISSION_DENIED", account_id=root, report="grade_export_csv")
    err(rt, "canvas_get_file", "PERMISSION_DENIED", file_id=made["file"]["id"])
