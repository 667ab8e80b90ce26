"""Canvas calendar events: a course's events reach its members, a user's own events only them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date, datetime, time, timedelta
from typing import Any, NamedTuple
from zoneinfo import ZoneInfo

from sqlmodel import Session

from mock_servers.canvas.domain.base import OPEN, STAFF, Listing, insert, insert_many, table, text
from mock_servers.canvas.models import CanvasCalendarEvent
from mock_servers.core.errors import invalid
from mock_servers.core.times import instant, optional_instant

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class Event(NamedTuple):
    id: int
    course_id: int | None
    user_id: int | None
    title: str
    description: str | None
    start_at: str
    end_at: str | None
    location_name: str | None


EVENTS = table(Event, "canvas_calendar_event")


def event_row(*, title: str, start_at: Any, end_at: Any = None, course_id: int | None = None,
              user_id: int | None = None, description: str | None = None,
              location_name: str | None = None, id: int | None = None) -> dict[str, Any]:
    """An event of a course (`course_id`) or of one user (`user_id`)."""
    if (course_id is None) == (user_id is None):
        raise invalid("an event belongs to exactly one of a course or a user")
    start, end = instant(start_at), optional_instant(end_at)
    if end is not None and end < start:
        raise invalid(f"end_at {end} is before start_at {start}")
    return {"id": id, "course_id": course_id, "user_id": user_id, "title": text("title", title),
            "description": description, "start_at": start, "end_at": end,
            "location_name": location_name}


def add_calendar_event(session: Session, **values: Any) -> CanvasCalendarEvent:
    """One event (see `event_row`)."""
    return insert(session, CanvasCalendarEvent(**event_row(**values)))


def add_calendar_events(session: Session, rows: Iterable[Mapping[str, Any]]) -> int:
    return insert_many(session, CanvasCalendarEvent, event_row, rows)


def bound(value: str, zone: str, *, end: bool) -> str:
    """A range bound: an instant, or a date that covers its whole day in `zone` (a start bound
    is the day's first moment, an end bound the next day's)."""
    if not _DATE.fullmatch(value.strip()):
        return instant(value)
    try:
        day = date.fromisoformat(value.strip())
    except ValueError:
        raise invalid(f"'{value}' is not a valid date (YYYY-MM-DD)") from None
    try:
        day += timedelta(days=1 if end else 0)
    except OverflowError:
        raise invalid(f"'{value}' is out of range") from None
    return instant(datetime.combine(day, time(), ZoneInfo(zone)))


_VISIBLE = (
    "(x.user_id = ? OR EXISTS (SELECT 1 FROM canvas_enrollment e JOIN canvas_course c "
    "ON c.id = e.course_id WHERE e.course_id = x.course_id AND e.user_id = ? "
    f"AND e.enrollment_state IN ({OPEN}) AND (e.type IN ({STAFF}) OR c.workflow_state != 'unpublished')))")


def events_for(user_id: int, start: str | None, end: str | None) -> Listing:
    """The user's own events and those of their courses that overlap [start, end), by start."""
    where: list[str] = [_VISIBLE]
    params: list[Any] = [user_id, user_id]
    if start is not None:
        where.append("coalesce(x.end_at, x.start_at) >= ?")
        params.append(start)
    if end is not None:
        where.append("x.start_at < ?")
        params.append(end)
    return Listing(EVENTS, " AND ".join(where), "x.start_at, x.id", tuple(params))


def event_view(e: Event) -> dict[str, Any]:
    context = f"course_{e.course_id}" if e.course_id is not None else f"user_{e.user_id}"
    return {"id": e.id, "title": e.title, "description": e.description, "start_at": e.start_at,
            "end_at": e.end_at, "location_name": e.location_name, "context_code": context}
