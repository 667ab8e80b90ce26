"""Canvas server, every tool at once: a valid and invalid call of each, no secret in any
output, schemas and metadata, paging edges of every list, the output cap, determinism, and the
reference defects not covered by the per-resource tests."""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

import fastmcp
import pytest
from sqlmodel import select

from mock_servers.canvas import domain
from mock_servers.canvas.models import CanvasUser
from mock_servers.canvas.server import toolbox
from mock_servers.core.db import Database
from mock_servers.core.toolkit import ServerRuntime
from tests.canvas_seed import ACCESS_CODE, NOW, PASSWORDS, Ids, call, err, login, make_env, ok, seed
from tests.schemas import violations

NEW_PASSWORD = "nina-Secret-8"
OPEN_TOOLS = {"canvas_health_check", "canvas_login", "canvas_logout"}


@pytest.fixture
def env(make_world: Any) -> tuple[ServerRuntime, Ids, Database]:
    return make_env(make_world)


def _student_calls(ids: Ids) -> list[tuple[str, str, dict[str, Any]]]:
    bio, a, m, it = ids.courses["bio"], ids.assignments, ids.modules, ids.items
    return [("alice", tool, args) for tool, args in [
        ("canvas_health_check", {}), ("canvas_get_current_user", {}), ("canvas_list_users", {}),
        ("canvas_get_user_profile", {}), ("canvas_update_user_profile", {"title": "Student"}),
        ("canvas_list_courses", {"include_ended": True}), ("canvas_get_course", {"course_id": bio}),
        ("canvas_get_syllabus", {"course_id": bio}), ("canvas_get_dashboard", {}),
        ("canvas_get_dashboard_cards", {}), ("canvas_list_assignments", {"course_id": bio}),
        ("canvas_get_assignment", {"course_id": bio, "assignment_id": a["lab"]}),
        ("canvas_get_submission", {"course_id": bio, "assignment_id": a["lab"]}),
        ("canvas_submit_assignment", {"course_id": bio, "assignment_id": a["essay"],
                                      "submission_type": "online_text_entry", "body": "x"}),
        ("canvas_get_upcoming_assignments", {"limit": 50}), ("canvas_get_course_grades", {"course_id": bio}),
        ("canvas_get_user_grades", {}), ("canvas_list_quizzes", {"course_id": bio}),
        ("canvas_get_quiz", {"course_id": bio, "quiz_id": ids.quizzes["q1"]}),
        ("canvas_get_quiz_submission", {"course_id": bio, "quiz_id": ids.quizzes["q1"]}),
        ("canvas_start_quiz_attempt", {"course_id": bio, "quiz_id": ids.quizzes["q1"]}),
        ("canvas_list_announcements", {"course_id": bio}), ("canvas_list_discussion_topics", {"course_id": bio}),
        ("canvas_get_discussion_topic", {"course_id": bio, "topic_id": ids.topics["intro"]}),
        ("canvas_post_to_discussion", {"course_id": bio, "topic_id": ids.topics["intro"], "message": "m"}),
        ("canvas_list_modules", {"course_id": bio}), ("canvas_get_module", {"course_id": bio, "module_id": m["week1"]}),
        ("canvas_list_module_items", {"course_id": bio, "module_id": m["week1"]}),
        ("canvas_get_module_item", {"course_id": bio, "module_id": m["week1"], "item_id": it["page"]}),
        ("canvas_mark_module_item_complete", {"course_id": bio, "module_id": m["week1"], "item_id": it["page"]}),
        ("canvas_list_files", {"course_id": bio}), ("canvas_get_file", {"file_id": ids.files["poster"]}),
        ("canvas_list_folders", {"course_id": bio}), ("canvas_list_pages", {"course_id": bio}),
        ("canvas_get_page", {"course_id": bio, "page_url": "welcome-to-biology"}),
        ("canvas_list_calendar_events", {"start_date": "2025-01-01"}), ("canvas_list_conversations", {}),
        ("canvas_get_conversation", {"conversation_id": ids.conversations["alice_bob"]}),
        ("canvas_create_conversation", {"recipients": [str(ids.users["bob"])], "body": "hi"}),
        ("canvas_list_notifications", {}), ("canvas_list_rubrics", {"course_id": bio}),
        ("canvas_get_rubric", {"course_id": bio, "rubric_id": ids.rubrics["essay"]})]]


