"""The e-mail server over a world built through its domain layer."""

from __future__ import annotations

import asyncio
import io
import json
import re
import zipfile
from dataclasses import dataclass
from typing import Any

import fastmcp
import pytest

from loca.core.outcome import ToolOutcome
from loca.core.world import World
from mock_servers.core.db import Database
from mock_servers.core.errors import ToolFailure
from mock_servers.core.toolkit import ServerRuntime
from mock_servers.email import domain, toolbox
from mock_servers.email.domain import Attachment
from mock_servers.email.models import DEFAULT_FOLDERS
from mock_servers.email.server import files as email_files
from tests.harness import table_rows

PASSWORDS = {"alice@uni.edu": "alice-pw-7731", "bob@uni.edu": "bob-pw-1187",
             "carol@uni.edu": "carol-pw-4409"}
SALTS = {"alice@uni.edu": "salt-a-51", "bob@uni.edu": "salt-b-52", "carol@uni.edu": "salt-c-53"}
PLAN = b"%PDF-1.4 project plan\x00\x01\x02"
REPORT = b"quarterly report bytes \xff\xfe"
NEWSLETTERS = 25

# Minimal valid arguments for every tool that needs a login.
ARGS: dict[str, dict[str, Any]] = {
    "logout": {}, "get_current_user": {}, "get_folders": {},
    "create_folder": {"folder_name": "Projects"}, "delete_folder": {"folder_name": "Projects"},
    "get_emails": {}, "read_email": {"email_id": "1"}, "search_emails": {"query": "kickoff"},
    "send_email": {"to": "bob@uni.edu", "subject": "s", "body": "b"},
    "reply_email": {"email_id": "1", "body": "thanks"},
    "forward_email": {"email_id": "1", "to": "carol@uni.edu"},
    "delete_email": {"email_id": "1"},
    "move_email": {"email_id": "1", "target_folder": "Archive"},
    "mark_emails": {"email_ids": ["1"], "status": "important"},
    "move_emails": {"email_ids": ["1"], "target_folder": "Archive"},
    "delete_emails": {"email_ids": ["1"]},
    "save_draft": {"subject": "draft", "body": "text"}, "get_drafts": {},
    "update_draft": {"draft_id": "1", "subject": "new"}, "delete_draft": {"draft_id": "1"},
    "get_mailbox_stats": {}, "get_unread_count": {}, "get_email_headers": {"email_id": "1"},
    "export_emails": {}, "import_emails": {"import_path": "emails_export.json"},
    "download_attachment": {"email_id": "1", "attachment_filename": "plan.pdf"},
}
OPEN_TOOLS = {"login", "check_connection", "list_users", "create_user"}


@dataclass
class Mail:
    world: World
    db: Database
    runtime: ServerRuntime
    kickoff: domain.Delivery
    budget: domain.Delivery
    lunch: domain.Delivery
    news: list[int]

    def call(self, tool: str, **args: Any) -> ToolOutcome:
        return asyncio.run(self.runtime.call(tool, args))

    def ok(self, tool: str, **args: Any) -> Any:
        return json.loads(self.ok_text(tool, **args))

    def ok_text(self, tool: str, **args: Any) -> str:
        out = self.call(tool, **args)
        assert not out.is_error, out.text
        return out.text

    def err(self, tool: str, code: str, **args: Any) -> str:
        out = self.call(tool, **args)
        assert out.is_error, out.text
        assert out.text.startswith(f"Error [{code}]: {tool}: "), out.text
        return out.text

    def login(self, address: str) -> None:
        self.ok("login", email=address, password=PASSWORDS[address])


def build_mail(make_world: Any, logged_in: bool = True,
               config: dict[str, Any] | None = None) -> Mail:
    world, db = make_world(["email"])
    (world.workspace / "report.pdf").write_bytes(REPORT)
    with db.write() as s:
        ids = {address: domain.add_account(
            s, address=address, name=address.split("@")[0].title(), password=PASSWORDS[address],
            salt=SALTS[address], created_at="2024-09-01T08:00:00Z").id for address in PASSWORDS}
        if logged_in:
            domain.log_in(s, ids["alice@uni.edu"])
        kickoff = domain.deliver(
            s, sender="bob@uni.edu", sender_name="Bob", to="alice@uni.edu", cc="carol@uni.edu",
            subject="Project kickoff", body="Kickoff notes attached.",
            html_body="<p>Kickoff notes attached.</p>", date="2025-01-10T09:00:00Z",
            attachments=[Attachment("plan.pdf", "application/pdf", PLAN)])
        budget = domain.deliver(
            s, sender="carol@uni.edu", sender_name="Carol", to="alice@uni.edu; dave@other.org",
            cc=["bob@uni.edu"], bcc="erin@other.org", subject="Budget review",
            body="Numbers for Q1.", html_body="<p>Numbers for <b>Q1</b> (see table)</p>",
            date="2025-01-11T10:00:00Z")
        lunch = domain.deliver(
            s, sender="alice@uni.edu", sender_name="Alice", to="bob@uni.edu",
            bcc="carol@uni.edu", subject="Lunch?", body="Noon at the cafe?",
            date="2025-01-12T11:30:00Z")
        news = [domain.deliver(
            s, sender="news@lists.example.org", sender_name="Campus News", to="alice@uni.edu",
            subject=f"Newsletter {i:02d}", body=f"Issue {i} of the campus newsletter.",
            date=f"2024-12-{1 + i // 2:02d}T07:00:00Z").inbox_pks["alice@uni.edu"]
            for i in range(NEWSLETTERS)]
    return Mail(world, db, ServerRuntime(toolbox, world, config or {}), kickoff, budget, lunch,
                news)


@pytest.fixture
def mail(make_world: Any) -> Mail:
    return build_mail(make_world)


def snapshot(world: World) -> dict[str, list[tuple[Any, ...]]]:
    return table_rows(world.state_path)


def inbox_ids(mail: Mail, **args: Any) -> list[str]:
    return [e["id"] for e in mail.ok("get_emails", page_size=50, **args)["emails"]]


# --- domain -----------------------------------------------------------------------------------

