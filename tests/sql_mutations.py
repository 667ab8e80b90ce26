"""Mutated SQL for the fuzz of the SQL services: corpus statements with one token dropped,
duplicated, replaced or swapped, reproducibly."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Sequence

_EXTRA = ["(", ")", ",", ";", "NULL", "'x'", "1.5", "SELECT", "*", "AS", "JOIN", "OVER", "WITH"]


def mutations(sqls: Sequence[str], token: re.Pattern[str], extra: Sequence[str], count: int,
              seed: int = 7) -> Iterator[str]:
    """`count` statements, each a random corpus statement (split by `token`) with one change;
    `extra` adds dialect tokens to the common ones."""
    rng = random.Random(seed)
    statements = [s for s in (token.findall(sql) for sql in sqls) if s]
    vocabulary = [*_EXTRA, *extra]
    for _ in range(count):
        tokens = list(rng.choice(statements))
        i, j = rng.randrange(len(tokens)), rng.randrange(len(tokens))
        match rng.randrange(4):
            case 0:
                del tokens[i]
            case 1:
                tokens.insert(i, rng.choice(tokens + vocabulary))
            case 2:
                tokens[i] = rng.choice(vocabulary)
            case _:
                tokens[i], tokens[j] = tokens[j], tokens[i]
        yield " ".join(tokens)
