"""Seeded random streams: one root per world, named child streams for each component."""

from __future__ import annotations

import hashlib
import random


def derive_seed(*parts: object) -> int:
    """A 64-bit seed from the sha256 of the parts (never Python's salted `hash`)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


class WorldRng:
    """Root of a world's randomness. `stream(name)` gives an independent `random.Random`, so
    drawing more from one component never shifts the values of another."""

    def __init__(self, task: str, seed: int) -> None:
        self.task = task
        self.seed = seed

    def stream(self, *name: object) -> random.Random:
        return random.Random(derive_seed(self.task, self.seed, *name))
