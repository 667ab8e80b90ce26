"""MCP over stdio that answers every request, malformed ones included.

The MCP SDK's stdio transport passes a line it cannot validate to the session as an exception,
and the session drops it: a client waiting on that request never hears back. Here every line is
checked before the SDK reads it. A valid message goes on unchanged; anything else gets a JSON-RPC
error: -32700 when the line is not JSON the SDK can read (bad syntax, lone-surrogate escapes,
numbers or nesting beyond its parser's limits), -32600 when it is JSON but not a valid message
(`"jsonrpc": "1.0"`, a batch, an id that is neither a string nor an integer). The error carries
the request's id when one can be read, else null. A line longer than the HTTP transport's body
limit is refused the same way without being held in memory. Blank lines are skipped.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, BinaryIO, cast

import anyio
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

if TYPE_CHECKING:
    from fastmcp import FastMCP

MAX_LINE_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE
"""The longest request line, as the HTTP transport's longest request body."""
_LONGEST_ID_DIGITS = 18
"""Integer ids longer than this are not echoed (they would not survive every JSON reader)."""


async def serve_stdio(app: FastMCP) -> None:
    """Serve `app` over stdin and stdout until stdin closes (FastMCP's stdio runner, with the
    checked transport; FastMCP 4.1 offers no hook for the transport, hence its internals)."""
    from fastmcp.server.context import reset_transport, set_transport

    server = app._mcp_server
    token = set_transport("stdio")
    try:
        async with app._lifespan_manager(), checked_stdio() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        reset_transport(token)


@asynccontextmanager
async def checked_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio streams over checked input (see the module docstring)."""
    with _wire_stdin() as wire:
        lines = _CheckedLines(wire)
        async with stdio_server(stdin=cast(Any, lines)) as (read, write):
            lines.answer_through(write)
            yield read, write


@contextmanager
def _wire_stdin() -> Iterator[BinaryIO]:
    """Stdin on a private descriptor while serving; fd 0 reads /dev/null meanwhile, so nothing
    else in the process, nor a child it starts, can take bytes off the wire."""
    try:
        wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:
        yield sys.stdin.buffer
        return
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        yield os.fdopen(wire, "rb", closefd=False)  # a reader thread may still block on it
    finally:
        os.dup2(wire, 0)


class _CheckedLines:
    """The valid lines of the wire, as the SDK's reader iterates them; the others are answered
    here, through the transport's own writer."""

    def __init__(self, wire: BinaryIO) -> None:
        self._wire = wire
        self._write: Any = None
        self._ready = anyio.Event()

    def answer_through(self, write: Any) -> None:
        self._write = write
        self._ready.set()

    def __aiter__(self) -> _CheckedLines:
        return self

    async def __anext__(self) -> str:
        await self._ready.wait()
        while True:
            raw = await anyio.to_thread.run_sync(self._wire.readline, MAX_LINE_BYTES + 1)
            if not raw:
                raise StopAsyncIteration
            error: JSONRPCError | None
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                await self._skip_rest_of_line()
                error = _error(None, INVALID_REQUEST,
                               f"Invalid request: a message line may hold at most "
                               f"{MAX_LINE_BYTES} bytes")
            else:
                text = raw.decode("utf-8", "replace")
                if not text.strip():
                    continue
                error = check_line(text)
                if error is None:
                    return text
            try:
                await self._write.send(SessionMessage(error))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                raise StopAsyncIteration from None

    async def _skip_rest_of_line(self) -> None:
        while True:
            chunk = await anyio.to_thread.run_sync(self._wire.readline, MAX_LINE_BYTES)
            if not chunk or chunk.endswith(b"\n"):
                return


def check_line(text: str) -> JSONRPCError | None:
    """None for a valid JSON-RPC message, else the error that answers it."""
    try:
        message = jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        first = errors[0] if errors else {"loc": (), "msg": str(exc)}
        if any(e["type"] == "json_invalid" for e in errors):
            return _error(request_id(text), PARSE_ERROR, f"Parse error: {first['msg']}")
        where = ".".join(str(part) for part in first["loc"][1:])
        detail = f"{where}: {first['msg']}" if where else first["msg"]
        return _error(request_id(text), INVALID_REQUEST, f"Invalid request: {detail}")
    if isinstance(message, JSONRPCNotification) and _names_an_id(text):
        return _error(None, INVALID_REQUEST,
                      "Invalid request: the id must be a string or an integer")
    return None


def request_id(text: str) -> int | str | None:
    """The id of a message that failed validation, when it can be read, else None."""
    try:
        data = json.loads(text, parse_int=_short_int)
    except (ValueError, RecursionError):
        return None
    ident = data.get("id") if isinstance(data, dict) else None
    if isinstance(ident, bool) or not isinstance(ident, int | str):
        return None
    if isinstance(ident, str):
        try:
            ident.encode("utf-8")
        except UnicodeEncodeError:
            return None
    return ident


def _short_int(digits: str) -> int | None:
    return int(digits) if len(digits.lstrip("-")) <= _LONGEST_ID_DIGITS else None


def _names_an_id(text: str) -> bool:
    """A notification that carries an `id` key was meant as a request with a bad id."""
    try:
        data = json.loads(text, parse_int=_short_int)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and "id" in data


def _error(ident: int | str | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=ident, error=ErrorData(code=code, message=message))
