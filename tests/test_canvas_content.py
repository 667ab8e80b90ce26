"""Canvas server, course content and personal records: modules and per-user progress, files,
folders and pages, conversations, notifications and the calendar."""

from __future__ import annotations

from typing import Any

import pytest

from mock_servers.core.db import Database
from mock_servers.core.toolkit import ServerRuntime
from tests.canvas_seed import Ids, dump, err, login, make_env, ok


@pytest.fixture
def env(make_world: Any) -> tuple[ServerRuntime, Ids, Database]:
    return make_env(make_world)


# ---------------------------------------------------------------- modules

def test_list_and_get_modules(env: Any) -> None:
    rt, ids, _ = env
    bio, m = ids.courses["bio"], ids.modules
    got = ok(rt, "canvas_list_modules", course_id=bio)
    assert [(x["name"], x["items_count"]) for x in got["items"]] == [("Week 1", 2), ("Week 2", 2), ("Week 9", 1)]
    week2 = got["items"][1]
    assert week2 == {"id": m["week2"], "course_id": bio, "name": "Week 2", "position": 2, "unlock_at": None,
                     "require_sequential_progress": True, "prerequisite_module_ids": [m["week1"]],
                     "published": True, "items_count": 2}
    assert ok(rt, "canvas_get_module", course_id=bio, module_id=m["week2"]) == week2
    err(rt, "canvas_get_module", "NOT_FOUND", course_id=bio, module_id=m["draft"])
    err(rt, "canvas_get_module", "NOT_FOUND", course_id=ids.courses["chem"], module_id=m["week1"])
    err(rt, "canvas_list_modules", "PERMISSION_DENIED", course_id=ids.courses["phys"])
    login(rt, "tina")
    staff = ok(rt, "canvas_list_modules", course_id=bio)["items"]
    assert [(x["name"], x["items_count"]) for x in staff] == [
        ("Week 1", 3), ("Week 2", 2), ("Draft week", 0), ("Week 9", 1)]


def test_module_items_and_per_user_progress(env: Any) -> None:
    rt, ids, _ = env
    bio, m, it = ids.courses["bio"], ids.modules, ids.items
    items = ok(rt, "canvas_list_module_items", course_id=bio, module_id=m["week1"])["items"]
    assert [i["title"] for i in items] == ["Welcome", "Essay"]
    assert items[1] == {"id": it["essay"], "module_id": m["week1"], "title": "Essay", "type": "Assignment",
                        "content_id": ids.assignments["essay"],
                        "html_url": f"/courses/{bio}/modules/items/{it['essay']}", "url": None,
                        "position": 2, "indent": 0, "published": True, "completed": False}
    err(rt, "canvas_get_module_item", "NOT_FOUND", course_id=bio, module_id=m["week1"], item_id=it["hidden"])
    err(rt, "canvas_get_module_item", "NOT_FOUND", course_id=bio, module_id=m["week1"], item_id=it["quiz"])
    err(rt, "canvas_get_module_item", "NOT_FOUND", course_id=ids.courses["chem"], module_id=m["week1"],
        item_id=it["page"])
    login(rt, "bob")  # bob completed the page before
    assert ok(rt, "canvas_get_module_item", course_id=bio, module_id=m["week1"], item_id=it["page"])["completed"]
    login(rt, "alice")
    page = {"course_id": bio, "module_id": m["week1"], "item_id": it["page"]}
    assert ok(rt, "canvas_get_module_item", **page)["completed"] is False
    assert ok(rt, "canvas_mark_module_item_complete", **page)["completed"] is True
    assert ok(rt, "canvas_mark_module_item_complete", **page)["completed"] is True  # idempotent
    login(rt, "tina")  # progress is per user, not global
    assert ok(rt, "canvas_get_module_item", **page)["completed"] is False
    login(rt, "olga")
    err(rt, "canvas_mark_module_item_complete", "PERMISSION_DENIED", **page)


def test_completion_rules(env: Any) -> None:
    rt, ids, _ = env
    bio, m, it = ids.courses["bio"], ids.modules, ids.items

    def mark(module: str, item: str) -> dict[str, Any]:
        return {"course_id": bio, "module_id": m[module], "item_id": it[item]}

    text = err(rt, "canvas_mark_module_item_complete", "FAILED_PRECONDITION", **mark("week2", "quiz"))
    assert f"prerequisite module {m['week1']}" in text
    ok(rt, "canvas_mark_module_item_complete", **mark("week1", "page"))
    ok(rt, "canvas_mark_module_item_complete", **mark("week1", "essay"))  # the unpublished item does not count
    text = err(rt, "canvas_mark_module_item_complete", "FAILED_PRECONDITION", **mark("week2", "lab"))
    assert "in order" in text
    ok(rt, "canvas_mark_module_item_complete", **mark("week2", "quiz"))
    ok(rt, "canvas_mark_module_item_complete", **mark("week2", "lab"))
    assert "locked until" in err(rt, "canvas_mark_module_item_complete", "FAILED_PRECONDITION",
                                 **mark("later", "later"))


