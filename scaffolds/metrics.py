"""Episode metrics computed from ledger events alone (spec §4.3).

Token figures are on the `est` basis (our cl100k_base counts); `input_tokens` and
`output_tokens` are summed from the usage each call reported (or synthesised).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from loca.core.outcome import ContextPoint, EpisodeMetrics, LatencyStats
from scaffolds.context.compose import FIRINGS

__all__ = ["EpisodeMetrics", "LatencyStats", "episode_metrics"]

_HARNESS_ORIGIN_PREFIXES = ("harness.", "strategy.")


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
                m.context_series.append(ContextPoint(turn=p["turn"], predicted=p["predicted_tokens"],
                                                     view_messages=p.get("view_messages"),
                                                     fired=p.get("fired", [])))
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
