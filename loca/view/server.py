"""The viewer's web app: the page and its assets from the package, and JSON endpoints over a
`Catalog`. It serves loopback only: binding elsewhere is refused, and a request whose Host header
names anything but loopback is answered 421 (a page elsewhere cannot reach it by DNS rebinding).
Slow, idle and surplus clients are closed or refused (`loca.core.http_limits`)."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from loca.core.errors import BadInput
from loca.records import RunFileError
from loca.view.runs import Catalog, NotFound

STATIC = Path(__file__).parent / "static"
LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """A host name or address that stays on this machine."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _host_of(header: str) -> str:
    """The host of a Host header, without its port."""
    if header.startswith("["):
        return header[1:header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class LoopbackOnly:
    """Answers 421 to an HTTP request whose Host header is not loopback."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or ())
            host = headers.get(b"host", b"").decode("latin-1")
            if not is_loopback(_host_of(host)):
                await JSONResponse({"error": "this viewer answers loopback host names only"},
                                   status_code=421)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _json(handler: Callable[[Request], Any]) -> Callable[[Request], Awaitable[Response]]:
    """An endpoint answering JSON: 404 for what the runs do not hold, 400 for a bad query, 422
    for a run file that cannot be read."""

    async def endpoint(request: Request) -> Response:
        try:
            return JSONResponse(handler(request))
        except NotFound as exc:
            return JSONResponse({"error": str(exc)}, status_code=404)
        except RunFileError as exc:
            return JSONResponse({"error": str(exc)}, status_code=422)
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)

    return endpoint


def _key(request: Request) -> str:
    key = request.query_params.get("key")
    if not key:
        raise ValueError("key is required")
    return key


def build_app(catalog: Catalog) -> ASGIApp:
    """The viewer over `catalog`."""

    async def page(_: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    routes = [
        Route("/", page),
        Route("/api/episodes", _json(lambda r: catalog.listing(r.query_params))),
        Route("/api/episode", _json(lambda r: catalog.summary(_key(r)))),
        Route("/api/entries", _json(lambda r: catalog.entries(_key(r), r.query_params))),
        Route("/api/message", _json(lambda r: catalog.message(_key(r), r.query_params.get("mid", "")))),
        Mount("/static", StaticFiles(directory=STATIC)),
    ]
    return LoopbackOnly(Starlette(routes=routes))


class PortInUse(BadInput):
    """The viewer's port cannot be had."""


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to (`host`, `port`), before anything says the viewer serves there."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise PortInUse(f"cannot serve on {host} port {port} ({exc.strerror or exc}): another program, "
                        f"perhaps another loca view, holds it; choose another with --port") from None
    sock.set_inheritable(True)
    return sock


def serve(catalog: Catalog, host: str, port: int, announce: Callable[[str], None] = print) -> None:
    """Serve the catalog's runs on http://host:port until interrupted; `PortInUse`, before
    anything is announced, when the port is taken."""
    import uvicorn

    from loca.core.http_limits import HttpLimits

    if not is_loopback(host):
        raise ValueError(f"the viewer serves loopback only (127.0.0.1, ::1, localhost), not {host!r}")
    sock = bind(host, port)
    app = build_app(catalog)
    shown = f"[{host}]" if ":" in host else host
    runs = len(catalog.roots)
    announce(f"serving {runs} run{'s' if runs != 1 else ''} at http://{shown}:{port}/ (Ctrl-C stops)")
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", **HttpLimits().uvicorn_settings())
    uvicorn.Server(config).run(sockets=[sock])