def test_deliver_stores_sent_and_inbox_copies(mail: Mail) -> None:
    delivered, undeliverable = mail.budget
    assert delivered == ["alice@uni.edu", "bob@uni.edu"]
    assert undeliverable == ["dave@other.org", "erin@other.org"]
    assert mail.budget.sent_pk is not None
    assert mail.budget.message_id.endswith("@uni.edu>")
    assert len({mail.kickoff.message_id, mail.budget.message_id, mail.lunch.message_id}) == 3
    with mail.db.read() as s:
        sent = domain.emails_by_pk(s, 3, [mail.budget.sent_pk])[0]
        bob_copy = domain.emails_by_pk(s, 2, [mail.budget.inbox_pks["bob@uni.edu"]])[0]
    assert sent["folder"] == "Sent" and sent["read"] is True
    assert sent["bcc"] == ["erin@other.org"]
    assert bob_copy["folder"] == "INBOX" and bob_copy["read"] is False
    assert bob_copy["bcc"] == [] and bob_copy["to"] == ["alice@uni.edu", "dave@other.org"]
    assert bob_copy["message_id"] == sent["message_id"]


def test_deliver_sees_accounts_added_in_the_same_transaction(mail: Mail) -> None:
    with mail.db.write() as s:
        first = domain.deliver(s, sender="alice@uni.edu", sender_name="Alice", to="zed@uni.edu",
                               subject="hi", body="b", date="2025-01-13T00:00:00Z")
        domain.add_account(s, address="zed@uni.edu", name="Zed", password="z", salt="z",
                           created_at="2025-01-13T00:00:00Z")
        second = domain.deliver(s, sender="alice@uni.edu", sender_name="Alice",
                                to="zed@uni.edu", subject="hi", body="b",
                                date="2025-01-13T00:01:00Z")
    assert first.undeliverable == ["zed@uni.edu"] and first.delivered_to == []
    assert second.delivered_to == ["zed@uni.edu"]


def test_domain_rejects_bad_values(mail: Mail) -> None:
    with mail.db.write() as s:
        with pytest.raises(ToolFailure, match="not a valid e-mail address"):
            domain.deliver(s, sender="alice@uni.edu", sender_name=None, to="not-an-address",
                           subject="s", body="b", date="2025-01-13T00:00:00Z")
        with pytest.raises(ToolFailure, match="time zone"):
            domain.deliver(s, sender="alice@uni.edu", sender_name=None, to="bob@uni.edu",
                           subject="s", body="b", date="2025-01-13 00:00:00")
        with pytest.raises(ToolFailure, match="already exists"):
            domain.add_account(s, address="Bob@Uni.edu", name="B", password="p", salt="s",
                               created_at="2025-01-13T00:00:00Z")


def test_bulk_accounts_get_folders_and_mail_but_no_login(mail: Mail) -> None:
    with mail.db.write() as s:
        ids = domain.add_accounts(s, [("Dan@Uni.edu", "Dan"), ("eve@uni.edu", "Eve")],
                                  created_at="2025-01-13T00:00:00Z")
        delivery = domain.deliver(s, sender="alice@uni.edu", sender_name="Alice",
                                  to="dan@uni.edu, eve@uni.edu", subject="hi", body="b",
                                  date="2025-01-13T00:01:00Z")
        assert list(ids) == ["dan@uni.edu", "eve@uni.edu"]
        assert delivery.delivered_to == ["dan@uni.edu", "eve@uni.edu"]
        assert [f["name"] for f in domain.folder_stats(s, ids["eve@uni.edu"])] == list(DEFAULT_FOLDERS)
        for bad in ([("bob@uni.edu", "Bob")], [("x@uni.edu", "X"), ("X@uni.edu", "X")]):
            with pytest.raises(ToolFailure, match="already exist"):
                domain.add_accounts(s, bad, created_at="2025-01-13T00:00:00Z")
    for password in ("", "!", "dan"):
        mail.err("login", "UNAUTHENTICATED", email="dan@uni.edu", password=password)


# --- auth -------------------------------------------------------------------------------------

def test_every_tool_but_four_needs_a_login(make_world: Any) -> None:
    mail = build_mail(make_world, logged_in=False)
    assert set(ARGS) | OPEN_TOOLS == set(toolbox.defs) and len(toolbox.defs) == 30
    before = snapshot(mail.world)
    for tool, args in ARGS.items():
        assert "no account is logged in" in mail.err(tool, "UNAUTHENTICATED", **args)
    assert snapshot(mail.world) == before
    assert mail.ok("check_connection") == {"imap": "ok", "smtp": "ok", "user": None}
    assert mail.ok("list_users")["count"] == 3


def test_login_logout(make_world: Any) -> None:
    mail = build_mail(make_world, logged_in=False)
    mail.err("login", "UNAUTHENTICATED", email="alice@uni.edu", password="wrong")
    mail.err("login", "UNAUTHENTICATED", email="nobody@uni.edu", password="x")
    assert mail.ok("login", email="Alice@Uni.edu", password=PASSWORDS["alice@uni.edu"]) == \
        {"email": "alice@uni.edu", "name": "Alice", "logged_in": True}
    assert mail.ok("get_current_user") == {"email": "alice@uni.edu", "name": "Alice",
                                           "logged_in": True}
    assert mail.ok("check_connection")["user"] == "alice@uni.edu"
    assert mail.ok("logout") == {"logged_in": False}
    mail.err("logout", "UNAUTHENTICATED")
    mail.err("get_emails", "UNAUTHENTICATED")


def test_create_and_list_users(mail: Mail) -> None:
    created = mail.ok("create_user", email="dan@uni.edu", name="Dan", password="dan-secret")
    assert created == {"email": "dan@uni.edu", "name": "Dan",
                       "created_at": "2025-01-15T09:00:01Z"}
    mail.err("create_user", "ALREADY_EXISTS", email="DAN@uni.edu", name="D", password="x")
    mail.err("create_user", "INVALID_ARGUMENT", email="dan", name="D", password="x")
    users = mail.ok("list_users")
    assert users["count"] == 4
    assert [u["email"] for u in users["users"]] == sorted(u["email"] for u in users["users"])
    mail.ok("login", email="dan@uni.edu", password="dan-secret")
    assert [f["name"] for f in mail.ok("get_folders")["folders"]] == \
        ["INBOX", "Sent", "Drafts", "Trash", "Spam", "Archive"]


