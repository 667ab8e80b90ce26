"""The plan of an excel_market_research world, drawn from named streams before anything is
written: raw categories with units and yearly series, internal categories with weights, the
target category and the year range, every edge case of the task in place."""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime

from envs.excel_market_research import DEFAULT_PAGE_CELLS, UNITS, growth_rows
from loca.core.rng import WorldRng

NOW = datetime(2025, 1, 1, tzinfo=UTC)
FIRST_YEAR = 1989
MN, BN = "mn USD", "bn USD"
TRENDS = {"growth": 0.06, "stable": 0.0, "decline": -0.03, "volatile": 0.0}  # yearly drift
NOISE, VOLATILE_SWING = 0.05, 0.12
ZERO_WEIGHT = 0.4
UNITS_MATTER_PP = 0.5  # ignoring units moves a target growth value by at least this much
FIRST_ROW_DIFFERS_PP = 0.05  # the first internal category's growth is not the target's
MAX_REDRAWS = 50
_QUALIFIERS = ("Smart", "Industrial", "Consumer", "Medical", "Automotive", "Wireless", "Cloud",
               "Renewable", "Organic", "Digital", "Portable", "Commercial", "Residential",
               "Agricultural", "Marine", "Aerospace", "Retail", "Luxury", "Budget", "Premium",
               "Modular", "Wearable", "Connected", "Electric", "Biodegradable", "Frozen", "Specialty",
               "Outdoor", "Educational", "Professional")
_PRODUCTS = ("Sensors", "Batteries", "Robotics", "Displays", "Textiles", "Beverages", "Packaging",
             "Lighting", "Furniture", "Appliances", "Software", "Drones", "Fertilizers", "Coatings",
             "Pharmaceuticals", "Semiconductors", "Cosmetics", "Footwear", "Printers", "Tools",
             "Cameras", "Pumps", "Filters", "Adhesives", "Instruments")
_AREAS = ("Consumer", "Enterprise", "Industrial", "Healthcare", "Mobility", "Energy", "Home", "Food",
          "Lifestyle", "Infrastructure", "Public Sector", "Retail", "Logistics", "Media", "Security",
          "Education", "Agritech", "Leisure", "Construction", "Finance")
_GROUPS = ("Core", "Growth", "Value", "Premium", "Emerging", "Legacy", "Digital", "Hardware", "Services",
           "Platforms", "Solutions", "Components", "Systems", "Devices", "Essentials")
# Appended pools for the long tiers: a world with more categories than the first pool holds
# samples from both; a smaller one samples from the first alone, as it always has.
_MORE_QUALIFIERS = ("Compact", "Heavy-Duty", "Precision", "Hybrid", "Solar", "Thermal", "Optical", "Acoustic",
                    "Hydraulic", "Handheld", "Rugged", "Urban", "Military", "Laboratory", "Veterinary", "Dental",
                    "Sports", "Travel", "Office", "Kitchen", "Garden", "Pet", "Infant", "Recycled", "Vintage",
                    "Custom", "Mobile", "Embedded", "Secure", "Miniature")
_MORE_AREAS = ("Transport", "Telecom", "Utilities", "Hospitality", "Travel", "Sports", "Gaming", "Fashion",
               "Beauty", "Wellness", "Pharma", "Chemicals", "Mining", "Aviation", "Maritime", "Defense",
               "Government", "Insurance", "Real Estate", "Publishing")
RAW_NAMES = tuple(f"{q} {p}" for q, p in itertools.product(_QUALIFIERS, _PRODUCTS))
MORE_RAW_NAMES = tuple(f"{q} {p}" for q, p in itertools.product(_MORE_QUALIFIERS, _PRODUCTS))
INTERNAL_NAMES = tuple(f"{a} {g}" for a, g in itertools.product(_AREAS, _GROUPS))
MORE_INTERNAL_NAMES = tuple(f"{a} {g}" for a, g in itertools.product(_MORE_AREAS, _GROUPS))
MOST_INTERNAL = len(INTERNAL_NAMES) + len(MORE_INTERNAL_NAMES)


def sample_names(rng: random.Random, first: tuple[str, ...], more: tuple[str, ...], count: int) -> list[str]:
    """`count` distinct names: from `first` while it holds enough, else from both pools."""
    pool = first if count <= len(first) else first + more
    if count > len(pool):
        raise ValueError(f"at most {len(pool)} names are available, {count} asked")
    return rng.sample(pool, count)


def num_years(raw: int) -> int:
    return min(60, 8 + 2 * raw)


def default_internal(raw: int) -> int:
    return max(3, math.ceil(raw / 3))


@dataclass(frozen=True)
class Raw:
    name: str
    unit: str
    trend: str
    values: tuple[float, ...]  # one per year, 2 decimals, never zero

    @property
    def header(self) -> str:
        return f"{self.name} ({self.unit})"


@dataclass(frozen=True)
class Plan:
    years: tuple[int, ...]
    raws: tuple[Raw, ...]
    internal: tuple[str, ...]
    weights: tuple[tuple[float, ...], ...]  # one row per internal category, 3 decimals
    target: int  # index into `internal`
    start: int
    end: int

    def rows(self, ignore_units: bool = False, row: int | None = None) -> list[list[float | int]]:
        """The report rows (`growth_rows`) for the target, or for internal `row`."""
        factors = [1.0 if ignore_units else UNITS[r.unit] for r in self.raws]
        weights = self.weights[self.target if row is None else row]
        return growth_rows(self.years, [r.values for r in self.raws], factors, weights, self.start, self.end)


