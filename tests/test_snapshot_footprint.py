"""What `no_side_effects` lets change, on a toy state: a footprint's rows (added where it says,
changed in the columns it names or in any way), exactly everything else, tables without row
identity compared as multisets; values as stored, a space or a letter's case included."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from loca.core.outputs import Rows
from loca.core.world import World
from mock_servers.core import snapshot

Act = Callable[[sqlite3.Connection], Any]


@pytest.fixture
def world(make_world: Any) -> World:
    made, db = make_world([])
    db.dispose()
    with sqlite3.connect(made.state_path) as conn:
        conn.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, kind TEXT, stock INTEGER, stamp TEXT)")
        conn.executemany("INSERT INTO item (name, kind, stock, stamp) VALUES (?, ?, ?, ?)",
                         [("bolt", "part", 5, "t0"), ("nut", "part", 7, "t0"), ("chair", "product", 2, "t0")])
        conn.execute("CREATE TABLE link (item INTEGER, tag TEXT)")
        conn.executemany("INSERT INTO link VALUES (?, ?)", [(1, "a"), (1, "b"), (2, "a")])
    (made.workspace / "input.txt").write_text("read me\n")
    return made


PRODUCTS = Rows("item", "kind = 'product'", ("stock", "stamp"))  # a product's stock and stamp may change
NEW_PARTS = Rows("item", "kind = 'part'")  # parts may be added, none changed
RULES = snapshot.Rules({}, frozenset({"link"}), (PRODUCTS, NEW_PARTS), ("output.csv",))


def _changes(world: World, act: Act, rules: snapshot.Rules = RULES) -> list[str]:
    before = snapshot.take(world, rules)
    with sqlite3.connect(world.state_path) as conn:
        act(conn)
    return snapshot.changes(world, before, rules)


@pytest.mark.parametrize("act", [
    lambda c: c.execute("UPDATE item SET stock = 0, stamp = 't1' WHERE name = 'chair'"),  # a product's stock
    lambda c: c.execute("INSERT INTO item (name, kind, stock, stamp) VALUES ('screw', 'part', 1, 't1')"),  # a part
    lambda c: (c.execute("DELETE FROM item WHERE name = 'chair'"),  # written again with a new stock
               c.execute("INSERT INTO item (name, kind, stock, stamp) VALUES ('chair', 'product', 9, 't1')")),
    lambda c: (c.execute("DELETE FROM link WHERE item = 1"),  # links written again as they were
               c.executemany("INSERT INTO link VALUES (?, ?)", [(1, "b"), (1, "a")])),
])
def test_what_the_footprint_allows_is_no_change(world: World, act: Act) -> None:
    assert _changes(world, act) == []


@pytest.mark.parametrize(("act", "problem"), [
    (lambda c: c.execute("UPDATE item SET name = 'bolt ' WHERE id = 1"), "existing rows of item changed"),
    (lambda c: c.execute("UPDATE item SET name = 'Nut' WHERE id = 2"), "existing rows of item changed"),
    (lambda c: c.execute("UPDATE item SET stock = 6 WHERE name = 'bolt'"), "existing rows of item changed"),
    (lambda c: c.execute("UPDATE item SET name = 'sofa' WHERE name = 'chair'"), "rows of item changed beyond"),
    (lambda c: c.execute("DELETE FROM item WHERE name = 'chair'"), "rows of item changed beyond"),
    (lambda c: c.execute("UPDATE item SET kind = 'product' WHERE id = 1"), "existing rows of item changed"),
    (lambda c: c.execute("INSERT INTO item (name, kind, stock, stamp) VALUES ('x', 'tool', 1, 't')"),
     "1 rows were added to item outside the task's writable set"),
    (lambda c: c.execute("INSERT INTO link VALUES (3, 'a')"), "rows of link were changed, added or deleted"),
    (lambda c: c.execute("DELETE FROM link WHERE tag = 'b'"), "rows of link were changed, added or deleted"),
    (lambda c: c.execute("CREATE TABLE extra (x)"), "table extra was created"),
    (lambda c: c.execute("ALTER TABLE item ADD COLUMN note TEXT"), "existing rows of item changed"),
    (lambda c: c.execute("DROP TABLE link"), "table link was dropped"),
])
def test_anything_else_is_a_change(world: World, act: Act, problem: str) -> None:
    found = _changes(world, act)
    assert any(p.startswith(problem) for p in found), found


def test_free_rows_may_change_or_go(world: World) -> None:
    rules = snapshot.Rules({}, frozenset(), (Rows("item", "kind = 'product'", None),))
    assert _changes(world, lambda c: c.execute("DELETE FROM item WHERE kind = 'product'"), rules) == []
    moved_in = _changes(world, lambda c: c.execute("UPDATE item SET kind = 'product' WHERE id = 1"), rules)
    assert moved_in == ["existing rows of item changed or were deleted"]


@pytest.mark.parametrize(("act", "problem"), [
    (lambda w: (w.workspace / "input.txt").write_text("read me\nnote\n"), "workspace file input.txt was changed"),
    (lambda w: (w.workspace / "input.txt").rename(w.workspace / "moved.txt"), "workspace file input.txt was removed"),
])
def test_input_files_keep_their_bytes_and_place(world: World, act: Callable[[World], Any], problem: str) -> None:
    before = snapshot.take(world, RULES)
    act(world)
    assert snapshot.changes(world, before, RULES) == [problem]


def test_new_scratch_and_output_files_are_no_change(world: World) -> None:
    before = snapshot.take(world, RULES)
    (world.workspace / "output.csv").write_text("a,b\n")
    (world.workspace / "notes").mkdir()
    (world.workspace / "notes" / "scratch.txt").write_text("x")
    assert snapshot.changes(world, before, RULES) == []
