"""Define a server's tools once as plain functions; get a real FastMCP app and a fast
in-process dispatcher from the same definitions.

    toolbox = Toolbox("canvas")

    @toolbox.tool(rw="read", core=True)
    def canvas_get_course(call: Call, course_id: Annotated[Int, Field(description="...")]) -> dict:
        "Get one course."
        ...

Each call runs in one database transaction (BEGIN IMMEDIATE for write tools, rolled back on
any failure). A tool returns a dict/list (sent as compact JSON, capped structurally) or a str
(plain text, capped at a line boundary). Failures are `ToolFailure`s; anything else becomes
`Error [INTERNAL]`. Argument errors are rewritten into the same `Error [CODE]` format on both
paths (MCP middleware and `ServerRuntime.call`).

Every call is bounded the same way on both paths: its raw arguments must pass `core.limits`
(storable text, 64-bit integers, bounded size and nesting) before a tool sees them; it runs
within a wall-clock and a memory budget (`core.watchdog`; DEADLINE_EXCEEDED and
RESOURCE_EXHAUSTED); MemoryError and RecursionError become RESOURCE_EXHAUSTED; and every
error text obeys the output cap.
"""

from __future__ import annotations

import inspect
import json
import logging
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from fastmcp import FastMCP
from fastmcp.exceptions import NotFoundError, ToolError
from fastmcp.exceptions import ValidationError as FastMCPValidationError
from fastmcp.resources import FunctionResource
from fastmcp.server.middleware import Middleware, MiddlewareContext
from fastmcp.tools import FunctionTool, Tool
from fastmcp.utilities.types import get_cached_typeadapter
from mcp.types import ToolAnnotations
from pydantic import TypeAdapter
from pydantic import ValidationError as PydanticValidationError
from sqlmodel import Session

from loca.core.outcome import ToolOutcome
from loca.core.world import World
from mock_servers.core import sql
from mock_servers.core.db import Database
from mock_servers.core.errors import (
    Code,
    ToolFailure,
    cap_error,
    format_error,
    format_validation_error,
    strip_host_paths,
    unknown_tool,
)
from mock_servers.core.limits import check_arguments
from mock_servers.core.output import cap_json, cap_text, dump_json
from mock_servers.core.schema import normalize_schema
from mock_servers.core.watchdog import WATCHDOG, Budget

log = logging.getLogger("loca.servers")
AUDIT_ARGUMENT_CHARS = 10_000
CALL_SECONDS = 10.0  # wall-clock budget of one call (server config `max_call_seconds`)
CALL_MEMORY_MB = 512  # growth of resident memory one call may cause (`max_call_memory_mb`)


def output_cap(world: World, config: dict[str, Any]) -> int:
    """The most characters one result may have: the server's config, else the world's."""
    return int(config.get("max_output_chars", world.meta.max_output_chars))


@dataclass
class Call:
    """What a tool body sees: the world, its session (one transaction) and the clock."""

    world: World
    session: Session
    tool: str
    write: bool
    config: dict[str, Any]
    state: dict[str, Any]  # the server instance's own memory (caches), shared across its calls
    db: Database
    _now: datetime | None = None

    @property
    def now(self) -> datetime:
        """The virtual now; a write call advances the clock by one tick when it first asks."""
        if self._now is None:
            cur = sql.cursor(self.session)
            if self.write:
                found = cur.execute("INSERT INTO core_clock (id, writes) VALUES (1, 1) ON CONFLICT(id) "
                                    "DO UPDATE SET writes = writes + 1 RETURNING writes").fetchall()
            else:
                found = cur.execute("SELECT writes FROM core_clock WHERE id = 1").fetchall()
            self._now = self.world.clock.at(found[0][0] if found else 0)
        return self._now

    @property
    def max_output_chars(self) -> int:
        return output_cap(self.world, self.config)


