"""Generators, servers and checkers read time only from the world's virtual clock and draw
randomness only from the world's seeded streams (numpy: only a `PCG64` bit generator seeded from
the world, whose raw output numpy keeps the same across versions)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BANNED = re.compile(
    r"datetime\.now\(|datetime\.utcnow\(|date\.today\(|time\.time\(|time\.localtime\(|"
    r"\brandom\.(random|choice|choices|randint|randrange|shuffle|sample|seed|uniform)\(|"
    r"np\.random\.(?!PCG64\([^)]|PCG64\b(?!\())|uuid\.uuid[14]\(|\.day_of_week\(|\.date_time\(|\.date_this|\.past_date\(|"
    r"\.future_date\(|\.date_between\(")


@pytest.mark.parametrize("folder", ["generators", "mock_servers", "checkers", "envs"])
def test_no_wall_clock_or_global_random(folder):
    offenders = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if BANNED.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
