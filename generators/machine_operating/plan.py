"""The plan of a machine_operating world, drawn from named streams before anything is written:
machines and their sensor ranges, the reading rows of every series (shuffled, with exact
duplicates), anomaly sessions, the edge cases at the window's ends and bounds, and readings of
unknown machines."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from envs.machine_operating import WINDOW
from loca.core.rng import WorldRng

NOW = datetime(2025, 8, 19, 13, 0, tzinfo=UTC)
NOON = datetime(2025, 8, 19, 12, 0, tzinfo=UTC)
WINDOW_START, WINDOW_END = (datetime.fromisoformat(t).replace(tzinfo=UTC) for t in WINDOW)
SLOT = timedelta(minutes=5)
# sensor type -> (unit, typical min, typical max), each bound varied by up to 5 % per machine; every
# min stays above max and more than 5 % of its range above zero, so a dropout to 0 is an anomaly
SENSORS: dict[str, tuple[str, float, float]] = {
    "temperature": ("°C", 40.0, 90.0), "pressure": ("bar", 2.0, 10.0), "vibration": ("mm/s", 0.6, 8.0),
    "rpm": ("rpm", 900.0, 3600.0), "current": ("A", 5.0, 40.0), "flow_rate": ("L/min", 20.0, 150.0),
    "voltage": ("V", 210.0, 240.0), "humidity": ("%RH", 30.0, 65.0), "torque": ("Nm", 50.0, 400.0),
    "noise_level": ("dB", 55.0, 90.0)}
KINDS = ("CNC milling center", "Injection molding press", "Hydraulic press", "Industrial robot arm",
         "Conveyor drive", "Air compressor", "Packaging line", "Laser cutter", "Boiler", "Cooling tower pump")
SESSION_RATE = 0.15
SESSIONS = ("spike", "drift", "oscillation", "dropout")
DUPLICATE_RATE = 0.01
UNKNOWN_FIRST = 901  # unknown machines are M901, M902, ...
UNKNOWN_SLOTS = 12  # in-window slots (11:30 ... 12:25) per unknown machine and sensor


def sensors_per_machine(machines: int) -> int:
    return min(10, 2 + machines // 6)


def hours(machines: int) -> int:
    return max(4, machines)


def default_unknown(machines: int) -> int:
    return 4 + machines // 2


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")


@dataclass(frozen=True)
class Series:
    machine: str
    sensor: str
    low: float
    high: float

    @property
    def span(self) -> float:
        return self.high - self.low


@dataclass(frozen=True)
class Machine:
    machine_id: str
    description: str
    line: int


Row = tuple[str, str, str, float]  # timestamp text (UTC), machine_id, sensor_type, reading


@dataclass(frozen=True)
class Plan:
    machines: tuple[Machine, ...]
    series: tuple[Series, ...]  # the sheet's rows, machine by machine
    rows: tuple[Row, ...]  # the table, shuffled

    def anomalies(self) -> list[Row]:
        """The distinct out-of-range readings of known series in the window, in report order."""
        ranges = {(s.machine, s.sensor): s for s in self.series}
        lo, hi = stamp(WINDOW_START), stamp(WINDOW_END)
        found = {r for r in self.rows if lo <= r[0] <= hi and (s := ranges.get((r[1], r[2]))) is not None
                 and (r[3] < s.low or r[3] > s.high)}
        return sorted(found)


def _machines(rng: random.Random, count: int) -> tuple[Machine, ...]:
    return tuple(Machine(f"M{k:03d}", rng.choice(KINDS), rng.randint(1, 6)) for k in range(1, count + 1))


def _series(rngs: WorldRng, machines: tuple[Machine, ...]) -> tuple[Series, ...]:
    per = sensors_per_machine(len(machines))
    out = []
    for m in machines:
        rng = rngs.stream("series", m.machine_id)
        chosen = set(rng.sample(sorted(SENSORS), per))
        for sensor in (s for s in SENSORS if s in chosen):
            _, low, high = SENSORS[sensor]
            a, b = round(low * rng.uniform(0.95, 1.05), 2), round(high * rng.uniform(0.95, 1.05), 2)
            out.append(Series(m.machine_id, sensor, a, b))
    return tuple(out)


def _outside(rng: random.Random, s: Series, above: bool, lo: float = 0.05, hi: float = 0.5) -> float:
    """A reading at least 5 % of the range outside the band (never negative)."""
    if above:
        return round(s.high + rng.uniform(lo, hi) * s.span, 2)
    return max(0.0, round(s.low - rng.uniform(lo, hi) * s.span, 2))


def _session(rng: random.Random, s: Series, kind: str, length: int) -> list[float]:
    if kind == "spike":
        return [_outside(rng, s, True) for _ in range(length)]
    if kind == "drift":
        return [round(s.high + (0.05 + 0.4 * i / length) * s.span, 2) for i in range(length)]
    if kind == "oscillation":
        return [_outside(rng, s, i % 2 == 0, 0.05, 0.3) for i in range(length)]
    return [0.0] * length  # dropout


def _readings(rng: random.Random, s: Series, slots: list[str], forced: int | None) -> list[Row]:
    """One series: a reading per slot (`slots`: "YYYY-MM-DD HH:MM:" texts) with 0-59 s of
    jitter; an anomaly session for about SESSION_RATE of series (at slot `forced` when given)."""
    mid, sd, gauss = (s.low + s.high) / 2, s.span / 6, rng.gauss
    values = [min(s.high, max(s.low, round(gauss(mid, sd), 2))) for _ in slots]
    if forced is not None or rng.random() < SESSION_RATE:
        length = rng.randint(3, 12)
        at = forced if forced is not None else rng.randrange(len(slots))
        for i, v in enumerate(_session(rng, s, rng.choice(SESSIONS), length)):
            if at + i < len(slots):
                values[at + i] = v
    jitter = rng.random
    return [(f"{t}{int(jitter() * 60):02d}", s.machine, s.sensor, v) for t, v in zip(slots, values, strict=True)]


def _slots(machines: int) -> list[datetime]:
    first = NOON - timedelta(minutes=30 * hours(machines))
    return [first + i * SLOT for i in range(12 * hours(machines))]


def _edge_rows(rng: random.Random, series: tuple[Series, ...], rows: dict[Series, list[Row]],
               slots: list[datetime]) -> list[Row]:
    """Overrides at the window's ends and bounds; returns the rows to duplicate besides."""
    index = {t: i for i, t in enumerate(slots)}
    a, b, c, d, e, f = rng.sample(series, 6)

    def put(s: Series, slot: datetime, moment: datetime, value: float) -> Row:
        row = (stamp(moment), s.machine, s.sensor, value)
        rows[s][index[slot]] = row
        return row

    start, end = WINDOW_START, WINDOW_END
    first = put(a, start, start, _outside(rng, a, True))  # exactly 11:30:00
    put(b, end, end, _outside(rng, b, False))  # exactly 12:30:00
    put(c, end, end + timedelta(seconds=rng.randint(1, 9)), _outside(rng, c, True))  # 12:30:0x
    put(d, start - SLOT, start - timedelta(seconds=rng.randint(1, 9)), _outside(rng, d, True))  # 11:29:5x
    put(e, start + 3 * SLOT, start + 3 * SLOT + timedelta(seconds=rng.randrange(60)), e.low)
    put(f, start + 8 * SLOT, start + 8 * SLOT + timedelta(seconds=rng.randrange(60)), f.high)
    return [first]


