"""Digests of a world's state, for `no_side_effects` checks: one digest per table and per
workspace file, ignoring what an agent may change without side effects (read flags, sessions,
the clock, the claim)."""

from __future__ import annotations

import hashlib
import json
import sqlite3

from loca.world import World

# table -> ignored columns (None: the whole table)
IGNORED: dict[str, set[str] | None] = {
    "core_clock": None,
    "core_claim": None,
    "canvas_session": None,
    "email_session": None,
    "email_message": {"read"},
}


def table_digests(world: World) -> dict[str, str]:
    conn = sqlite3.connect(f"file:{world.state_path}?mode=ro", uri=True)
    try:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        out = {}
        for name in names:
            ignored = IGNORED.get(name, set())
            if ignored is None:
                continue
            cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{name}")') if r[1] not in ignored]
            h = hashlib.sha256()
            query = f'SELECT {", ".join(chr(34) + c + chr(34) for c in cols)} FROM "{name}" ORDER BY rowid'
            for row in conn.execute(query):
                h.update(json.dumps([v.hex() if isinstance(v, bytes) else v for v in row]).encode())
            out[name] = h.hexdigest()
        return out
    finally:
        conn.close()


def file_digests(world: World, exclude: list[str]) -> dict[str, str]:
    root = world.workspace
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*"))
            if p.is_file() and p.relative_to(root).as_posix() not in exclude}


def state_digests(world: World, exclude_files: list[str]) -> dict[str, dict[str, str]]:
    return {"tables": table_digests(world), "files": file_digests(world, exclude_files)}