# --- reading ----------------------------------------------------------------------------------

def test_get_emails_pages_newest_first(mail: Mail) -> None:
    total = NEWSLETTERS + 2
    first = mail.ok("get_emails")
    assert (first["total"], first["page"], first["page_size"], first["total_pages"]) == \
        (total, 1, 20, 2)
    second = mail.ok("get_emails", page=2)
    assert len(first["emails"]) == 20 and len(second["emails"]) == total - 20
    listed = first["emails"] + second["emails"]
    assert len({e["id"] for e in listed}) == total
    keys = [(e["date"], int(e["id"])) for e in listed]
    assert keys == sorted(keys, reverse=True)
    assert listed[0]["subject"] == "Budget review"
    same_day = [e for e in listed if e["date"] == "2024-12-01T07:00:00Z"]
    assert [e["subject"] for e in same_day] == ["Newsletter 01", "Newsletter 00"]
    past = mail.ok("get_emails", page=5)
    assert past["emails"] == [] and past["total"] == total
    for bad in ({"page_size": 0}, {"page_size": 51}, {"page": 0}, {"page_size": True}):
        text = mail.err("get_emails", "INVALID_ARGUMENT", **bad)
        assert "page" in text
    assert "50" in mail.err("get_emails", "INVALID_ARGUMENT", page_size=51)
    mail.err("get_emails", "NOT_FOUND", folder="Nope")
    assert mail.ok("get_emails", folder="sent")["emails"][0]["subject"] == "Lunch?"


def test_listing_text_is_pinned(mail: Mail) -> None:
    """The exact text of message pages: key order, recipients by kind, attachments, the HTML
    body shown only when it says more than the plain one, and the envelope."""
    assert mail.ok_text("get_emails", page_size=3) == (
        '{"emails":[{"id":"5","message_id":"<20250111T100000.000002@uni.edu>","folder":"INBOX",'
        '"from":"Carol <carol@uni.edu>","to":["alice@uni.edu","dave@other.org"],'
        '"cc":["bob@uni.edu"],"bcc":[],"subject":"Budget review","date":"2025-01-11T10:00:00Z",'
        '"read":false,"important":false,"has_attachments":false,"attachments":[],'
        '"body":"Numbers for Q1.","html_body":"<p>Numbers for <b>Q1</b> (see table)</p>",'
        '"in_reply_to":null},{"id":"2","message_id":"<20250110T090000.000001@uni.edu>",'
        '"folder":"INBOX","from":"Bob <bob@uni.edu>","to":["alice@uni.edu"],'
        '"cc":["carol@uni.edu"],"bcc":[],"subject":"Project kickoff",'
        '"date":"2025-01-10T09:00:00Z","read":false,"important":false,"has_attachments":true,'
        '"attachments":[{"filename":"plan.pdf","size":24,"content_type":"application/pdf"}],'
        '"body":"Kickoff notes attached.","html_body":null,"in_reply_to":null},{"id":"34",'
        '"message_id":"<20241213T070000.000028@lists.example.org>","folder":"INBOX",'
        '"from":"Campus News <news@lists.example.org>","to":["alice@uni.edu"],"cc":[],"bcc":[],'
        '"subject":"Newsletter 24","date":"2024-12-13T07:00:00Z","read":false,"important":false,'
        '"has_attachments":false,"attachments":[],"body":"Issue 24 of the campus newsletter.",'
        '"html_body":null,"in_reply_to":null}],"total":27,"page":1,"page_size":3,"total_pages":9}')
    assert mail.ok_text("get_emails", folder="sent") == (
        '{"emails":[{"id":"7","message_id":"<20250112T113000.000003@uni.edu>","folder":"Sent",'
        '"from":"Alice <alice@uni.edu>","to":["bob@uni.edu"],"cc":[],"bcc":["carol@uni.edu"],'
        '"subject":"Lunch?","date":"2025-01-12T11:30:00Z","read":true,"important":false,'
        '"has_attachments":false,"attachments":[],"body":"Noon at the cafe?","html_body":null,'
        '"in_reply_to":null}],"total":1,"page":1,"page_size":20,"total_pages":1}')


def test_email_projection(mail: Mail) -> None:
    emails = {e["subject"]: e for e in mail.ok("get_emails", page_size=50)["emails"]}
    kickoff = emails["Project kickoff"]
    assert list(kickoff) == ["id", "message_id", "folder", "from", "to", "cc", "bcc", "subject",
                             "date", "read", "important", "has_attachments", "attachments",
                             "body", "html_body", "in_reply_to"]
    assert kickoff["from"] == "Bob <bob@uni.edu>"
    assert kickoff["to"] == ["alice@uni.edu"] and kickoff["cc"] == ["carol@uni.edu"]
    assert kickoff["html_body"] is None  # only repeats the body
    assert kickoff["attachments"] == [{"filename": "plan.pdf", "size": len(PLAN),
                                       "content_type": "application/pdf"}]
    assert kickoff["has_attachments"] is True and kickoff["id"] == \
        str(mail.kickoff.inbox_pks["alice@uni.edu"])
    budget = emails["Budget review"]
    assert budget["html_body"] == "<p>Numbers for <b>Q1</b> (see table)</p>"
    assert budget["bcc"] == []
    sent = mail.ok("get_emails", folder="Sent")["emails"][0]
    assert sent["bcc"] == ["carol@uni.edu"] and sent["read"] is True


def test_read_flags(mail: Mail) -> None:
    first = mail.ok("get_emails")["emails"][0]
    assert first["read"] is False
    mail.ok("search_emails", query="budget")
    assert mail.ok("get_emails")["emails"][0]["read"] is False
    read = mail.ok("read_email", email_id=first["id"])
    assert read["read"] is True and read["body"] == "Numbers for Q1."
    assert mail.ok("get_emails")["emails"][0]["read"] is True
    assert mail.ok("read_email", email_id=int(first["id"]))["id"] == first["id"]
    mail.err("read_email", "NOT_FOUND", email_id="99999")
    mail.err("read_email", "INVALID_ARGUMENT", email_id="abc")
    bob_copy = str(mail.kickoff.sent_pk)  # Bob's Sent copy is not Alice's
    mail.err("read_email", "NOT_FOUND", email_id=bob_copy)