def test_create_module(env: Any) -> None:
    rt, ids, _ = env
    bio, m = ids.courses["bio"], ids.modules
    err(rt, "canvas_create_module", "PERMISSION_DENIED", course_id=bio, name="Mine")
    login(rt, "tina")
    last = ok(rt, "canvas_create_module", course_id=bio, name="Week 10", prerequisite_module_ids=[m["week2"]])
    assert (last["position"], last["published"], last["items_count"]) == (5, False, 0)
    first = ok(rt, "canvas_create_module", course_id=bio, name="Orientation", position=1, published=True,
               unlock_at="2025-01-01T00:00:00+01:00", require_sequential_progress=True)
    assert (first["position"], first["unlock_at"]) == (1, "2024-12-31T23:00:00Z")
    names = [x["name"] for x in ok(rt, "canvas_list_modules", course_id=bio)["items"]]
    assert names == ["Orientation", "Week 1", "Week 2", "Draft week", "Week 9", "Week 10"]
    text = err(rt, "canvas_create_module", "INVALID_ARGUMENT", course_id=bio, name="X", position=2,
               prerequisite_module_ids=[m["week2"]])
    assert "do not come before" in text
    err(rt, "canvas_create_module", "NOT_FOUND", course_id=ids.courses["chem"], name="X",
        prerequisite_module_ids=[m["week1"]])
    err(rt, "canvas_create_module", "INVALID_ARGUMENT", course_id=bio, name="X", position=0)
    err(rt, "canvas_create_module", "INVALID_ARGUMENT", course_id=bio, name="X", unlock_at="soon")
    err(rt, "canvas_create_module", "INVALID_ARGUMENT", course_id=bio, name="X", items_count=3)


def test_create_module_item(env: Any) -> None:
    rt, ids, db = env
    bio, week1 = ids.courses["bio"], ids.modules["week1"]
    base = {"course_id": bio, "module_id": week1}
    err(rt, "canvas_create_module_item", "PERMISSION_DENIED", **base, title="X", type="ExternalUrl",
        url="https://x.org")
    login(rt, "tina")
    link = ok(rt, "canvas_create_module_item", **base, title="Cell atlas", type="ExternalUrl",
              url="https://cells.example.org", position=1, indent=1, published=True)
    assert (link["position"], link["url"], link["content_id"], link["indent"]) == (1, "https://cells.example.org",
                                                                                   None, 1)
    quiz = ok(rt, "canvas_create_module_item", **base, title="Quiz", type="Quiz",
              content_id=ids.quizzes["q1"], html_url="/courses/1/quizzes/1")
    assert (quiz["position"], quiz["html_url"]) == (5, "/courses/1/quizzes/1")
    titles = [i["title"] for i in ok(rt, "canvas_list_module_items", **base)["items"]]
    assert titles == ["Cell atlas", "Welcome", "Essay", "Draft link", "Quiz"]
    assert ok(rt, "canvas_get_module", **{"course_id": bio, "module_id": week1})["items_count"] == 5
    file_item = ok(rt, "canvas_create_module_item", **base, title="Slides", type="File",
                   content_id=ids.files["syllabus"])
    assert file_item["type"] == "File"
    before = dump(db)
    cases = [({"type": "Assignment", "content_id": ids.assignments["chem_ps"]}, "NOT_FOUND"),
             ({"type": "File", "content_id": ids.files["poster"]}, "NOT_FOUND"),
             ({"type": "Discussion", "content_id": 999}, "NOT_FOUND"),
             ({"type": "Page"}, "INVALID_ARGUMENT"),
             ({"type": "Page", "content_id": 1, "url": "https://x.org"}, "INVALID_ARGUMENT"),
             ({"type": "ExternalUrl"}, "INVALID_ARGUMENT"),
             ({"type": "ExternalTool", "url": "ftp://x.org"}, "INVALID_ARGUMENT"),
             ({"type": "ExternalUrl", "url": "https://x.org", "content_id": 1}, "INVALID_ARGUMENT"),
             ({"type": "SubHeader"}, "INVALID_ARGUMENT"),
             ({"type": "ExternalUrl", "url": "https://x.org", "indent": 6}, "INVALID_ARGUMENT"),
             ({"type": "ExternalUrl", "url": "https://x.org", "completed": True}, "INVALID_ARGUMENT")]
    for args, code in cases:
        err(rt, "canvas_create_module_item", code, **base, title="X", **args)
    err(rt, "canvas_create_module_item", "NOT_FOUND", course_id=ids.courses["chem"], module_id=week1,
        title="X", type="ExternalUrl", url="https://x.org")
    assert dump(db) == before


