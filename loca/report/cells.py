"""Per cell (row x length, or a row over all its lengths) figures: accuracy over planned
episodes, means of the episode metrics over the episodes that have them, terminal states,
strategy firings and pass@k / pass^k."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loca.core.outcome import EpisodeMetrics
from loca.report.load import Entry, Row
from loca.report.stats import Interval, accuracy, pass_at_k, pass_hat_k

MISSING = "missing"
"""The terminal-state name of planned episodes that have not finished."""

METRICS: dict[str, Callable[[EpisodeMetrics], float | None]] = {
    "trajectory_tokens": lambda m: m.trajectory_tokens, "tool_calls": lambda m: m.tool_calls,
    "tool_calls_nested": lambda m: m.tool_calls_nested, "tool_output_tokens": lambda m: m.tool_output_tokens,
    "peak_request_tokens": lambda m: m.peak_request_tokens, "turns": lambda m: m.turns,
    "input_tokens": lambda m: m.input_tokens, "output_tokens": lambda m: m.output_tokens,
    "cost_usd": lambda m: m.cost_usd, "llm_s": lambda m: m.llm_latency.sum_s,
    "tool_s": lambda m: m.tool_latency.sum_s,
}
"""Episode metrics averaged per cell; a cell's mean is None unless every episode with metrics
has the figure (a mean over some of them would mislead, costs above all)."""


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


def _means(metrics: list[EpisodeMetrics]) -> dict[str, float | None]:
    means: dict[str, float | None] = {}
    for name, figure in METRICS.items():
        values = [figure(m) for m in metrics]
        means[name] = sum(v for v in values if v is not None) / len(values) \
            if values and all(v is not None for v in values) else None
    return means


def _per_episode(counts: list[dict[str, int]], episodes: int) -> dict[str, float]:
    """Per name, the sum of `counts` over `episodes` episodes."""
    total: Counter[str] = Counter()
    for each in counts:
        total.update(each)
    return {name: total[name] / episodes for name in sorted(total)} if episodes else {}


def _pass_k(episodes: Sequence[Entry], ks: Sequence[int]) -> tuple[int, dict[int, tuple[float, float] | None]]:
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


def make_cell(episodes: Sequence[Entry], key: str, ks: Sequence[int] = ()) -> Cell:
    """The figures of `episodes` (one row, one length or all); `key` seeds the bootstrap."""
    by_task: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for e in episodes:
        by_task[e.task][0] += e.success
        by_task[e.task][1] += 1
    metrics = [m for e in episodes if (m := e.metrics) is not None]
    finished = [e for e in episodes if e.record is not None]
    states = Counter(e.record.terminal_state if e.record else MISSING for e in episodes)
    trials, pass_k = _pass_k(episodes, ks)
    return Cell(planned=len(episodes), finished=len(finished), measured=len(metrics),
                accuracy=accuracy({t: (s, n) for t, (s, n) in sorted(by_task.items())}, key),
                means=_means(metrics), states=states,
                firings=_per_episode([m.strategy_firings for m in metrics], len(metrics)),
                freed=_per_episode([m.tokens_freed for m in metrics], len(metrics)), trials=trials, pass_k=pass_k)


def cells(episodes_of: Callable[[Row, int | None], list[Entry]], rows: Sequence[Row],
          lengths: Sequence[int], ks: Sequence[int] = ()) -> dict[tuple[Row, int | None], Cell]:
    """Every (row, length) cell and each row's all-lengths cell (length None)."""
    out = {}
    for row in rows:
        for length in [*lengths, None]:
            mine = episodes_of(row, length)
            if mine:
                out[row, length] = make_cell(mine, f"{row.label}|{length}", ks)
    return out