def test_search(mail: Mail) -> None:
    def subjects(**args: Any) -> list[str]:
        args.setdefault("page_size", 50)
        return [e["subject"] for e in mail.ok("search_emails", **args)["emails"]]

    assert subjects(query="KICKOFF") == ["Project kickoff"]
    assert subjects(query="q1") == ["Budget review"]  # body
    assert subjects(query="campus news", page_size=5) == \
        [f"Newsletter {i:02d}" for i in (24, 23, 22, 21, 20)]  # sender name
    assert subjects(query="carol@uni") == ["Budget review", "Project kickoff"]  # from / cc
    assert subjects(query="dave@other") == ["Budget review"]  # to
    assert subjects(query="erin@other", folder="ALL") == []  # bcc is not searched
    assert subjects(query="lunch") == []
    assert subjects(query="lunch", folder="ALL") == ["Lunch?"]
    assert subjects(query="100%") == []
    page = mail.ok("search_emails", query="newsletter", page=3, page_size=10)
    assert page["total"] == NEWSLETTERS and len(page["emails"]) == 5
    assert page["total_pages"] == 3
    mail.err("search_emails", "INVALID_ARGUMENT", query="  ")
    mail.err("search_emails", "NOT_FOUND", query="x", folder="Nope")


def test_search_ignores_case_beyond_ascii(mail: Mail) -> None:
    with mail.db.write() as s:
        domain.deliver(s, sender="zoe@other.org", sender_name="ZOË ØDEGÅRD",
                       to="alice@uni.edu", subject="ÜBERSICHT der Prüfungen",
                       body="Die Straße ist gesperrt.", date="2025-01-13T08:00:00Z")

    def subjects(query: str, folder: str = "INBOX") -> list[str]:
        found = mail.ok("search_emails", query=query, folder=folder)["emails"]
        return [e["subject"] for e in found]

    assert subjects("übersicht") == subjects("PRÜFUNGEN") == ["ÜBERSICHT der Prüfungen"]
    assert subjects("zoë ødegård", folder="ALL") == ["ÜBERSICHT der Prüfungen"]  # sender name
    assert subjects("STRAßE") == subjects("straße") == ["ÜBERSICHT der Prüfungen"]
    assert subjects("prüfungen", folder="Sent") == [] and subjects("ĳssel") == []


def test_page_envelopes_follow_the_paging_contract(mail: Mail) -> None:
    keys = ["total", "page", "page_size", "total_pages"]
    assert list(mail.ok("get_emails", page_size=5)) == ["emails", *keys]
    assert list(mail.ok("search_emails", query="newsletter")) == ["emails", *keys]
    assert list(mail.ok("get_drafts")) == ["drafts", *keys]
    empty = mail.ok("get_emails", folder="Spam")
    assert empty == {"emails": [], "total": 0, "page": 1, "page_size": 20, "total_pages": 0}
    last = mail.ok("get_emails", page=6, page_size=5)
    assert len(last["emails"]) == 2 and last["total_pages"] == 6
    assert mail.ok("search_emails", query="newsletter", page=9)["total"] == NEWSLETTERS


def test_a_page_cut_by_the_output_cap_names_the_page_that_continues_it(make_world: Any) -> None:
    mail = build_mail(make_world, config={"max_output_chars": 2500})
    with mail.db.read() as s:
        everything = [e["id"] for e in domain.list_emails(s, 1, folder_id=1, page=1, size=50)[0]]
    seen, request, cuts = everything[:7], {"page": 2, "page_size": 7}, 0  # start mid-listing
    while len(seen) < len(everything):
        text = mail.ok_text("get_emails", **request)
        out = json.loads(text)
        assert len(text) <= 2500 and out["emails"] and out["total"] == len(everything)
        seen += [e["id"] for e in out["emails"]]
        follow = re.fullmatch(r"output cap reached after (\d+) items; request the next page "
                              r"with page=(\d+) and page_size=(\d+)", out.get("notice", ""))
        if follow:
            cuts += 1
            assert int(follow[1]) == len(out["emails"])
            request = {"page": int(follow[2]), "page_size": int(follow[3])}
        else:
            request["page"] += 1
    assert seen == everything and cuts >= 1  # nothing lost, nothing shown twice


def test_headers_and_stats(mail: Mail) -> None:
    kickoff = str(mail.kickoff.inbox_pks["alice@uni.edu"])
    headers = mail.ok("get_email_headers", email_id=kickoff)
    assert headers == {"message_id": mail.kickoff.message_id, "in_reply_to": None,
                       "from": "Bob <bob@uni.edu>", "to": ["alice@uni.edu"],
                       "cc": ["carol@uni.edu"], "subject": "Project kickoff",
                       "date": "2025-01-10T09:00:00Z", "content_type": "multipart/mixed"}
    budget = str(mail.budget.inbox_pks["alice@uni.edu"])
    assert mail.ok("get_email_headers", email_id=budget)["content_type"] == \
        "multipart/alternative"
    stats = mail.ok("get_mailbox_stats")
    assert stats["total_emails"] == NEWSLETTERS + 3 and stats["total_unread"] == NEWSLETTERS + 2
    assert stats["folders"][:2] == [{"name": "INBOX", "total": NEWSLETTERS + 2,
                                     "unread": NEWSLETTERS + 2},
                                    {"name": "Sent", "total": 1, "unread": 0}]
    assert mail.ok("get_mailbox_stats", folder_name="inbox") == \
        {"name": "INBOX", "total": NEWSLETTERS + 2, "unread": NEWSLETTERS + 2}
    mail.ok("read_email", email_id=kickoff)
    assert mail.ok("get_unread_count") == {"folder": "ALL", "unread": NEWSLETTERS + 1}
    assert mail.ok("get_unread_count", folder_name="Sent") == {"folder": "Sent", "unread": 0}
    mail.err("get_unread_count", "NOT_FOUND", folder_name="Nope")


