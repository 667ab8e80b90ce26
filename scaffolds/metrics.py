"""Episode metrics computed from ledger events alone (see docs/concepts/runs.md).

Token figures are on the `est` basis (our cl100k_base counts); `input_tokens` and
`output_tokens` are summed from the usage each call reported (or synthesised).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from scaffolds.context.compose import FIRINGS

_HARNESS_ORIGIN_PREFIXES = ("harness.", "strategy.")


class LatencyStats(BaseModel):
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
    context_series: list[dict[str, Any]] = []
    """Per main call: `turn`, `predicted` (P), `view_messages`, `fired` (strategies)."""
    nudges: int = 0
    retries: int = 0
    retry_wait_s: float = 0.0
    retries_by_class: dict[str, int] = {}
    llm_latency: LatencyStats = LatencyStats()
    tool_latency: LatencyStats = LatencyStats()


def episode_metrics(events: Iterable[Mapping[str, Any]]) -> EpisodeMetrics:
    m = EpisodeMetrics()
    llm_calls: Counter[str] = Counter()
    by_name: Counter[str] = Counter()
    retry_classes: Counter[str] = Counter()
    llm_latencies: list[float] = []
    tool_latencies: list[float] = []
    costs: list[float] = []
    responses = 0
    reported = 0
    firings: Counter[str] = Counter()
    freed: Counter[str] = Counter()
    for event in events:
        kind, p = event["type"], event["payload"]
        if kind == "tools":
            m.trajectory_tokens += p["tokens"]
            m.trajectory_tokens_core += p["tokens"]
        elif kind == "message" and p.get("parent_call_id") is not None:
            m.tool_output_tokens_nested += p["tokens"]
        elif kind == "message":
            m.trajectory_tokens += p["tokens"]
            if not p["origin"].startswith(_HARNESS_ORIGIN_PREFIXES):
                m.trajectory_tokens_core += p["tokens"]
            if p["role"] == "tool" and p["origin"] == "tool":
                m.tool_output_tokens += p["tokens"]
            if p["origin"] == "harness.nudge":
                m.nudges += 1
        elif kind == "llm_request":
            llm_calls[p["purpose"]] += 1
            if p["purpose"] == "main":
                m.turns += 1
                m.peak_request_tokens = max(m.peak_request_tokens, p["predicted_tokens"])
                m.context_series.append({"turn": p["turn"], "predicted": p["predicted_tokens"],
                                         "view_messages": p.get("view_messages"),
                                         "fired": p.get("fired", [])})
        elif kind == "strategy":
            _strategy_event(m, p, firings, freed)
        elif kind == "llm_response":
            responses += 1
            usage = p["usage"]
            m.input_tokens += usage["input_tokens"]
            m.cached_input_tokens += usage["cached_input_tokens"]
            m.cache_write_tokens += usage["cache_write_tokens"]
            m.output_tokens += usage["output_tokens"]
            m.reasoning_tokens += usage["reasoning_tokens"]
            reported += bool(usage["reported"])
            llm_latencies.append(p["latency_s"])
            if p.get("cost_usd") is not None:
                costs.append(p["cost_usd"])
        elif kind == "llm_retry":
            m.retries += 1
            m.retry_wait_s += p["wait_s"]
            retry_classes[p["outcome"]] += 1
        elif kind == "tool_exec":
            status = p["status"]
            if status == "executed" and p.get("parent_call_id") is not None:
                m.tool_calls_nested += 1
            elif status == "executed":
                m.tool_calls += 1
                by_name[p["name"]] += 1
                tool_latencies.append(p["latency_s"])
            elif status == "invalid":
                m.tool_calls_invalid += 1
            else:
                m.tool_calls_skipped += 1
    m.llm_calls = dict(llm_calls)
    m.strategy_firings = dict(firings)
    m.tokens_freed = dict(freed)
    m.tool_calls_by_name = dict(by_name)
    m.retries_by_class = dict(retry_classes)
    m.usage_reported = responses > 0 and reported == responses
    m.cost_usd = sum(costs) if costs and len(costs) == responses else None
    m.llm_latency = LatencyStats.of(llm_latencies)
    m.tool_latency = LatencyStats.of(tool_latencies)
    return m


def _strategy_event(m: EpisodeMetrics, p: Mapping[str, Any], firings: Counter[str],
                    freed: Counter[str]) -> None:
    decision, name = p["decision"], p["name"]
    if decision == "failed":
        m.summary_failures += 1
    elif decision == "discarded":
        m.summaries_discarded += 1
    elif decision == "note":
        m.awareness_notes += 1
    elif decision == "warn":
        m.memory_warnings += 1
    if decision in FIRINGS:
        firings[name] += 1
        freed[name] += p["tokens_before"] - p["tokens_after"]
        if name == "truncate":
            m.truncation_drops += len(p["changes"].get("hide", ()))