def _series(rng: random.Random, unit: str, trend: str, years: int) -> tuple[float, ...]:
    value = rng.uniform(2.0, 80.0) if unit == BN else rng.uniform(200.0, 20000.0)
    floor = 0.05 if unit == BN else 5.0
    out = []
    for _ in range(years):
        out.append(max(floor, round(value, 2)))
        swing = rng.uniform(-VOLATILE_SWING, VOLATILE_SWING) if trend == "volatile" else 0.0
        value = max(floor, value * (1.0 + TRENDS[trend] + swing + rng.uniform(-NOISE, NOISE)))
    return tuple(out)


def _raws(rngs: WorldRng, count: int, years: int) -> tuple[Raw, ...]:
    names = sample_names(rngs.stream("raw_names"), RAW_NAMES, MORE_RAW_NAMES, count)
    units = [MN if u < 2 else BN for u in (rngs.stream("units", j).randrange(3) for j in range(count))]
    if MN not in units or BN not in units:  # both units occur in every world
        units[:2] = [MN, BN]
    raws = []
    for j, (name, unit) in enumerate(zip(names, units, strict=True)):
        rng = rngs.stream("series", j)
        trend = rng.choice(sorted(TRENDS))
        raws.append(Raw(name, unit, trend, _series(rng, unit, trend, years)))
    return tuple(raws)


def _weight(rng: random.Random) -> float:
    return round(rng.uniform(0.05, 1.0), 3)


def _weights(rng: random.Random, count: int) -> tuple[float, ...]:
    """About ZERO_WEIGHT of them zero, never all."""
    draw = rng.random  # `_weight` inlined (the same arithmetic as `uniform`): a row can be 1,000+ cells
    weights = [0.0 if draw() < ZERO_WEIGHT else round(0.05 + (1.0 - 0.05) * draw(), 3) for _ in range(count)]
    if not any(weights):
        weights[rng.randrange(count)] = _weight(rng)
    return tuple(weights)


def _target_weights(rng: random.Random, raws: tuple[Raw, ...]) -> tuple[float, ...]:
    """A target row: non-zero weights on at least one mn and one bn column."""
    weights = list(_weights(rng, len(raws)))
    for unit in (MN, BN):
        if not any(w for w, r in zip(weights, raws, strict=True) if r.unit == unit):
            j = rng.choice([j for j, r in enumerate(raws) if r.unit == unit])
            weights[j] = _weight(rng)
    return tuple(weights)


def _last_on_first_page(width: int) -> int:
    """The last sheet row (1-based) of the first default page of a sheet `width` columns wide."""
    return DEFAULT_PAGE_CELLS // width


def _year_range(rng: random.Random, years: tuple[int, ...], width: int) -> tuple[int, int]:
    """start > first year, end < last year, at least two report rows; the end year lies beyond
    the first default page of RawData when the sheet spans more (the pagination trap)."""
    first, last = years[0], years[-1]
    page_end = _last_on_first_page(width)
    beyond = first + page_end - 1  # the first year whose row (year - first + 2) is past the page
    lo_end = first + 3
    if len(years) + 2 > page_end and beyond <= last - 1:
        lo_end = max(lo_end, beyond)
    end = rng.randint(lo_end, last - 1)
    start = rng.randint(first + 1, end - 2)
    return start, end


def _target_index(rng: random.Random, internal: int, width: int) -> int:
    """Never the first row; beyond the first default page of Methodology when it spans more."""
    page_end = _last_on_first_page(width)
    lo = 1 if internal + 1 <= page_end else max(1, page_end - 1)
    return rng.randint(lo, internal - 1)


def _edge_cases_hold(plan: Plan) -> bool:
    """Ignoring units moves a Growth Rate value by at least UNITS_MATTER_PP, and the first
    internal category's growth differs from the target's."""
    right = [r[-1] for r in plan.rows()]
    ignored = [r[-1] for r in plan.rows(ignore_units=True)]
    first = [r[-1] for r in plan.rows(row=0)]
    return (max(abs(a - b) for a, b in zip(right, ignored, strict=True)) >= UNITS_MATTER_PP
            and max(abs(a - b) for a, b in zip(right, first, strict=True)) >= FIRST_ROW_DIFFERS_PP)


def plan_world(rngs: WorldRng, raw: int, internal: int) -> Plan:
    """The whole plan; the target's weights are redrawn (bounded) until every edge case holds."""
    most_raw, most_internal = len(RAW_NAMES + MORE_RAW_NAMES), len(INTERNAL_NAMES + MORE_INTERNAL_NAMES)
    if internal > most_internal or raw > most_raw:
        raise ValueError(f"at most {most_raw} raw and {most_internal} internal categories")
    first = FIRST_YEAR
    years = tuple(range(first, first + num_years(raw)))
    raws = _raws(rngs, raw, len(years))
    names = tuple(sample_names(rngs.stream("internal_names"), INTERNAL_NAMES, MORE_INTERNAL_NAMES, internal))
    weights = [_weights(rngs.stream("weights", k), raw) for k in range(internal)]
    pick = rngs.stream("target")
    target = _target_index(pick, internal, raw + 1)
    start, end = _year_range(rngs.stream("range"), years, raw + 1)
    redraw = rngs.stream("target_weights")
    for _ in range(MAX_REDRAWS):
        weights[target] = _target_weights(redraw, raws)
        plan = Plan(years, raws, names, tuple(weights), target, start, end)
        if _edge_cases_hold(plan):
            return plan
    raise RuntimeError(f"no target weights meet the edge cases in {MAX_REDRAWS} draws")
