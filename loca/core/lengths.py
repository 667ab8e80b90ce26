"""Length targets ("8k" .. "2m", k = 1,000 and m = 1,000,000 tokens, or a plain token count) and
seed lists, as given on command lines: validated, bounded and without duplicates.

The seven default tiers (8k-256k) are what a run uses unless told otherwise; the long tiers
(512k, 1m, 2m) are opt-in, by name or as the group `long`."""

from __future__ import annotations

import re

TIERS = ["8k", "16k", "32k", "64k", "96k", "128k", "256k"]  # the default run
LONG_TIERS = ["512k", "1m", "2m"]  # opt-in: beyond the LOCA-bench range
GROUPS = {"default": TIERS, "long": LONG_TIERS, "all": TIERS + LONG_TIERS}  # names for --lengths
MAX_TOKENS = 2_000_000  # the largest target a world is calibrated for
MAX_SEEDS = 100_000  # seeds in one list
MAX_SEED = 2**31 - 1
_PATTERN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")
_UNITS = {"": 1, "k": 1_000, "m": 1_000_000}
_RANGE = re.compile(r"^(\d+)\s*-\s*(\d+)$")


def parse_length(value: str | int) -> int:
    """Token target of "32k", "32K", "1m", "50000" or 50000, in 1..MAX_TOKENS."""
    if isinstance(value, int) and not isinstance(value, bool):
        tokens = value
    else:
        match = _PATTERN.match(str(value))
        if not match:
            raise ValueError(f"bad length {str(value)[:40]!r}: use a tier such as 32k or 1m, or a token count "
                             "such as 50000")
        number, unit = float(match.group(1)), match.group(2)
        tokens = round(number * _UNITS[unit.lower()])
    if not 0 < tokens <= MAX_TOKENS:
        raise ValueError(f"length {str(value)[:40]!r} is out of range: 1 to {MAX_TOKENS:,} tokens")
    return tokens


def label(tokens: int) -> str:
    """"2m" for 2000000, "32k" for 32000, else the plain count."""
    if tokens % 1_000_000 == 0:
        return f"{tokens // 1_000_000}m"
    return f"{tokens // 1000}k" if tokens % 1000 == 0 else str(tokens)


def parse_lengths(spec: str) -> list[int]:
    """Comma-separated targets or group names (`long`: 512k,1m,2m), in order, each once
    ("8k,8000" is one target)."""
    parts = [part.strip() for part in spec.split(",") if part.strip()]
    lengths = [parse_length(tier) for part in parts for tier in GROUPS.get(part.lower(), [part])]
    if not lengths:
        raise ValueError("no lengths given: use e.g. 8k,32k or 50000")
    return list(dict.fromkeys(lengths))


def parse_seeds(spec: str) -> list[int]:
    """"0-4" -> [0..4]; "1,3,7"; "2-3,9": non-negative, each once, at most MAX_SEEDS."""
    seeds: dict[int, None] = {}
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        if part.isdigit():
            first = last = int(part)
        elif match := _RANGE.match(part):
            first, last = int(match.group(1)), int(match.group(2))
            if first > last:
                raise ValueError(f"bad seed range {part!r}: the first seed must not exceed the last")
        else:
            raise ValueError(f"bad seeds {spec[:40]!r}: use non-negative integers such as 0-4 or 1,3,7")
        if last > MAX_SEED:
            raise ValueError(f"seed {last} is too large: at most {MAX_SEED}")
        if len(seeds) + (last - first + 1) > MAX_SEEDS:
            raise ValueError(f"too many seeds in {spec[:40]!r}: at most {MAX_SEEDS:,}")
        seeds.update(dict.fromkeys(range(first, last + 1)))
    if not seeds:
        raise ValueError("no seeds given: use e.g. 0-4 or 1,3,7")
    return list(seeds)