# --- sending ----------------------------------------------------------------------------------

def test_send_email_delivers_copies_and_attachment_bytes(mail: Mail) -> None:
    sent = mail.ok("send_email", to="bob@uni.edu, dave@other.org", cc="Carol <carol@uni.edu>",
                   bcc="nobody@other.org", subject="Report", body="See attached.",
                   html_body="<p>See attached.</p>", attachments=["report.pdf"])
    assert sent["folder"] == "Sent" and sent["date"] == "2025-01-15T09:00:01Z"
    assert sent["to"] == ["bob@uni.edu", "dave@other.org"] and sent["cc"] == ["carol@uni.edu"]
    assert sent["bcc"] == ["nobody@other.org"]
    assert sent["delivered_to"] == ["bob@uni.edu", "carol@uni.edu"]
    assert sent["undeliverable"] == ["dave@other.org", "nobody@other.org"]
    assert sent["attachments"] == [{"filename": "report.pdf", "size": len(REPORT),
                                    "content_type": "application/pdf"}]
    assert sent["message_id"].startswith("<20250115T090001.") and sent["html_body"] is None
    (mail.world.workspace / "report.pdf").write_bytes(b"changed after sending")
    mail.login("bob@uni.edu")
    copy = mail.ok("get_emails")["emails"][0]
    assert copy["subject"] == "Report" and copy["bcc"] == [] and copy["read"] is False
    assert copy["message_id"] == sent["message_id"]
    saved = mail.ok("download_attachment", email_id=copy["id"], attachment_filename="report.pdf")
    assert saved == {"path": f"/workspace/attachments/{copy['id']}/report.pdf",
                     "filename": "report.pdf", "size": len(REPORT),
                     "content_type": "application/pdf"}
    assert (mail.world.workspace / "attachments" / copy["id"] / "report.pdf").read_bytes() == \
        REPORT
    mail.login("carol@uni.edu")
    assert mail.ok("get_emails")["emails"][0]["subject"] == "Report"


def test_send_a_zip_built_in_the_workspace(mail: Mail) -> None:
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w") as archive:
        archive.writestr("results/summary.csv", "course,grade\nMATH101,A\n")
    (mail.world.workspace / "out").mkdir()
    (mail.world.workspace / "out" / "results.zip").write_bytes(packed.getvalue())
    sent = mail.ok("send_email", to="bob@uni.edu", subject="Results", body="Zipped.",
                   attachments=["/workspace/out/results.zip"])
    assert sent["attachments"] == [{"filename": "results.zip", "size": len(packed.getvalue()),
                                    "content_type": "application/zip"}]
    (mail.world.workspace / "out" / "results.zip").unlink()  # the message holds the bytes
    mail.login("bob@uni.edu")
    copy = mail.ok("get_emails")["emails"][0]
    saved = mail.ok("download_attachment", email_id=copy["id"],
                    attachment_filename="results.zip", save_path="in/results.zip")
    assert saved["content_type"] == "application/zip"
    with zipfile.ZipFile(mail.world.workspace / "in" / "results.zip") as archive:
        assert archive.read("results/summary.csv") == b"course,grade\nMATH101,A\n"


def test_attachment_names_must_differ(mail: Mail) -> None:
    for folder in ("a", "b"):
        (mail.world.workspace / folder).mkdir()
        (mail.world.workspace / folder / "report.pdf").write_bytes(folder.encode())
    before = snapshot(mail.world)
    for paths in (["a/report.pdf", "b/report.pdf"], ["report.pdf", "report.pdf"]):
        assert "two attachments are named report.pdf" in mail.err(
            "send_email", "INVALID_ARGUMENT", to="bob@uni.edu", subject="s", body="b",
            attachments=paths)
    assert snapshot(mail.world) == before
    twice = [Attachment.of("x.txt", b"1"), Attachment.of("x.txt", b"2")]
    with mail.db.write() as s, pytest.raises(ToolFailure, match="two attachments"):
        domain.deliver(s, sender="bob@uni.edu", sender_name=None, to="alice@uni.edu",
                       subject="s", body="b", date="2025-01-13T00:00:00Z", attachments=twice)
    entry = {"from": "zoe@other.org", "date": "2025-01-02T10:00:00Z", "attachments": [
        {"filename": "x.txt", "data_base64": "MQ=="}, {"filename": "x.txt", "data_base64": "Mg=="}]}
    (mail.world.workspace / "dup.json").write_text(json.dumps([entry]))
    result = mail.ok("import_emails", import_path="dup.json")
    assert result["imported"] == 0 and "two attachments" in result["skipped"][0]["error"]


def test_mail_to_yourself_arrives(mail: Mail) -> None:
    sent = mail.ok("send_email", to="alice@uni.edu", subject="Reminder", body="Call Bob")
    assert sent["delivered_to"] == ["alice@uni.edu"] and sent["folder"] == "Sent"
    inbox = mail.ok("get_emails")["emails"][0]
    assert inbox["subject"] == "Reminder" and inbox["id"] != sent["id"]
    assert inbox["read"] is False


def test_send_email_rejections(mail: Mail) -> None:
    before = snapshot(mail.world)
    assert "'bob-at-uni' is not a valid" in \
        mail.err("send_email", "INVALID_ARGUMENT", to="bob-at-uni", subject="s", body="b")
    mail.err("send_email", "INVALID_ARGUMENT", to=" , ;", subject="s", body="b")
    mail.err("send_email", "INVALID_ARGUMENT", to="bob@uni.edu", cc="x@", subject="s", body="b")
    mail.err("send_email", "NOT_FOUND", to="bob@uni.edu", subject="s", body="b",
             attachments=["missing.pdf"])
    for escape in ("../world.json", "/etc/passwd", "../truth/truth.json"):
        text = mail.err("send_email", "PERMISSION_DENIED", to="bob@uni.edu", subject="s",
                        body="b", attachments=[escape])
        assert str(mail.world.root) not in text
    (mail.world.workspace / "folder").mkdir()
    mail.err("send_email", "INVALID_ARGUMENT", to="bob@uni.edu", subject="s", body="b",
             attachments=["folder"])
    with open(mail.world.workspace / "huge.bin", "wb") as fh:
        fh.truncate(domain.MAX_MESSAGE_BYTES + 1)
    assert "25 MB" in mail.err("send_email", "RESOURCE_EXHAUSTED", to="bob@uni.edu",
                               subject="s", body="b", attachments=["huge.bin"])
    assert snapshot(mail.world) == before


