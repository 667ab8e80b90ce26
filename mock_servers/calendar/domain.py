"""The calendar shared by the calendar tools, world generators and checkers: events of the
world owner's primary calendar, the `Event` projection, and listings with Google's overlap
rule and signed keyset page tokens.

Nothing here commits; the caller owns the transaction. Creating an event always inserts a new
row (ids are never reused), so a checker can tell new events from the ones a world began with.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, NamedTuple

from sqlmodel import Session

from loca.core.clock import iso_z
from mock_servers.calendar.times import EventTime, as_input, parse_span, shown
from mock_servers.core import sql
from mock_servers.core.errors import invalid, not_found
from mock_servers.core.times import instant

OrderBy = Literal["startTime", "updated"]
_ID = re.compile(r"event_([1-9][0-9]{0,17})")
_ORDER_COLUMN: dict[str, str] = {"startTime": "start_at", "updated": "updated"}
_CASEFOLD = "loca_casefold"


class EventRow(NamedTuple):
    """A `cal_event` row (fields named after its columns)."""

    id: int
    summary: str
    description: str | None
    location: str | None
    start_at: str
    end_at: str
    all_day: bool
    time_zone: str
    status: str
    created: str
    updated: str
    creator_email: str
    creator_name: str | None
    organizer_email: str
    organizer_name: str | None


_COLUMNS = ", ".join(EventRow._fields)


@dataclass(frozen=True)
class Person:
    email: str
    name: str | None = None


def event_id(pk: int) -> str:
    return f"event_{pk}"


def event_pk(value: str) -> int:
    """The row id of an `event_<n>` id; anything else is INVALID_ARGUMENT."""
    found = _ID.fullmatch(value.strip())
    if not found:
        raise invalid(f"eventId '{value:.60}' is not an event id such as event_12",
                      hint="list_events shows the ids")
    return int(found.group(1))


def _time_input(value: EventTime | Mapping[str, Any]) -> EventTime:
    return value if isinstance(value, EventTime) else EventTime.model_validate(dict(value))


# --- writing ----------------------------------------------------------------------------------

def add_event(session: Session, *, summary: str, start: EventTime | Mapping[str, Any],
              end: EventTime | Mapping[str, Any], default_zone: str, created: str | datetime,
              creator: Person, organizer: Person | None = None, updated: str | datetime | None = None,
              description: str | None = None, location: str | None = None,
              attendees: Sequence[tuple[Person, str]] = (), status: str = "confirmed") -> int:
    """Insert one event (always a new row) and return its row id. `start`/`end` follow the
    API's `{dateTime,timeZone}`/`{date}` rules, with `default_zone` for times without a zone;
    `attendees` are (person, responseStatus) pairs."""
    if not summary.strip():
        raise invalid("summary must not be empty")
    span = parse_span(_time_input(start), _time_input(end), default_zone)
    host = organizer or creator
    pk = sql.scalar(session, f"INSERT INTO cal_event ({_COLUMNS}) VALUES "
                             f"(NULL, {sql.marks(14)}) RETURNING id",
                    (summary, description, location, iso_z(span.start), iso_z(span.end),
                     span.all_day, span.zone, status, instant(created),
                     instant(updated or created), creator.email, creator.name, host.email,
                     host.name))
    sql.cursor(session).executemany(
        "INSERT INTO cal_attendee (event_id, email, display_name, response_status) "
        "VALUES (?, ?, ?, ?)", [(pk, p.email, p.name, state) for p, state in attendees])
    return pk


def _existing(session: Session, pk: int) -> EventRow:
    row = sql.first(session, EventRow, f"SELECT {_COLUMNS} FROM cal_event WHERE id = ?", (pk,))
    if row is None:
        raise not_found(f"no event {event_id(pk)} in this calendar", hint="list_events shows the ids")
    return row


def update_event(session: Session, pk: int, *, updated: datetime,
                 summary: str | None = None, start: EventTime | None = None,
                 end: EventTime | None = None, description: str | None = None,
                 location: str | None = None) -> None:
    """Change the given fields; the resulting times are validated as on creation (a time not
    given keeps its value; a timeZone given applies to the whole event)."""
    row = _existing(session, pk)
    if summary is not None and not summary.strip():
        raise invalid("summary must not be empty")
    all_day, zone = bool(row.all_day), row.time_zone
    span = parse_span(start or as_input(row.start_at, all_day, zone),
                      end or as_input(row.end_at, all_day, zone), zone)
    sql.run(session, "UPDATE cal_event SET summary = coalesce(?, summary), "
                     "description = coalesce(?, description), location = coalesce(?, location), "
                     "start_at = ?, end_at = ?, all_day = ?, time_zone = ?, updated = ? WHERE id = ?",
            (summary, description, location, iso_z(span.start), iso_z(span.end), span.all_day,
             span.zone, iso_z(updated), pk))


def delete_event(session: Session, pk: int) -> None:
    _existing(session, pk)
    sql.run(session, "DELETE FROM cal_attendee WHERE event_id = ?", (pk,))
    sql.run(session, "DELETE FROM cal_event WHERE id = ?", (pk,))


# --- reading ----------------------------------------------------------------------------------

def _project(session: Session, rows: Sequence[EventRow]) -> list[dict[str, Any]]:
    """The `Event` objects of `rows`, attendees loaded in one query."""
    people: dict[int, list[dict[str, Any]]] = defaultdict(list)
    pks = [r.id for r in rows]
    for start in range(0, len(pks), 500):
        chunk = pks[start:start + 500]
        for pk, email, name, state in sql.run(
                session, f"SELECT event_id, email, display_name, response_status FROM cal_attendee "
                         f"WHERE event_id IN ({sql.marks(len(chunk))}) ORDER BY id", chunk):
            people[pk].append({"email": email, "displayName": name, "responseStatus": state})
    return [_event(r, people[r.id]) for r in rows]


def _event(row: EventRow, attendees: list[dict[str, Any]]) -> dict[str, Any]:
    all_day = bool(row.all_day)
    return {"id": event_id(row.id), "status": row.status, "summary": row.summary,
            "description": row.description, "location": row.location,
            "start": shown(row.start_at, row.time_zone, all_day),
            "end": shown(row.end_at, row.time_zone, all_day), "created": row.created,
            "updated": row.updated,
            "creator": {"email": row.creator_email, "displayName": row.creator_name},
            "organizer": {"email": row.organizer_email, "displayName": row.organizer_name},
            "attendees": attendees}


def get_event(session: Session, pk: int) -> dict[str, Any]:
    """One event as an `Event` (NOT_FOUND when it does not exist)."""
    return _project(session, [_existing(session, pk)])[0]


def all_events(session: Session) -> list[dict[str, Any]]:
    """Every event, by id (for checkers)."""
    return _project(session, sql.rows(session, EventRow,
                                      f"SELECT {_COLUMNS} FROM cal_event ORDER BY id"))


# What q searches, as Calendar does: the summary, description and location, the organizer and
# the attendees (names and e-mails), fields apart (unit separators), so a term never spans two.
_SEARCHED = ("coalesce(summary, '') || char(31) || coalesce(description, '') || char(31) || "
             "coalesce(location, '') || char(31) || organizer_email || char(31) || coalesce(organizer_name, '') || "
             "char(31) || coalesce((SELECT group_concat(a.email || char(31) || coalesce(a.display_name, ''), "
             "char(31)) FROM cal_attendee a WHERE a.event_id = cal_event.id), '')")


@dataclass(frozen=True)
class Query:
    """A listing: events overlapping [time_min, time_max) (stored instants), in `order_by`
    order, optionally with every word of `text` in the fields q searches."""

    time_min: str
    time_max: str
    order_by: OrderBy = "startTime"
    text: str | None = None

    def fingerprint(self) -> str:
        raw = "\x1f".join((self.time_min, self.time_max, self.order_by, self.text or ""))
        return hashlib.sha256(raw.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Page:
    events: list[dict[str, Any]]
    positions: list[tuple[str, int]]  # each event's keyset position (sort value, row id)
    more: bool


def list_events(session: Session, query: Query, limit: int,
                after: tuple[str, int] | None = None) -> Page:
    """Up to `limit` events of `query` after the keyset position `after`, and whether more
    follow. An event matches when its end > time_min and its start < time_max."""
    column = _ORDER_COLUMN[query.order_by]
    where = ["end_at > ?", "start_at < ?"]
    params: list[Any] = [query.time_min, query.time_max]
    if query.text:
        sql.cursor(session).connection.create_function(
            _CASEFOLD, 1, lambda v: None if v is None else v.casefold(), deterministic=True)
        terms = query.text.casefold().split()
        where += [f"instr({_CASEFOLD}({_SEARCHED}), ?)"] * len(terms)
        params += terms
    if after is not None:
        where.append(f"({column}, id) > (?, ?)")
        params += [*after]
    rows = sql.rows(session, EventRow, f"SELECT {_COLUMNS} FROM cal_event "
                                       f"WHERE {' AND '.join(where)} ORDER BY {column}, id LIMIT ?",
                    [*params, limit + 1])
    kept = rows[:limit]
    return Page(_project(session, kept), [(getattr(r, column), r.id) for r in kept],
                len(rows) > limit)


# --- page tokens ------------------------------------------------------------------------------

class PageTokens:
    """Opaque, deterministic page tokens: a keyset position bound to its query and signed with
    a key derived from the world, so forged tokens and tokens of another query are refused."""

    def __init__(self, key: bytes) -> None:
        self.key = key

    def _sign(self, body: str) -> str:
        return hmac.new(self.key, body.encode(), hashlib.sha256).hexdigest()[:24]

    def issue(self, query: Query, position: tuple[str, int]) -> str:
        body = json.dumps([query.fingerprint(), *position], separators=(",", ":"))
        raw = f"{body}|{self._sign(body)}".encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def read(self, token: str, query: Query) -> tuple[str, int]:
        """The position a token continues from; INVALID_ARGUMENT when it was not issued here
        or belongs to a different listing."""
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
            body, signature = raw.rsplit("|", 1)
            fingerprint, value, pk = json.loads(body)
            valid = hmac.compare_digest(signature, self._sign(body))
        except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
            valid = False
        if not valid or not isinstance(value, str) or not isinstance(pk, int):
            raise invalid("pageToken is not a token this calendar issued",
                          hint="use the nextPageToken of the previous list_events call")
        if fingerprint != query.fingerprint():
            raise invalid("pageToken belongs to a listing with other timeMin, timeMax, orderBy "
                          "or q", hint="repeat the same arguments, or start without pageToken")
        return value, pk