def _staff_calls(ids: Ids) -> list[tuple[str, str, dict[str, Any]]]:
    bio, root, q_hidden = ids.courses["bio"], ids.accounts["root"], ids.quizzes["q_hidden"]
    tina = [
        ("canvas_enroll_user", {"course_id": bio, "user_id": ids.users["eve"]}),
        ("canvas_get_course_grades", {"course_id": bio}), ("canvas_update_course", {"course_id": bio, "name": "B"}),
        ("canvas_create_assignment", {"course_id": bio, "name": "New"}),
        ("canvas_update_assignment", {"course_id": bio, "assignment_id": ids.assignments["essay"],
                                      "points_possible": 12}),
        ("canvas_submit_grade", {"course_id": bio, "assignment_id": ids.assignments["essay"],
                                 "user_id": ids.users["bob"], "grade": "8"}),
        ("canvas_create_quiz", {"course_id": bio, "title": "New quiz"}),
        ("canvas_update_quiz", {"course_id": bio, "quiz_id": ids.quizzes["q1"], "access_code": ACCESS_CODE}),
        ("canvas_publish_quiz", {"course_id": bio, "quiz_id": ids.quizzes["q1"]}),
        ("canvas_add_quiz_question", {"course_id": bio, "quiz_id": q_hidden, "question_text": "Q?",
                                      "question_type": "essay_question"}),
        ("canvas_get_quiz_questions", {"course_id": bio, "quiz_id": q_hidden}),
        ("canvas_update_quiz_question", {"course_id": bio, "quiz_id": q_hidden,
                                         "question_id": ids.questions["mc"], "points_possible": 3}),
        ("canvas_delete_quiz_question", {"course_id": bio, "quiz_id": q_hidden,
                                         "question_id": ids.questions["essay"]}),
        ("canvas_delete_quiz", {"course_id": ids.courses["chem"], "quiz_id": ids.quizzes["q_chem"]}),
        ("canvas_create_module", {"course_id": bio, "name": "Week 3"}),
        ("canvas_create_module_item", {"course_id": bio, "module_id": ids.modules["week1"], "title": "Link",
                                       "type": "ExternalUrl", "url": "https://x.org"}),
        ("canvas_create_rubric", {"course_id": bio, "title": "R", "criteria": [{"description": "C", "points": 1}]})]
    adam = [
        ("canvas_list_users", {"per_page": 100}), ("canvas_create_course", {"account_id": root, "name": "Geo"}),
        ("canvas_get_account", {"account_id": root}), ("canvas_list_account_courses", {"account_id": root}),
        ("canvas_list_account_users", {"account_id": root, "sort": "last_login"}),
        ("canvas_create_user", {"account_id": root, "user": {"name": "Nina"},
                                "pseudonym": {"unique_id": "nina", "password": NEW_PASSWORD}}),
        ("canvas_list_sub_accounts", {"account_id": root}), ("canvas_get_account_reports", {"account_id": root}),
        ("canvas_create_account_report", {"account_id": root, "report": "last_user_access_csv"})]
    return [("tina", t, a) for t, a in tina] + [("adam", t, a) for t, a in adam] + [("tina", "canvas_logout", {})]


def _valid_calls(ids: Ids) -> list[tuple[str, str, dict[str, Any]]]:
    """(user, tool, arguments): one valid call of every tool."""
    return _student_calls(ids) + _staff_calls(ids)


def _run(rt: ServerRuntime, ids: Ids) -> list[str]:
    """Every valid call, each after logging in as its user; the outputs in order."""
    out = []
    for who, tool, args in _valid_calls(ids):
        for name, arguments in (("canvas_login", {"login_id": who, "password": PASSWORDS[who]}), (tool, args)):
            outcome = call(rt, name, **arguments)
            assert not outcome.is_error, (name, outcome.text)
            out.append(outcome.text)
    return out


