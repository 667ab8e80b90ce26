"""Date and time texts as the warehouses read them, and the one form they are stored and
computed in: `YYYY-MM-DD` for a date, `YYYY-MM-DD HH:MM:SS[.ffffff]` for a date-time (its
fraction only when it has one), followed by `+HH:MM` for a value that keeps its offset
(Snowflake's TIMESTAMP_TZ). One value has one text, so stored values compare in time order."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo, available_timezones

_TEXT = re.compile(
    r"\s*(?P<y>[0-9]{4})-(?P<m>[0-9]{1,2})-(?P<d>[0-9]{1,2})"
    r"(?:(?:[T ]|\s+)(?P<H>[0-9]{1,2}):(?P<M>[0-9]{2})(?::(?P<S>[0-9]{2})(?:\.(?P<f>[0-9]{1,9}))?)?)?"
    r"\s*(?:(?P<utc>Z|UTC)|(?P<sign>[+-])(?P<zh>[0-9]{1,2})(?::?(?P<zm>[0-9]{2}))?"
    r"|(?P<name>[A-Za-z][A-Za-z0-9_+\-]*(?:/[A-Za-z0-9_+\-]+)*))?\s*")
_DATE = re.compile(r"\s*([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})\s*")


@lru_cache(maxsize=1)
def _zone_names() -> frozenset[str]:
    """IANA names; `localtime` and `posixrules` would follow the host's zone."""
    return frozenset(available_timezones()) - {"localtime", "posixrules"}


_ZONE_OFFSET = re.compile(r"(?:UTC)?([+-])([0-9]{1,2})(?::?([0-9]{2}))?")


@lru_cache(maxsize=256)
def zone(name: str) -> tzinfo | None:
    """The time zone of an IANA name, `UTC` or an offset (`+05:30`, `UTC-8`), None when there
    is no such zone."""
    text = name.strip()
    if text.upper() == "UTC":
        return UTC
    found = _ZONE_OFFSET.fullmatch(text)
    if found:
        hours, minutes = int(found[2]), int(found[3] or 0)
        if hours > 14 or minutes > 59:
            return None
        span = timedelta(hours=hours, minutes=minutes)
        return timezone(-span if found[1] == "-" else span)
    return ZoneInfo(text) if text in _zone_names() else None


def _offset(found: re.Match[str]) -> tzinfo | bool | None:
    """The zone a text names: a tzinfo, None (no zone given) or False (a zone that is none)."""
    if found["utc"]:
        return UTC
    if found["sign"]:
        hours, minutes = int(found["zh"]), int(found["zm"] or 0)
        if hours > 14 or minutes > 59:
            return False
        span = timedelta(hours=hours, minutes=minutes)
        return timezone(-span if found["sign"] == "-" else span)
    if found["name"]:
        return zone(found["name"]) or False
    return None


def parse(text: str) -> datetime | None:
    """The moment a date or date-time text spells, aware when it names a zone (`Z`, `UTC`, an
    offset `+H[H][:MM]` or `+HHMM`, or an IANA name such as `America/New_York`), naive when it
    names none; None when it is no moment (a bad date, a 25th hour, an unknown zone, digits
    past the microsecond that are not zero)."""
    found = _TEXT.fullmatch(text)
    if found is None:
        return None
    fraction = found["f"] or ""
    zone_of = _offset(found)
    if zone_of is False or fraction[6:].strip("0"):
        return None
    try:
        moment = datetime(int(found["y"]), int(found["m"]), int(found["d"]), int(found["H"] or 0),
                          int(found["M"] or 0), int(found["S"] or 0), int(fraction[:6].ljust(6, "0")))
    except ValueError:
        return None
    return moment.replace(tzinfo=zone_of) if isinstance(zone_of, tzinfo) else moment


def names_zone(text: str) -> bool:
    """Whether a date-time text names its zone by an IANA name (`America/New_York`)."""
    found = _TEXT.fullmatch(text)
    return bool(found and found["name"])


def parse_date(text: str) -> date | None:
    """The date a `YYYY-[M]M-[D]D` text spells, None when it is none."""
    found = _DATE.fullmatch(text)
    if found is None:
        return None
    try:
        return date(int(found[1]), int(found[2]), int(found[3]))
    except ValueError:
        return None


def has_time(text: str) -> bool:
    """Whether a text that `parse` reads gives a time of day (not a bare date)."""
    found = _TEXT.fullmatch(text)
    return bool(found and found["H"])


def text(moment: datetime) -> str:
    """The stored text of a date-time: with its offset when it is aware."""
    return moment.isoformat(sep=" ")


def in_utc(moment: datetime) -> datetime:
    """A naive UTC date-time: an aware moment converted, a naive one taken as UTC already."""
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo is not None else moment


def day_text(value: date | datetime) -> str:
    return (value.date() if isinstance(value, datetime) else value).isoformat()
