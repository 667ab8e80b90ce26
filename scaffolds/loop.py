"""The ReAct agent loop (spec §1): one episode from `env.areset` to a terminal state.

The loop talks to the env only through `areset`, `astep`, `evaluate` and `aclose`, and to the
model only through `ModelClient.generate`. Everything that happens is appended to the ledger;
before each main call the context pipeline decides and renders the view the model is shown.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
import logging
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envs.core.api import FINAL, WORLD_INFO_KEYS
from envs.core.errors import EnvSetupError, ToolInfraError
from loca.core.tokens import schema_tokens
from scaffolds.clients.base import (
    GenerateRequest,
    GenerateResult,
    LLMCallError,
    ModelClient,
    Usage,
)
from scaffolds.config import AgentConfig
from scaffolds.context import ContextPipeline, Overflow
from scaffolds.context.compose import prompt_ids
from scaffolds.harness.hub import LIMIT_PROMPT, ToolHub, count_tokens
from scaffolds.ledger import TRAJECTORY_FILE, Ledger
from scaffolds.messages import (
    Message,
    ToolCallPart,
    system_message,
    tool_message,
    user_message,
)
from scaffolds.metrics import EpisodeMetrics, episode_metrics
from scaffolds.prompts import get_prompt
from scaffolds.provider_checks import ProviderTruncated, check_prompt
from scaffolds.result import AGENT_STATES, EpisodeError, EpisodeResult, TerminalState

TRAJECTORY_FORMAT = "loca.trajectory/1"
NUDGE_PROMPT = "nudge/text_reply@1"
ENDED_TEXT = "Not executed: the episode already ended."
REPEATED_TERMINAL_TEXT = "Not executed: the completion tool was already called in this turn."
log = logging.getLogger("scaffolds.loop")


class AgentLoop:
    """Runs episodes of one env with one model client; each `run` is independent.

    The loop closes the env at the end of every episode; the client belongs to the caller.
    A context setting the client cannot honour is refused here, before any episode.
    A `context_blind` client (a scripted agent, which does not react to its context) is sent the
    whole conversation, while the view it would have been shown is rendered and recorded as
    for any model.
    """

    def __init__(self, env: Any, client: ModelClient, config: AgentConfig | None = None, *,
                 context_blind: bool = False) -> None:
        self.env = env
        self.client = client
        self.config = config or AgentConfig()
        self.config.context.check_model(getattr(client, "reasoning_echo", "all"))
        self.context_blind = context_blind

    async def run(self, seed: int | None, options: Mapping[str, Any] | None,
                  episode_dir: Path | str) -> EpisodeResult:
        """Reset the env, play until a terminal state, grade, close; the ledger goes to
        `episode_dir/trajectory.jsonl`. Cancellation propagates (no terminal state)."""
        return await _Episode(self.env, self.client, self.config, Path(episode_dir),
                              self.context_blind).run(seed, options)


@dataclass
class _Outcome:
    state: TerminalState
    graded: bool = False
    reward: float = 0.0
    verdict: dict[str, Any] | None = None
    error: Exception | None = None


@dataclass
class _Step:
    terminated: bool
    reward: float
    verdict: dict[str, Any] | None


@dataclass
class _Batch:
    """The tool calls of one assistant turn and their results, appended in emitted order."""

    turn: int
    calls: tuple[ToolCallPart, ...]
    results: dict[int, tuple[Message, int | None]] = field(default_factory=dict)
    in_flight: int | None = None
    in_flight_since: float = 0.0


class _Episode:
    def __init__(self, env: Any, client: ModelClient, config: AgentConfig,
                 episode_dir: Path, context_blind: bool) -> None:
        self.env = env
        self.client = client
        self.config = config
        self.context_blind = context_blind
        self.context: ContextPipeline
        self.limits = config.limits
        self.episode_dir = episode_dir
        self.ledger: Ledger
        self.instruction = ""
        self.tools: list[dict[str, Any]] = []
        self.tool_names: frozenset[str] = frozenset()
        self.terminal_tool = ""
        self.tools_tokens = 0
        self.env_info: dict[str, Any] = {}
        self.hub: ToolHub
        self.batch: _Batch | None = None
        self.in_flight: dict[str, Any] | None = None
        self.timings: dict[str, float] = {}

    # ------------------------------------------------------------ episode

    async def run(self, seed: int | None, options: Mapping[str, Any] | None) -> EpisodeResult:
        started = time.monotonic()
        try:
            reset_error = await self._reset(seed, options)
            self.ledger = Ledger(self.episode_dir / TRAJECTORY_FILE,
                                 self._header(seed, options, reset_error))
        except BaseException:
            await self._close_env()
            raise
        try:
            if reset_error is not None:
                outcome = _Outcome("env_setup_error", error=reset_error)
            else:
                outcome = await self._play_guarded()
            diagnostic, diagnostic_error = await self._diagnose(outcome)
        except BaseException:
            await self._close_env()
            self.ledger.close()
            raise
        close_error = await self._close_env()
        self.timings["total_s"] = time.monotonic() - started
        return self._finish(outcome, diagnostic, diagnostic_error, close_error)

    async def _play_guarded(self) -> _Outcome:
        """`_play`, with tool-infrastructure and unexpected failures turned into outcomes."""
        try:
            return await self._play()
        except ToolInfraError as exc:
            self._abort_batch(f"Tool infrastructure failure: {exc}")
            return _Outcome("tool_infra_error", error=exc)
        except Exception as exc:
            return _Outcome("harness_error", error=exc)

    async def _reset(self, seed: int | None, options: Mapping[str, Any] | None) -> Exception | None:
        started = time.monotonic()
        timeout = asyncio.timeout(self.limits.setup_timeout_s)
        try:
            async with timeout:
                obs, info = await self.env.areset(seed=seed,
                                                  options=dict(options) if options else None)
            self._adopt_env(obs, info)
        except Exception as exc:
            if isinstance(exc, TimeoutError) and timeout.expired():
                return EnvSetupError(
                    f"reset did not finish within {self.limits.setup_timeout_s} s")
            return exc
        finally:
            self.timings["reset_s"] = time.monotonic() - started
        return None

    def _adopt_env(self, obs: Any, info: Mapping[str, Any]) -> None:
        if not isinstance(obs, str):
            raise EnvSetupError(f"reset returned a {type(obs).__name__} instruction, not a str")
        tools = list(info.get("tools") or ())
        if not tools:
            raise EnvSetupError("the environment exposes no tools")
        names = [t["name"] for t in tools]
        terminal = info.get("terminal_tool")
        if not isinstance(terminal, str) or terminal not in names:
            raise EnvSetupError(f"terminal tool {terminal!r} is not among the tools {names}")
        self.instruction = obs
        self.terminal_tool = terminal
        self.env_info = {k: (str(info[k]) if isinstance(info[k], Path) else info[k])
                         for k in WORLD_INFO_KEYS if k in info}
        world_dir = info.get("world_dir")
        self.hub = ToolHub(self.env, tools, terminal, self.config, self.episode_dir,
                           str(world_dir) if world_dir is not None else None)
        self.tools = self.hub.tools
        self.tool_names = self.hub.names

    def _prompts_used(self) -> list[dict[str, Any]]:
        ids = [self.config.system_prompt, LIMIT_PROMPT]
        if self.config.on_text_reply == "nudge":
            ids.append(NUDGE_PROMPT)
        ids += prompt_ids(self.config.context)
        return [get_prompt(i).describe() for i in ids]

    def _header(self, seed: int | None, options: Mapping[str, Any] | None,
                reset_error: Exception | None) -> dict[str, Any]:
        return {
            "format": TRAJECTORY_FORMAT,
            "config": self.config.model_dump(mode="json"),
            "config_hash": self.config.config_hash(),
            "prompts": self._prompts_used(),
            "client": {"type": type(self.client).__name__,
                       "model": getattr(self.client, "model", None),
                       "context_blind": self.context_blind},
            "seed": seed,
            "options": dict(options) if options else None,
            "env": self.env_info,
            "setup_error": repr(reset_error) if reset_error is not None else None,
        }

    async def _play(self) -> _Outcome:
        ledger = self.ledger
        self.context = ContextPipeline(self.config.context, self.config.sampling, self.client,
                                       self.tools, self.terminal_tool,
                                       context_blind=self.context_blind)
        system_text = get_prompt(self.config.system_prompt).text
        if system_text:
            ledger.append_message(system_message(system_text, *self.context.suffixes("system")),
                                  turn=0)
        ledger.append_message(user_message([self.instruction, *self.context.suffixes(
            "task_message")], "task"), turn=0)
        self.hub.ledger = ledger
        env_tokens = None if self.hub.changed else self.env_info.get("tools_tokens")
        self.tools_tokens = env_tokens or schema_tokens(self.tools)
        ledger.record("tools", {"tools": self.tools, "tokens": self.tools_tokens,
                                "terminal_tool": self.terminal_tool})
        ledger.commit()
        started = time.monotonic()
        deadline = asyncio.timeout(self.limits.max_wall_time_s)
        try:
            async with deadline:
                return await self._turns()
        except TimeoutError:
            if not deadline.expired():
                raise
            ledger.record("limit", {"limit": "max_wall_time_s",
                                    "value": self.limits.max_wall_time_s,
                                    "in_flight": self.in_flight})
            self._abort_batch("Not completed: the episode's time limit was reached.")
            return _Outcome("time_limit")
        finally:
            self.timings["loop_s"] = time.monotonic() - started

    async def _turns(self) -> _Outcome:
        turn = 0
        text_replies = 0
        while True:
            if turn >= self.limits.max_turns:
                self.ledger.record("limit", {"limit": "max_turns", "value": self.limits.max_turns})
                return _Outcome("max_turns")
            turn += 1
            generated = await self._generate(turn)
            if isinstance(generated, _Outcome):
                return generated
            result, predicted = generated
            reply = self.ledger.append_message(result.message, turn=turn)
            self.ledger.record("llm_response", {
                "turn": turn, "purpose": "main", "mid": reply.mid,
                "finish_reason": result.finish_reason, "usage": result.usage.to_dict(),
                "latency_s": result.latency_s, "ttft_s": result.ttft_s,
                "attempts": len(result.attempts), "request_id": result.request_id,
                "cost_usd": result.cost_usd, "cost_source": result.cost_source,
            })
            outcome = self._check_provider(reply, result.usage, predicted) if turn == 1 else None
            if outcome is None and reply.tool_calls:
                text_replies = 0
                outcome = await self._run_batch(reply, result.finish_reason, turn)
            elif outcome is None:
                text_replies += 1
                outcome = await self._text_reply(reply, turn, text_replies)
            self.ledger.commit()
            if outcome is not None:
                return outcome

    # ------------------------------------------------------------ model calls

    async def _generate(self, turn: int) -> tuple[GenerateResult, int] | _Outcome:
        """The reply to the next main call and the predicted size of its request."""
        ledger = self.ledger
        try:
            prepared = await self.context.prepare(ledger, turn)
        except Overflow as exc:
            return _Outcome("context_overflow", error=exc)
        ledger.record("llm_request", {
            "turn": turn, "purpose": "main", "view": prepared.refs,
            "view_hash": prepared.view_hash, "predicted_tokens": prepared.predicted,
            "view_messages": len(prepared.messages), "fired": list(prepared.fired),
        })
        messages = tuple(m for m in ledger.messages if m.parent_call_id is None) \
            if self.context_blind else prepared.messages
        request = GenerateRequest(messages=messages, tools=self.tools,
                                  sampling=self.config.sampling,
                                  predicted_input_tokens=prepared.predicted)
        self.in_flight = {"kind": "llm", "turn": turn}
        try:
            result = await self.client.generate(request)
        except LLMCallError as exc:
            self.in_flight = None
            self.ledger.record_retries(turn, exc.attempts[:-1])
            return _Outcome("context_overflow" if exc.error_class == "context" else "llm_error",
                            error=exc)
        self.in_flight = None
        self.ledger.record_retries(turn, result.attempts[:-1])
        return result, prepared.predicted

    def _check_provider(self, reply: Message, usage: Usage, predicted: int) -> _Outcome | None:
        """The first response's prompt count against the gym's (`provider_checks`). A truncated
        prompt ends the episode before any call of the reply runs; a context-blind client sent
        more than the view it was counted for, so it is not checked."""
        if self.context_blind:
            return None
        check = check_prompt(usage, predicted)
        self.ledger.record("provider_check", check.model_dump())
        if check.outcome != "truncated":
            return None
        error = ProviderTruncated(check, self.config.context.max_context_tokens)
        log.warning("provider_truncated (%s, seed %s): %s", self.env_info.get("task"),
                    self.env_info.get("seed"), error)
        self.batch = _Batch(reply.turn, reply.tool_calls)
        self._abort_batch("Not executed: the provider truncated the prompt.")
        return _Outcome("provider_truncated", error=error)

    # ------------------------------------------------------------ tool calls

    async def _run_batch(self, reply: Message, finish_reason: str, turn: int) -> _Outcome | None:
        calls = reply.tool_calls
        batch = self.batch = _Batch(turn, calls)
        terminal_at: int | None = None
        ended: _Step | None = None
        skipped_by_limit = 0
        nested_skipped = self.hub.nested_skipped
        for index, call in enumerate(calls):
            rejection = self._rejection(call, finish_reason)
            if ended is not None:
                self._synthetic(batch, index, call, "skipped", ENDED_TEXT)
            elif rejection is not None:
                self._synthetic(batch, index, call, "invalid", rejection)
            elif call.name == self.terminal_tool:
                if terminal_at is None:
                    terminal_at = index
                else:
                    self._synthetic(batch, index, call, "skipped", REPEATED_TERMINAL_TEXT)
            elif self.hub.executed >= self.limits.max_tool_calls:
                skipped_by_limit += 1
                self._synthetic(batch, index, call, "skipped",
                                get_prompt(LIMIT_PROMPT).render(limit=self.limits.max_tool_calls))
            else:
                self.hub.executed += 1
                step = await self._execute(batch, index, call)
                if step.terminated:
                    ended = step
        if terminal_at is not None:
            if ended is None:
                step = await self._execute(batch, terminal_at, calls[terminal_at])
                ended = step if step.terminated else None
            else:
                self._synthetic(batch, terminal_at, calls[terminal_at], "skipped", ENDED_TEXT)
        self._append_batch(batch)
        if ended is not None:
            return _Outcome("claimed_done", graded=True, reward=ended.reward,
                            verdict=ended.verdict)
        skipped_by_limit += self.hub.nested_skipped - nested_skipped
        if skipped_by_limit:
            self.ledger.record("limit", {"limit": "max_tool_calls",
                                         "value": self.limits.max_tool_calls,
                                         "skipped": skipped_by_limit})
            return _Outcome("max_tool_calls")
        return None

    async def _execute(self, batch: _Batch, index: int, call: ToolCallPart) -> _Step:
        batch.in_flight, batch.in_flight_since = index, time.monotonic()
        self.in_flight = {"kind": "tool", "turn": batch.turn, "call_id": call.call_id,
                          "name": call.name}
        outcome = await self.hub.call(call.call_id, call.name, call.arguments or {}, batch.turn)
        latency = time.monotonic() - batch.in_flight_since
        batch.in_flight, self.in_flight = None, None
        message = tool_message(call.call_id, call.name, outcome.text, is_error=outcome.is_error)
        tokens = await count_tokens(message)
        self.ledger.record("tool_exec", {
            "turn": batch.turn, "call_id": call.call_id, "name": call.name, "status": "executed",
            "is_error": message.is_error, "latency_s": latency, "output_tokens": tokens,
            "server": outcome.server, "terminated": outcome.terminated,
        })
        batch.results[index] = (message, tokens)
        verdict = _verdict_dict(outcome.verdict) if outcome.verdict is not None else None
        return _Step(outcome.terminated, outcome.reward, verdict)

    def _synthetic(self, batch: _Batch, index: int, call: ToolCallPart, status: str,
                   text: str) -> None:
        """An error result written by the harness for a call that was not executed."""
        self.ledger.record("tool_exec", {"turn": batch.turn, "call_id": call.call_id,
                                         "name": call.name, "status": status, "is_error": True,
                                         "latency_s": 0.0})
        batch.results[index] = (tool_message(call.call_id, call.name, text, is_error=True,
                                              origin="harness.note"), None)

    def _append_batch(self, batch: _Batch) -> None:
        for index in sorted(batch.results):
            message, tokens = batch.results[index]
            self.ledger.append_message(message, turn=batch.turn, tokens=tokens)
        self.batch = None

    def _abort_batch(self, text: str) -> None:
        """Close an interrupted batch so that every call of it still has exactly one result."""
        batch = self.batch
        if batch is None:
            return
        for index, call in enumerate(batch.calls):
            if index in batch.results:
                continue
            if index == batch.in_flight:
                self.ledger.record("tool_exec", {
                    "turn": batch.turn, "call_id": call.call_id, "name": call.name,
                    "status": "executed", "is_error": True, "interrupted": True,
                    "latency_s": time.monotonic() - batch.in_flight_since,
                })
                batch.results[index] = (tool_message(call.call_id, call.name, text,
                                                     is_error=True, origin="harness.note"), None)
            else:
                self._synthetic(batch, index, call, "skipped", text)
        self._append_batch(batch)

    def _rejection(self, call: ToolCallPart, finish_reason: str) -> str | None:
        """The error text for a call that must not be dispatched, or None."""
        if call.parse_error is not None:
            if finish_reason == "length":
                return (f"Error: the arguments of this call to {call.name!r} were cut off at the "
                        f"output token limit, so they are not valid JSON; the call was not "
                        f"executed.")
            return (f"Error: the arguments of this call to {call.name!r} are not a valid JSON "
                    f"object ({call.parse_error}); the call was not executed.")
        if call.name not in self.tool_names:
            closest = difflib.get_close_matches(call.name, sorted(self.tool_names), n=3,
                                                cutoff=0.0)
            return (f"Error: there is no tool named {call.name!r}; the call was not executed. "
                    f"Closest tool names: {', '.join(closest)}.")
        return None

    # ------------------------------------------------------------ text replies, grading

    async def _text_reply(self, reply: Message, turn: int, text_replies: int) -> _Outcome | None:
        config = self.config
        if config.on_text_reply == "nudge" and text_replies <= config.max_nudges:
            text = get_prompt(NUDGE_PROMPT).render(terminal_tool=self.terminal_tool)
            self.ledger.append_message(user_message([text], "harness.nudge"), turn=turn)
            return None
        if not config.grade_final_text:
            return _Outcome("final_text")
        self.in_flight = {"kind": "grading", "turn": turn}
        _obs, reward, terminated, _truncated, info = await self.env.astep(
            {"id": f"final_{turn}", "name": FINAL, "arguments": {"text": reply.text}})
        self.in_flight = None
        if not terminated:
            return _Outcome("final_text")
        verdict = _verdict_dict(info["verdict"]) if "verdict" in info else None
        return _Outcome("final_text", graded=True, reward=float(reward), verdict=verdict)

    async def _diagnose(self, outcome: _Outcome) -> tuple[dict[str, Any] | None,
                                                          Exception | None]:
        """Diagnostic grading of ungraded agent-class endings; failures are only recorded."""
        if (outcome.graded or outcome.state not in AGENT_STATES
                or not self.config.diagnostic_grading):
            return None, None
        started = time.monotonic()
        try:
            verdict = self.env.evaluate()
            if inspect.isawaitable(verdict):
                verdict = await verdict
            return _verdict_dict(verdict), None
        except Exception as exc:
            return None, exc
        finally:
            self.timings["diagnostic_s"] = time.monotonic() - started

    async def _close_env(self) -> Exception | None:
        try:
            await self.env.aclose()
        except Exception as exc:
            return exc
        return None

    def _finish(self, outcome: _Outcome, diagnostic: dict[str, Any] | None,
                diagnostic_error: Exception | None, close_error: Exception | None) -> EpisodeResult:
        ledger = self.ledger
        try:
            metrics = episode_metrics(ledger.events)
        except Exception as exc:  # a bug, but the episode still ends in a recorded state
            outcome, metrics = _Outcome("harness_error", error=exc), EpisodeMetrics()
        verdict = outcome.verdict if outcome.graded else None
        if verdict is not None:
            success = bool(verdict.get("passed"))
        else:
            success = outcome.graded and outcome.reward >= 1.0
        error = _episode_error(outcome)
        ledger.record("verdict", {
            "graded": outcome.graded, "success": success, "reward": outcome.reward,
            "verdict": verdict, "diagnostic": diagnostic,
            "diagnostic_error": repr(diagnostic_error) if diagnostic_error else None,
        })
        ledger.record("terminal", {
            "state": outcome.state,
            "error": error.model_dump(mode="json", by_alias=True) if error else None,
            "close_error": repr(close_error) if close_error else None,
        })
        ledger.close()
        return EpisodeResult(
            terminal_state=outcome.state, graded=outcome.graded, success=success,
            reward=outcome.reward, verdict=verdict, diagnostic=diagnostic,
            metrics=metrics, error=error, env=self.env_info,
            timings=self.timings, config_hash=self.config.config_hash(),
            prompts=self._prompts_used(), trajectory_path=str(ledger.path),
        )


def _verdict_dict(verdict: Any) -> dict[str, Any]:
    """A verdict as a plain dict; envs may hand over a dict or an object with `to_dict()`."""
    if isinstance(verdict, Mapping):
        return dict(verdict)
    to_dict = getattr(verdict, "to_dict", None)
    if callable(to_dict):
        return dict(to_dict())
    raise TypeError(f"a verdict must be a mapping or have to_dict(), got {type(verdict).__name__}")


def _episode_error(outcome: _Outcome) -> EpisodeError | None:
    exc = outcome.error
    if exc is None:
        return None
    if isinstance(exc, ProviderTruncated):
        return EpisodeError.model_validate({"class": type(exc).__name__, "message": str(exc),
                                            "details": exc.check.model_dump()})
    if isinstance(exc, LLMCallError):
        return EpisodeError.model_validate({
            "class": type(exc).__name__, "message": exc.message,
            "details": {"error_class": exc.error_class, "kind": exc.kind, "status": exc.status,
                        "attempts": [a.to_dict() for a in exc.attempts]},
        })
    return EpisodeError.model_validate({
        "class": type(exc).__name__, "message": str(exc),
        "traceback": "".join(traceback.format_exception(exc)),
    })