def _unknown(rng: random.Random, count: int) -> list[Row]:
    """`count` extreme readings of unknown machines in the window, each key used once."""
    names = list(SENSORS)
    per_machine = UNKNOWN_SLOTS * len(names)
    rows = []
    for i in range(count):
        machine = f"M{UNKNOWN_FIRST + i // per_machine}"
        sensor = names[(i // UNKNOWN_SLOTS) % len(names)]
        moment = WINDOW_START + (i % UNKNOWN_SLOTS) * SLOT + timedelta(seconds=rng.randrange(60))
        value = round(rng.choice((-1, 1)) * rng.uniform(5000, 99999), 2)
        rows.append((stamp(moment), machine, sensor, value))
    return rows


def plan_world(rngs: WorldRng, machines: int, unknown: int) -> Plan:
    made = _machines(rngs.stream("machines"), machines)
    series = _series(rngs, made)
    slots = _slots(machines)
    window_slots = [i for i, t in enumerate(slots) if WINDOW_START <= t <= WINDOW_END]
    forced = rngs.stream("forced").choice(series)  # a session that overlaps the window in every world
    minutes = [t.strftime("%Y-%m-%d %H:%M:") for t in slots]
    rows = {s: _readings(rngs.stream("readings", s.machine, s.sensor), s, minutes,
                         window_slots[2] if s is forced else None) for s in series}
    doubled = _edge_rows(rngs.stream("edges"), series, rows, slots)
    table = [r for s in series for r in rows[s]] + _unknown(rngs.stream("unknown"), unknown)
    dup = rngs.stream("duplicates")
    doubled += dup.sample(table, math.ceil(DUPLICATE_RATE * len(table)))
    table += doubled
    rngs.stream("shuffle").shuffle(table)
    return Plan(made, series, tuple(table))
