"""The virtual clock of a world: the only source of "now" for generators, servers and checkers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo


def parse_instant(value: str) -> datetime:
    """Parse an ISO 8601 instant that carries `Z` or an offset; naive values are rejected."""
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        raise ValueError(f"instant without a time zone: {value!r}")
    return parsed.astimezone(UTC)


def iso_z(moment: datetime) -> str:
    """Format an aware datetime as UTC ISO 8601 with a `Z` suffix, to the second."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class VirtualClock:
    """`now` = t0 + tick x (number of committed writes). tick 0 means a frozen clock."""

    t0: datetime
    tz: str = "UTC"
    tick_s: int = 1

    def __post_init__(self) -> None:
        if self.t0.tzinfo is None:
            raise ValueError("the clock's t0 must be timezone-aware")
        ZoneInfo(self.tz)  # validates the zone name

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.tz)

    def at(self, writes: int = 0) -> datetime:
        """The instant after `writes` committed write calls, in UTC."""
        return (self.t0 + timedelta(seconds=self.tick_s * writes)).astimezone(UTC)

    def local(self, moment: datetime) -> datetime:
        """`moment` seen in the world's zone."""
        return moment.astimezone(self.zone)
