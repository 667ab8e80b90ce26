"""What every WooCommerce resource shares: the store context of a call (session, now, site
time zone), money as Decimal, the REST API's date pairs, meta data and paged envelopes."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import cached_property, lru_cache
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

from sqlmodel import Session

from loca.core.clock import iso_z
from mock_servers.core import paging, sql
from mock_servers.core.errors import invalid
from mock_servers.core.times import calendar_date_time

R = TypeVar("R")
CENT = Decimal("0.01")
ZERO = Decimal(0)
MAX_MONEY = Decimal("1000000000")


@dataclass
class Store:
    """One call's view of the store: its transaction, the virtual now and the site's zone."""

    session: Session
    now: datetime
    zone: ZoneInfo

    @cached_property
    def now_z(self) -> str:
        return iso_z(self.now)


# ---- money -----------------------------------------------------------------------------------

_TWO_DECIMALS = re.compile(r"-?(?:0|[1-9]\d{0,24})\.\d\d")  # as stored: already what `money` returns


def money(value: Decimal | str | int) -> str:
    """A 2-decimal string, as the REST API returns money."""
    if isinstance(value, str) and _TWO_DECIMALS.fullmatch(value):
        return value
    return str(Decimal(value).quantize(CENT, ROUND_HALF_UP))


_DECIMAL_TEXT = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", re.ASCII)


def parse_money(field: str, value: str | None, *, allow_empty: bool = True) -> Decimal | None:
    """A non-negative amount from text in ASCII digits ("19.9", "20"); "" or None is no amount."""
    if value is None or (allow_empty and value.strip() == ""):
        return None
    try:
        if not _DECIMAL_TEXT.fullmatch(value.strip()):
            raise InvalidOperation
        amount = Decimal(value.strip())
    except InvalidOperation:
        raise invalid(f"{field} '{value}' is not a decimal amount", hint='e.g. "19.99"') from None
    if not amount.is_finite() or amount < 0 or amount >= MAX_MONEY:
        raise invalid(f"{field} '{value}' must be a finite amount from 0 to {MAX_MONEY}")
    return amount.quantize(CENT, ROUND_HALF_UP)


def stored_money(field: str, value: str | None) -> str | None:
    amount = parse_money(field, value)
    return None if amount is None else str(amount)


def shown_money(value: str | None) -> str:
    """A stored amount as shown: 2 decimals, "" when unset."""
    return "" if value is None else money(value)


# ---- dates ---------------------------------------------------------------------------------------

DATE_FORMS = "e.g. 2025-01-15 or 2025-01-15T10:00:00 (site time), 2025-01-15T10:00:00Z or 2025-01-15T10:00:00+05:30"


def parse_site_time(field: str, value: str, zone: ZoneInfo, *, end_of_day: bool = False) -> datetime:
    """An instant from a REST date argument (the extended ISO 8601 calendar form): with Z or an
    offset as given, without one in the site's zone; a bare date is the start (or end) of that
    day there. Years 1900 to 9000."""
    moment = _site_time(field, value, zone, end_of_day)
    if not 1900 <= moment.year <= 9000:
        raise invalid(f"{field} '{value}' is out of range (years 1900 to 9000)")
    return moment


def _site_time(field: str, value: str, zone: ZoneInfo, end_of_day: bool) -> datetime:
    text = value.strip()
    try:
        moment = calendar_date_time(text)
        if len(text) == len("YYYY-MM-DD"):
            local = datetime.combine(moment.date(), time.max.replace(microsecond=0) if end_of_day else time.min)
            return local.replace(tzinfo=zone).astimezone(UTC)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=zone)
        return moment.astimezone(UTC).replace(microsecond=0)
    except (ValueError, OverflowError):
        raise invalid(f"{field} '{value}' is not an ISO 8601 date or date-time", hint=DATE_FORMS) from None


@lru_cache(maxsize=65536)
def _hour_offset(zone: ZoneInfo, hour: str) -> timedelta | None:
    """The zone's UTC offset all through the UTC hour `YYYY-MM-DDTHH`; None when it changes in it."""
    start = datetime.fromisoformat(f"{hour}:00:00+00:00")
    offset = start.astimezone(zone).utcoffset()
    return offset if (start + timedelta(seconds=3599)).astimezone(zone).utcoffset() == offset else None


