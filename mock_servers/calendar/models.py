"""Calendar tables. Instants are UTC strings `YYYY-MM-DDTHH:MM:SSZ` (they sort as instants);
an all-day event spans local midnights of its dates in its time zone. Event ids are shown as
`event_<id>`."""

from __future__ import annotations

from sqlalchemy import Index
from sqlmodel import Field, SQLModel


class CalEvent(SQLModel, table=True):
    __tablename__ = "cal_event"
    __table_args__ = (
        Index("ix_cal_event_start", "start_at", "id"),
        Index("ix_cal_event_updated", "updated", "id"),
        {"sqlite_autoincrement": True},  # ids are shown to the agent: never reuse one
    )
    id: int | None = Field(default=None, primary_key=True)
    summary: str
    description: str | None = None
    location: str | None = None
    start_at: str
    end_at: str
    all_day: bool = False
    time_zone: str  # IANA zone the event's times are shown in
    status: str = "confirmed"
    created: str
    updated: str
    creator_email: str
    creator_name: str | None = None
    organizer_email: str
    organizer_name: str | None = None


class CalAttendee(SQLModel, table=True):
    __tablename__ = "cal_attendee"
    id: int | None = Field(default=None, primary_key=True)
    event_id: int = Field(foreign_key="cal_event.id", index=True)
    email: str
    display_name: str | None = None
    response_status: str = "needsAction"  # needsAction / declined / tentative / accepted