def test_every_tool_valid_call_and_no_secret_in_any_output(env: Any) -> None:
    rt, ids, db = env
    outputs = _run(rt, ids)
    assert {tool for _, tool, _ in _valid_calls(ids)} | {"canvas_login"} == set(toolbox.defs)
    with db.read() as s:
        hashes = [u.password_hash for u in s.exec(select(CanvasUser))]
    salts = [h.split("$")[2] for h in hashes if h.count("$") == 3]
    secrets = [*PASSWORDS.values(), NEW_PASSWORD, *hashes, *salts, ACCESS_CODE, "pbkdf2"]
    invalid = [call(rt, tool, bogus=secret).text for tool in toolbox.defs for secret in (NEW_PASSWORD,)]
    for text in outputs + invalid:
        assert not any(secret in text for secret in secrets), text


def test_every_tool_rejects_bad_arguments_and_needs_a_login(env: Any) -> None:
    rt, ids, _ = env
    valid = {tool: args for _, tool, args in _valid_calls(ids)}
    valid["canvas_login"] = {"login_id": "alice", "password": PASSWORDS["alice"]}
    for tool, args in valid.items():
        text = err(rt, tool, "INVALID_ARGUMENT", **args, bogus=1)
        assert "unknown parameter 'bogus'; allowed: " in text
        required = rt.tools[tool].parameters["required"]
        if required:
            assert f"missing required parameter '{required[0]}'" in err(rt, tool, "INVALID_ARGUMENT")
    ok(rt, "canvas_logout")
    for tool, args in valid.items():
        if tool not in OPEN_TOOLS:
            err(rt, tool, "UNAUTHENTICATED", **args)


HOSTILE: dict[str, list[Any]] = {
    "integer": [10**30, -(10**30), 2**63, 0, -1, 1.5, "9" * 40],
    "number": [1e308, -1e308, 5e-324, "1e999", "nan"],
    "string": ["\ud800", "\x00", "x" * 100_000, "' OR 1=1 --", "%_\\", "9" * 40, "9999-12-31", "0001-01-01"],
    "boolean": ["yes", 2],
    "array": [[], [10**30], ["\ud800"], list(range(1000)), [{"text": "\ud800", "points": 1e308}]],
    "object": [{}, {"x": 1}, {"name": "\ud800", "unique_id": "\ud800", "text": "a"}],
}


def test_hostile_values_are_errors_never_crashes(env: Any) -> None:
    """Every parameter of every tool, one at a time, given values a client may send: a result
    or a readable error, never an internal error."""
    rt, ids, _ = env
    for who, tool, args in _valid_calls(ids):
        if tool == "canvas_logout":
            continue
        login(rt, who)
        for param, schema in rt.tools[tool].parameters["properties"].items():
            kinds = schema["type"] if isinstance(schema.get("type"), list) else [schema.get("type", "object")]
            for value in (v for kind in kinds for v in HOSTILE.get(kind, [])):
                text = call(rt, tool, **{**args, param: value}).text
                assert not text.startswith("Error [INTERNAL]"), (tool, param, repr(value)[:40], text[:300])
        login(rt, "alice")


# ---------------------------------------------------------------- schemas and metadata

def test_tool_metadata_and_schemas(env: Any) -> None:
    rt, _, _ = env
    assert len(toolbox.defs) == 68
    core = {"canvas_get_current_user", "canvas_list_courses", "canvas_get_course", "canvas_list_assignments",
            "canvas_get_assignment", "canvas_get_submission", "canvas_list_quizzes", "canvas_get_quiz",
            "canvas_get_quiz_submission", "canvas_list_announcements"}
    assert {name for name, d in toolbox.defs.items() if d.core} == core
    for name, tool in rt.tools.items():
        assert len(tool.description) <= 1024
        assert "canvas" in tool.tags and len({"read", "write"} & tool.tags) == 1
        assert tool.annotations.readOnlyHint == (toolbox.defs[name].rw == "read")
        assert tool.parameters["additionalProperties"] is False and not violations(tool.parameters), name
        for param, schema in tool.parameters["properties"].items():
            assert schema.get("description"), (name, param)
            assert "anyOf" not in schema
        if "per_page" in tool.parameters["properties"]:
            assert tool.parameters["properties"]["per_page"] == {
                "default": 50, "description": "items per page (default 50, max 100)", "maximum": 100,
                "minimum": 1, "type": "integer"}
            assert tool.description.endswith("Paged: per_page default 50, max 100.")
        params = list(inspect.signature(toolbox.defs[name].fn).parameters)[1:]
        assert sorted(tool.parameters["properties"]) == sorted(params), name