def site_pair(stored: str | None, zone: ZoneInfo) -> tuple[str | None, str | None]:
    """A stored instant (UTC, `YYYY-MM-DDTHH:MM:SSZ`) as the REST API's (site-local, GMT) pair
    without offsets. The zone's offset is looked up once per UTC hour."""
    if stored is None:
        return None, None
    gmt = stored[:19]
    if zone.key == "UTC":  # no offset to look up
        return gmt, gmt
    moment = datetime.fromisoformat(gmt)
    offset = _hour_offset(zone, stored[:13])
    if offset is None:
        offset = moment.replace(tzinfo=UTC).astimezone(zone).utcoffset()
    return (moment + offset).isoformat() if offset else gmt, gmt


def site_local(stored: str | None, zone: ZoneInfo) -> str | None:
    return site_pair(stored, zone)[0]


def day_bounds(first: datetime, last: datetime) -> tuple[str, str]:
    """UTC bounds [start, end) of the site-local days from `first` to `last` (aware, local)."""
    zone = first.tzinfo
    start = datetime.combine(first.date(), time.min, zone)
    end = datetime.combine(last.date() + timedelta(days=1), time.min, zone)
    return iso_z(start), iso_z(end)


# ---- JSON columns and meta data --------------------------------------------------------------

def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def loads_each(texts: Sequence[str]) -> list[Any]:
    """Each stored JSON text (one value, as `dumps` wrote it) decoded, in a single parse."""
    return json.loads(f"[{','.join(texts)}]")


def meta_of(session: Session, entity: str, ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    """Meta data per entity id: [{id, key, value}] in id order."""
    found: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    if not ids:
        return found
    rows = sql.run(session, f"SELECT id, entity_id, key, value FROM woo_meta WHERE entity = ? AND entity_id IN "
                   f"({sql.marks(len(ids))}) ORDER BY id", (entity, *ids)).fetchall()
    for (mid, owner, key, _), value in zip(rows, loads_each([r[3] for r in rows])):
        found[owner].append({"id": mid, "key": key, "value": value})
    return found


def set_meta(session: Session, entity: str, entity_id: int, entries: Sequence[tuple[str, Any]]) -> None:
    """Add or replace meta data by key."""
    for key, value in entries:
        if not key.strip():
            raise invalid("meta_data key must not be empty")
        sql.run(session, "INSERT INTO woo_meta (entity, entity_id, key, value) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(entity, entity_id, key) DO UPDATE SET value = excluded.value",
                (entity, entity_id, key, dumps(value)))


def drop_meta(session: Session, entity: str, entity_id: int) -> None:
    sql.run(session, "DELETE FROM woo_meta WHERE entity = ? AND entity_id = ?", (entity, entity_id))


# ---- paging ----------------------------------------------------------------------------------

def envelope(items: list[Any], page: int, per_page: int, total: int) -> dict[str, Any]:
    """The REST API's page with its X-WP-Total and X-WP-TotalPages."""
    return {"items": items, "page": page, "perPage": per_page, "total": total,
            "totalPages": paging.total_pages(total, per_page)}


def page_of(session: Session, row: type[R], select: str, where: str, order: str, params: Sequence[Any],
            page: int, per_page: int) -> tuple[list[R], int]:
    """One page of `SELECT <select> <where> ORDER BY <order>` and the total, in SQL."""
    return paging.fetch_page(session, row, f"SELECT {select} {where} ORDER BY {order}",
                             f"SELECT count(*) {where}", params, page, per_page)


def slugify(text: str) -> str:
    slug = re.sub(r"[^\w]+", "-", text.casefold()).strip("-")
    return slug or "item"


def unique_slug(session: Session, table: str, base: str, own_id: int | None = None) -> str:
    """`base`, or `base-2`, `base-3` ... when taken in `table` (WordPress's rule)."""
    slug, n = base, 1
    while sql.scalar(session, f"SELECT id FROM {table} WHERE slug = ? AND id IS NOT ?", (slug, own_id)):
        n += 1
        slug = f"{base}-{n}"
    return slug


def like(text: str) -> str:
    """A LIKE pattern matching `text` anywhere (escape character `\\`)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
