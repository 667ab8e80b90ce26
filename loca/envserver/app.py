"""The environment server's web app: JSON endpoints over a `SessionPool`, each session's tools
over MCP streamable HTTP at `/sessions/{id}/mcp/`, behind the Host/Origin guard `loca serve`
uses and, when a token is set, a bearer token on every request.

    POST   /sessions               {task, length, seed, tool_filter?, naming?} -> SessionCreated
    POST   /sessions/{id}/call     {name, arguments}                           -> CallResult
    POST   /sessions/{id}/grade                                                -> Grade
    DELETE /sessions/{id}
    *      /sessions/{id}/mcp/     MCP streamable HTTP (JSON answers)
    GET    /tasks, GET /health

Errors are `{"error": "..."}`: 400 a bad body, 401 a missing or wrong token, 404 an unknown
session, 503 (with Retry-After) when every session slot is taken, 500 a world that could not
be made."""

from __future__ import annotations

import hmac
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastmcp.server.http import HostOriginGuardMiddleware
from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from envs.core.errors import EnvSetupError
from loca.core.lengths import TIERS
from loca.envserver.models import CallRequest, Health, SessionCreated, SessionRequest, TaskListing
from loca.envserver.sessions import AtCapacity, SessionPool, UnknownSession
from mock_servers.serve import http_guard

RETRY_AFTER_S = 5
MCP_SEGMENT = "mcp"


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _one_line(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


async def _body(request: Request, model: type[BaseModel]) -> Any:
    raw = await request.body()
    try:
        data = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        raise ValueError(f"the body is not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ValueError("the body must be a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ValueError(_one_line(exc)) from None


def _json(model: BaseModel, status: int = 200) -> Response:
    return Response(model.model_dump_json(), status_code=status, media_type="application/json")


def _endpoint(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """Known failures as JSON errors with their status."""

    async def endpoint(request: Request) -> Response:
        try:
            return await handler(request)
        except UnknownSession as exc:
            return _error(404, str(exc))
        except AtCapacity as exc:
            return _error(503, str(exc), {"Retry-After": str(RETRY_AFTER_S)})
        except EnvSetupError as exc:
            return _error(500, str(exc))
        except ValueError as exc:
            return _error(400, str(exc))

    return endpoint


class BearerToken:
    """Answers 401 to a request without `Authorization: Bearer <token>`."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await _error(401, "a bearer token is required (Authorization: Bearer TOKEN)",
                             {"WWW-Authenticate": "Bearer"})(scope, receive, send)
                return
        await self.app(scope, receive, send)


class McpRouter:
    """Sends `/sessions/{id}/mcp...` to that session's MCP app (its path made `/`); anything
    else to the JSON routes."""

    def __init__(self, app: ASGIApp, pool: SessionPool) -> None:
        self.app = app
        self.pool = pool

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        parts = scope["path"].split("/", 4) if scope["type"] == "http" else []
        if len(parts) >= 4 and parts[1] == "sessions" and parts[3] == MCP_SEGMENT:
            await self._mcp(parts[2], scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _mcp(self, session_id: str, scope: Scope, receive: Receive, send: Send) -> None:
        """An MCP request restarts the session's idle time but does not hold the session open:
        an MCP client's event stream may stay open for ever, and closing the session ends it."""
        try:
            session = self.pool.get(session_id)
            app = await self.pool.mcp_app(session)
        except UnknownSession as exc:
            await _error(404, str(exc))(scope, receive, send)
            return
        try:
            await app({**scope, "path": "/", "raw_path": b"/"}, receive, send)
        finally:
            session.last_used = self.pool.clock()


def build_app(pool: SessionPool, token: str | None = None, allow_remote: tuple[str, ...] = ()) -> ASGIApp:
    """The server's ASGI app over `pool` (which its lifespan runs)."""

    async def create(request: Request) -> Response:
        opened = await pool.open(await _body(request, SessionRequest))
        mcp_url = str(request.base_url).rstrip("/") + f"/sessions/{opened.id}/{MCP_SEGMENT}/"
        return _json(SessionCreated(session_id=opened.id, instruction=opened.instruction, tools=opened.tools,
                                    mcp_url=mcp_url, world=opened.world), 201)

    async def call(request: Request) -> Response:
        body = await _body(request, CallRequest)
        async with pool.using(request.path_params["session_id"]) as session:
            return _json(await session.call(body.name, body.arguments))

    async def grade(request: Request) -> Response:
        async with pool.using(request.path_params["session_id"]) as session:
            return _json(await session.grade())

    async def delete(request: Request) -> Response:
        await pool.close(request.path_params["session_id"])
        return Response(status_code=204)

    async def task_list(request: Request) -> Response:
        from envs.core.registry import tasks

        listed = [TaskListing(name=t.name, summary=t.spec.summary, servers=sorted(t.spec.servers),
                              lengths=TIERS).model_dump() for t in tasks().values()]
        return JSONResponse({"tasks": listed})

    async def health(request: Request) -> Response:
        return _json(Health(sessions=pool.open_count, capacity=pool.capacity,
                            idle_timeout_s=pool.idle_timeout_s))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with pool.running():
            yield

    routes = [
        Route("/sessions", _endpoint(create), methods=["POST"]),
        Route("/sessions/{session_id}/call", _endpoint(call), methods=["POST"]),
        Route("/sessions/{session_id}/grade", _endpoint(grade), methods=["POST"]),
        Route("/sessions/{session_id}", _endpoint(delete), methods=["DELETE"]),
        Route("/tasks", _endpoint(task_list), methods=["GET"]),
        Route("/health", _endpoint(health), methods=["GET"]),
    ]
    app: ASGIApp = McpRouter(Starlette(routes=routes, lifespan=lifespan), pool)
    if token:
        app = BearerToken(app, token)
    guard = http_guard(allow_remote)
    return HostOriginGuardMiddleware(app, allowed_hosts=guard["allowed_hosts"],
                                     allowed_origins=guard["allowed_origins"], mode="strict")
