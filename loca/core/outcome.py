"""What an episode produces, as data: the outcome of each tool call, the checks of its verdict,
the error that ended it outside the agent, and its metrics. Servers, the env, the checkers and
the agent loop fill them in; the run records store them and the report, viewer and export read
them without importing any of those."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


@dataclass(frozen=True)
class ToolOutcome:
    """One executed tool call: the text the model sees and whether it is an error; from the env,
    also the server that ran it, whether it ended the episode, the reward and the verdict."""

    text: str
    is_error: bool = False
    server: str | None = None
    terminated: bool = False
    reward: float = 0.0
    verdict: Any = None


class Check(BaseModel):
    """One named requirement of a verdict: passed or not, why, and whether the check itself
    crashed."""

    name: str
    passed: bool
    detail: str = ""
    error: bool = False


class EpisodeError(BaseModel):
    """Why an episode failed outside the agent: the exception, and for a model call the kind of
    failure (`kind`: `connection_refused`, `auth`...), its status and every attempt."""

    model_config = ConfigDict(populate_by_name=True)

    class_: str = Field(alias="class")
    message: str
    traceback: str | None = None
    details: dict[str, Any] | None = None
    """For model-call failures: error class, kind, HTTP status and every attempt."""

    @property
    def kind(self) -> str | None:
        kind = (self.details or {}).get("kind")
        return kind if isinstance(kind, str) else None


class ContextPoint(BaseModel):
    """One main model call of an episode: its turn, the predicted size of its input, the
    messages in its view and the strategies that fired before it."""

    turn: int
    predicted: int
    view_messages: int | None = None
    fired: list[str] = []


class LatencyStats(BaseModel):
    """Latencies of a kind of call: how many, their sum and percentiles in seconds."""

    count: int = 0
    sum_s: float = 0.0
    p50_s: float | None = None
    p95_s: float | None = None

    @classmethod
    def of(cls, values: Sequence[float]) -> LatencyStats:
        if not values:
            return cls()
        ordered = sorted(values)
        return cls(count=len(ordered), sum_s=sum(ordered), p50_s=_percentile(ordered, 0.50),
                   p95_s=_percentile(ordered, 0.95))


def _percentile(ordered: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of sorted values."""
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


class EpisodeMetrics(BaseModel):
    """What an episode cost and did, computed from its ledger (spec §4.3)."""

    turns: int = 0
    llm_calls: dict[str, int] = {}
    """Model calls by purpose (`main`, later `compaction`)."""
    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    usage_reported: bool = False
    """Every call's usage came from the provider (not synthesised)."""
    cost_usd: float | None = None
    """Sum of the calls' costs (reported by the provider, else from the price table); None
    unless every call has one, since a partial sum would understate it."""
    tool_calls: int = 0
    """Executed top-level calls, terminal tool and error results included."""
    tool_calls_nested: int = 0
    """Executed calls made by code through `code_execution` (counted apart from `tool_calls`)."""
    tool_calls_invalid: int = 0
    tool_calls_skipped: int = 0
    tool_calls_by_name: dict[str, int] = {}
    tool_output_tokens: int = 0
    tool_output_tokens_nested: int = 0
    """Outputs of nested calls; they reach the model only through what the code reports."""
    trajectory_tokens: int = 0
    """Tools + every message in its full form: the context size had nothing been removed."""
    trajectory_tokens_core: int = 0
    """`trajectory_tokens` without harness-injected messages."""
    peak_request_tokens: int = 0
    """Largest predicted input of a main call (the view the model was shown, with tools)."""
    strategy_firings: dict[str, int] = {}
    """Firings per strategy (`truncate` included); failed summaries and notes are not firings."""
    tokens_freed: dict[str, int] = {}
    """Tokens taken out of the view per strategy (compaction: net of the summary)."""
    summary_failures: int = 0
    summaries_discarded: int = 0
    """Compaction summaries no smaller than what they would replace: the view was kept as it
    was (never a firing, never negative tokens freed)."""
    truncation_drops: int = 0
    """Messages hard truncation took out of the view."""
    awareness_notes: int = 0
    memory_warnings: int = 0
    context_series: list[ContextPoint] = []
    """Per main call: its turn, predicted input, messages in view and the strategies fired."""
    nudges: int = 0
    retries: int = 0
    retry_wait_s: float = 0.0
    retries_by_class: dict[str, int] = {}
    llm_latency: LatencyStats = LatencyStats()
    tool_latency: LatencyStats = LatencyStats()
