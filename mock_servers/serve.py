"""Serving a world's servers over MCP: stdio, or streamable HTTP bound to loopback unless remote
binding is asked for explicitly. `python -m mock_servers SERVER --world DIR` serves one server."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastmcp import FastMCP

LOOPBACK = ("127.0.0.1", "localhost", "::1")
TRANSPORTS = ("stdio", "http")


def check_bind(transport: str, host: str, allow_remote: bool) -> None:
    """Refuse an unknown transport, or a non-loopback HTTP bind without `allow_remote`."""
    if transport not in TRANSPORTS:
        raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, not {transport!r}")
    if transport == "http" and host not in LOOPBACK and not allow_remote:
        raise ValueError(f"refusing to bind {host}: pass --allow-remote to serve beyond loopback")


def run_app(app: FastMCP, transport: str, host: str = "127.0.0.1", port: int = 8765) -> None:
    if transport == "stdio":
        app.run(transport="stdio", show_banner=False)
    else:
        app.run(transport="http", host=host, port=port, show_banner=False)


def main(argv: list[str] | None = None) -> None:
    from loca.core.world import World
    from mock_servers import SERVERS, load_toolbox

    parser = argparse.ArgumentParser(prog="python -m mock_servers", description=__doc__)
    parser.add_argument("server", choices=sorted(SERVERS))
    parser.add_argument("--world", required=True, help="world directory")
    parser.add_argument("--transport", default="stdio", choices=TRANSPORTS)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--allow-remote", action="store_true", help="allow a non-loopback --host")
    args = parser.parse_args(argv)
    try:
        check_bind(args.transport, args.host, args.allow_remote)
        world = World.load(args.world)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    run_app(load_toolbox(args.server).build(world), args.transport, args.host, args.port)