@dataclass(frozen=True)
class ToolDef:
    name: str
    fn: Callable[..., Any]
    rw: Literal["read", "write"]
    core: bool
    destructive: bool
    idempotent: bool
    narrow_hint: str
    auth_only: bool = False  # changes who is logged in and nothing else (login, logout)
    guarded: bool = False  # refuses every change when its server's config says `read_only`
    raw_text: frozenset[str] = frozenset()  # parameters that may carry control characters
    own_deadline: bool = False  # bounds its own time (a subprocess with its own timeout)


class Toolbox:
    """The tool definitions of one server."""

    def __init__(self, server: str, instructions: str = "", *,
                 list_keys: tuple[str, ...] = ("items",),
                 page_keys: tuple[str, str] | None = None,
                 snapshot_ignore: Mapping[str, frozenset[str] | None] | None = None,
                 snapshot_unordered: tuple[str, ...] = (),
                 table_prefix: str | tuple[str, ...] | None = None,
                 prepare: Callable[[Session, World], object] | None = None) -> None:
        """`list_keys`: the keys under which this server's envelopes hold their lists (the
        output cap cuts there). `page_keys`: the envelopes' page-number and page-size keys, so
        that a page cut by the cap names the page that continues it. `snapshot_ignore`: table
        -> columns an agent may change without a side effect (None: the whole table), for
        `no_side_effects`; `snapshot_unordered`: tables whose rows have no identity of their own
        (a row written again as it was is no change), compared as multisets. `table_prefix`:
        how this server's table names start, one prefix or several (default `<server>_`).
        `prepare`: what a new world's state gets once its generator is done (derived tables),
        run by `prepare_world`."""
        self.server = server
        prefix = table_prefix or f"{server}_"
        self.table_prefixes = (prefix,) if isinstance(prefix, str) else prefix
        self.instructions = instructions
        self.list_keys = list_keys
        self.page_keys = page_keys
        self.snapshot_ignore: dict[str, frozenset[str] | None] = dict(snapshot_ignore or {})
        self.snapshot_unordered = snapshot_unordered
        self.prepare = prepare
        self.defs: dict[str, ToolDef] = {}
        self.resources: dict[str, tuple[Callable[[Call], Any], str]] = {}
        self._templates: dict[tuple[str, str, str], FunctionTool] = {}
        self._validators: dict[str, TypeAdapter[Any]] = {}

    def tool(
        self,
        *,
        rw: Literal["read", "write"],
        core: bool = False,
        destructive: bool = False,
        idempotent: bool | None = None,
        narrow_hint: str = "narrow the request",
        auth_only: bool = False,
        guarded: bool = False,
        raw_text: tuple[str, ...] = (),
        own_deadline: bool = False,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a tool. `auth_only`: a write tool that changes only who is logged in (no
        world data), so read-only views of a world keep it. `guarded`: a write tool that also
        reads (a SQL statement runner) and refuses every change when its server's config says
        `read_only`, so read-only views keep it for its reads. `raw_text`: parameters that may
        carry control characters (code, command lines), which every other parameter refuses.
        `own_deadline`: the tool enforces a timeout of its own, so the per-call wall-clock
        budget does not apply (the memory budget still does)."""
        if (auth_only or guarded) and rw != "write":
            raise ValueError("auth_only and guarded mark write tools (a read tool changes nothing)")

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            if fn.__name__ in self.defs:
                raise ValueError(f"duplicate tool {fn.__name__}")
            if not (fn.__doc__ or "").strip():
                raise ValueError(f"tool {fn.__name__} needs a description (docstring)")
            self.defs[fn.__name__] = ToolDef(
                fn.__name__, fn, rw, core, destructive,
                rw == "read" if idempotent is None else idempotent, narrow_hint, auth_only, guarded,
                frozenset(raw_text), own_deadline)
            return fn
        return register

    def resource(self, uri: str, description: str) -> Callable[[Callable[[Call], Any]], Callable[[Call], Any]]:
        """Register an MCP resource at `uri`: a function of a read-only `Call` whose result is
        served as compact JSON."""

        def register(fn: Callable[[Call], Any]) -> Callable[[Call], Any]:
            self.resources[uri] = (fn, description)
            return fn
        return register

    def template(self, name: str, exposed: str, prefix: str) -> FunctionTool:
        """The FastMCP tool of `name` with its parsed, normalised schema, built once per
        listing and copied onto each runtime (parsing the signature is the costly part)."""
        key = (name, exposed, prefix)
        if key not in self._templates:
            tdef = self.defs[name]
            sig = inspect.signature(tdef.fn, eval_str=True)
            params = list(sig.parameters.values())[1:]  # drop `call`

            def unbound(**kwargs: Any) -> str:
                raise RuntimeError("a tool template is not bound to a world")

            unbound.__name__ = tdef.name  # no __doc__: the description is given whole, as
            # the tools' docstrings have no sections to split off (spares a docstring parser)
            unbound.__signature__ = sig.replace(parameters=params, return_annotation=str)  # type: ignore[attr-defined]
            unbound.__annotations__ = {p.name: p.annotation for p in params} | {"return": str}
            tags = {tdef.rw, self.server} | ({"core"} if tdef.core else set())
            annotations = ToolAnnotations(
                readOnlyHint=tdef.rw == "read",
                destructiveHint=tdef.destructive,
                idempotentHint=tdef.idempotent,
                openWorldHint=False,
            )
            tool = FunctionTool.from_function(
                unbound, name=exposed, description=prefix + inspect.cleandoc(tdef.fn.__doc__ or ""),
                tags=tags, annotations=annotations, output_schema=None, run_in_thread=False)
            tool.parameters = normalize_schema(tool.parameters)
            self._templates[key] = tool
        return self._templates[key]

    def validator(self, name: str) -> TypeAdapter[Any]:
        """Validates the arguments of tool `name` exactly as its FastMCP tool does (the same
        signature and annotations, through FastMCP's own adapter factory) and gives them back as
        keyword arguments: the fast path's check, without FastMCP's per-call wrapping."""
        if name not in self._validators:
            template = self.template(name, name, "")

            def arguments(**kwargs: Any) -> dict[str, Any]:
                return kwargs

            _mirror(template.fn, arguments)
            self._validators[name] = get_cached_typeadapter(arguments)
        return self._validators[name]

    def build(self, world: World, config: dict[str, Any] | None = None,
              db: Database | None = None) -> FastMCP:
        """A FastMCP app serving these tools over `world`."""
        return ServerRuntime(self, world, config or {}, db).app


class ServerRuntime:
    """One server over one world: the FastMCP app plus a direct dispatcher for the gym."""

    def __init__(self, toolbox: Toolbox, world: World, config: dict[str, Any],
                 db: Database | None = None) -> None:
        self.setup(toolbox, world, config, db)
        self.app = FastMCP(toolbox.server, instructions=toolbox.instructions or None)
        self.tools: dict[str, Tool] = {}
        for tdef in toolbox.defs.values():
            self.tools[tdef.name] = self.make_tool(tdef.name)
            self.app.add_tool(self.tools[tdef.name])
        for uri, (fn, description) in toolbox.resources.items():
            self.app.add_resource(FunctionResource.from_function(
                self._resource_reader(uri), uri=uri, name=fn.__name__, description=description,
                mime_type="application/json"))
        self.app.add_middleware(ErrorFormatting({name: self for name in self.tools}))

    def setup(self, toolbox: Toolbox, world: World, config: dict[str, Any], db: Database | None) -> None:
        """Everything a call needs but the tools and the app (a subclass may make those lazily)."""
        self.toolbox = toolbox
        self.world = world
        self.config = config
        self.db = db or Database(world.state_path)
        self.state: dict[str, Any] = {}
        self.max_output_chars = output_cap(world, config)
        self.seconds = float(config.get("max_call_seconds", CALL_SECONDS))
        self.memory = int(config.get("max_call_memory_mb", CALL_MEMORY_MB)) << 20
        self.arg_limits: dict[str, dict[str, int]] = {}

    def read_resource(self, uri: str) -> str:
        """The content of the resource at `uri`, read in its own read transaction."""
        fn = self.toolbox.resources[uri][0]
        with self.db.read() as session:
            return dump_json(fn(Call(self.world, session, fn.__name__, False, self.config, self.state, self.db)))

    def _resource_reader(self, uri: str) -> Callable[[], str]:
        def read() -> str:
            return self.read_resource(uri)
        return read

    def refusal(self, name: str, arguments: Any) -> str | None:
        """The error text when the raw `arguments` of tool `name` break the limits every call
        obeys (`core.limits`), else None. A string may be as long as its parameter's declared
        maximum, else as the world's output cap."""
        tdef = self.toolbox.defs[name]
        if not isinstance(arguments, dict):
            return self.error_text(name, Code.INVALID_ARGUMENT, "arguments must be a JSON object")
        if name not in self.arg_limits:
            properties = self.tools[name].parameters.get("properties", {})
            self.arg_limits[name] = {p: s["maxLength"] for p, s in properties.items() if "maxLength" in s}
        try:
            check_arguments(arguments, self.arg_limits[name], self.world.meta.max_output_chars,
                            tdef.raw_text)
        except ToolFailure as exc:
            return self.error_text(name, exc.code, exc.message, exc.hint)
        return None

    def error_text(self, name: str, code: Code, message: str, hint: str | None = None) -> str:
        return cap_error(format_error(name, code, message, hint), self.max_output_chars)

    def make_tool(self, name: str, exposed: str | None = None, prefix: str = "") -> Tool:
        """A FastMCP tool running `name` on this runtime, listed as `exposed` with `prefix`
        before its description (the gateway's view of it)."""
        tdef = self.toolbox.defs[name]
        runtime = self

        def body(**kwargs: Any) -> str:
            return runtime._execute(tdef, kwargs)

        template = self.toolbox.template(name, exposed or name, prefix)
        _mirror(template.fn, body)
        return template.model_copy(update={"fn": body})

    def _execute(self, tdef: ToolDef, kwargs: dict[str, Any]) -> str:
        write = tdef.rw == "write"
        seconds = None if tdef.own_deadline else self.seconds
        try:
            with (self.db.write() if write else self.db.read()) as session, \
                    WATCHDOG.guard(seconds, self.memory):
                call = Call(self.world, session, tdef.name, write, self.config, self.state, self.db)
                result = tdef.fn(call, **kwargs)
                if isinstance(result, str):
                    return cap_text(result, self.max_output_chars, tdef.narrow_hint)
                return cap_json(result, self.max_output_chars, self.toolbox.list_keys,
                                self.toolbox.page_keys)
        except ToolFailure as exc:
            raise ToolError(self.error_text(tdef.name, exc.code, exc.message, exc.hint)) from None
        except Budget as exc:
            raise ToolError(self.error_text(tdef.name, exc.code, exc.message, tdef.narrow_hint)) from None
        except (MemoryError, RecursionError) as exc:
            what = "memory" if isinstance(exc, MemoryError) else "nesting depth (recursion limit)"
            raise ToolError(self.error_text(tdef.name, Code.RESOURCE_EXHAUSTED,
                                            f"the call ran out of {what}", tdef.narrow_hint)) from None
        except Exception as exc:  # a bug: report it, never crash the server
            log.error("tool %s failed:\n%s", tdef.name, traceback.format_exc())
            message = strip_host_paths(f"{type(exc).__name__}: {exc}")
            raise ToolError(self.error_text(tdef.name, Code.INTERNAL, message)) from None

    def format_argument_error(self, name: str, exc: FastMCPValidationError | PydanticValidationError) -> str:
        cause = exc if isinstance(exc, PydanticValidationError) else exc.__cause__
        if isinstance(cause, PydanticValidationError):
            tool = self.tools.get(name)
            properties = tool.parameters.get("properties", {}) if tool else {}
            return cap_error(format_validation_error(name, cause, properties), self.max_output_chars)
        return self.error_text(name, Code.INVALID_ARGUMENT, str(exc))

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """The gym's fast path: the tool's body called directly, its arguments checked exactly as
        the FastMCP app checks them (`Toolbox.validator`)."""
        tool = self.tools.get(name)
        if tool is None:
            return ToolOutcome(unknown_tool(name), True)
        started = time.monotonic()
        refused = self.refusal(name, arguments)
        if refused is not None:
            outcome = ToolOutcome(refused, True)
        else:
            try:
                kwargs = self.toolbox.validator(name).validate_python(arguments)
                outcome = ToolOutcome(self._execute(self.toolbox.defs[name], kwargs), False)
            except ToolError as exc:
                outcome = ToolOutcome(str(exc), True)
            except PydanticValidationError as exc:
                outcome = ToolOutcome(self.format_argument_error(name, exc), True)
        self.audit(name, arguments, outcome, started)
        return outcome

    def audit(self, name: str, arguments: Any, outcome: ToolOutcome, started: float) -> None:
        """Record the call in the world's audit log (see docs/concepts/servers.md), unless the server's
        config says `audit: false` (the measurement of a new world: not an agent's calls)."""
        if not self.config.get("audit", True):
            return
        try:
            args = json.dumps(arguments, sort_keys=True, default=repr)[:AUDIT_ARGUMENT_CHARS]
        except (RecursionError, TypeError, ValueError) as exc:  # refused arguments (too deep)
            args = json.dumps(f"<arguments not recorded: {type(exc).__name__}>")
        self.db.audit((self.toolbox.server, name, args, outcome.is_error, len(outcome.text),
                       self.config.get("parent_call_id"), round(1000 * (time.monotonic() - started), 3)))


class ErrorFormatting(Middleware):
    """Argument and unknown-tool errors in the `Error [CODE]` format for MCP clients, and every
    call in the audit log. `routes` maps each listed tool name to (runtime, local tool name)."""

    def __init__(self, routes: dict[str, ServerRuntime | tuple[ServerRuntime, str]]) -> None:
        self.routes = {k: v if isinstance(v, tuple) else (v, k) for k, v in routes.items()}

    async def on_call_tool(self, context: MiddlewareContext, call_next: Any) -> Any:
        name = context.message.name
        route = self.routes.get(name)
        started = time.monotonic()
        if route is not None:
            refused = route[0].refusal(route[1], context.message.arguments or {})
            if refused is not None:
                route[0].audit(route[1], context.message.arguments, ToolOutcome(refused, True), started)
                raise ToolError(refused)
        try:
            result = await call_next(context)
        except FastMCPValidationError as exc:
            if route is None:
                raise
            text = route[0].format_argument_error(route[1], exc)
            route[0].audit(route[1], context.message.arguments, ToolOutcome(text, True), started)
            raise ToolError(text) from None
        except ToolError as exc:
            if route is not None:
                route[0].audit(route[1], context.message.arguments, ToolOutcome(str(exc), True), started)
            raise
        except NotFoundError:
            raise ToolError(unknown_tool(name)) from None
        if route is not None:
            text = "".join(getattr(block, "text", "") for block in result.content)
            route[0].audit(route[1], context.message.arguments, ToolOutcome(text, False), started)
        return result


def _mirror(source: Callable[..., Any], target: Callable[..., Any]) -> None:
    """Give `target` the name, description and signature FastMCP validates against."""
    for attr in ("__name__", "__doc__", "__signature__", "__annotations__"):
        setattr(target, attr, getattr(source, attr))
