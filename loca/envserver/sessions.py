"""The episodes an environment server holds: each a task's env reset into a folder of its own,
its tools called in-process or over MCP, graded by the task's checker, closed on request or
when idle. The pool is bounded: past its capacity an opening is refused, never queued.

The pool owns one folder (`root`) for as long as it runs, locked against a second server; what a
server killed without closing its sessions left there is cleared when the next one starts."""

from __future__ import annotations

import asyncio
import secrets
import shutil
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus
from starlette.types import ASGIApp

from envs.core.env import LocaEnv
from loca.core.dirlock import LOCK_FILE
from loca.core.outcome import ToolOutcome
from loca.envserver.models import CallResult, Grade, SessionRequest, ToolInfo, WorldInfo


class AtCapacity(Exception):
    """Every session slot is taken."""


class UnknownSession(LookupError):
    """No open session has this id (never opened, deleted or expired)."""


class McpEndpoint:
    """A session's tools over MCP streamable HTTP (JSON answers): FastMCP's app, whose lifespan
    runs in a task of the pool's task group until the endpoint is stopped. MCP sessions are kept
    (stateful): a call then costs a third of what a fresh transport per request does."""

    def __init__(self, env: LocaEnv, instruction: str) -> None:
        assert env.gateway is not None
        self.app: ASGIApp = env.gateway.mcp_app(instructions=instruction).http_app(
            path="/", stateless_http=False, json_response=True)
        self._stop = anyio.Event()
        self._stopped = anyio.Event()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        try:
            async with self.app.router.lifespan_context(self.app):  # type: ignore[attr-defined]
                task_status.started()
                await self._stop.wait()
        finally:
            self._stopped.set()

    async def stop(self) -> None:
        self._stop.set()
        await self._stopped.wait()


@dataclass
class Session:
    """One open episode."""

    id: str
    folder: Path
    env: LocaEnv
    instruction: str
    tools: list[ToolInfo]
    world: WorldInfo
    last_used: float
    busy: int = 0
    closing: bool = False
    mcp: McpEndpoint | None = None
    mcp_lock: anyio.Lock = field(default_factory=anyio.Lock)
    world_lock: anyio.Lock = field(default_factory=anyio.Lock)
    idle: anyio.Event = field(default_factory=anyio.Event)

    async def call(self, name: str, arguments: dict[str, Any]) -> CallResult:
        """One tool call, in a worker thread (a tool may run code or a long query: other sessions
        go on meanwhile); a session's calls and grades take turns."""
        async with self.world_lock:
            outcome = await anyio.to_thread.run_sync(_call, self.env, name, arguments)
        return CallResult(output=outcome.text, is_error=outcome.is_error)

    async def grade(self) -> Grade:
        """The task's checker on the world as it stands, in a worker thread; the episode stays
        open."""
        async with self.world_lock:
            verdict = await anyio.to_thread.run_sync(self.env.evaluate)
        return Grade(reward=1.0 if verdict.passed else 0.0, passed=verdict.passed, checks=verdict.checks)


