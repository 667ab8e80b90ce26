"""Length targets: "8k" .. "256k" (k = 1,000 tokens) or a plain token count."""

from __future__ import annotations

import re

TIERS = ["8k", "16k", "32k", "64k", "96k", "128k", "256k"]
_PATTERN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kK]?)\s*$")


def parse_length(value: str | int) -> int:
    """Token target of "32k", "32K", "50000" or 50000."""
    if isinstance(value, int) and not isinstance(value, bool):
        tokens = value
    else:
        match = _PATTERN.match(str(value))
        if not match:
            raise ValueError(f"bad length {value!r}: use a tier such as 32k or a token count such as 50000")
        number, unit = float(match.group(1)), match.group(2)
        tokens = int(round(number * (1000 if unit else 1)))
    if tokens <= 0:
        raise ValueError(f"length must be positive, got {value!r}")
    return tokens


def label(tokens: int) -> str:
    """"32k" for 32000, else the plain count."""
    return f"{tokens // 1000}k" if tokens % 1000 == 0 else str(tokens)


def parse_lengths(spec: str) -> list[int]:
    return [parse_length(part) for part in spec.split(",") if part.strip()]


def parse_seeds(spec: str) -> list[int]:
    """"0-4" -> [0..4]; "1,3,7"; "2-3,9"."""
    seeds: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        if re.fullmatch(r"-?\d+", part):
            seeds.append(int(part))
            continue
        match = re.fullmatch(r"(\d+)\s*-\s*(\d+)", part)
        if not match or int(match.group(1)) > int(match.group(2)):
            raise ValueError(f"bad seeds {spec!r}: use 0-4 or 1,3,7")
        seeds.extend(range(int(match.group(1)), int(match.group(2)) + 1))
    if not seeds:
        raise ValueError("no seeds given")
    return seeds