# ---------------------------------------------------------------- files, folders, pages

def test_files_and_folders(env: Any) -> None:
    rt, ids, _ = env
    bio, f = ids.courses["bio"], ids.folders
    got = ok(rt, "canvas_list_files", course_id=bio)
    assert [x["display_name"] for x in got["items"]] == ["cells.png", "Syllabus.pdf"]
    assert got["items"][1] == {"id": ids.files["syllabus"], "folder_id": f["root"], "display_name": "Syllabus.pdf",
                               "filename": "Syllabus.pdf", "content_type": "application/pdf", "size": 13,
                               "created_at": "2025-01-14T08:00:00Z", "url": f"/files/{ids.files['syllabus']}/download"}
    assert [x["display_name"] for x in ok(rt, "canvas_list_files", course_id=bio, folder_id=f["week1"])["items"]] == [
        "cells.png"]
    err(rt, "canvas_list_files", "NOT_FOUND", course_id=bio, folder_id=f["chem"])
    err(rt, "canvas_list_files", "PERMISSION_DENIED", course_id=ids.courses["phys"])
    folders = ok(rt, "canvas_list_folders", course_id=bio)["items"]
    assert folders == [
        {"id": f["root"], "name": "course files", "full_name": "course files", "parent_folder_id": None,
         "files_count": 1, "folders_count": 1},
        {"id": f["week1"], "name": "Week 1", "full_name": "course files/Week 1", "parent_folder_id": f["root"],
         "files_count": 1, "folders_count": 0}]
    assert ok(rt, "canvas_get_file", file_id=ids.files["poster"])["display_name"] == "poster.pdf"
    assert ok(rt, "canvas_get_file", file_id=ids.files["chem_notes"])["folder_id"] is None
    err(rt, "canvas_get_file", "PERMISSION_DENIED", file_id=ids.files["bobs"])
    err(rt, "canvas_get_file", "NOT_FOUND", file_id=999)
    login(rt, "eve")
    err(rt, "canvas_get_file", "PERMISSION_DENIED", file_id=ids.files["syllabus"])
    login(rt, "adam")
    assert ok(rt, "canvas_get_file", file_id=ids.files["bobs"])["size"] == 4


def test_pages(env: Any) -> None:
    rt, ids, _ = env
    bio = ids.courses["bio"]
    got = ok(rt, "canvas_list_pages", course_id=bio)
    assert got["items"] == [{"url": "welcome-to-biology", "title": "Welcome to Biology",
                             "created_at": "2025-01-05T08:00:00Z", "updated_at": "2025-01-05T08:00:00Z",
                             "published": True, "front_page": True}]
    page = ok(rt, "canvas_get_page", course_id=bio, page_url="welcome-to-biology")
    assert list(page) == ["url", "title", "body", "created_at", "updated_at", "published", "front_page"]
    assert page["body"] == "<p>Hello</p>"
    err(rt, "canvas_get_page", "NOT_FOUND", course_id=bio, page_url="hidden-notes")
    err(rt, "canvas_get_page", "NOT_FOUND", course_id=bio, page_url="lab-safety")
    err(rt, "canvas_get_page", "NOT_FOUND", course_id=bio, page_url="../../etc/passwd")
    login(rt, "tom")
    assert [p["title"] for p in ok(rt, "canvas_list_pages", course_id=bio)["items"]] == [
        "Hidden notes", "Welcome to Biology"]
    assert ok(rt, "canvas_get_page", course_id=bio, page_url="hidden-notes")["updated_at"] == "2025-01-09T08:00:00Z"


# ---------------------------------------------------------------- conversations and notifications

def test_conversations_only_for_participants(env: Any) -> None:
    rt, ids, _ = env
    c, users = ids.conversations, ids.users
    listed = ok(rt, "canvas_list_conversations")
    assert listed["items"] == [{"id": c["alice_bob"], "subject": "Lab",
                                "participants": [{"id": users["alice"], "name": "Alice Example"},
                                                 {"id": users["bob"], "name": "Bob Example"}],
                                "last_message": "Sure, Friday", "last_message_at": "2025-01-11T11:00:00Z",
                                "message_count": 2}]
    got = ok(rt, "canvas_get_conversation", conversation_id=c["alice_bob"])
    assert [mm["body"] for mm in got["messages"]] == ["Sure, Friday", "Study group?"]
    assert list(got["messages"][0]) == ["id", "author_id", "body", "created_at"]
    err(rt, "canvas_get_conversation", "PERMISSION_DENIED", conversation_id=c["tina_bob"])
    err(rt, "canvas_get_conversation", "NOT_FOUND", conversation_id=999)
    login(rt, "bob")
    assert [x["id"] for x in ok(rt, "canvas_list_conversations")["items"]] == [c["tina_bob"], c["alice_bob"]]