class SessionPool:
    """At most `capacity` sessions under `root`, each closed after `idle_timeout_s` without a
    request. `running()` puts it in service; whoever runs it holds `root`'s lock
    (`loca.core.dirlock`), so that no other pool shares the folder."""

    def __init__(self, root: Path, capacity: int, idle_timeout_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, not {capacity}")
        if idle_timeout_s <= 0:
            raise ValueError(f"the idle timeout must be positive, not {idle_timeout_s}")
        self.root = root
        self.capacity = capacity
        self.idle_timeout_s = idle_timeout_s
        self.clock = clock
        self.sessions: dict[str, Session] = {}
        self._opening = 0
        self._group: TaskGroup | None = None

    def clear_root(self) -> None:
        """Empty `root` of everything but its lock: the sessions of a server that ended without
        closing them. The caller holds the lock, so `root` holds a lock file: a folder that
        never held one is refused, never emptied."""
        if not (self.root / LOCK_FILE).is_file():
            raise ValueError(f"{self.root} is not a sessions folder (no {LOCK_FILE})")
        for leftover in self.root.iterdir():
            if leftover.name == LOCK_FILE:
                continue
            if leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.unlink(missing_ok=True)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The pool in service: MCP endpoints and the idle sweep run in a task group; every
        session is closed when it ends."""
        async with anyio.create_task_group() as group:
            self._group = group
            group.start_soon(self._sweep)
            try:
                yield
            finally:
                with anyio.CancelScope(shield=True):
                    await self.close_all()
                group.cancel_scope.cancel()
                self._group = None

    @property
    def open_count(self) -> int:
        return len(self.sessions) + self._opening

    async def open(self, request: SessionRequest) -> Session:
        """A fresh episode of `request` (its world from the world cache, or built, in a worker
        thread); AtCapacity when every slot is taken."""
        if self.open_count >= self.capacity:
            raise AtCapacity(f"at capacity: {self.capacity} sessions open; delete one or retry later")
        self._opening += 1
        session_id = secrets.token_urlsafe(12)
        folder = self.root / session_id
        try:
            env = LocaEnv(request.task, request.length, request.naming, request.tool_filter)
            try:
                instruction, info = await anyio.to_thread.run_sync(
                    _reset, env, request.seed, folder / "world")
            except BaseException:
                await anyio.to_thread.run_sync(_discard, env, folder)
                raise
        finally:
            self._opening -= 1
        session = Session(
            id=session_id, folder=folder, env=env, instruction=instruction,
            tools=[ToolInfo(**tool) for tool in info["tools"]], world=WorldInfo(**info),
            last_used=self.clock())
        session.idle.set()
        self.sessions[session_id] = session
        return session

    def get(self, session_id: str) -> Session:
        """The open session `session_id`, its idle time restarted."""
        session = self.sessions.get(session_id)
        if session is None or session.closing:
            raise UnknownSession(f"no open session {session_id!r} (deleted, expired or never opened)")
        session.last_used = self.clock()
        return session

    @asynccontextmanager
    async def using(self, session_id: str) -> AsyncIterator[Session]:
        """The open session `session_id`, kept from expiring or closing while in use."""
        session = self.get(session_id)
        session.busy += 1
        session.idle = anyio.Event() if session.busy == 1 else session.idle
        try:
            yield session
        finally:
            session.busy -= 1
            session.last_used = self.clock()
            if session.busy == 0:
                session.idle.set()

    async def mcp_app(self, session: Session) -> ASGIApp:
        """The session's MCP app, started on first use."""
        async with session.mcp_lock:
            if session.closing:
                raise UnknownSession(f"no open session {session.id!r} (deleted, expired or never opened)")
            if session.mcp is None:
                if self._group is None:
                    raise RuntimeError("the session pool is not running")
                endpoint = McpEndpoint(session.env, session.instruction)
                await self._group.start(endpoint.run)
                session.mcp = endpoint
            return session.mcp.app

    async def close(self, session_id: str) -> None:
        """Close a session: its MCP endpoint first (ending its MCP requests and streams), then,
        once its plain calls in flight are answered, its env; its folder is removed."""
        session = self.get(session_id)
        session.closing = True
        async with session.mcp_lock:
            if session.mcp is not None:
                await session.mcp.stop()
        await session.idle.wait()
        await anyio.to_thread.run_sync(_discard, session.env, session.folder)
        del self.sessions[session_id]

    async def expire(self) -> list[str]:
        """Close every session idle for longer than the timeout; their ids."""
        now = self.clock()
        stale = [s.id for s in self.sessions.values()
                 if not s.busy and not s.closing and now - s.last_used > self.idle_timeout_s]
        for session_id in stale:
            await self.close(session_id)
        return stale

    async def close_all(self) -> None:
        for session_id in [s.id for s in self.sessions.values() if not s.closing]:
            await self.close(session_id)

    async def _sweep(self) -> None:
        while True:
            await anyio.sleep(min(5.0, self.idle_timeout_s / 4))
            await self.expire()


def _call(env: LocaEnv, name: str, arguments: dict[str, Any]) -> ToolOutcome:
    assert env.gateway is not None
    return asyncio.run(env.gateway.call(name, arguments))


def _reset(env: LocaEnv, seed: int, world_dir: Path) -> tuple[str, dict[str, Any]]:
    return asyncio.run(env.areset(seed=seed, options={"episode_dir": str(world_dir)}))


def _discard(env: LocaEnv, folder: Path) -> None:
    asyncio.run(env.aclose())
    shutil.rmtree(folder, ignore_errors=True)