def test_reply_and_reply_all(mail: Mail) -> None:
    budget = str(mail.budget.inbox_pks["alice@uni.edu"])
    reply = mail.ok("reply_email", email_id=budget, body="Looks good.")
    assert reply["subject"] == "Re: Budget review" and reply["to"] == ["carol@uni.edu"]
    assert reply["cc"] == [] and reply["in_reply_to"] == mail.budget.message_id
    everyone = mail.ok("reply_email", email_id=budget, body="All fine.", reply_all=True,
                       cc="erin@other.org")
    assert everyone["to"] == ["carol@uni.edu", "dave@other.org"]
    assert everyone["cc"] == ["bob@uni.edu", "erin@other.org"]
    assert everyone["delivered_to"] == ["carol@uni.edu", "bob@uni.edu"]
    mail.login("carol@uni.edu")
    received = mail.ok("get_emails")["emails"][0]
    again = mail.ok("reply_email", email_id=received["id"], body="Thanks!")
    assert again["subject"] == "Re: Budget review" and again["to"] == ["alice@uni.edu"]
    assert again["in_reply_to"] == received["message_id"]
    mail.login("alice@uni.edu")
    own = str(mail.lunch.sent_pk)
    assert mail.ok("reply_email", email_id=own, body="Or 1pm?")["to"] == ["bob@uni.edu"]


def test_forward_reattaches_bytes(mail: Mail) -> None:
    kickoff = str(mail.kickoff.inbox_pks["alice@uni.edu"])
    fwd = mail.ok("forward_email", email_id=kickoff, to="carol@uni.edu", body="FYI")
    assert fwd["subject"] == "Fwd: Project kickoff"
    assert fwd["body"].startswith("FYI\n\n---------- Forwarded message ---------\n")
    assert "From: Bob <bob@uni.edu>" in fwd["body"]
    assert fwd["body"].endswith("Kickoff notes attached.")
    assert fwd["attachments"] == [{"filename": "plan.pdf", "size": len(PLAN),
                                   "content_type": "application/pdf"}]
    mail.login("carol@uni.edu")
    copy = mail.ok("get_emails")["emails"][0]
    assert copy["subject"] == "Fwd: Project kickoff"
    saved = mail.ok("download_attachment", email_id=copy["id"], attachment_filename="plan.pdf",
                    save_path="fwd/plan.pdf")
    assert saved["path"] == "/workspace/fwd/plan.pdf"
    assert (mail.world.workspace / "fwd" / "plan.pdf").read_bytes() == PLAN
    again = mail.ok("forward_email", email_id=copy["id"], to="bob@uni.edu")
    assert again["subject"] == "Fwd: Project kickoff"


# --- organising -------------------------------------------------------------------------------

def test_move_mark_and_delete(mail: Mail) -> None:
    kickoff = str(mail.kickoff.inbox_pks["alice@uni.edu"])
    moved = mail.ok("move_email", email_id=kickoff, target_folder="archive")
    assert moved["folder"] == "Archive" and moved["id"] == kickoff
    mail.err("move_email", "NOT_FOUND", email_id=kickoff, target_folder="Nowhere")
    assert mail.ok("delete_email", email_id=kickoff) == {"id": kickoff,
                                                         "action": "moved_to_trash"}
    assert inbox_ids(mail, folder="Trash") == [kickoff]
    assert mail.ok("delete_email", email_id=kickoff) == {"id": kickoff, "action": "deleted"}
    assert inbox_ids(mail, folder="Trash") == []
    mail.err("delete_email", "NOT_FOUND", email_id=kickoff)
    with mail.db.read() as s:
        assert domain.attachments_of(s, int(kickoff)) == []


def test_batch_tools_report_per_item(mail: Mail) -> None:
    a, b = str(mail.news[0]), str(mail.news[1])
    marked = mail.ok("mark_emails", email_ids=[a, "99999", b, "x1", a], status="important")
    assert marked == {"updated": [a, b], "not_found": ["99999", "x1"]}
    flags = {e["id"]: e["important"] for e in mail.ok("get_emails", page_size=50)["emails"]}
    assert flags[a] and flags[b] and sum(flags.values()) == 2
    assert mail.ok("mark_emails", email_ids=[a], status="read")["updated"] == [a]
    mail.err("mark_emails", "INVALID_ARGUMENT", email_ids=[a], status="flagged")
    mail.err("mark_emails", "INVALID_ARGUMENT", email_ids=[], status="read")
    assert "99999" in mail.err("mark_emails", "NOT_FOUND", email_ids=["99999"], status="read")
    moved = mail.ok("move_emails", email_ids=[a, b, "424242"], target_folder="Spam")
    assert moved == {"moved": [a, b], "not_found": ["424242"]}
    assert sorted(inbox_ids(mail, folder="Spam")) == sorted([a, b])
    mail.err("move_emails", "NOT_FOUND", email_ids=["424242"], target_folder="Spam")
    mail.ok("delete_email", email_id=a)  # now in Trash
    deleted = mail.ok("delete_emails", email_ids=[a, b, "777"])
    assert deleted == {"moved_to_trash": [b], "deleted": [a], "not_found": ["777"]}
    mail.err("delete_emails", "NOT_FOUND", email_ids=[a])


