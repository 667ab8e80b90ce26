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


class AuditCall(SQLModel, table=True):
    """One row per tool call, whatever the transport: what the agent asked and how it went.
    Written after the call's own transaction; never visible to the agent; what counts tool calls
    and nested calls."""

    __tablename__ = "core_audit"
    seq: int | None = Field(default=None, primary_key=True)
    server: str
    tool: str
    arguments: str  # JSON, ASCII-escaped, at most AUDIT_ARGUMENT_CHARS
    is_error: bool
    output_chars: int
    parent_call_id: str | None = None  # the call whose code made this one (programmatic calls)
    duration_ms: float