def test_through_fastmcp_client(env: Any) -> None:
    rt, ids, _ = env

    async def run() -> tuple[Any, Any, list[str]]:
        async with fastmcp.Client(rt.app) as client:
            tools = [t.name for t in await client.list_tools()]
            good = await client.call_tool("canvas_get_course", {"course_id": ids.courses["bio"]}, raise_on_error=False)
            bad = await client.call_tool("canvas_list_courses", {"per_page": 101}, raise_on_error=False)
            return good, bad, tools

    good, bad, tools = asyncio.run(run())
    assert sorted(tools) == sorted(toolbox.defs)
    assert not good.is_error and json.loads(good.content[0].text)["course_code"] == "BIO101-1"
    assert bad.is_error and bad.content[0].text.startswith("Error [INVALID_ARGUMENT]: canvas_list_courses: ")


# ---------------------------------------------------------------- paging

def _lists(ids: Ids) -> list[tuple[str, str, dict[str, Any]]]:
    """(user, list tool, arguments) of every paged tool, each matching more than one item."""
    bio, root = ids.courses["bio"], ids.accounts["root"]
    return [("alice", "canvas_list_users", {}), ("alice", "canvas_list_courses", {"include_ended": True}),
            ("alice", "canvas_list_assignments", {"course_id": bio}),
            ("tina", "canvas_list_quizzes", {"course_id": bio}),
            ("alice", "canvas_list_announcements", {"course_id": bio}),
            ("tina", "canvas_list_discussion_topics", {"course_id": ids.courses["chem"]}),
            ("alice", "canvas_list_files", {"course_id": bio}), ("alice", "canvas_list_folders", {"course_id": bio}),
            ("tina", "canvas_list_pages", {"course_id": bio}), ("alice", "canvas_list_calendar_events", {}),
            ("alice", "canvas_list_modules", {"course_id": bio}),
            ("tina", "canvas_list_module_items", {"course_id": bio, "module_id": ids.modules["week1"]}),
            ("tina", "canvas_get_quiz_questions", {"course_id": bio, "quiz_id": ids.quizzes["q_hidden"]}),
            ("alice", "canvas_list_rubrics", {"course_id": bio}), ("bob", "canvas_list_conversations", {}),
            ("alice", "canvas_list_notifications", {}), ("adam", "canvas_list_account_courses", {"account_id": root}),
            ("adam", "canvas_list_account_users", {"account_id": root}),
            ("adam", "canvas_list_sub_accounts", {"account_id": ids.accounts["science"]})]


def test_paging_edges_of_every_list(env: Any) -> None:
    rt, ids, _ = env
    listed = {tool for _, tool, _ in _lists(ids)}
    assert listed == {n for n, t in rt.tools.items() if "per_page" in t.parameters["properties"]}
    for who, tool, args in _lists(ids):
        login(rt, who)
        whole = ok(rt, tool, **args, per_page=100)
        total = whole["total"]
        assert list(whole) == ["items", "page", "per_page", "total", "has_more"] and len(whole["items"]) == total
        assert (total >= 2) == (tool != "canvas_list_sub_accounts"), (tool, total)
        singles = [ok(rt, tool, **args, page=p, per_page=1) for p in range(1, total + 1)]
        assert [s["items"][0] for s in singles] == whole["items"], tool
        assert [s["has_more"] for s in singles] == [True] * (total - 1) + [False] * (total > 0)
        if total >= 2:  # a last page only partly full
            last = ok(rt, tool, **args, page=2, per_page=total - 1)
            assert (len(last["items"]), last["total"], last["has_more"]) == (1, total, False)
        beyond = ok(rt, tool, **args, page=total + 2, per_page=1)
        assert (beyond["items"], beyond["total"], beyond["has_more"], beyond["page"]) == ([], total, False, total + 2)
        assert "allowed 1..100" in err(rt, tool, "INVALID_ARGUMENT", **args, per_page=101)
        err(rt, tool, "INVALID_ARGUMENT", **args, per_page=0)
        err(rt, tool, "INVALID_ARGUMENT", **args, page=0)
        err(rt, tool, "INVALID_ARGUMENT", **args, page="two")


