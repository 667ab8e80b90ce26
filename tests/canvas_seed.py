"""A small Canvas world built through the domain layer, and shortcuts to call its tools.

People: alice and bob (students of bio), tina (teaches bio and chem), tom (TA of bio, teaches
phys), adam (account admin), olga (observer in bio), eve (student of phys)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from loca.core.outcome import ToolOutcome
from mock_servers.canvas import domain
from mock_servers.canvas.server import toolbox
from mock_servers.core.db import Database
from mock_servers.core.toolkit import ServerRuntime
from tests.harness import table_rows

NOW = "2025-01-15T09:00:00Z"
PASSWORDS = {"alice": "alice-Secret-1", "bob": "bob-Secret-2", "tina": "tina-Secret-3",
             "tom": "tom-Secret-4", "adam": "adam-Secret-5", "olga": "olga-Secret-6",
             "eve": "eve-Secret-7"}
ACCESS_CODE = "quiz-Access-Code-9"


@dataclass
class Ids:
    """Ids of the seeded world, by name."""

    users: dict[str, int]
    courses: dict[str, int]
    assignments: dict[str, int]
    quizzes: dict[str, int]
    topics: dict[str, int]
    files: dict[str, int]
    accounts: dict[str, int]
    folders: dict[str, int]
    modules: dict[str, int]
    items: dict[str, int]
    questions: dict[str, int]
    rubrics: dict[str, int]
    conversations: dict[str, int]


def _people(s: Any, account: int) -> dict[str, int]:
    extra = {"alice": {"sis_user_id": "S-1002", "last_login_at": "2025-01-14T08:00:00Z"},
             "bob": {"sis_user_id": "S-1001", "last_login_at": "2025-01-10T08:00:00Z"},
             "adam": {"is_admin": True, "account_id": account}}
    return {login: domain.add_user(
        s, name=f"{login.title()} Example", login_id=login, email=f"{login}@uni.edu",
        password=pw, salt=f"salt-{login}", **extra.get(login, {})).id
        for login, pw in PASSWORDS.items()}


def _courses(s: Any, accounts: dict[str, int]) -> dict[str, int]:
    def course(name: str, code: str, account: str = "root", **kw: Any) -> int:
        return domain.add_course(s, account_id=accounts[account], name=name, course_code=code,
                                 **kw).id

    return {
        "bio": course("Biology 101-1", "BIO101-1", term="Spring 2025", enrollment_term_id=7,
                      sis_course_id="SIS-BIO", syllabus_body="<p>Cells</p>",
                      start_at="2025-01-06T00:00:00Z", end_at="2025-05-01T00:00:00Z"),
        "chem": course("Chemistry 201-2", "CHEM201-2", term="Spring 2025", enrollment_term_id=7),
        "hist": course("History 300-1", "HIST300-1", workflow_state="completed"),
        "phys": course("Physics 110-1", "PHYS110-1", account="science"),
        "draft": course("Drafting 1-1", "DRAFT1-1", workflow_state="unpublished"),
    }


ENROLLMENTS = [("alice", "bio", "StudentEnrollment", "active"),
               ("bob", "bio", "StudentEnrollment", "active"),
               ("tina", "bio", "TeacherEnrollment", "active"),
               ("tom", "bio", "TaEnrollment", "active"),
               ("olga", "bio", "ObserverEnrollment", "active"),
               ("alice", "chem", "StudentEnrollment", "active"),
               ("tina", "chem", "TeacherEnrollment", "active"),
               ("alice", "hist", "StudentEnrollment", "completed"),
               ("eve", "phys", "StudentEnrollment", "active"),
               ("tom", "phys", "TeacherEnrollment", "active"),
               ("alice", "draft", "StudentEnrollment", "active")]


def _assignments(s: Any, courses: dict[str, int], users: dict[str, int]) -> dict[str, int]:
    def add(key: str, name: str, **kw: Any) -> int:
        return domain.add_assignment(s, course_id=courses[key], name=name, **kw).id

    ids = {
        "essay": add("bio", "Essay", description="Write, then \"cite\"", points_possible=10,
                     due_at="2025-01-20T23:59:00Z", submission_types=["online_text_entry", "online_url"]),
        "lab": add("bio", "Lab report", points_possible=20, due_at="2025-01-10T23:59:00Z"),
        "hidden": add("bio", "Hidden draft", published=False),
        "upload": add("bio", "Poster", points_possible=5, due_at="2025-01-25T12:00:00Z",
                      submission_types=["online_upload"]),
        "undated": add("bio", "Reading log", points_possible=0),
        "chem_ps": add("chem", "Problem set", points_possible=100, due_at="2025-01-18T12:00:00Z"),
        "phys_hw": add("phys", "Kinematics", points_possible=10, due_at="2025-01-19T12:00:00Z"),
    }
    domain.add_submission(s, assignment_id=ids["lab"], user_id=users["alice"],
                          submission_type="online_text_entry", body="my lab",
                          submitted_at="2025-01-10T20:00:00Z", grade="15", score=15,
                          graded_at="2025-01-12T10:00:00Z")
    domain.add_submissions(s, [
        {"assignment_id": ids["essay"], "user_id": users["bob"], "submission_type": "online_text_entry",
         "body": "bob's essay", "submitted_at": "2025-01-14T10:00:00Z"},
        {"assignment_id": ids["lab"], "user_id": users["bob"], "submission_type": "online_text_entry",
         "body": "late lab", "submitted_at": "2025-01-12T10:00:00Z", "grade": "18", "score": 18}])
    return ids


def _quizzes(s: Any, courses: dict[str, int], users: dict[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    quizzes = {
        "q1": domain.add_quiz(s, course_id=courses["bio"], title="Cells quiz", time_limit=30,
                              allowed_attempts=2, points_possible=15, question_count=5,
                              due_at="2025-01-22T23:59:00Z", access_code=ACCESS_CODE, credits=3).id,
        "q_hidden": domain.add_quiz(s, course_id=courses["bio"], title="Draft quiz", published=False).id,
        "q_chem": domain.add_quiz(s, course_id=courses["chem"], title="Moles", quiz_type="practice_quiz").id,
    }
    domain.add_quiz_submission(s, quiz_id=quizzes["q1"], user_id=users["bob"],
                               started_at="2025-01-13T10:00:00Z", finished_at="2025-01-13T10:20:00Z",
                               score=12)
    questions = {
        "mc": domain.add_question(s, quiz_id=quizzes["q_hidden"], question_name="Nucleus",
                                  question_text="Where is DNA?", points_possible=2, answers=[
                                      {"text": "Nucleus", "weight": 100}, {"text": "Membrane"}]).id,
        "essay": domain.add_question(s, quiz_id=quizzes["q_hidden"], question_text="Explain osmosis.",
                                     question_type="essay_question", points_possible=5).id,
    }
    return quizzes, questions


def _topics(s: Any, courses: dict[str, int], users: dict[str, int]) -> dict[str, int]:
    def topic(key: str, title: str, posted: str, **kw: Any) -> int:
        return domain.add_topic(s, course_id=courses[key], title=title, message=f"<p>{title}</p>",
                                posted_at=posted, author_id=users["tina"], **kw).id

    topics = {
        "welcome": topic("bio", "Welcome", "2025-01-06T09:00:00Z", is_announcement=True),
        "final": topic("bio", "Final exam", "2025-01-12T09:00:00Z", is_announcement=True),
        "fix": topic("bio", "Final exam correction", "2025-01-12T09:00:00Z", is_announcement=True),
        "secret": topic("bio", "Unpublished news", "2025-01-13T09:00:00Z", is_announcement=True,
                        published=False),
        "intro": topic("bio", "Introduce yourself", "2025-01-07T09:00:00Z"),
        "chem_news": topic("chem", "Chem news", "2025-01-08T09:00:00Z", is_announcement=True),
        "chem_help": topic("chem", "Stoichiometry help", "2025-01-09T09:00:00Z"),
        "chem_prep": topic("chem", "Exam prep", "2025-01-09T09:00:00Z"),
    }
    domain.add_entry(s, topic_id=topics["intro"], user_id=users["bob"], message="Hi, Bob",
                     created_at="2025-01-08T10:00:00Z")
    return topics


def _files(s: Any, courses: dict[str, int], users: dict[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    root = domain.add_folder(s, course_id=courses["bio"], name="course files").id
    folders = {"root": root,
               "week1": domain.add_folder(s, course_id=courses["bio"], name="Week 1", parent_folder_id=root).id,
               "chem": domain.add_folder(s, course_id=courses["chem"], name="course files").id}
    at = "2025-01-14T08:00:00Z"
    files = {
        "poster": domain.add_file(s, display_name="poster.pdf", data=b"%PDF-1.4", created_at=at,
                                  user_id=users["alice"], content_type="application/pdf").id,
        "bobs": domain.add_file(s, display_name="bob.pdf", data=b"%PDF", created_at=at, user_id=users["bob"]).id,
        "syllabus": domain.add_file(s, display_name="Syllabus.pdf", data=b"%PDF-syllabus", created_at=at,
                                    course_id=courses["bio"], folder_id=root, content_type="application/pdf").id,
        "cells": domain.add_file(s, display_name="cells.png", data=b"\x89PNG", created_at=at,
                                 course_id=courses["bio"], folder_id=folders["week1"], content_type="image/png").id,
        "chem_notes": domain.add_file(s, display_name="notes.txt", data=b"moles", created_at=at,
                                      course_id=courses["chem"]).id,
    }
    return files, folders


def _pages_and_modules(s: Any, ids: dict[str, dict[str, int]]) -> tuple[dict[str, int], dict[str, int]]:
    bio = ids["courses"]["bio"]
    at = "2025-01-05T08:00:00Z"
    welcome = domain.add_page(s, course_id=bio, title="Welcome to Biology", body="<p>Hello</p>",
                              created_at=at, front_page=True).id
    domain.add_page(s, course_id=bio, title="Hidden notes", body="<p>TA only</p>", created_at=at,
                    updated_at="2025-01-09T08:00:00Z", published=False)
    domain.add_page(s, course_id=ids["courses"]["chem"], title="Lab safety", created_at=at)
    week1 = domain.add_module(s, course_id=bio, name="Week 1")
    week2 = domain.add_module(s, course_id=bio, name="Week 2", require_sequential_progress=True,
                              prerequisite_module_ids=[week1.id])
    draft = domain.add_module(s, course_id=bio, name="Draft week", published=False)
    later = domain.add_module(s, course_id=bio, name="Week 9", unlock_at="2025-03-01T00:00:00Z")
    item = domain.add_module_item
    items = {
        "page": item(s, module_id=week1.id, title="Welcome", type="Page", content_id=welcome).id,
        "essay": item(s, module_id=week1.id, title="Essay", type="Assignment",
                      content_id=ids["assignments"]["essay"]).id,
        "hidden": item(s, module_id=week1.id, title="Draft link", type="ExternalUrl",
                       url="https://example.org/draft", published=False).id,
        "quiz": item(s, module_id=week2.id, title="Cells quiz", type="Quiz", content_id=ids["quizzes"]["q1"]).id,
        "lab": item(s, module_id=week2.id, title="Lab", type="Assignment", content_id=ids["assignments"]["lab"]).id,
        "later": item(s, module_id=later.id, title="Reading", type="ExternalUrl", url="https://example.org/r").id,
    }
    domain.add_progress(s, user_id=ids["users"]["bob"], item_id=items["page"], completed_at="2025-01-09T08:00:00Z")
    return ({"week1": week1.id, "week2": week2.id, "draft": draft.id, "later": later.id}, items)


def _messages(s: Any, users: dict[str, int], courses: dict[str, int]) -> dict[str, int]:
    conversations = {
        "alice_bob": domain.add_conversation(s, participant_ids=[users["bob"]], author_id=users["alice"],
                                             body="Study group?", created_at="2025-01-11T10:00:00Z",
                                             subject="Lab"),
        "tina_bob": domain.add_conversation(s, participant_ids=[users["bob"]], author_id=users["tina"],
                                            body="See me", created_at="2025-01-12T10:00:00Z"),
    }
    domain.add_message(s, conversation_id=conversations["alice_bob"], author_id=users["bob"],
                       body="Sure, Friday", created_at="2025-01-11T11:00:00Z")
    domain.add_notifications(s, [
        {"user_id": users["alice"], "subject": "Welcome", "message": "Hi", "notification_type": "announcement",
         "created_at": "2025-01-06T09:00:00Z"},
        {"user_id": users["alice"], "subject": "Due soon", "message": "Essay", "notification_type": "due_date",
         "created_at": "2025-01-13T09:00:00Z", "read": True},
        {"user_id": users["bob"], "subject": "Bob only", "message": "x", "notification_type": "grading",
         "created_at": "2025-01-13T09:00:00Z"}])
    domain.add_calendar_events(s, [
        {"course_id": courses["bio"], "title": "Lecture", "start_at": "2025-01-16T15:00:00Z",
         "end_at": "2025-01-16T16:00:00Z", "location_name": "Hall A"},
        {"course_id": courses["bio"], "title": "Review", "start_at": "2025-01-20T15:00:00Z"},
        {"user_id": users["alice"], "title": "Dentist", "start_at": "2025-01-16T20:00:00Z",
         "end_at": "2025-01-16T21:00:00Z"},
        {"user_id": users["bob"], "title": "Bob's party", "start_at": "2025-01-16T20:00:00Z"},
        {"course_id": courses["phys"], "title": "Physics lab", "start_at": "2025-01-16T15:00:00Z"}])
    return conversations


def seed(db: Database) -> Ids:
    """Build the world; alice is logged in."""
    with db.write() as s:
        root = domain.add_account(s, "State University").id
        accounts = {"root": root,
                    "science": domain.add_account(s, "College of Science", parent_account_id=root).id}
        users = _people(s, root)
        courses = _courses(s, accounts)
        domain.add_enrollments(s, [{"course_id": courses[c], "user_id": users[u], "type": kind, "state": state}
                                   for u, c, kind, state in ENROLLMENTS])
        assignments = _assignments(s, courses, users)
        quizzes, questions = _quizzes(s, courses, users)
        topics = _topics(s, courses, users)
        files, folders = _files(s, courses, users)
        modules, items = _pages_and_modules(s, {"courses": courses, "assignments": assignments,
                                                "quizzes": quizzes, "users": users})
        rubric = domain.add_rubric(s, course_id=courses["bio"], title="Essay rubric", criteria=[
            {"description": "Argument", "points": 6},
            {"description": "Style", "points": 4, "ratings": [{"description": "Good", "points": 4},
                                                             {"description": "Poor", "points": 1}]}])
        lab_rubric = domain.add_rubric(s, course_id=courses["bio"], title="Lab rubric",
                                       criteria=[{"description": "Method", "points": 5}])
        conversations = _messages(s, users, courses)
        domain.log_in(s, users["alice"])
    return Ids(users, courses, assignments, quizzes, topics, files, accounts, folders, modules,
               items, questions, {"essay": rubric, "lab": lab_rubric}, conversations)


def make_env(make_world: Any) -> tuple[ServerRuntime, Ids, Database]:
    """A runtime over a freshly seeded world (the `make_world` fixture builds it)."""
    world, db = make_world(["canvas"], now=NOW)
    ids = seed(db)
    return ServerRuntime(toolbox, world, {}, db), ids, db


def call(rt: ServerRuntime, tool: str, /, **args: Any) -> ToolOutcome:
    return asyncio.run(rt.call(tool, args))


def ok(rt: ServerRuntime, tool: str, /, **args: Any) -> Any:
    out = call(rt, tool, **args)
    assert not out.is_error, out.text
    return json.loads(out.text)


def err(rt: ServerRuntime, tool: str, code: str, /, **args: Any) -> str:
    out = call(rt, tool, **args)
    assert out.is_error, out.text
    assert out.text.startswith(f"Error [{code}]: {tool}: "), out.text
    return out.text


def login(rt: ServerRuntime, who: str) -> None:
    ok(rt, "canvas_login", login_id=who, password=PASSWORDS[who])


def dump(db: Database) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table."""
    return table_rows(db.path)
