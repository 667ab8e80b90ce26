"""The plan of a machine_operating world, drawn from named streams before anything is written:
machines and their sensor ranges, the reading rows of every series (shuffled, with exact
duplicates), anomaly sessions, the edge cases at the window's ends and bounds, and readings of
unknown machines.

The reading grid (every series at every 5-minute slot) is drawn in bulk with numpy from the
raw bits of a PCG64 stream, with integer and IEEE arithmetic only (no library transcendental,
whose last bit may vary by machine), so a world is the same everywhere; the few sessions, edge
cases and unknown readings are drawn with `random.Random` streams."""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from numpy.typing import NDArray

from envs.machine_operating import WINDOW
from loca.core.rng import WorldRng, derive_seed

NOW = datetime(2025, 8, 19, 13, 0, tzinfo=UTC)
NOON = datetime(2025, 8, 19, 12, 0, tzinfo=UTC)
WINDOW_START, WINDOW_END = (datetime.fromisoformat(t).replace(tzinfo=UTC) for t in WINDOW)
SLOT = timedelta(minutes=5)
SLOT_S = 300
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
NORMAL_TERMS = 12  # uniforms summed for one normal draw (Irwin-Hall: mean 6, variance 1)
MAX_GRID = 400_000  # readings in the grid (every series at every slot) past which fewer hours are covered

_CENTS = np.array([f"{c:02d}".rstrip("0") or "0" for c in range(100)], dtype=object)  # x.00 is "x.0"
Floats = NDArray[np.float64]
Ints = NDArray[np.int64]