def test_folders(mail: Mail) -> None:
    assert mail.ok("create_folder", folder_name="Projects") == \
        {"name": "Projects", "total": 0, "unread": 0}
    mail.err("create_folder", "ALREADY_EXISTS", folder_name="projects")
    mail.err("create_folder", "ALREADY_EXISTS", folder_name="Inbox")
    mail.err("create_folder", "INVALID_ARGUMENT", folder_name="ALL")
    mail.err("create_folder", "INVALID_ARGUMENT", folder_name="  ")
    mail.ok("move_emails", email_ids=[str(p) for p in mail.news[:3]], target_folder="Projects")
    folders = {f["name"]: f for f in mail.ok("get_folders")["folders"]}
    assert folders["Projects"] == {"name": "Projects", "total": 3, "unread": 3}
    assert folders["INBOX"]["total"] == NEWSLETTERS - 1
    for protected in ("INBOX", "Trash", "archive"):
        mail.err("delete_folder", "FAILED_PRECONDITION", folder_name=protected)
    assert mail.ok("delete_folder", folder_name="projects") == \
        {"deleted": "Projects", "moved_to_trash": 3}
    names = [f["name"] for f in mail.ok("get_folders")["folders"]]
    assert "Projects" not in names and len(inbox_ids(mail, folder="Trash")) == 3
    mail.err("delete_folder", "NOT_FOUND", folder_name="Projects")


# --- drafts -----------------------------------------------------------------------------------

def test_drafts_round_trip(mail: Mail) -> None:
    draft = mail.ok("save_draft", subject="Plan", body="Draft text", to="bob@uni.edu; carol@uni.edu")
    assert draft == {"id": draft["id"], "subject": "Plan", "body": "Draft text",
                     "html_body": None, "to": ["bob@uni.edu", "carol@uni.edu"], "cc": [],
                     "bcc": [], "updated_at": "2025-01-15T09:00:01Z"}
    second = mail.ok("save_draft", subject="Other", body="x")
    listed = mail.ok("get_drafts")
    assert [d["id"] for d in listed["drafts"]] == [second["id"], draft["id"]]
    assert (listed["total"], listed["total_pages"]) == (2, 1)
    assert mail.ok("get_drafts", page=2, page_size=1)["drafts"][0]["id"] == draft["id"]
    mail.err("get_drafts", "INVALID_ARGUMENT", page_size=51)
    updated = mail.ok("update_draft", draft_id=draft["id"], subject="Plan v2", to="",
                      cc="dave@other.org")
    assert (updated["subject"], updated["body"], updated["to"], updated["cc"]) == \
        ("Plan v2", "Draft text", [], ["dave@other.org"])
    assert updated["updated_at"] == "2025-01-15T09:00:03Z"
    assert mail.ok("get_drafts")["drafts"][0]["id"] == draft["id"]
    assert "unknown parameter 'updated_at'" in mail.err(
        "update_draft", "INVALID_ARGUMENT", draft_id=draft["id"], updated_at="2020-01-01")
    mail.err("update_draft", "INVALID_ARGUMENT", draft_id=draft["id"])
    assert mail.ok("delete_draft", draft_id=draft["id"]) == {"deleted": draft["id"]}
    mail.err("delete_draft", "NOT_FOUND", draft_id=draft["id"])
    mail.login("bob@uni.edu")
    mail.err("update_draft", "NOT_FOUND", draft_id=second["id"], subject="mine now")


def test_failing_write_leaves_database_unchanged(mail: Mail) -> None:
    draft = mail.ok("save_draft", subject="Keep", body="Keep this", to="bob@uni.edu")
    before = snapshot(mail.world)
    mail.err("update_draft", "INVALID_ARGUMENT", draft_id=draft["id"], subject="Changed",
             to="carol@uni.edu", bcc="broken@")
    mail.err("reply_email", "INVALID_ARGUMENT", email_id=str(mail.news[0]), body="b",
             cc="nope")
    mail.err("create_user", "ALREADY_EXISTS", email="bob@uni.edu", name="B", password="p")
    assert snapshot(mail.world) == before
    assert mail.ok("get_drafts")["drafts"][0]["subject"] == "Keep"


# --- files ------------------------------------------------------------------------------------

def test_export_and_import_round_trip(mail: Mail) -> None:
    exported = mail.ok("export_emails", export_path="out/inbox.json", max_emails=3)
    assert exported == {"path": "/workspace/out/inbox.json", "count": 3}
    document = json.loads((mail.world.workspace / "out" / "inbox.json").read_text())
    assert [e["subject"] for e in document["emails"]] == \
        ["Budget review", "Project kickoff", "Newsletter 24"]
    everything = mail.ok("export_emails", export_all_folders=True)
    assert everything == {"path": "/workspace/emails_export.json", "count": NEWSLETTERS + 3}
    mail.err("export_emails", "INVALID_ARGUMENT", folder="INBOX", export_all_folders=True)
    mail.err("export_emails", "INVALID_ARGUMENT", max_emails=0)

    mail.login("bob@uni.edu")
    result = mail.ok("import_emails", import_path="/workspace/out/inbox.json",
                     target_folder="Archive", preserve_folders=False)
    assert result == {"imported": 3, "skipped": []}
    archive = mail.ok("get_emails", folder="Archive")["emails"]
    assert [e["subject"] for e in archive] == \
        ["Budget review", "Project kickoff", "Newsletter 24"]
    kickoff = archive[1]
    assert kickoff["from"] == "Bob <bob@uni.edu>" and kickoff["cc"] == ["carol@uni.edu"]
    mail.ok("download_attachment", email_id=kickoff["id"], attachment_filename="plan.pdf",
            save_path="imported.pdf")
    assert (mail.world.workspace / "imported.pdf").read_bytes() == PLAN


