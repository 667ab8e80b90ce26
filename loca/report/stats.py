"""Statistics of a report (see docs/tutorials/compare-strategies.md): accuracy with a 95% interval
(cluster bootstrap over tasks, Wilson when there is one task), pass@k and pass^k, and the paired
bootstrap of a difference.

Resampling is vectorised with numpy: one (resamples x clusters) index draw per interval. Each
interval draws from its own generator, seeded from sha256 of what it describes, so a figure
does not change when other rows or lengths join the report."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

RESAMPLES = 10_000
LEVEL = 0.95
_Z = 1.959963984540054  # the standard normal's 97.5% quantile


@dataclass(frozen=True)
class Interval:
    """A proportion (0..1) with its 95% interval and how the interval was found."""

    value: float
    lo: float
    hi: float
    method: str  # "bootstrap" (over tasks) or "wilson"


def rng_for(key: str) -> np.random.Generator:
    """A generator seeded from sha256 of `key` (never Python's salted `hash`)."""
    return np.random.default_rng(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))


def _percentiles(samples: np.ndarray) -> tuple[float, float]:
    tail = 100 * (1 - LEVEL) / 2
    lo, hi = np.percentile(samples, [tail, 100 - tail])
    return float(lo), float(hi)


def wilson(successes: int, n: int) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion."""
    if n <= 0:
        return 0.0, 0.0
    p = successes / n
    centre = (p + _Z**2 / (2 * n)) / (1 + _Z**2 / n)
    half = _Z * math.sqrt(p * (1 - p) / n + _Z**2 / (4 * n**2)) / (1 + _Z**2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def cluster_bootstrap(successes: np.ndarray, planned: np.ndarray, key: str,
                      resamples: int = RESAMPLES) -> tuple[float, float]:
    """Percentile interval of sum(successes) / sum(planned) when whole clusters (a task's
    seeds, lengths and trials together) are drawn with replacement."""
    picks = rng_for(key).integers(0, len(successes), size=(resamples, len(successes)))
    return _percentiles(successes[picks].sum(axis=1) / planned[picks].sum(axis=1))


def accuracy(by_task: dict[str, tuple[int, int]], key: str) -> Interval:
    """Accuracy over planned episodes, from task -> (successes, planned episodes); a bootstrap
    interval over tasks, or Wilson's when there is one task."""
    successes = np.array([s for s, _ in by_task.values()], dtype=float)
    planned = np.array([n for _, n in by_task.values()], dtype=float)
    value = float(successes.sum() / planned.sum()) if planned.sum() else 0.0
    if len(by_task) > 1:
        return Interval(value, *cluster_bootstrap(successes, planned, key), "bootstrap")
    return Interval(value, *wilson(int(successes.sum()), int(planned.sum())), "wilson")


def pass_at_k(n: int, c: int, k: int) -> float:
    """P(at least one of k trials drawn from n succeeds), c of the n having succeeded."""
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """P(all k trials drawn from n succeed) (pass^k)."""
    return math.comb(c, k) / math.comb(n, k)


@dataclass(frozen=True)
class Difference:
    """Mean of a - b over paired instances, with its 95% bootstrap interval."""

    instances: int
    a: float
    b: float
    value: float
    lo: float
    hi: float


def paired_bootstrap(a: np.ndarray, b: np.ndarray, key: str, resamples: int = RESAMPLES) -> Difference:
    """Instances drawn with replacement, each keeping its own pair of scores."""
    diff = a - b
    picks = rng_for(key).integers(0, len(diff), size=(resamples, len(diff)))
    lo, hi = _percentiles(diff[picks].mean(axis=1))
    return Difference(len(diff), float(a.mean()), float(b.mean()), float(diff.mean()), lo, hi)
