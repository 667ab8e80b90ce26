"""The plan of an ab_testing world: the scenarios, their hourly clicks and store views per arm,
and the winner. Pure: named random streams in, plan out.

Names, clicks and offsets come from their own streams (clicks and store-view noise from one
stream per scenario), so the extra hours (the fine length knob) append clicks without moving
earlier ones. Offsets and noise are redrawn until the guarantees hold: every arm has clicks,
the pooled rates differ by at least 0.05 pp in the direction the `winner` stream chose, and in
each arm the mean of the scenario rates is at least 0.01 pp away from the pooled rate."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from envs.ab_testing import ARMS
from loca.core.rng import WorldRng

START = datetime(2024, 7, 29, tzinfo=UTC)  # the first hourly window
NOW = datetime(2025, 1, 1, tzinfo=UTC)
ZERO_SHARE = 0.05  # arm-hours without a click
MIN_GAP = 0.05  # pp between the pooled rates
MIN_MEAN_GAP = 0.01  # pp between an arm's mean of rates and its pooled rate
MAX_REDRAWS = 400
AREAS = ("hero", "header", "footer", "search", "checkout", "cart", "promo", "banner", "signup", "pricing",
         "menu", "product", "review", "wishlist", "newsletter", "login", "landing", "category", "gallery",
         "shipping")
ELEMENTS = ("button_color", "headline", "layout", "cta_text", "image", "carousel", "badge", "font_size",
            "copy", "placement", "icon", "countdown", "video", "grid", "tooltip", "form", "offer")


@dataclass(frozen=True)
class Scenario:
    name: str
    clicks: tuple[tuple[int, int], ...]  # per hour: (A clicks, B clicks)
    views: tuple[tuple[int, int], ...]  # per hour: (A store views, B store views)

    def total(self, arm: int) -> tuple[int, int]:
        """(store views, clicks) of arm 0 (A) or 1 (B)."""
        return sum(v[arm] for v in self.views), sum(c[arm] for c in self.clicks)


@dataclass(frozen=True)
class Plan:
    scenarios: tuple[Scenario, ...]  # sorted by name
    winner: str
    days: int

    def pooled(self, arm: int) -> tuple[int, int]:
        """(store views, clicks) of an arm over every scenario."""
        totals = [s.total(arm) for s in self.scenarios]
        return sum(v for v, _ in totals), sum(c for _, c in totals)


def num_days(num_scenarios: int) -> int:
    return max(2, math.ceil(num_scenarios / 3))


def hour_at(index: int) -> datetime:
    return START + timedelta(hours=index)


HOURS_BEFORE_NOW = (NOW - START) // timedelta(hours=1)  # the hourly windows a scenario can hold


def scenario_hours(num_scenarios: int, extra_hours: int) -> list[int]:
    """Hours of each scenario: `24 × num_days`, plus the extra hours spread evenly, the first
    scenarios taking the remainder."""
    base = 24 * num_days(num_scenarios) + extra_hours // num_scenarios
    return [base + (i < extra_hours % num_scenarios) for i in range(num_scenarios)]


def _ordered_alike(names: list[str]) -> bool:
    """Sorting by code point, case-insensitively or ignoring underscores gives one order."""
    plain = sorted(names)
    return plain == sorted(names, key=str.casefold) == sorted(names, key=lambda n: n.replace("_", ""))


def draw_names(rng: random.Random, count: int) -> list[str]:
    """`count` unique slugs sorted by name; one name is drawn twice, so its second table
    carries the `_2` suffix."""
    pool = [f"{a}_{e}" for a in AREAS for e in ELEMENTS]
    while True:
        picked = rng.sample(pool, count - 1)
        names = [*picked, f"{rng.choice(picked)}_2"]
        if _ordered_alike(names):
            return sorted(names)


@dataclass(frozen=True)
class _Traffic:
    base: float
    clicks: tuple[tuple[int, int], ...]
    noise: random.Random


def _traffic(rng: random.Random, noise: random.Random, hours: int) -> _Traffic:
    base, scale = rng.uniform(0.70, 0.78), rng.uniform(0.2, 3.0)

    def clicks() -> int:
        return 0 if rng.random() < ZERO_SHARE else round(rng.randint(0, 200) * scale)
    drawn = [(clicks(), clicks()) for _ in range(hours)]
    for arm in (0, 1):
        if not sum(c[arm] for c in drawn):
            drawn[0] = (max(1, drawn[0][0]), max(1, drawn[0][1]))
    return _Traffic(base, tuple(drawn), noise)


def _views(t: _Traffic, offset: float) -> tuple[tuple[int, int], ...]:
    """Store views per hour: clicks × clip(N(rate, 0.1 rate), 0.3, 0.95), rounded down; the
    offset splits the arms' rates around the base rate."""
    rates = (t.base - offset / 2, t.base + offset / 2)

    def views(clicks: int, rate: float) -> int:
        return math.floor(clicks * min(0.95, max(0.3, t.noise.gauss(rate, 0.1 * rate))))
    return tuple((views(a, rates[0]), views(b, rates[1])) for a, b in t.clicks)


def holds(plan: Plan) -> bool:
    """The guarantees: clicks in every arm, pooled rates apart in the chosen direction, and each
    arm's mean of rates apart from its pooled rate."""
    totals = [[s.total(arm) for s in plan.scenarios] for arm in (0, 1)]
    if any(c == 0 for arm in totals for _, c in arm):
        return False
    pooled = [100 * sum(v for v, _ in arm) / sum(c for _, c in arm) for arm in totals]
    means = [sum(100 * v / c for v, c in arm) / len(arm) for arm in totals]
    lead = pooled[1] - pooled[0] if plan.winner == "B" else pooled[0] - pooled[1]
    return lead >= MIN_GAP and all(abs(m - p) >= MIN_MEAN_GAP for m, p in zip(means, pooled, strict=True))


def plan_world(rngs: WorldRng, num_scenarios: int, extra_hours: int) -> Plan:
    """The scenarios (hours as `scenario_hours` says) and the winner."""
    names = draw_names(rngs.stream("names"), num_scenarios)
    days = num_days(num_scenarios)
    hours = scenario_hours(num_scenarios, extra_hours)
    traffic = [_traffic(rngs.stream("traffic", i), rngs.stream("noise", i), n) for i, n in enumerate(hours)]
    winner = rngs.stream("winner").choice(ARMS)
    offsets = rngs.stream("offsets")
    for _ in range(MAX_REDRAWS):
        scenarios = tuple(Scenario(name, t.clicks, _views(t, offsets.uniform(-0.03, 0.03)))
                          for name, t in zip(names, traffic, strict=True))
        plan = Plan(scenarios, winner, days)
        if holds(plan):
            return plan
    raise RuntimeError(f"no offsets met the guarantees in {MAX_REDRAWS} draws")