def test_import_skips_invalid_entries_each_in_its_own_savepoint(mail: Mail) -> None:
    entries = [
        {"from": "Zoe <zoe@other.org>", "to": "alice@uni.edu", "subject": "Hello",
         "body": "Hi", "date": "2025-01-02T10:00:00+01:00", "folder": "Imported"},
        {"from": "zoe@other.org", "subject": "No date", "folder": "Ghost"},
        {"from": "zoe@other.org", "date": "2025-01-02T10:00:00Z", "folder": "Ghost2",
         "attachments": [{"filename": "a.txt", "data_base64": "***"}]},
        "not an object",
        {"from": "bad address", "date": "2025-01-02T10:00:00Z"},
    ]
    (mail.world.workspace / "in.json").write_text(json.dumps(entries))
    result = mail.ok("import_emails", import_path="in.json")
    assert result["imported"] == 1
    assert [s["index"] for s in result["skipped"]] == [1, 2, 3, 4]
    assert "date" in result["skipped"][0]["error"]
    assert "base64" in result["skipped"][1]["error"]
    names = [f["name"] for f in mail.ok("get_folders")["folders"]]
    assert "Imported" in names and "Ghost" not in names and "Ghost2" not in names
    imported = mail.ok("get_emails", folder="Imported")["emails"][0]
    assert imported["date"] == "2025-01-02T09:00:00Z" and imported["from"] == "Zoe <zoe@other.org>"
    (mail.world.workspace / "bad.json").write_text("{not json")
    mail.err("import_emails", "INVALID_ARGUMENT", import_path="bad.json")
    mail.err("import_emails", "NOT_FOUND", import_path="missing.json")


def test_export_and_import_sizes_are_bounded(mail: Mail, monkeypatch: Any) -> None:
    monkeypatch.setattr(email_files, "MAX_EXPORT_ATTACHMENT_BYTES", len(PLAN) - 1)
    assert "attachments" in mail.err("export_emails", "RESOURCE_EXHAUSTED")
    assert not (mail.world.workspace / "emails_export.json").exists()
    assert mail.ok("export_emails", folder="Sent")["count"] == 1  # no attachment there
    monkeypatch.setattr(email_files, "MAX_IMPORT_BYTES", 100)
    (mail.world.workspace / "big.json").write_text(json.dumps([{"body": "x" * 100}]))
    assert "100 bytes" in mail.err("import_emails", "RESOURCE_EXHAUSTED", import_path="big.json")


def test_file_paths_stay_in_the_workspace(mail: Mail) -> None:
    kickoff = str(mail.kickoff.inbox_pks["alice@uni.edu"])
    outside = mail.world.root / "escaped.json"
    for path in ("../escaped.json", str(outside), "/workspace/../escaped.json"):
        mail.err("export_emails", "PERMISSION_DENIED", export_path=path)
        mail.err("download_attachment", "PERMISSION_DENIED", email_id=kickoff,
                 attachment_filename="plan.pdf", save_path=path)
    (mail.world.truth_dir / "truth.json").write_text("[]")
    mail.err("import_emails", "PERMISSION_DENIED", import_path="../truth/truth.json")
    link = mail.world.workspace / "link"
    link.symlink_to(mail.world.root)
    mail.err("export_emails", "PERMISSION_DENIED", export_path="link/escaped.json")
    assert not outside.exists()
    mail.err("download_attachment", "NOT_FOUND", email_id=kickoff, attachment_filename="x.pdf")


# --- whole-server properties ------------------------------------------------------------------

def test_no_password_or_hash_in_any_output(mail: Mail) -> None:
    with mail.db.read() as s:
        hashes = [r[0] for r in s.connection().exec_driver_sql(
            "SELECT password_hash FROM email_account")]
    secrets = [*PASSWORDS.values(), *SALTS.values(), *hashes, "pbkdf2"]
    outputs = [mail.call("login", email="alice@uni.edu", password=PASSWORDS["alice@uni.edu"]),
               mail.call("login", email="alice@uni.edu", password="bad"),
               mail.call("list_users"), mail.call("check_connection"),
               mail.call("create_user", email="eve@uni.edu", name="Eve", password="eve-pw-1")]
    outputs += [mail.call(tool, **args) for tool, args in ARGS.items() if tool != "logout"]
    outputs.append(mail.call("logout"))
    assert sum(not o.is_error for o in outputs) >= 20
    exported = (mail.world.workspace / "emails_export.json").read_text()
    for text in [o.text for o in outputs] + [exported]:
        for secret in [*secrets, "eve-pw-1"]:
            assert secret not in text


def test_schemas_follow_the_rules(mail: Mail) -> None:
    for name, tool in mail.runtime.tools.items():
        assert tool.description and len(tool.description) <= 1024, name
        schema = tool.parameters
        assert schema["additionalProperties"] is False
        for param, spec in schema["properties"].items():
            assert spec.get("description"), (name, param)
            assert "anyOf" not in spec and "title" not in spec, (name, param)
    size = mail.runtime.tools["get_emails"].parameters["properties"]["page_size"]
    assert size["default"] == 20 and "max 50" in size["description"]
    status = mail.runtime.tools["mark_emails"].parameters["properties"]["status"]
    assert status["enum"] == ["read", "unread", "important", "not_important"]
    tags = mail.runtime.tools["read_email"].tags
    assert {"write", "email", "core"} <= tags


def test_same_calls_give_identical_outputs(make_world: Any) -> None:
    script = [("get_emails", {"page_size": 5}), ("send_email", {"to": "bob@uni.edu",
                                                                 "subject": "x", "body": "y"}),
              ("search_emails", {"query": "x", "folder": "ALL"}), ("get_folders", {})]
    first = build_mail(make_world)
    texts = [first.call(tool, **args).text for tool, args in script]
    second = build_mail(make_world)  # the fixture rebuilds the same world directory
    assert [second.call(tool, **args).text for tool, args in script] == texts


def test_through_the_fastmcp_client(mail: Mail) -> None:
    async def run() -> tuple[Any, Any, list[str]]:
        async with fastmcp.Client(mail.runtime.app) as client:
            tools = [t.name for t in await client.list_tools()]
            good = await client.call_tool("get_emails", {"page_size": 2},
                                          raise_on_error=False)
            bad = await client.call_tool("get_emails", {"page_size": 0}, raise_on_error=False)
            return good, bad, tools

    good, bad, tools = asyncio.run(run())
    assert len(tools) == 30 and "send_email" in tools
    assert not good.is_error
    payload = json.loads(good.content[0].text)
    assert payload["total"] == NEWSLETTERS + 2 and len(payload["emails"]) == 2
    assert bad.is_error
    assert bad.content[0].text.startswith("Error [INVALID_ARGUMENT]: get_emails: ")