def sensors_per_machine(machines: int) -> int:
    return min(10, 2 + machines // 6)


def hours(machines: int) -> int:
    """max(4, m), or fewer where the grid would pass MAX_GRID readings (from m = 58 on): a long
    world's table stops growing and its window's share grows instead."""
    series = machines * sensors_per_machine(machines)
    return max(4, min(machines, MAX_GRID // (12 * series)))


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


@dataclass(frozen=True, eq=False)
class Plan:
    """The world's content. The table is held column-wise, in stored (shuffled) order:
    `at` seconds after `first`, `key` an index into `keys` (the series' (machine, sensor)
    pairs, then those of unknown machines), `reading`."""

    machines: tuple[Machine, ...]
    series: tuple[Series, ...]  # the sheet's rows, machine by machine
    keys: tuple[tuple[str, str], ...]
    first: datetime
    at: Ints
    key: Ints
    reading: Floats

    def stamps(self) -> list[str]:
        """The timestamp text of every row, in stored order."""
        minutes = _texts(self.at // 60, lambda m: stamp(self.first + timedelta(minutes=m))[:-2])
        return _texts(self.at, lambda t: f"{minutes[t // 60]}{t % 60:02d}")[self.at].tolist()

    def columns(self, stamps: list[str]) -> list[list[Any]]:
        """The table's columns, in stored order, given `stamps()`."""
        machine = np.array([k[0] for k in self.keys], dtype=object)[self.key].tolist()
        sensor = np.array([k[1] for k in self.keys], dtype=object)[self.key].tolist()
        return [stamps, machine, sensor, self.reading.tolist()]

    def rows(self) -> list[Row]:
        """The table's rows, in stored order."""
        return list(zip(*self.columns(self.stamps()), strict=True))

    def digest(self, stamps: list[str]) -> str:
        """`table_digest` of the table filled with `rows()` in order (rowids 1, 2, ...), built
        from the plan rather than read back: the text of each (rowid, *row) as repr writes it,
        joined from pieces taken from small tables (a timestamp needs no escaping)."""
        n = len(stamps)
        rowid = np.arange(1, n + 1)
        high, low = np.divmod(rowid, 1000)
        highs = np.array([")("] + [f")({h}" for h in range(1, int(high[-1]) + 1)], dtype=object)
        lows = np.array([f"{x}, '" for x in range(1000)] + [f"{x:03d}, '" for x in range(1000)], dtype=object)
        keys = [f"', {m!r}, {s!r}, " for m, s in self.keys]
        parts: list[str] = [""] * (6 * n)
        parts[0::6] = highs[high].tolist()
        parts[1::6] = lows[low + 1000 * (high > 0)].tolist()
        parts[2::6] = stamps
        hundredths = np.rint(self.reading * 100).astype(np.int64)
        if np.array_equal(hundredths / 100, self.reading) and int(np.abs(hundredths).max()) < 10**15:
            # the nearest double to k/100 has the repr of k/100 written out, trailing 0 dropped
            whole, cents = np.divmod(np.abs(hundredths), 100)
            signed = np.array([k + sign for k in keys for sign in ("", "-")], dtype=object)
            parts[3::6] = signed[2 * self.key + np.signbit(self.reading)].tolist()
            parts[4::6] = _texts(whole, "{}.".format)[whole].tolist()
            parts[5::6] = _CENTS[cents].tolist()
        else:
            parts[3::6] = np.array(keys, dtype=object)[self.key].tolist()
            parts[4::6] = map(repr, self.reading.tolist())
        parts[0] = parts[0][1:]
        return hashlib.sha256(("".join(parts) + ")").encode()).hexdigest()

    def anomalies(self) -> list[Row]:
        """The distinct out-of-range readings of known series in the window, in report order."""
        lo, hi = (_offset(self.first, t) for t in (WINDOW_START, WINDOW_END))
        known = self.key < len(self.series)
        low = np.array([s.low for s in self.series])[np.where(known, self.key, 0)]
        high = np.array([s.high for s in self.series])[np.where(known, self.key, 0)]
        hit = known & (self.at >= lo) & (self.at <= hi) & ((self.reading < low) | (self.reading > high))
        return sorted({(stamp(self.first + timedelta(seconds=int(t))), *self.keys[k], v)
                       for t, k, v in zip(self.at[hit].tolist(), self.key[hit].tolist(),
                                          self.reading[hit].tolist(), strict=True)})


def _texts(numbers: Ints, text: Callable[[int], str]) -> NDArray[np.object_]:
    """A table from each of `numbers` (non-negative) to its `text`, by index (only the numbers
    present are written)."""
    present = np.zeros(int(numbers.max()) + 1, dtype=bool)
    present[numbers] = True
    table = np.empty(len(present), dtype=object)
    used = np.flatnonzero(present)
    table[used] = [text(n) for n in used.tolist()]
    return table


def _offset(first: datetime, moment: datetime) -> int:
    return int((moment - first).total_seconds())


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


def _bits(rngs: WorldRng, name: str) -> np.random.PCG64:
    """A numpy bit generator seeded from the world's root; only its raw output is used, which
    numpy keeps the same across versions."""
    return np.random.PCG64(derive_seed(rngs.task, rngs.seed, name))


def normals(rngs: WorldRng, name: str, shape: tuple[int, int]) -> Floats:
    """Standard normal draws from stream `name`, each the centred sum of NORMAL_TERMS uniforms
    (53-bit integers summed exactly, then scaled)."""
    bits = _bits(rngs, name)
    total = np.zeros(shape[0] * shape[1], dtype=np.uint64)
    for _ in range(NORMAL_TERMS):
        total += bits.random_raw(total.size) >> np.uint64(11)
    return (total.astype(np.float64) * 2.0 ** -53 - NORMAL_TERMS / 2).reshape(shape)


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


@dataclass
class Grid:
    """Every series at every slot: `at` (seconds after the first slot) and `reading`, one row
    per series, one column per slot."""

    at: Ints
    reading: Floats


def _grid(rngs: WorldRng, series: tuple[Series, ...], slots: int) -> Grid:
    """Normal readings clip(N(mid, span/6), low, high) at 0.01, each with 0-59 s of jitter."""
    low, high = (np.array([getattr(s, b) for s in series])[:, None] for b in ("low", "high"))
    values = np.clip(np.round((low + high) / 2 + (high - low) / 6 * normals(rngs, "readings", (len(series), slots)),
                              2), low, high)
    jitter = (_bits(rngs, "jitter").random_raw(values.size) % np.uint64(60)).astype(np.int64).reshape(values.shape)
    return Grid(np.arange(slots, dtype=np.int64) * SLOT_S + jitter, values)


def _sessions(rng: random.Random, series: tuple[Series, ...], grid: Grid, forced: int, at: int) -> None:
    """An anomaly session for about SESSION_RATE of series, and always for series `forced`
    (starting at slot `at`)."""
    slots = grid.reading.shape[1]
    for i, s in enumerate(series):
        if i != forced and rng.random() >= SESSION_RATE:
            continue
        length = rng.randint(3, 12)
        start = at if i == forced else rng.randrange(slots)
        values = _session(rng, s, rng.choice(SESSIONS), length)[:slots - start]
        grid.reading[i, start:start + len(values)] = values


def _edges(rng: random.Random, series: tuple[Series, ...], grid: Grid, first: datetime) -> int:
    """Overrides at the window's ends and bounds; returns the flat index of the reading at
    exactly 11:30:00, which is also duplicated."""
    a, b, c, d, e, f = rng.sample(range(len(series)), 6)
    start, end = _offset(first, WINDOW_START), _offset(first, WINDOW_END)

    def put(i: int, moment: int, value: float) -> int:
        slot = moment // SLOT_S
        grid.at[i, slot], grid.reading[i, slot] = moment, value
        return i * grid.at.shape[1] + slot

    exact = put(a, start, _outside(rng, series[a], True))  # exactly 11:30:00
    put(b, end, _outside(rng, series[b], False))  # exactly 12:30:00
    put(c, end + rng.randint(1, 9), _outside(rng, series[c], True))  # 12:30:0x
    put(d, start - rng.randint(1, 9), _outside(rng, series[d], True))  # 11:29:5x
    put(e, start + 3 * SLOT_S + rng.randrange(60), series[e].low)
    put(f, start + 8 * SLOT_S + rng.randrange(60), series[f].high)
    return exact


def _unknown(rng: random.Random, count: int, start: int) -> tuple[list[tuple[str, str]], Ints, Floats]:
    """`count` extreme readings of unknown machines in the window (from second `start`), each
    (key, slot) used once: the keys, and the seconds and readings of the rows (row i has key
    i // UNKNOWN_SLOTS)."""
    names = list(SENSORS)
    keys = [(f"M{UNKNOWN_FIRST + j // len(names)}", names[j % len(names)])
            for j in range(math.ceil(count / UNKNOWN_SLOTS))]
    at, values = [], []
    for i in range(count):
        at.append(start + (i % UNKNOWN_SLOTS) * SLOT_S + rng.randrange(60))
        values.append(round(rng.choice((-1, 1)) * rng.uniform(5000, 99999), 2))
    return keys, np.array(at, dtype=np.int64), np.array(values, dtype=np.float64)


def plan_world(rngs: WorldRng, machines: int, unknown: int) -> Plan:
    made = _machines(rngs.stream("machines"), machines)
    series = _series(rngs, made)
    slots = 12 * hours(machines)
    first = NOON - timedelta(minutes=30 * hours(machines))
    start = _offset(first, WINDOW_START)
    grid = _grid(rngs, series, slots)
    forced = rngs.stream("forced").randrange(len(series))  # a session that overlaps the window in every world
    _sessions(rngs.stream("sessions"), series, grid, forced, start // SLOT_S + 2)
    exact = _edges(rngs.stream("edges"), series, grid, first)
    extra_keys, extra_at, extra_reading = _unknown(rngs.stream("unknown"), unknown, start)
    key = np.concatenate([np.repeat(np.arange(len(series), dtype=np.int64), slots),
                          len(series) + np.arange(unknown, dtype=np.int64) // UNKNOWN_SLOTS])
    at = np.concatenate([grid.at.ravel(), extra_at])
    reading = np.concatenate([grid.reading.ravel(), extra_reading])
    doubled = [exact, *rngs.stream("duplicates").sample(range(len(at)), math.ceil(DUPLICATE_RATE * len(at)))]
    order = np.argsort(_bits(rngs, "shuffle").random_raw(len(at) + len(doubled)), kind="stable")
    rows = np.concatenate([np.arange(len(at)), np.array(doubled, dtype=np.int64)])[order]
    keys = tuple((s.machine, s.sensor) for s in series) + tuple(extra_keys)
    return Plan(made, series, keys, first, at[rows], key[rows], reading[rows])
