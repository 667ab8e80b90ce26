"""Tables every world has, whatever its servers."""

from __future__ import annotations

from sqlmodel import Field, SQLModel


class ClockState(SQLModel, table=True):
    """How many write calls have committed: the virtual clock's position."""

    __tablename__ = "core_clock"
    id: int = Field(default=1, primary_key=True)
    writes: int = 0


class ClaimRecord(SQLModel, table=True):
    """Set when the agent calls claim_done (idempotent: the first claim is kept)."""

    __tablename__ = "core_claim"
    id: int = Field(default=1, primary_key=True)
    claimed_at: str


class LoginSession(SQLModel, table=True):
    """Who is logged in to each server that has users (one row per server; a null principal
    means logged out). Kept in the world, so a restarted server process keeps the login."""

    __tablename__ = "core_session"
    server: str = Field(primary_key=True)
    principal_id: int | None = None