def test_create_conversation_keeps_its_recipients(env: Any) -> None:
    rt, ids, db = env
    users, bio = ids.users, ids.courses["bio"]
    made = ok(rt, "canvas_create_conversation", recipients=[str(users["bob"]), str(users["tina"])],
              body="Office hours?")
    assert [p["id"] for p in made["participants"]] == [users["alice"], users["bob"], users["tina"]]
    assert (made["subject"], made["message_count"], made["last_message"]) == (None, 1, "Office hours?")
    login(rt, "tina")
    assert ok(rt, "canvas_list_conversations")["items"][0]["id"] == made["id"]
    notes = ok(rt, "canvas_list_notifications")["items"]
    assert notes[0]["subject"] == "New message from Alice Example" and notes[0]["read"] is False
    whole = ok(rt, "canvas_create_conversation", recipients=[f"course_{bio}"], body="Quiz moved", subject="Quiz")
    assert sorted(p["id"] for p in whole["participants"]) == sorted(
        users[u] for u in ("alice", "bob", "tina", "tom", "olga"))
    login(rt, "alice")
    before = dump(db)
    cases = [([str(users["eve"])], "PERMISSION_DENIED"), (["999"], "INVALID_ARGUMENT"),
             (["bob"], "INVALID_ARGUMENT"), ([f"course_{bio}"], "PERMISSION_DENIED"),
             (["course_999"], "NOT_FOUND"), ([str(users["alice"])], "INVALID_ARGUMENT"), ([], "INVALID_ARGUMENT"),
             (["١٢"], "INVALID_ARGUMENT")]
    for recipients, code in cases:
        err(rt, "canvas_create_conversation", code, recipients=recipients, body="x")
    err(rt, "canvas_create_conversation", "INVALID_ARGUMENT", recipients=[str(users["bob"])], body="  ")
    assert dump(db) == before


def test_notifications_are_per_user(env: Any) -> None:
    rt, _, _ = env
    got = ok(rt, "canvas_list_notifications")
    assert [(n["subject"], n["read"]) for n in got["items"]] == [("Due soon", True), ("Welcome", False)]
    assert list(got["items"][0]) == ["id", "subject", "message", "notification_type", "created_at", "read"]
    assert ok(rt, "canvas_list_notifications", page=2, per_page=1)["items"][0]["subject"] == "Welcome"


# ---------------------------------------------------------------- calendar

def test_calendar_events(env: Any) -> None:
    rt, ids, _ = env

    def titles(**args: Any) -> list[str]:
        return [e["title"] for e in ok(rt, "canvas_list_calendar_events", **args)["items"]]

    everything = ok(rt, "canvas_list_calendar_events")["items"]
    assert [e["title"] for e in everything] == ["Lecture", "Dentist", "Review"]
    assert everything[0] == {"id": everything[0]["id"], "title": "Lecture", "description": None,
                             "start_at": "2025-01-16T15:00:00Z", "end_at": "2025-01-16T16:00:00Z",
                             "location_name": "Hall A", "context_code": f"course_{ids.courses['bio']}"}
    assert everything[1]["context_code"] == f"user_{ids.users['alice']}"
    assert titles(start_date="2025-01-16", end_date="2025-01-16") == ["Lecture", "Dentist"]
    assert titles(start_date="2025-01-16T15:30:00Z", end_date="2025-01-16T19:00:00Z") == ["Lecture"]
    assert titles(start_date="2025-01-17") == ["Review"]
    ok(rt, "canvas_update_user_profile", time_zone="Pacific/Kiritimati")  # UTC+14: the 16th ends at 10:00Z
    assert titles(end_date="2025-01-16") == []
    assert titles(start_date="2025-01-17", end_date="2025-01-17") == ["Lecture", "Dentist"]
    for bad in ({"start_date": "2025-13-01"}, {"end_date": "next week"},
                {"start_date": "2025-01-20", "end_date": "2025-01-19"}, {"start_date": "2025-01-16T10:00:00"}):
        err(rt, "canvas_list_calendar_events", "INVALID_ARGUMENT", **bad)
    login(rt, "eve")
    assert titles() == ["Physics lab"]
