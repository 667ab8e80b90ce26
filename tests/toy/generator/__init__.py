"""Generator of toy: a memory graph of six to ten tracked items among the fourteen the notes
list (and a few suppliers), `num_notes` stock notes in `notes/`, each listing four to eight items
with counts, and `num_remarks` remark lines (the fine knob; 16 per note by default) dealt round
the notes. The answer: every tracked item's summed count, sorted by item."""

from __future__ import annotations

import random
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from generators.common import create_world, finish_world
from loca.core.rng import WorldRng
from loca.core.world import World, WorldMeta
from mock_servers.memory import domain as memory
from tests.toy import NOTES, TASK, TOTALS, TRACKED

VERSION = "4"
NOW = "2025-03-03T09:00:00+00:00"
ITEMS = ("anchor bolt", "brass hinge", "cable tie", "door stop", "drill bit", "fuse", "gasket",
         "hex nut", "lock washer", "pipe clamp", "rivet", "spring pin", "tape roll", "wall plug")
PLACES = ("aisle", "bay", "dock", "loft", "rack", "shelf", "yard")
REMARKS = ("checked by the {who} shift near {place} {n}", "{who} team flagged a damp box at {place} {n}",
           "recount asked for {place} {n} after the {who} delivery", "labels at {place} {n} are faded",
           "the {who} crew moved stock from {place} {n} to {place} {m}")
SHIFTS = ("early", "late", "night", "weekend")
SUPPLIERS = {"Acme Fasteners": ["ships on Mondays"], "Northway Tools": ["minimum order 50 units", "net 30"]}


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_notes: int = Field(ge=TASK.scale.lo, le=TASK.scale.hi)
    num_remarks: int | None = Field(default=None, ge=0)

    def resolved(self) -> dict[str, int]:
        remarks = 16 * self.num_notes if self.num_remarks is None else self.num_remarks
        return {"num_notes": self.num_notes, "num_remarks": remarks}


def resolve_params(params: dict[str, object]) -> dict[str, int]:
    return Params.model_validate(params).resolved()


def _remark(rng: random.Random) -> str:
    return rng.choice(REMARKS).format(who=rng.choice(SHIFTS), place=rng.choice(PLACES),
                                      n=rng.randint(1, 99), m=rng.randint(1, 99))


def _notes(p: dict[str, int], rngs: WorldRng) -> tuple[list[str], dict[str, int]]:
    """The notes' texts, and the summed count of every item they list."""
    items, remarks = rngs.stream("items"), rngs.stream("remarks")
    totals: dict[str, int] = {}
    lines: list[list[str]] = []
    for i in range(p["num_notes"]):
        note = [f"Stock note {i + 1:04d} ({_place(items)})"]
        for item in sorted(items.sample(ITEMS, items.randint(4, 8))):
            count = items.randint(1, 40)
            totals[item] = totals.get(item, 0) + count
            note.append(f"- {item}: {count}")
        lines.append(note)
    for k in range(p["num_remarks"]):
        lines[k % len(lines)].append(f"Remark: {_remark(remarks)}.")
    return ["\n".join(note) + "\n" for note in lines], totals


def _place(rng: random.Random) -> str:
    return f"{rng.choice(PLACES)} {rng.randint(1, 99)}"


def generate(root: Path, params: dict[str, object], seed: int, target_tokens: int | None = None) -> World:
    """Build the world of (params, seed) at `root`."""
    p = resolve_params(params)
    rngs = WorldRng(TASK.name, seed)
    texts, totals = _notes(p, rngs)
    tracked = sorted(rngs.stream("tracked").sample(ITEMS, rngs.stream("tracked_count").randint(6, 10)))
    meta = WorldMeta(task=TASK.name, seed=seed, params=p, now=NOW, tz="UTC", target_tokens=target_tokens,
                     generator_version=VERSION)
    world, db = create_world(root, meta, TASK.servers.values())
    with db.write() as session:
        for item in tracked:
            memory.add_entity(session, item, TRACKED, [f"counted in {NOTES}/"])
        for name, facts in SUPPLIERS.items():
            memory.add_entity(session, name, "supplier", facts)
    db.dispose()
    (world.workspace / NOTES).mkdir()
    for i, text in enumerate(texts):
        (world.workspace / NOTES / f"note_{i + 1:04d}.txt").write_text(text)  # a fresh world folder
    answer = [{"item": item, "total": totals.get(item, 0)} for item in tracked]
    return finish_world(world, TASK, {TOTALS.file: answer})
