"""What one HTTP client may hold of a server run by uvicorn (the MCP servers over streamable
HTTP, the viewer): the settings given to uvicorn, and the one bound it lacks, added to its
HTTP/1.1 protocol over h11 (used whether or not httptools is installed).

- A request must arrive whole, head and body, within `request_timeout_s` of its connection or of
  the response before it, else the connection is closed. uvicorn has no such timeout: its
  keep-alive timer runs only between requests and stops at a request's first byte, so a client
  sending its head a byte at a time (or nothing at all) holds its connection for ever. Answering
  takes as long as it takes: the bound is on the client's part alone.
- A connection idle between requests is closed after `keep_alive_s` (uvicorn's
  `timeout_keep_alive`).
- An unfinished request head may hold at most `MAX_HEAD_BYTES` of the server's memory (h11's
  `h11_max_incomplete_event_size`); beyond, it is answered 400 and its connection closed.
- With `max_connections` connections open, a request on a further one is answered 503 and its
  connection closed (uvicorn's `limit_concurrency`: the open connections and running requests).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

MAX_HEAD_BYTES = 16 * 1024
_RECEIVING = (h11.IDLE, h11.SEND_BODY)  # the client's states while its request is not all in


@dataclass(frozen=True)
class HttpLimits:
    """Bounds on each client of an HTTP server, defaults for a server on loopback."""

    request_timeout_s: float = 10.0
    keep_alive_s: int = 5
    max_connections: int = 64

    def uvicorn_settings(self) -> dict[str, Any]:
        """Keyword arguments of `uvicorn.Config` (or `uvicorn.run`) that apply these limits."""
        protocol = type("TimedH11Protocol", (TimedH11Protocol,), {"request_timeout_s": self.request_timeout_s})
        return {"http": protocol, "timeout_keep_alive": self.keep_alive_s,
                "h11_max_incomplete_event_size": MAX_HEAD_BYTES,
                # uvicorn refuses once the open connections, the new one included, reach its limit
                "limit_concurrency": self.max_connections + 1}


class TimedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, closing a connection whose request is not all in within
    `request_timeout_s` of the connection or of the previous response."""

    request_timeout_s: float = HttpLimits.request_timeout_s
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state not in _RECEIVING:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state in _RECEIVING:
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.request_timeout_s, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.logger.debug("request not received within %s s; connection closed", self.request_timeout_s)
            self.transport.close()