def test_output_cap_cuts_lists_and_long_text(make_world: Any) -> None:
    world, db = make_world(["canvas"], now=NOW)
    ids = seed(db)
    with db.write() as s:
        long = domain.add_assignment(s, course_id=ids.courses["bio"], name="Long", description="x" * 5000).id
    rt = ServerRuntime(toolbox, world, {"max_output_chars": 900})
    login(rt, "tina")
    got = ok(rt, "canvas_list_announcements", course_id=ids.courses["bio"])
    assert 0 < len(got["items"]) < got["total"] and got["has_more"] is True
    assert got["notice"].startswith(f"output cap reached after {len(got['items'])} items")
    text = call(rt, "canvas_get_assignment", course_id=ids.courses["bio"], assignment_id=long).text
    assert len(text) <= 900 and "…[truncated" in json.loads(text)["description"]


def test_same_calls_give_byte_identical_outputs(make_world: Any) -> None:
    runs = []
    for _ in range(2):
        rt, ids, _ = make_env(make_world)
        runs.append(_run(rt, ids))
    assert runs[0] == runs[1]


# ---------------------------------------------------------------- reference defects

def test_create_and_update_accept_only_documented_fields(env: Any) -> None:
    """Reference defect: create and update merged the raw arguments into the record, so ids,
    workflow_state or password could be overwritten."""
    rt, ids, _ = env
    bio = ids.courses["bio"]
    base = {"canvas_update_user_profile": ("alice", {"bio": "x"}),
            "canvas_update_course": ("tina", {"course_id": bio, "name": "x"}),
            "canvas_create_assignment": ("tina", {"course_id": bio, "name": "x"}),
            "canvas_update_assignment": ("tina", {"course_id": bio, "assignment_id": ids.assignments["essay"],
                                                  "name": "x"}),
            "canvas_create_quiz": ("tina", {"course_id": bio, "title": "x"}),
            "canvas_update_quiz": ("tina", {"course_id": bio, "quiz_id": ids.quizzes["q1"], "title": "x"}),
            "canvas_create_module": ("tina", {"course_id": bio, "name": "x"}),
            "canvas_create_course": ("adam", {"account_id": ids.accounts["root"], "name": "x"})}
    for tool, (who, args) in base.items():
        login(rt, who)
        for field in ("id", "workflow_state", "password", "password_hash", "created_at"):
            text = err(rt, tool, "INVALID_ARGUMENT", **args, **{field: "1"})
            assert f"unknown parameter '{field}'" in text, (tool, field)


def test_ids_are_integers_and_lookups_respect_the_course(env: Any) -> None:
    """Reference defects: ids typed as JSON numbers and used as string keys (1.0 missed);
    course_id ignored by submission lookups; upcoming assignments across all courses by a string
    compare against wall time."""
    rt, ids, _ = env
    bio, lab = ids.courses["bio"], ids.assignments["lab"]
    assert ok(rt, "canvas_get_assignment", course_id=float(bio), assignment_id=f"{lab}")["id"] == lab
    err(rt, "canvas_get_assignment", "INVALID_ARGUMENT", course_id=bio + 0.5, assignment_id=lab)
    err(rt, "canvas_get_submission", "NOT_FOUND", course_id=ids.courses["chem"], assignment_id=lab)
    names = [i["assignment"]["name"] for i in ok(rt, "canvas_get_upcoming_assignments")["items"]]
    assert "Kinematics" not in names and "Lab report" not in names  # not alice's course; already due
