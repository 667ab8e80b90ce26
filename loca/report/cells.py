"""Per cell (row x length, or a row over all its lengths) figures: accuracy over planned
episodes, means of the episode metrics over the episodes that have them, terminal states,
strategy firings and pass@k / pass^k."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from loca.report.load import Episode, Row
from loca.report.stats import Interval, accuracy, pass_at_k, pass_hat_k

MISSING = "missing"
"""The terminal-state name of planned episodes that have not finished."""

METRICS: dict[str, tuple[str, ...]] = {
    "trajectory_tokens": ("trajectory_tokens",), "tool_calls": ("tool_calls",),
    "tool_calls_nested": ("tool_calls_nested",), "tool_output_tokens": ("tool_output_tokens",),
    "peak_request_tokens": ("peak_request_tokens",), "turns": ("turns",), "input_tokens": ("input_tokens",),
    "output_tokens": ("output_tokens",), "cost_usd": ("cost_usd",), "llm_s": ("llm_latency", "sum_s"),
    "tool_s": ("tool_latency", "sum_s"),
}
"""Episode metrics averaged per cell, by their path in the record's `metrics`; a cell's mean is
None unless every episode with metrics has the figure (a mean over some of them would mislead,
costs above all)."""


def number(value: Any) -> float | None:
    """A JSON number as a float; anything else (null, text, true) as None."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def figure(metrics: dict[str, Any], path: tuple[str, ...]) -> float | None:
    value: Any = metrics
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return number(value)


@dataclass(frozen=True)
class Cell:
    planned: int
    finished: int
    measured: int
    """Finished episodes with metrics (not those that ended before the agent loop ran)."""
    accuracy: Interval
    means: dict[str, float | None]
    states: Counter[str]
    firings: dict[str, float]
    """Per strategy: firings per episode with metrics."""
    freed: dict[str, float]
    """Per strategy: tokens freed per episode with metrics."""
    trials: int
    """The most planned episodes of one instance."""
    pass_k: dict[int, tuple[float, float] | None]
    """k -> (pass@k, pass^k) averaged over instances; None when an instance has fewer than k trials."""

    @property
    def incomplete(self) -> bool:
        return self.finished < self.planned

    @property
    def total_cost(self) -> float | None:
        mean = self.means["cost_usd"]
        return None if mean is None else mean * self.measured


def _means(metrics: list[dict[str, Any]]) -> dict[str, float | None]:
    means: dict[str, float | None] = {}
    for name, path in METRICS.items():
        values = [figure(m, path) for m in metrics]
        means[name] = sum(v for v in values if v is not None) / len(values) \
            if values and all(v is not None for v in values) else None
    return means


def _per_episode(metrics: list[dict[str, Any]], key: str) -> dict[str, float]:
    total: Counter[str] = Counter()
    for m in metrics:
        counts = m.get(key)
        if isinstance(counts, dict):
            total.update({str(k): n for k, v in counts.items() if (n := number(v)) is not None})
    return {name: total[name] / len(metrics) for name in sorted(total)} if metrics else {}


def _pass_k(episodes: Sequence[Episode], ks: Sequence[int]) -> tuple[int, dict[int, tuple[float, float] | None]]:
    trials: dict[tuple[str, int, int], list[bool]] = defaultdict(list)
    for e in episodes:
        trials[e.instance].append(e.success)
    most = max((len(t) for t in trials.values()), default=0)
    out: dict[int, tuple[float, float] | None] = {}
    for k in ks:
        if any(len(t) < k for t in trials.values()):
            out[k] = None
            continue
        pairs = [(pass_at_k(len(t), sum(t), k), pass_hat_k(len(t), sum(t), k)) for t in trials.values()]
        out[k] = (sum(p for p, _ in pairs) / len(pairs), sum(q for _, q in pairs) / len(pairs))
    return most, out


def make_cell(episodes: Sequence[Episode], key: str, ks: Sequence[int] = ()) -> Cell:
    """The figures of `episodes` (one row, one length or all); `key` seeds the bootstrap."""
    by_task: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for e in episodes:
        by_task[e.task][0] += e.success
        by_task[e.task][1] += 1
    metrics = [m for e in episodes if (m := e.metrics) is not None]
    finished = [e for e in episodes if e.record is not None]
    states = Counter(str(e.record.get("terminal_state", "unknown")) if e.record else MISSING for e in episodes)
    trials, pass_k = _pass_k(episodes, ks)
    return Cell(planned=len(episodes), finished=len(finished), measured=len(metrics),
                accuracy=accuracy({t: (s, n) for t, (s, n) in sorted(by_task.items())}, key),
                means=_means(metrics), states=states, firings=_per_episode(metrics, "strategy_firings"),
                freed=_per_episode(metrics, "tokens_freed"), trials=trials, pass_k=pass_k)


def cells(episodes_of: Callable[[Row, int | None], list[Episode]], rows: Sequence[Row],
          lengths: Sequence[int], ks: Sequence[int] = ()) -> dict[tuple[Row, int | None], Cell]:
    """Every (row, length) cell and each row's all-lengths cell (length None)."""
    out = {}
    for row in rows:
        for length in [*lengths, None]:
            mine = episodes_of(row, length)
            if mine:
                out[row, length] = make_cell(mine, f"{row.label}|{length}", ks)
    return out
