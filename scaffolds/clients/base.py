"""The model-client interface (see docs/concepts/model-clients.md): `generate(request) -> GenerateResult`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from scaffolds.accounting import message_tokens
from scaffolds.budget import DEFAULT_OUTPUT_LIMIT
from scaffolds.messages import Message

if TYPE_CHECKING:
    from scaffolds.profiles import Price

FinishReason = Literal["stop", "tool_calls", "length", "refusal", "content_filter", "pause"]
ErrorClass = Literal["transient", "fatal", "auth", "context"]
AttemptOutcome = Literal["ok", "transient", "fatal", "auth", "context", "empty", "length"]
FaultKind = Literal["connection_refused", "dns", "unreachable", "auth", "model_not_found",
                    "tool_choice", "rate_limited", "server_error", "context", "bad_request", "other"]
"""What a failed model call ran into, finer than its error class: what a person must fix."""


class Sampling(BaseModel):
    """Sampling settings sent with every main call; None leaves the provider default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    max_output_tokens: int = Field(default=DEFAULT_OUTPUT_LIMIT, gt=0)
    """Capped by the model profile's output limit where the model has one."""
    reasoning_effort: str | None = None
    """Sent as `reasoning_effort` (OpenAI-compatible) or `output_config.effort` (Anthropic)."""
    reasoning_budget_tokens: int | None = Field(default=None, ge=1024)
    """Anthropic: extended thinking with this budget (below `max_output_tokens`; temperature and
    top_p must then be unset, as the API requires)."""

    @model_validator(mode="after")
    def _thinking_alone(self) -> Sampling:
        if self.reasoning_budget_tokens is not None:
            if self.reasoning_budget_tokens >= self.max_output_tokens:
                raise ValueError("reasoning_budget_tokens must be below max_output_tokens")
            if self.temperature is not None or self.top_p is not None:
                raise ValueError("reasoning_budget_tokens (extended thinking) excludes "
                                 "temperature and top_p")
        return self


@dataclass(frozen=True)
class GenerateRequest:
    messages: Sequence[Message]
    tools: Sequence[Mapping[str, Any]]
    """Tool schemas as the env gives them: `{"name", "description", "parameters"}`."""
    sampling: Sampling = field(default_factory=Sampling)
    tool_choice: Literal["auto", "none"] = "auto"
    purpose: Literal["main", "compaction"] = "main"
    timeout_s: float | None = None
    """Overrides the client's read timeout for this call."""
    predicted_input_tokens: int = 0
    """Our estimate of the prompt size (tools + view), from the ledger's per-message counts."""


@dataclass(frozen=True)
class Usage:
    """Normalised token usage of one call (see docs/concepts/model-clients.md); `reported` is False when synthesised."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    reported: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Attempt:
    """One try of a model call, successful or not."""

    number: int
    outcome: AttemptOutcome
    status: int | None = None
    message: str = ""
    wait_s: float = 0.0
    """Time slept after this attempt before the next one (0 for the last)."""
    latency_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GenerateResult:
    message: Message
    """A draft assistant message (`mid=-1`); the ledger numbers it."""
    finish_reason: FinishReason
    usage: Usage
    latency_s: float = 0.0
    ttft_s: float | None = None
    attempts: tuple[Attempt, ...] = ()
    request_id: str | None = None
    cost_usd: float | None = None
    cost_source: Literal["provider", "table"] | None = None


def estimated_usage(request: GenerateRequest, message: Message) -> Usage:
    """The gym's own counts, for a call whose usage the provider did not report: the request's
    predicted size and the reply's tokens (`reported` stays False)."""
    return Usage(input_tokens=request.predicted_input_tokens, output_tokens=message_tokens(message))


def with_usage(result: GenerateResult, request: GenerateRequest) -> GenerateResult:
    """`result` with the gym's own counts in place of usage the provider did not report."""
    if result.usage.reported:
        return result
    return replace(result, usage=estimated_usage(request, result.message))


def priced(result: GenerateResult, price: Price | None) -> GenerateResult:
    """`result` with its cost from the price table, unless the provider reported one; a call
    whose usage was not reported keeps no cost (the table has nothing to multiply)."""
    if result.cost_usd is not None or price is None or not result.usage.reported:
        return result
    return replace(result, cost_usd=price.cost_usd(result.usage), cost_source="table")


class ModelClient(Protocol):
    async def generate(self, request: GenerateRequest) -> GenerateResult: ...


class AttemptError(Exception):
    """One failed attempt, already classified; raised by a client's single-attempt code."""

    def __init__(self, error_class: ErrorClass, message: str, *, status: int | None = None,
                 retry_after_s: float | None = None, unanswered: bool = False) -> None:
        super().__init__(message)
        self.error_class = error_class
        self.message = message
        self.status = status
        self.retry_after_s = retry_after_s
        self.unanswered = unanswered
        """Nothing at all came back: no connection, no response, no streamed chunk."""


class LLMCallError(Exception):
    """A model call that failed for good: not retryable, or retries exhausted."""

    def __init__(self, error_class: ErrorClass, message: str, *, status: int | None = None,
                 attempts: tuple[Attempt, ...] = (), kind: FaultKind = "other") -> None:
        super().__init__(message)
        self.error_class = error_class
        self.message = message
        self.status = status
        self.attempts = attempts
        self.kind = kind
