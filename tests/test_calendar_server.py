"""The calendar server over a world with pre-existing events added through its domain layer."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from loca.core.outputs import Rows
from mock_servers import snapshot_rules
from mock_servers.calendar import domain, toolbox
from mock_servers.calendar.domain import Person
from mock_servers.core import snapshot
from tests.harness import ServerHarness

OWNER = {"email": "dana@uni.edu", "name": "Dana Park"}
ZONE = "America/New_York"
WINDOW = {"timeMin": "2025-09-01T00:00:00Z", "timeMax": "2026-01-01T00:00:00Z"}


class Cal(ServerHarness):
    def ok(self, tool: str, **args: Any) -> Any:
        return json.loads(self.ok_text(tool, **args))

    def listed(self, **args: Any) -> list[str]:
        return [e["id"] for e in self.ok("list_events", **{**WINDOW, **args})["items"]]


def build_calendar(make_world: Any, config: dict[str, Any] | None = None,
                   accounts: dict[str, Any] | None = None) -> Cal:
    world, db = make_world(["calendar"], now="2025-09-15T09:00:00Z", tz=ZONE,
                           accounts={"calendar": OWNER} if accounts is None else accounts)
    owner = Person(OWNER["email"], OWNER["name"])
    with db.write() as s:
        domain.add_event(s, summary="SR reading group", start={"dateTime": "2025-09-20T10:00:00"},
                         end={"dateTime": "2025-09-20T11:00:00"}, default_zone=ZONE,
                         created="2025-08-01T12:00:00Z", creator=owner, location="Room 4",
                         description="Paper: SRL survey")
        domain.add_event(s, summary="Faculty retreat", start={"date": "2025-10-03"},
                         end={"date": "2025-10-05"}, default_zone=ZONE,
                         created="2025-08-02T12:00:00Z", updated="2025-08-03T12:00:00Z",
                         creator=Person("chair@uni.edu", "Chair"),
                         attendees=[(owner, "accepted"), (Person("lee@uni.edu"), "needsAction")])
        domain.add_event(s, summary="Standup", start={"dateTime": "2025-09-22T09:00:00Z",
                                                      "timeZone": "Europe/Paris"},
                         end={"dateTime": "2025-09-22T09:15:00Z"}, default_zone=ZONE,
                         created="2025-08-04T12:00:00Z", creator=owner)
    return Cal(toolbox, world, config)


@pytest.fixture
def cal(make_world: Any) -> Cal:
    return build_calendar(make_world)


def _timed(start: str, end: str, zone: str | None = None) -> dict[str, Any]:
    extra = {"timeZone": zone} if zone else {}
    return {"start": {"dateTime": start, **extra}, "end": {"dateTime": end, **extra}}


# --- create -----------------------------------------------------------------------------------

def test_create_event_projection(cal: Cal) -> None:
    event = cal.ok("create_event", summary="ACL camera-ready deadline",
                   **_timed("2025-10-01T09:00:00-12:00", "2025-10-01T09:30:00-12:00"))
    assert list(event) == ["id", "status", "summary", "description", "location", "start", "end",
                           "created", "updated", "creator", "organizer", "attendees"]
    assert event["id"] == "event_4" and event["status"] == "confirmed"
    assert event["start"] == {"dateTime": "2025-10-01T17:00:00-04:00", "timeZone": ZONE}
    assert event["end"] == {"dateTime": "2025-10-01T17:30:00-04:00", "timeZone": ZONE}
    assert event["created"] == event["updated"] == "2025-09-15T09:00:01Z"  # the virtual clock
    assert event["creator"] == event["organizer"] == {"email": OWNER["email"],
                                                      "displayName": OWNER["name"]}
    assert event["description"] is None and event["attendees"] == []
    assert cal.ok("get_event", eventId="event_4") == event


def test_times_without_offset_are_read_in_the_given_zone_else_the_world_zone(cal: Cal) -> None:
    paris = cal.ok("create_event", summary="a", start={"dateTime": "2025-10-02T09:00:00",
                                                       "timeZone": "Europe/Paris"},
                   end={"dateTime": "2025-10-02T10:00"})
    assert paris["start"] == {"dateTime": "2025-10-02T09:00:00+02:00", "timeZone": "Europe/Paris"}
    assert paris["end"]["dateTime"] == "2025-10-02T10:00:00+02:00"
    local = cal.ok("create_event", summary="b", **_timed("2025-12-02T09:00:00", "2025-12-02T10:00:00"))
    assert local["start"] == {"dateTime": "2025-12-02T09:00:00-05:00", "timeZone": ZONE}
    utc = cal.ok("create_event", summary="c", **_timed("2025-12-02T09:00:00Z", "2025-12-02T10:00:00Z",
                                                       "UTC"))
    assert utc["start"] == {"dateTime": "2025-12-02T09:00:00+00:00", "timeZone": "UTC"}


def test_all_day_events_have_an_exclusive_end_date(cal: Cal) -> None:
    event = cal.ok("create_event", summary="Holiday", start={"date": "2025-11-27"},
                   end={"date": "2025-11-28"}, location="home")
    assert event["start"] == {"date": "2025-11-27"} and event["end"] == {"date": "2025-11-28"}
    text = cal.fails("create_event", "INVALID_ARGUMENT", summary="x", start={"date": "2025-11-27"},
                     end={"date": "2025-11-27"})
    assert "exclusive" in text


@pytest.mark.parametrize(("start", "end", "why"), [
    ({"dateTime": "tomorrow 9am"}, {"dateTime": "2025-10-01T10:00:00Z"}, "RFC 3339"),
    ({"dateTime": "2025-13-01T09:00:00Z"}, {"dateTime": "2025-10-01T10:00:00Z"}, "not a valid"),
    ({"dateTime": "2025-10-01"}, {"dateTime": "2025-10-01T10:00:00Z"}, "RFC 3339"),
    ({"dateTime": "2025-10-01T11:00:00Z"}, {"dateTime": "2025-10-01T10:00:00Z"}, "after start"),
    ({"dateTime": "2025-10-01T10:00:00Z"}, {"dateTime": "2025-10-01T10:00:00Z"}, "after start"),
    ({"date": "2025-10-01"}, {"dateTime": "2025-10-02T10:00:00Z"}, "both"),
    ({"date": "2025-10-01", "dateTime": "2025-10-01T10:00:00Z"}, {"date": "2025-10-02"},
     "exactly one"),
    ({}, {"date": "2025-10-02"}, "exactly one"),
    ({"date": "2025-02-30"}, {"date": "2025-03-02"}, "not a date"),
    ({"date": "2025-10-01"}, {"date": "2025-09-30"}, "after start.date"),
    ({"dateTime": "2025-10-01T09:00:00", "timeZone": "Mars/Olympus"},
     {"dateTime": "2025-10-01T10:00:00"}, "IANA"),
    ({"dateTime": "2025-10-01T09:00:00", "timeZone": "Europe/Paris"},
     {"dateTime": "2025-10-01T10:00:00", "timeZone": "Europe/Rome"}, "one time zone"),
    ({"dateTime": "2025-10-01T09:00:00.250Z"}, {"dateTime": "2025-10-01T10:00:00Z"}, "second"),
    ({"dateTime": "2026-03-08T02:30:00"}, {"dateTime": "2026-03-08T04:00:00"}, "does not exist"),
    ({"dateTime": "0001-01-01T00:00:00+01:00"}, {"dateTime": "2025-10-01T10:00:00Z"}, "years"),
])
def test_bad_times_are_rejected(cal: Cal, start: dict[str, Any], end: dict[str, Any],
                                why: str) -> None:
    text = cal.fails("create_event", "INVALID_ARGUMENT", summary="x", start=start, end=end)
    assert why in text
    assert cal.listed() == ["event_1", "event_3", "event_2"]  # nothing was created


def test_argument_errors(cal: Cal) -> None:
    cal.fails("create_event", "INVALID_ARGUMENT", summary="x", start={"dateTime": "2025-10-01T09:00Z",
                                                                      "tz": "UTC"},
              end={"dateTime": "2025-10-01T10:00Z"})
    cal.fails("create_event", "INVALID_ARGUMENT", summary="", **_timed("2025-10-01T09:00Z",
                                                                        "2025-10-01T10:00Z"))
    cal.fails("create_event", "INVALID_ARGUMENT", summary=" ", **_timed("2025-10-01T09:00Z",
                                                                         "2025-10-01T10:00Z"))
    cal.fails("create_event", "INVALID_ARGUMENT", summary="x", start="2025-10-01T09:00Z",
              end="2025-10-01T10:00Z")
    cal.fails("create_event", "INVALID_ARGUMENT", summary="x", attendees=[],
              **_timed("2025-10-01T09:00Z", "2025-10-01T10:00Z"))
    cal.fails("create_event", "INVALID_ARGUMENT", summary="x" * 1025,
              **_timed("2025-10-01T09:00Z", "2025-10-01T10:00Z"))


def test_without_an_owner_writes_fail_clearly_and_reads_work(make_world: Any) -> None:
    cal = build_calendar(make_world, accounts={})
    text = cal.fails("create_event", "FAILED_PRECONDITION", summary="x",
                     **_timed("2025-10-01T09:00Z", "2025-10-01T10:00Z"))
    assert "calendar owner" in text
    cal.fails("update_event", "FAILED_PRECONDITION", eventId="event_1", summary="y")
    cal.fails("delete_event", "FAILED_PRECONDITION", eventId="event_1")
    assert cal.listed() == ["event_1", "event_3", "event_2"]


# --- reference defects ------------------------------------------------------------------------

def test_unparseable_time_min_is_an_error_not_now(cal: Cal) -> None:
    for bad in ("now", "", "2025-09-15", "2025-09-15T25:00:00Z"):
        args = {**WINDOW, "timeMin": bad}
        if bad == "2025-09-15":  # a date is a valid bound: local midnight
            assert cal.ok("list_events", **args)["count"] == 3
        else:
            cal.fails("list_events", "INVALID_ARGUMENT", **args)
    cal.fails("list_events", "INVALID_ARGUMENT", timeMin="2025-10-01T00:00:00Z",
              timeMax="2025-10-01T00:00:00Z")
    cal.fails("list_events", "INVALID_ARGUMENT", timeMin="2025-10-01T00:00:00Z")


def test_listing_uses_overlap_not_start_time(cal: Cal) -> None:
    # the reading group runs 14:00-15:00Z; a window starting inside it still lists it
    assert cal.listed(timeMin="2025-09-20T14:30:00Z", timeMax="2025-09-20T18:00:00Z") == ["event_1"]
    assert cal.listed(timeMin="2025-09-20T15:00:00Z", timeMax="2025-09-20T18:00:00Z") == []
    assert cal.listed(timeMin="2025-09-20T12:00:00Z", timeMax="2025-09-20T14:00:00Z") == []


def test_all_day_events_compare_as_instants_in_their_zone(cal: Cal) -> None:
    # Oct 3-4 in New York is 2025-10-03T04:00Z .. 2025-10-05T04:00Z
    assert cal.listed(timeMin="2025-10-03T02:00:00Z", timeMax="2025-10-03T04:00:00Z") == []
    assert cal.listed(timeMin="2025-10-03T02:00:00Z", timeMax="2025-10-03T04:00:01Z") == ["event_2"]
    assert cal.listed(timeMin="2025-10-04T23:30:00-04:00", timeMax="2025-10-06T00:00:00Z") == [
        "event_2"]
    assert cal.listed(timeMin="2025-10-05T00:00:00-04:00", timeMax="2025-10-06T00:00:00Z") == []


def test_creator_is_the_world_owner_and_ids_are_never_reused(cal: Cal) -> None:
    first = cal.ok("create_event", summary="x", **_timed("2025-10-01T09:00Z", "2025-10-01T10:00Z"))
    assert first["creator"]["email"] == OWNER["email"]
    assert cal.ok("delete_event", eventId=first["id"]) == {"deleted": "event_4"}
    second = cal.ok("create_event", summary="y", **_timed("2025-10-01T09:00Z", "2025-10-01T10:00Z"))
    assert second["id"] == "event_5"
    cal.fails("get_event", "NOT_FOUND", eventId="event_4")


def test_creating_events_only_appends_rows(cal: Cal) -> None:
    rules = snapshot_rules(["calendar"], [Rows("cal_event")])
    before = snapshot.take(cal.world, rules)
    cal.ok("create_event", summary="x", **_timed("2025-10-01T09:00Z", "2025-10-01T10:00Z"))
    cal.listed()
    assert snapshot.changes(cal.world, before, rules) == []
    cal.ok("update_event", eventId="event_1", location="Room 5")
    assert snapshot.changes(cal.world, before, rules) == [
        "existing rows of cal_event changed or were deleted"]


# --- listing ----------------------------------------------------------------------------------

def _all_pages(cal: Cal, **args: Any) -> tuple[list[str], list[dict[str, Any]]]:
    ids, pages, token = [], [], None
    while True:
        page = cal.ok("list_events", **{**WINDOW, **args}, **({"pageToken": token} if token else {}))
        pages.append(page)
        ids += [e["id"] for e in page["items"]]
        assert page["count"] == len(page["items"])
        token = page["nextPageToken"]
        if token is None:
            return ids, pages


def test_page_tokens_walk_every_event_once(cal: Cal) -> None:
    for day in range(1, 8):
        cal.ok("create_event", summary=f"day {day}",
               **_timed(f"2025-11-0{day}T09:00Z", f"2025-11-0{day}T10:00Z"))
    ids, pages = _all_pages(cal, maxResults=3)
    assert ids == ["event_1", "event_3", "event_2", *[f"event_{n}" for n in range(4, 11)]]
    assert [p["count"] for p in pages] == [3, 3, 3, 1]
    assert _all_pages(cal, maxResults="3")[0] == ids  # lossless coercion
    assert _all_pages(cal, maxResults=500) == (ids, [pages[0] | {
        "items": [e for p in pages for e in p["items"]], "count": 10, "nextPageToken": None}])


def test_forged_and_stale_page_tokens_are_rejected(make_world: Any) -> None:
    cal = build_calendar(make_world)
    token = cal.ok("list_events", **WINDOW, maxResults=1)["nextPageToken"]
    assert token == cal.ok("list_events", **WINDOW, maxResults=1)["nextPageToken"]  # deterministic
    assert cal.ok("list_events", **WINDOW, maxResults=1, pageToken=token)["items"][0]["id"] == "event_3"
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    forged = raw.replace('"2025-09-20T14:00:00Z"', '"2025-01-01T00:00:00Z"')
    for bad in ("abc", "==", token[:-3], base64.urlsafe_b64encode(forged.encode()).decode()):
        text = cal.fails("list_events", "INVALID_ARGUMENT", **WINDOW, pageToken=bad)
        assert "not a token this calendar issued" in text
    for other in ({"q": "x"}, {"orderBy": "updated"}, {"timeMax": "2026-02-01T00:00:00Z"}):
        text = cal.fails("list_events", "INVALID_ARGUMENT", **{**WINDOW, **other}, pageToken=token)
        assert "other timeMin, timeMax, orderBy or q" in text
    cal.world.meta.seed = 1  # the same listing in a world of another seed
    cal.fails("list_events", "INVALID_ARGUMENT", **WINDOW, pageToken=token)


def test_order_by_updated_and_free_text(cal: Cal) -> None:
    assert cal.listed(q="srl") == ["event_1"]  # description
    assert cal.listed(q="ROOM 4") == ["event_1"]  # location
    assert cal.listed(q="retreat") == ["event_2"]  # summary
    assert cal.listed(q="100%") == []
    assert cal.listed(orderBy="updated") == ["event_1", "event_2", "event_3"]
    cal.ok("update_event", eventId="event_1", description="moved")
    assert cal.listed(orderBy="updated") == ["event_2", "event_3", "event_1"]
    cal.fails("list_events", "INVALID_ARGUMENT", **WINDOW, orderBy="summary")
    cal.fails("list_events", "INVALID_ARGUMENT", **WINDOW, maxResults=0)
    cal.fails("list_events", "INVALID_ARGUMENT", **WINDOW, maxResults=501)


def test_listing_stays_under_the_output_cap_and_pages_on(make_world: Any) -> None:
    cal = build_calendar(make_world, {"max_output_chars": 2500})
    for day in range(1, 10):
        cal.ok("create_event", summary=f"day {day}", description="d" * 200,
               **_timed(f"2025-11-0{day}T09:00Z", f"2025-11-0{day}T10:00Z"))
    first = cal.ok_text("list_events", **WINDOW)
    assert len(first) <= 2500
    page = json.loads(first)
    assert 0 < page["count"] == len(page["items"]) < 12 and page["nextPageToken"]
    assert page["notice"].startswith(f"output cap reached after {page['count']} items")
    ids, pages = _all_pages(cal)
    assert ids == ["event_1", "event_3", "event_2", *[f"event_{n}" for n in range(4, 13)]]
    assert all(len(json.dumps(p, ensure_ascii=False, separators=(",", ":"))) <= 2500 for p in pages)


def test_attendees_and_explicit_history_from_the_domain(cal: Cal) -> None:
    retreat = cal.ok("get_event", eventId="event_2")
    assert retreat["created"] == "2025-08-02T12:00:00Z" and retreat["updated"] == "2025-08-03T12:00:00Z"
    assert retreat["creator"] == retreat["organizer"] == {"email": "chair@uni.edu",
                                                          "displayName": "Chair"}
    assert retreat["attendees"] == [
        {"email": OWNER["email"], "displayName": OWNER["name"], "responseStatus": "accepted"},
        {"email": "lee@uni.edu", "displayName": None, "responseStatus": "needsAction"}]
    standup = cal.ok("get_event", eventId="event_3")
    assert standup["start"] == {"dateTime": "2025-09-22T11:00:00+02:00", "timeZone": "Europe/Paris"}


# --- update, delete, get ----------------------------------------------------------------------

def test_update_event_keeps_what_is_not_given(cal: Cal) -> None:
    event = cal.ok("update_event", eventId="event_1", end={"dateTime": "2025-09-20T12:00:00"})
    assert event["start"]["dateTime"] == "2025-09-20T10:00:00-04:00"
    assert event["end"]["dateTime"] == "2025-09-20T12:00:00-04:00"
    assert event["location"] == "Room 4" and event["updated"] == "2025-09-15T09:00:01Z"
    moved = cal.ok("update_event", eventId="event_1",
                   start={"dateTime": "2025-09-20T15:00:00", "timeZone": "Europe/London"})
    assert moved["start"] == {"dateTime": "2025-09-20T15:00:00+01:00", "timeZone": "Europe/London"}
    assert moved["end"] == {"dateTime": "2025-09-20T17:00:00+01:00", "timeZone": "Europe/London"}
    days = cal.ok("update_event", eventId="event_2", end={"date": "2025-10-04"}, summary="Retreat")
    assert days["start"] == {"date": "2025-10-03"} and days["end"] == {"date": "2025-10-04"}
    assert days["summary"] == "Retreat"


def test_update_event_validates_the_result(cal: Cal) -> None:
    before = cal.ok("get_event", eventId="event_1")
    cal.fails("update_event", "INVALID_ARGUMENT", eventId="event_1",
              start={"dateTime": "2025-09-20T11:30:00"})
    cal.fails("update_event", "INVALID_ARGUMENT", eventId="event_1", end={"date": "2025-09-21"})
    cal.fails("update_event", "INVALID_ARGUMENT", eventId="event_1")
    cal.fails("update_event", "INVALID_ARGUMENT", eventId="event_1", summary="")
    cal.fails("update_event", "NOT_FOUND", eventId="event_99", summary="x")
    cal.fails("update_event", "INVALID_ARGUMENT", eventId="99", summary="x")
    assert cal.ok("get_event", eventId="event_1") == before


def test_delete_and_get(cal: Cal) -> None:
    assert cal.ok("delete_event", eventId=" event_2 ") == {"deleted": "event_2"}
    cal.fails("delete_event", "NOT_FOUND", eventId="event_2")
    cal.fails("get_event", "NOT_FOUND", eventId="event_2")
    for bad in ("event_0", "event_x", "event_01", "x" * 64):
        cal.fails("get_event", "INVALID_ARGUMENT", eventId=bad)
    assert cal.listed() == ["event_1", "event_3"]


# --- determinism, schemas ---------------------------------------------------------------------

def test_same_calls_give_identical_outputs(make_world: Any) -> None:
    script: list[tuple[str, dict[str, Any]]] = [
        ("create_event", {"summary": "x", **_timed("2025-10-01T09:00Z", "2025-10-01T10:00Z")}),
        ("list_events", {**WINDOW, "maxResults": 2}),
        ("update_event", {"eventId": "event_4", "location": "here"}),
        ("list_events", {**WINDOW, "orderBy": "updated"})]
    first = build_calendar(make_world)
    texts = [first.ok_text(tool, **args) for tool, args in script]
    second = build_calendar(make_world)
    assert [second.ok_text(tool, **args) for tool, args in script] == texts


