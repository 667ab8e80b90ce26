"""Programmatic tool calling (spec §3.4.7): the harness tool `code_execution`.

Each invocation runs the model's code in a fresh child of the code sandbox (`mock_servers.
sandbox`: confinement, resource limits, a disk budget, scrubbed environment, nothing left
running afterwards) through the runtime `ptc_runtime.py`. A nested call is one JSON line on a
dedicated pipe; the harness checks it against the allow-list and `max_nested_calls`, runs it
through the tool hub exactly like a model's call (counted, recorded with `parent_call_id`), and
answers `{text, data, is_error}` before the code goes on. The timeout covers the nested calls;
when it passes, the process group is killed, a call in flight is let finish, and the report
says `timed_out` with the calls made.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loca.core.outcome import ToolOutcome
from loca.core.world import World, WorldError
from mock_servers.sandbox import (
    CONFIG_MODE,
    CONFIG_PYTHON,
    KILL_GRACE_S,
    SCRIPT_FLAGS,
    Execution,
    Limits,
    SandboxError,
    open_execution,
)
from scaffolds.context.config import PtcConfig
from scaffolds.harness.base import HarnessTool, error_text, integer, params, string
from scaffolds.prompts import get_prompt

if TYPE_CHECKING:
    from scaffolds.harness.hub import ToolHub

SERVER = "code_execution"
RUNTIME = Path(__file__).with_name("ptc_runtime.py")
SCRATCH = "code_execution"
"""The folder under the world's scratch holding each invocation's private /tmp."""
MAX_CODE_CHARS = 1_000_000
MAX_LINE_BYTES = 16 << 20
"""Longest request line the code may send (arguments of one call)."""
HALT_CHECK_S = 0.02
"""How often the wait for the code asks the time left (the disk budget may end it early)."""
_ERROR = re.compile(r"Error \[([A-Z_]+)\]: [^:]*: ", re.S)


def tool_name(naming: str) -> str:
    return "programmatic_tool_calling_code_execution" if naming == "paper" else "code_execution"


def code_execution_tool(config: PtcConfig, hub: ToolHub, allowed: Sequence[Mapping[str, Any]],
                        world_dir: str | None) -> HarnessTool:
    """The tool; `allowed` are the schemas of the tools code may call."""
    name = tool_name(config.naming)
    names = [t["name"] for t in allowed]
    listing = ", ".join(names) if config.direct_tools == "all" \
        else "".join(f"\n- {_signature(t)}" for t in allowed)
    description = get_prompt(config.description).render(max_calls=config.max_nested_calls,
                                                        tools=listing or "none")
    parameters = params({
        "code": string("Python 3 source to run", minLength=1, maxLength=MAX_CODE_CHARS),
        "timeout_s": integer(f"wall-clock limit in seconds, tool calls included (default "
                             f"{config.default_timeout_s}, at most {config.max_timeout_s})",
                             minimum=1, maximum=config.max_timeout_s)}, "code")

    async def handle(call_id: str, arguments: Mapping[str, Any], turn: int) -> ToolOutcome:
        problem = _check(arguments, config)
        if problem is not None:
            return ToolOutcome(error_text("INVALID_ARGUMENT", name, problem), is_error=True,
                               server=SERVER)
        try:
            if world_dir is None:
                raise WorldError("the environment names no world folder (info['world_dir'])")
            world = World.load(world_dir)
            run = _Run(config, hub, names, call_id, turn)
            report = await run.execute(world, arguments["code"],
                                       arguments.get("timeout_s") or config.default_timeout_s)
        except (SandboxError, WorldError) as exc:
            code, message = (exc.code.value, exc.message) if isinstance(exc, SandboxError) \
                else ("FAILED_PRECONDITION", f"no world to run code in: {exc}")
            return ToolOutcome(error_text(code, name, message), is_error=True, server=SERVER)
        return ToolOutcome(json.dumps(report, ensure_ascii=False), is_error=not report["success"],
                           server=SERVER)

    return HarnessTool(name, description, parameters, handle, SERVER)


def _check(arguments: Mapping[str, Any], config: PtcConfig) -> str | None:
    unknown = sorted(set(arguments) - {"code", "timeout_s"})
    if unknown:
        return f"unknown argument(s) {', '.join(unknown)}; known: code, timeout_s"
    code = arguments.get("code")
    if not isinstance(code, str) or not code.strip() or len(code) > MAX_CODE_CHARS:
        return f"code must be non-empty Python source of at most {MAX_CODE_CHARS} characters"
    timeout = arguments.get("timeout_s")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int)
                                or not 1 <= timeout <= config.max_timeout_s):
        return f"timeout_s must be an integer from 1 to {config.max_timeout_s}, got {timeout!r}"
    return None


def _signature(schema: Mapping[str, Any]) -> str:
    """`name(a: type, b?: type): first line of the description`."""
    props = (schema.get("parameters") or {}).get("properties") or {}
    required = set((schema.get("parameters") or {}).get("required") or ())
    args = ", ".join(f"{k}{'' if k in required else '?'}: {v.get('type', 'any')}"
                     for k, v in props.items())
    summary = (schema.get("description") or "").strip().split("\n")[0][:200]
    return f"{schema['name']}({args}): {summary}"


class _Run:
    """One invocation: the child, its pipes and the nested calls it made."""

    def __init__(self, config: PtcConfig, hub: ToolHub, allowed: Sequence[str], call_id: str,
                 turn: int) -> None:
        self.config = config
        self.hub = hub
        self.allowed = frozenset(allowed)
        self.names = list(allowed)
        self.call_id = call_id
        self.turn = turn
        self.calls: list[dict[str, Any]] = []
        self.final: dict[str, Any] | None = None
        self.protocol_error: str | None = None

    async def execute(self, world: World, code: str, timeout: int) -> dict[str, Any]:
        sandbox = {CONFIG_MODE: self.config.sandbox, CONFIG_PYTHON: self.config.sandbox_python}
        with open_execution(world, sandbox, Limits(timeout_s=timeout),
                            scratch=world.scratch / SCRATCH) as ex:
            runtime = ex.write_script("loca_code_runtime.py", RUNTIME.read_text("utf-8"))
            script = ex.write_script("code.py", code)
            names = ex.write_script("tools.json", json.dumps(self.names))
            timed_out, status = await self._drive(ex, [runtime, script, names], timeout)
            return self._report(ex, timed_out, status, timeout)

    async def _drive(self, ex: Execution, files: list[str],
                     timeout: int) -> tuple[bool, int | None]:
        """Run the child to its end or the deadline; (timed out, exit status)."""
        loop = asyncio.get_running_loop()
        request_r, request_w = os.pipe()
        answer_r, answer_w = os.pipe()
        try:
            argv, keywords = ex.command([*ex.python(*SCRIPT_FLAGS), files[0], str(request_w),
                                         str(answer_r), *files[1:]])
            proc = await asyncio.create_subprocess_exec(
                *argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, pass_fds=(request_w, answer_r), **keywords)
        except BaseException:
            for fd in (request_r, answer_w):
                os.close(fd)
            raise
        finally:
            os.close(request_w)
            os.close(answer_r)
        reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
        read_t, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(request_r, "rb", 0))
        write_t, write_p = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(answer_w, "wb", 0))
        writer = asyncio.StreamWriter(write_t, write_p, None, loop)
        assert proc.stdout is not None and proc.stderr is not None
        pumps = [asyncio.ensure_future(_pump(proc.stdout, ex.out.feed)),
                 asyncio.ensure_future(_pump(proc.stderr, ex.err.feed))]
        serve = asyncio.ensure_future(self._serve(reader, writer))
        ended = asyncio.ensure_future(_both(serve, proc))
        try:
            while not ended.done() and ex.left() > 0:
                await asyncio.wait({ended}, timeout=min(ex.left(), HALT_CHECK_S))
            done = ended.done()
            await _kill(proc)
            if not serve.done():  # a call in flight finishes; the dead child never reads it
                await asyncio.wait({serve}, timeout=self.hub.limits.tool_timeout_s + 5)
            await asyncio.wait(pumps, timeout=1.0)
        finally:
            for task in (ended, serve, *pumps):
                task.cancel()
            await _kill(proc)
            read_t.close()
            write_t.close()
        failure = _failure(ended) or _failure(serve)
        if failure is not None:  # a nested call's infrastructure failure ends the episode
            raise failure
        return not done, proc.returncode

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Answer requests until the child closes its end; `done` records the final report."""
        while True:
            try:
                line = await reader.readline()
            except (ValueError, asyncio.LimitOverrunError):
                self.protocol_error = f"a tool request longer than {MAX_LINE_BYTES} bytes"
                return
            if not line:
                return
            try:
                message = json.loads(line)
                op = message.get("op")
            except (ValueError, AttributeError):
                self.protocol_error = "a tool request that is not a JSON object"
                return
            if op == "done":
                self.final = message
                continue
            if op != "call":
                self.protocol_error = f"a request with the unknown op {op!r}"
                return
            answer = await self._answer(message.get("name"), message.get("arguments"))
            try:
                writer.write((json.dumps(answer, ensure_ascii=False) + "\n").encode("utf-8"))
                await writer.drain()
            except (ConnectionError, OSError):
                return

    async def _answer(self, name: Any, arguments: Any) -> dict[str, Any]:
        seq = len(self.calls) + 1
        call_id = f"{self.call_id}.{seq}"
        shown = name if isinstance(name, str) else repr(name)
        status: str | None = None
        if name not in self.allowed:
            status, code, text = "invalid", "NOT_FOUND", (
                f"Error [NOT_FOUND]: {shown}: code cannot call this tool; callable: "
                f"{', '.join(self.names) or 'none'}")
        elif len(self.calls) >= self.config.max_nested_calls:
            status, code, text = "skipped", "RESOURCE_EXHAUSTED", (
                f"Error [RESOURCE_EXHAUSTED]: {shown}: at most {self.config.max_nested_calls} "
                "tool calls per code execution")
        elif not isinstance(arguments, dict):
            status, code, text = "invalid", "INVALID_ARGUMENT", (
                f"Error [INVALID_ARGUMENT]: {shown}: arguments must be keyword arguments")
        self.calls.append({"seq": seq, "name": shown, "is_error": True})
        if status is not None:
            self.hub.record_refused(self.call_id, call_id, shown,
                                    arguments if isinstance(arguments, dict) else {},
                                    self.turn, status)
            return {"text": text, "data": None, "is_error": True, "code": code,
                    "message": text.split(": ", 2)[-1]}
        outcome = await self.hub.nested(self.call_id, call_id, name, arguments, self.turn)
        self.calls[-1]["is_error"] = outcome.is_error
        answer: dict[str, Any] = {"text": outcome.text, "is_error": outcome.is_error,
                                  "data": _data(outcome.text)}
        if outcome.is_error:
            match = _ERROR.match(outcome.text)
            answer["code"] = match.group(1) if match else "ERROR"
            answer["message"] = outcome.text[match.end():] if match else outcome.text
        return answer

    def _report(self, ex: Execution, timed_out: bool, status: int | None,
                timeout: int) -> dict[str, Any]:
        final = self.final or {}
        error = final.get("error")
        if timed_out:
            error = {"type": "Timeout", "message": f"the code did not finish within {timeout} s "
                     "(tool calls included) and was stopped", "traceback": None}
        elif self.protocol_error is not None:
            error = {"type": "ProtocolError", "message": f"the code sent {self.protocol_error}",
                     "traceback": None}
        elif self.final is None:
            error = {"type": "ProcessExit", "message": f"the process ended (exit status "
                     f"{_status(status)}) before the code finished", "traceback": None}
        return {"success": error is None, "stdout": ex.stdout(), "stderr": ex.stderr(),
                "result": final.get("result"), "error": error, "nested_calls": self.calls,
                "duration_s": round(ex.elapsed, 3), "timed_out": timed_out}


def _data(text: str) -> Any:
    """The JSON of a result's text, None when it is not JSON."""
    if text[:1] in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            return None
    return None


def _status(code: int | None) -> str:
    return "unknown" if code is None else str(128 - code if code < 0 else code)


def _failure(task: asyncio.Future[None]) -> BaseException | None:
    """The exception a finished task raised (retrieving it), else None."""
    if not task.done() or task.cancelled():
        return None
    return task.exception()


async def _both(serve: asyncio.Future[None], proc: asyncio.subprocess.Process) -> None:
    await asyncio.shield(serve)
    await proc.wait()


async def _pump(stream: asyncio.StreamReader, feed: Any) -> None:
    while chunk := await stream.read(1 << 16):
        feed(chunk)


async def _kill(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM to the child's group, SIGKILL after the grace period; stragglers of a child
    that already exited go too."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        if sig == signal.SIGTERM and proc.returncode is None:
            try:
                await asyncio.wait_for(proc.wait(), KILL_GRACE_S)
            except TimeoutError:
                pass
    await proc.wait()
