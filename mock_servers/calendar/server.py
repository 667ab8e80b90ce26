"""Calendar tools over the world owner's primary calendar (Google Calendar API names and
shapes). Times are `{dateTime,timeZone}` or `{date}` objects; outputs show RFC 3339 times with
the offset of the event's time zone; `created`/`updated` are UTC."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from loca.core.rng import derive_seed
from mock_servers.calendar import domain
from mock_servers.calendar.domain import OrderBy, PageTokens, Person, Query
from mock_servers.calendar.times import EventTime, bound
from mock_servers.core.errors import Code, ToolFailure, invalid
from mock_servers.core.output import dump_json, items_that_fit
from mock_servers.core.toolkit import Call, Toolbox
from mock_servers.core.types import Int, size_param

toolbox = Toolbox("calendar", table_prefix="cal_", list_keys=("items",), instructions=(
    "Your primary calendar. Event times are {dateTime, timeZone} objects (RFC 3339 "
    "date-times) or {date} objects for all-day events."))
build = toolbox.build

DEFAULT_RESULTS, MAX_RESULTS = 250, 500
_ACCOUNT = "calendar"

EventId = Annotated[str, Field(min_length=1, max_length=64,
                               description="Event id such as event_12 (from list_events)")]
Summary = Annotated[str, Field(min_length=1, max_length=1024, description="Event title")]
Description = Annotated[str | None, Field(max_length=8192, description="Event description")]
Location = Annotated[str | None, Field(max_length=1024, description="Event location")]
_START = ("Start: {dateTime, timeZone} (timeZone optional; a dateTime without offset is read in "
          "it, else in the calendar's zone) or {date} for an all-day event")
_END = "End, the same kind as start: after it (an all-day end date is exclusive)"


def _owner(call: Call) -> Person:
    """The calendar's owner, from the world's accounts."""
    account = call.world.meta.accounts.get(_ACCOUNT) or {}
    if not account.get("email"):
        raise ToolFailure(Code.FAILED_PRECONDITION,
                          "this world has no calendar owner (accounts.calendar in world.json)")
    return Person(account["email"], account.get("name"))


def _tokens(call: Call) -> PageTokens:
    meta = call.world.meta
    return PageTokens(derive_seed(meta.task, meta.seed, "calendar-page-token").to_bytes(8, "big"))


# --- writing ----------------------------------------------------------------------------------

@toolbox.tool(rw="write", core=True)
def create_event(call: Call, summary: Summary,
                 start: Annotated[EventTime, Field(description=_START)],
                 end: Annotated[EventTime, Field(description=_END)],
                 description: Description = None, location: Location = None) -> dict[str, Any]:
    """Create an event in your primary calendar; you are its creator and organizer. Returns
    the Event {id,status,summary,description,location,start,end,created,updated,creator,
    organizer,attendees}. Times that do not parse, an end not after the start, or a timed start
    with an all-day end are INVALID_ARGUMENT."""
    owner = _owner(call)
    pk = domain.add_event(call.session, summary=summary, start=start, end=end,
                          default_zone=call.world.meta.tz, created=call.now, creator=owner,
                          description=description, location=location)
    return domain.get_event(call.session, pk)


@toolbox.tool(rw="write", idempotent=True, destructive=True)
def update_event(call: Call, eventId: EventId, summary: Summary | None = None,
                 start: Annotated[EventTime | None, Field(description=_START)] = None,
                 end: Annotated[EventTime | None, Field(description=_END)] = None,
                 description: Description = None, location: Location = None) -> dict[str, Any]:
    """Change the given fields of an event; the others keep their values. The resulting times
    are validated as on create_event (a timeZone given applies to the whole event). Returns
    the Event."""
    _owner(call)
    if all(v is None for v in (summary, start, end, description, location)):
        raise invalid("give at least one of summary, start, end, description, location")
    pk = domain.event_pk(eventId)
    domain.update_event(call.session, pk, updated=call.now, summary=summary, start=start,
                        end=end, description=description, location=location)
    return domain.get_event(call.session, pk)


@toolbox.tool(rw="write", destructive=True)
def delete_event(call: Call, eventId: EventId) -> dict[str, Any]:
    """Delete an event: {deleted:eventId}. An unknown id is NOT_FOUND."""
    _owner(call)
    domain.delete_event(call.session, domain.event_pk(eventId))
    return {"deleted": eventId.strip()}


# --- reading ----------------------------------------------------------------------------------

@toolbox.tool(rw="read")
def get_event(call: Call, eventId: EventId) -> dict[str, Any]:
    """One event as an Event object. An unknown id is NOT_FOUND."""
    return domain.get_event(call.session, domain.event_pk(eventId))


@toolbox.tool(rw="read", core=True)
def list_events(
    call: Call,
    timeMin: Annotated[str, Field(max_length=64, description=(
        "Lower bound (exclusive) for an event's end: RFC 3339 date-time YYYY-MM-DDTHH:MM[:SS] with Z "
        "or an offset +HH:MM, e.g. 2025-10-01T00:00:00Z; without one, or a date YYYY-MM-DD, it is read "
        "in the calendar's zone"))],
    timeMax: Annotated[str, Field(max_length=64, description=(
        "Upper bound (exclusive) for an event's start, in the same format as timeMin"))],
    maxResults: Annotated[Int, size_param(DEFAULT_RESULTS, MAX_RESULTS, "events per page")]
    = DEFAULT_RESULTS,
    orderBy: Annotated[OrderBy, Field(description="startTime (default) or updated, ascending")]
    = "startTime",
    pageToken: Annotated[str | None, Field(max_length=512, description=(
        "nextPageToken of the previous call with the same timeMin, timeMax, orderBy and q"))]
    = None,
    q: Annotated[str | None, Field(max_length=1024, description=(
        "Free text: every word must appear (case-insensitive) in the summary, description, location, "
        "organizer or an attendee (name or e-mail)"))]
    = None,
) -> dict[str, Any]:
    """List the events overlapping [timeMin, timeMax) (an event's end after timeMin and its
    start before timeMax), ordered by start time (or last update), optionally filtered by q.
    Paged: maxResults default 250, max 500; returns {items,count,nextPageToken}, where count is
    the number of items returned and nextPageToken is null on the last page."""
    zone = call.world.meta.tz
    query = Query(bound(timeMin, zone, "timeMin"), bound(timeMax, zone, "timeMax"), orderBy,
                  q.strip() if q and q.strip() else None)
    if query.time_max <= query.time_min:
        raise invalid(f"timeMax {timeMax} must be after timeMin {timeMin}")
    tokens = _tokens(call)
    after = tokens.read(pageToken, query) if pageToken else None
    page = domain.list_events(call.session, query, maxResults, after)

    def envelope(k: int) -> dict[str, Any]:
        more = page.more or k < len(page.events)
        token = tokens.issue(query, page.positions[k - 1]) if more else None
        return {"items": page.events[:k], "count": k, "nextPageToken": token}

    whole = envelope(len(page.events))
    if len(dump_json(whole)) <= call.max_output_chars:
        return whole
    shown = max(1, items_that_fit(len(page.events), envelope, call.max_output_chars - 200))
    return {**envelope(shown), "notice": f"output cap reached after {shown} items; request the "
            "next page with pageToken=nextPageToken"}
