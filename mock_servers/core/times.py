"""Instants and time zones as tools take and store them: stored instants are UTC
`YYYY-MM-DDTHH:MM:SSZ`; arguments are parsed, never string-compared."""

from __future__ import annotations

import re
from datetime import date, datetime
from functools import lru_cache
from zoneinfo import available_timezones

from loca.core.clock import iso_z, parse_instant
from mock_servers.core.errors import invalid


def instant(value: str | datetime) -> str:
    """The stored form of an aware datetime or an ISO 8601 string with `Z` or an offset."""
    try:
        return iso_z(value if isinstance(value, datetime) else parse_instant(value))
    except (TypeError, ValueError, OverflowError):
        raise invalid(f"'{value}' is not an ISO 8601 instant with a time zone, "
                      "e.g. 2025-01-15T10:00:00Z") from None


def optional_instant(value: str | datetime | None) -> str | None:
    """`instant`, with `None` kept."""
    return None if value is None else instant(value)


# The extended ISO 8601 calendar forms a date argument may take: a date, or a date and a time
# (minutes, optional seconds and fraction) with an optional Z or +HH:MM offset. Week and ordinal
# dates, the basic form (20250115) and zone names or suffixes such as "UTC" are not among them.
_CALENDAR_DATE_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:[Zz]|[+-]\d{2}:\d{2})?)?", re.ASCII)
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)


def calendar_date_time(value: str) -> datetime:
    """A date (midnight) or date-time in the extended ISO 8601 calendar form, naive unless it
    carries Z or an offset; ValueError for any other text."""
    if not _CALENDAR_DATE_TIME.fullmatch(value):
        raise ValueError(f"not an ISO 8601 date or date-time: {value!r}")
    return datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00"))


def calendar_day(value: str) -> date:
    """A date written exactly YYYY-MM-DD; ValueError for any other text."""
    if not _DAY.fullmatch(value):
        raise ValueError(f"not a YYYY-MM-DD date: {value!r}")
    return date.fromisoformat(value)


@lru_cache(maxsize=1)
def _zone_names() -> frozenset[str]:
    """IANA names; `localtime` and `posixrules` would follow the host's zone."""
    return frozenset(available_timezones()) - {"localtime", "posixrules"}


def check_zone(name: str, what: str = "time_zone") -> str:
    """An IANA time zone name, else INVALID_ARGUMENT."""
    if name not in _zone_names():
        raise invalid(f"{what} '{name}' is not an IANA time zone name", hint="e.g. America/New_York")
    return name
