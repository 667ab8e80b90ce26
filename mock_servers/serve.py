"""Serving a world's servers over MCP: stdio, or streamable HTTP bound to loopback unless remote
binding is asked for explicitly. `python -m mock_servers SERVER --world DIR` serves one server.

Over HTTP every request's `Host` must name the server by a loopback name, or by a name given
with `--allow-remote`; a browser `Origin` must be one of those names too (any port), or the
server's own origin. Anything else is refused before it reaches a tool: 421 for the host, 403
for the origin (the MCP transport's guard against DNS rebinding). Slow, idle and surplus
clients are closed or refused by the limits of `loca.core.http_limits`. Over stdio every request
gets a JSON-RPC answer, malformed lines included (`mock_servers.stdio`)."""

from __future__ import annotations

import argparse
import gc
import ipaddress
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from fastmcp import FastMCP

LOOPBACK = ("127.0.0.1", "localhost", "::1")
TRANSPORTS = ("stdio", "http")
_LABEL = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
_HOST_NAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*$")


def remote_names(values: Iterable[str] | None) -> tuple[str, ...]:
    """The host names or addresses given to `--allow-remote` (repeated or comma-separated),
    lower-cased; anything else (a pattern, a port, a URL) is refused."""
    names = (part.strip().lower() for value in values or () for part in value.split(","))
    return tuple(dict.fromkeys(_remote_name(name) for name in names if name))


def _remote_name(name: str) -> str:
    address = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        pass
    if not _HOST_NAME.match(name):
        raise ValueError(f"--allow-remote takes host names or addresses, not {name!r}")
    return name


def check_bind(transport: str, host: str, allow_remote: Iterable[str] = ()) -> None:
    """Refuse an unknown transport, or a non-loopback HTTP bind unless `allow_remote` names the
    hosts that clients will use to reach it."""
    if transport not in TRANSPORTS:
        raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, not {transport!r}")
    if transport == "http" and host not in LOOPBACK and not tuple(allow_remote):
        raise ValueError(f"refusing to bind {host}: pass --allow-remote NAME (the host names "
                         f"clients use to reach this server) to serve beyond loopback")


def http_guard(allow_remote: Iterable[str] = ()) -> dict[str, Any]:
    """FastMCP's Host/Origin guard, strict: loopback names and `allow_remote` only (its lists
    are glob patterns, so an IPv6 address's brackets are escaped)."""
    names = [*LOOPBACK, *allow_remote]
    origins = [f"{scheme}://{f'[[]{n}]' if ':' in n else n}:*" for n in names
               for scheme in ("http", "https")]
    return {"host_origin_protection": True, "allowed_hosts": names, "allowed_origins": origins}


def run_app(app: FastMCP, transport: str, host: str = "127.0.0.1", port: int = 8765,
            allow_remote: Iterable[str] = ()) -> None:
    if transport == "stdio":
        from mock_servers.stdio import serve_stdio

        anyio.run(serve_stdio, app)
    else:
        from loca.core.http_limits import HttpLimits  # uvicorn: not imported to serve stdio

        app.run(transport="http", host=host, port=port, show_banner=False,
                uvicorn_config=HttpLimits().uvicorn_settings(), **http_guard(allow_remote))


def main(argv: list[str] | None = None) -> None:
    from loca.core.world import World
    from mock_servers import SERVERS, load_toolbox

    parser = argparse.ArgumentParser(prog="python -m mock_servers", description=__doc__)
    parser.add_argument("server", choices=sorted(SERVERS))
    parser.add_argument("--world", required=True, help="world directory")
    parser.add_argument("--transport", default="stdio", choices=TRANSPORTS)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--allow-remote", action="append", metavar="NAME",
                        help="a host name or address clients may use besides loopback (repeat "
                             "or comma-separate); needed to bind beyond loopback")
    args = parser.parse_args(argv)
    try:
        names = remote_names(args.allow_remote)
        check_bind(args.transport, args.host, names)
        world = World.load(args.world)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    app = load_toolbox(args.server).build(world)
    gc.freeze()  # the loaded modules and the app live as long as the process: out of the collector's way
    run_app(app, args.transport, args.host, args.port, names)
