"""Running the environment server: its settings checked, its sessions folder taken (and cleared
of what a killed server left), uvicorn with the limits of `loca.core.http_limits`."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from loca.core.dirlock import LOCK_FILE, hold
from loca.core.errors import BadInput
from loca.core.http_limits import HttpLimits
from loca.envserver.app import build_app
from loca.envserver.sessions import SessionPool
from mock_servers.serve import LOOPBACK, check_bind

TOKEN_ENV = "LOCA_ENV_SERVER_TOKEN"


@dataclass(frozen=True)
class ServerSettings:
    host: str = "127.0.0.1"
    port: int = 8770
    capacity: int = 64
    idle_timeout_s: float = 600.0
    root: Path | None = None
    token: str | None = None
    allow_remote: tuple[str, ...] = ()

    def check(self) -> None:
        """Refuse a bind beyond loopback without the names clients use (as `loca serve` does)
        or without a bearer token."""
        try:
            check_bind("http", self.host, self.allow_remote)
        except ValueError as exc:
            raise BadInput(str(exc)) from None
        if self.host not in LOOPBACK and not self.token:
            raise BadInput(f"refusing to bind {self.host} without a bearer token: set {TOKEN_ENV} "
                           f"(clients send it as Authorization: Bearer TOKEN)")
        if self.token is not None and len(self.token) < 16:
            raise BadInput("the bearer token must be at least 16 characters")

    @property
    def sessions_root(self) -> Path:
        """Where session folders live: `root`, else a folder of this port in the temp dir."""
        return self.root or Path(tempfile.gettempdir()) / f"loca-env-server-{self.port}"


def serve(settings: ServerSettings, announce: Callable[[str], None] = print) -> None:
    """Serve until interrupted; every session is closed and its folder removed on the way out."""
    import uvicorn

    settings.check()
    pool = SessionPool(settings.sessions_root, settings.capacity, settings.idle_timeout_s)
    if pool.root.is_dir() and any(pool.root.iterdir()) and not (pool.root / LOCK_FILE).is_file():
        raise BadInput(f"{pool.root} holds files and is not a sessions folder: pass an empty or new --root")
    with ExitStack() as stack:
        try:
            stack.enter_context(hold(pool.root, "sessions folder", BadInput))
        except BadInput:
            raise BadInput(f"{pool.root} is in use by another env-server; pass another --root "
                           f"or --port") from None
        pool.clear_root()
        app = build_app(pool, settings.token, settings.allow_remote)
        limits = HttpLimits(max_connections=max(HttpLimits.max_connections, 2 * settings.capacity))
        announce(f"loca env-server on http://{settings.host}:{settings.port} "
                 f"({settings.capacity} sessions, idle timeout {settings.idle_timeout_s:g} s, "
                 f"sessions in {pool.root})")
        uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning",
                    **limits.uvicorn_settings())
