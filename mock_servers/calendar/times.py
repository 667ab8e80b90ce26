"""Event times as the Calendar API takes and shows them: `{dateTime, timeZone}` or `{date}`.
A dateTime without an offset is read in the time zone given (else the default zone); an
all-day event runs from local midnight of its start date to local midnight of its (exclusive)
end date. Values are parsed, never string-compared."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field

from loca.core.clock import iso_z, parse_instant
from mock_servers.core.errors import invalid
from mock_servers.core.times import check_zone

FIRST_YEAR, LAST_YEAR = 1900, 2999
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATETIME = re.compile(r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d{1,9}))?"
                       r"([Zz]|[+-]\d{2}:\d{2})?")


class EventTime(BaseModel):
    """A start or end: `dateTime` (timed) or `date` (all-day), with an optional zone."""

    model_config = ConfigDict(extra="forbid")
    dateTime: str | None = Field(default=None, description=(
        "RFC 3339 date-time YYYY-MM-DDTHH:MM[:SS] with Z or an offset +HH:MM, e.g. "
        "2025-10-01T09:00:00-04:00; without one it is read in timeZone (else the calendar's zone)"))
    date: str | None = Field(default=None, description="YYYY-MM-DD, for all-day events")
    timeZone: str | None = Field(default=None, description="IANA time zone, e.g. Europe/Paris")


@dataclass(frozen=True)
class Span:
    """A validated event time range: instants in UTC and the zone they are shown in."""

    start: datetime
    end: datetime
    all_day: bool
    zone: str


def _day(text: str, what: str) -> date:
    try:
        if _DATE.fullmatch(text):
            day = date.fromisoformat(text)
            return _in_range(datetime.combine(day, time()), text).date()
    except ValueError:
        pass
    raise invalid(f"{what} '{text}' is not a date YYYY-MM-DD")


def _local(naive: datetime, zone: str, what: str) -> datetime:
    """`naive` wall time in `zone` as an aware instant; a time skipped by a DST change is
    INVALID_ARGUMENT (an ambiguous one takes its first occurrence)."""
    aware = naive.replace(tzinfo=ZoneInfo(zone))
    if aware.astimezone(UTC).astimezone(aware.tzinfo).replace(tzinfo=None) != naive:
        raise invalid(f"{what}: {naive.isoformat()} does not exist in {zone} (clocks change "
                      "then); give another time or an explicit offset")
    return aware


def parse_datetime(text: str, zone: str, what: str) -> datetime:
    """An RFC 3339 date-time (offset optional: `zone` then) as a UTC instant, to the second."""
    found = _DATETIME.fullmatch(text.strip())
    if not found:
        raise invalid(f"{what} '{text}' is not an RFC 3339 date-time such as "
                      "2025-10-01T09:00:00-04:00")
    day, clock, fraction, offset = found.groups()
    if fraction and int(fraction):
        raise invalid(f"{what} '{text}': times are kept to the second; drop the fraction")
    try:
        if offset:
            moment = parse_instant(f"{day}T{clock}{'Z' if offset in 'Zz' else offset}")
        else:
            moment = _local(datetime.fromisoformat(f"{day}T{clock}"), zone, what)
        return _in_range(moment.astimezone(UTC), text)
    except OverflowError:
        raise invalid(f"'{text}' is outside the years {FIRST_YEAR}-{LAST_YEAR}") from None
    except ValueError:
        raise invalid(f"{what} '{text}' is not a valid date-time") from None


def _in_range(moment: datetime, text: str) -> datetime:
    if not FIRST_YEAR <= moment.year <= LAST_YEAR:
        raise invalid(f"'{text}' is outside the years {FIRST_YEAR}-{LAST_YEAR}")
    return moment


def _zone(start: EventTime, end: EventTime, default: str) -> str:
    if start.timeZone and end.timeZone and start.timeZone != end.timeZone:
        raise invalid(f"start.timeZone '{start.timeZone}' and end.timeZone '{end.timeZone}' "
                      "differ; an event has one time zone")
    given = start.timeZone or end.timeZone
    return check_zone(given, "timeZone") if given else default


def _kind(value: EventTime, what: str) -> bool:
    """True for an all-day time; exactly one of dateTime and date must be set."""
    if (value.dateTime is None) == (value.date is None):
        raise invalid(f"{what} needs exactly one of dateTime (timed) or date (all-day)")
    return value.date is not None


def midnight(day: date, zone: str) -> datetime:
    """The first instant of `day` in `zone`, in UTC (where midnight is skipped by a DST
    change, the day starts at the first local time after it)."""
    return datetime.combine(day, time(), ZoneInfo(zone)).astimezone(UTC)


def parse_span(start: EventTime, end: EventTime, default_zone: str) -> Span:
    """Validate an event's start and end: same kind, end after start (an all-day end date is
    exclusive, so at least one day later)."""
    all_day = _kind(start, "start")
    if _kind(end, "end") != all_day:
        raise invalid("start and end must both be dateTime (timed) or both date (all-day)")
    zone = _zone(start, end, default_zone)
    if all_day:
        first, last = _day(start.date or "", "start.date"), _day(end.date or "", "end.date")
        if last <= first:
            raise invalid(f"end.date {last} must be after start.date {first} (the end date is "
                          "exclusive: a one-day event on 2025-10-01 ends on 2025-10-02)")
        return Span(midnight(first, zone), midnight(last, zone), True, zone)
    begin = parse_datetime(start.dateTime or "", zone, "start.dateTime")
    finish = parse_datetime(end.dateTime or "", zone, "end.dateTime")
    if finish <= begin:
        raise invalid(f"end {end.dateTime} must be after start {start.dateTime}")
    return Span(begin, finish, False, zone)


def bound(text: str, zone: str, what: str) -> str:
    """A listing bound (`timeMin`/`timeMax`) as a stored instant: an RFC 3339 date-time, or a
    date meaning its local midnight in `zone`."""
    if _DATE.fullmatch(text.strip()):
        return iso_z(midnight(_day(text.strip(), what), zone))
    return iso_z(parse_datetime(text, zone, what))


def _in_zone(stored: str, zone: str) -> datetime:
    """A stored UTC instant (`...Z`) in `zone`."""
    return datetime.fromisoformat(stored).astimezone(ZoneInfo(zone))


def shown(stored: str, zone: str, all_day: bool) -> dict[str, str]:
    """A stored instant as the API shows it: `{date}` for all-day events, else
    `{dateTime, timeZone}` with the offset of the event's zone."""
    local = _in_zone(stored, zone)
    if all_day:
        return {"date": local.date().isoformat()}
    return {"dateTime": local.isoformat(), "timeZone": zone}


def as_input(stored: str, all_day: bool, zone: str) -> EventTime:
    """A stored time back in input form without a zone (for merging with an update)."""
    local = _in_zone(stored, zone)
    if all_day:
        return EventTime(date=local.date().isoformat())
    return EventTime(dateTime=local.isoformat())
