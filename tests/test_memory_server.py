"""The knowledge-graph memory server over a world seeded through its domain layer."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from mock_servers.memory import domain, toolbox
from mock_servers.memory.domain import Triple
from tests.harness import ServerHarness

PROFILE = {
    "entities": [
        {"name": "Ann Lee", "entityType": "person",
         "observations": ["Studies at Northfield University", "Lives in Straße 5, Berlin"]},
        {"name": "Northfield University", "entityType": "organization",
         "observations": ["Founded 1890"]},
        {"name": "CS101", "entityType": "course", "observations": ["Taught by Dr. Moss"]},
    ],
    "relations": [
        {"from": "Ann Lee", "to": "Northfield University", "relationType": "studies_at"},
        {"from": "Ann Lee", "to": "CS101", "relationType": "enrolled_in"},
        {"from": "CS101", "to": "Northfield University", "relationType": "offered_by"},
    ],
}


class Memory(ServerHarness):
    def ok(self, tool: str, **args: Any) -> Any:
        return json.loads(self.ok_text(tool, **args))

    def rows(self, table: str) -> list[tuple[Any, ...]]:
        conn = sqlite3.connect(self.world.state_path)
        try:
            return conn.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
        finally:
            conn.close()


def build_memory(make_world: Any, config: dict[str, Any] | None = None) -> Memory:
    world, db = make_world(["memory"])
    with db.write() as s:
        domain.load_graph(s, PROFILE)
    return Memory(toolbox, world, config)


@pytest.fixture
def mem(make_world: Any) -> Memory:
    return build_memory(make_world)


def _names(graph: dict[str, Any]) -> list[str]:
    return [e["name"] for e in graph["entities"]]


# --- reading ----------------------------------------------------------------------------------

def test_read_graph_orders_entities_observations_and_relations(mem: Memory) -> None:
    graph = mem.ok("read_graph")
    assert list(graph) == ["entities", "relations"]
    assert _names(graph) == ["Ann Lee", "CS101", "Northfield University"]
    assert graph["entities"][0] == {"name": "Ann Lee", "entityType": "person", "observations": [
        "Studies at Northfield University", "Lives in Straße 5, Berlin"]}
    assert graph["relations"] == [
        {"from": "Ann Lee", "to": "CS101", "relationType": "enrolled_in"},
        {"from": "Ann Lee", "to": "Northfield University", "relationType": "studies_at"},
        {"from": "CS101", "to": "Northfield University", "relationType": "offered_by"}]
    assert mem.ok_text("read_graph") == json.dumps(graph, ensure_ascii=False, separators=(",", ":"))


def test_search_nodes_is_case_insensitive_over_names_types_and_observations(mem: Memory) -> None:
    assert _names(mem.ok("search_nodes", query="cs1")) == ["CS101"]
    assert _names(mem.ok("search_nodes", query="ORGANIZATION")) == ["Northfield University"]
    assert _names(mem.ok("search_nodes", query="strasse")) == ["Ann Lee"]  # Unicode folding
    found = mem.ok("search_nodes", query="northfield")
    assert _names(found) == ["Ann Lee", "Northfield University"]
    assert found["relations"] == [{"from": "Ann Lee", "to": "Northfield University",
                                   "relationType": "studies_at"}]  # only among the matches
    assert mem.ok("search_nodes", query="100%_") == {"entities": [], "relations": []}
    mem.fails("search_nodes", "INVALID_ARGUMENT", query="   ")
    mem.fails("search_nodes", "INVALID_ARGUMENT", query="")


def test_open_nodes_reports_names_it_does_not_know(mem: Memory) -> None:
    found = mem.ok("open_nodes", names=["CS101", "Nobody", "Ann Lee", "CS101"])
    assert list(found) == ["entities", "relations", "not_found"]
    assert _names(found) == ["Ann Lee", "CS101"]
    assert found["relations"] == [{"from": "Ann Lee", "to": "CS101", "relationType": "enrolled_in"}]
    assert found["not_found"] == ["Nobody"]
    assert mem.ok("open_nodes", names=["cs101"]) == {"entities": [], "relations": [],
                                                     "not_found": ["cs101"]}
    mem.fails("open_nodes", "INVALID_ARGUMENT", names=[])


# --- writing ----------------------------------------------------------------------------------

def test_create_entities_skips_existing_names(mem: Memory) -> None:
    out = mem.ok("create_entities", entities=[
        {"name": "Bob", "entityType": "person", "observations": ["likes tea", "likes tea", "b"]},
        {"name": "CS101", "entityType": "course", "observations": ["new"]},
        {"name": "Bob", "entityType": "robot", "observations": []}])
    assert out == {"created": [{"name": "Bob", "entityType": "person",
                                "observations": ["likes tea", "b"]}],
                   "skipped_existing": ["CS101", "Bob"]}
    assert mem.ok("open_nodes", names=["CS101"])["entities"][0]["observations"] == [
        "Taught by Dr. Moss"]
    mem.fails("create_entities", "INVALID_ARGUMENT", entities=[])
    mem.fails("create_entities", "INVALID_ARGUMENT",
              entities=[{"name": "X", "entityType": "t"}])  # observations are required
    mem.fails("create_entities", "INVALID_ARGUMENT",
              entities=[{"name": "   ", "entityType": "t", "observations": []}])
    mem.fails("create_entities", "INVALID_ARGUMENT",
              entities=[{"name": "X" * 257, "entityType": "t", "observations": []}])
    mem.fails("create_entities", "INVALID_ARGUMENT",
              entities=[{"name": "X", "entityType": "t", "observations": [], "id": 4}])


def test_create_relations_counts_duplicates_and_needs_known_entities(mem: Memory) -> None:
    out = mem.ok("create_relations", relations=[
        {"from": "CS101", "to": "Ann Lee", "relationType": "has_student"},
        {"from": "CS101", "to": "Ann Lee", "relationType": "has_student"},
        {"from": "Ann Lee", "to": "CS101", "relationType": "enrolled_in"}])
    assert out == {"created": [{"from": "CS101", "to": "Ann Lee", "relationType": "has_student"}],
                   "skipped_duplicates": 2}
    before = mem.rows("kg_relation")
    text = mem.fails("create_relations", "NOT_FOUND", relations=[
        {"from": "Ann Lee", "to": "Northfield University", "relationType": "admires"},
        {"from": "Ghost", "to": "Ann Lee", "relationType": "haunts"}])
    assert "'Ghost'" in text
    assert mem.rows("kg_relation") == before  # all or nothing
    mem.fails("create_relations", "INVALID_ARGUMENT",
              relations=[{"source": "Ann Lee", "to": "CS101", "relationType": "x"}])


def test_add_observations_adds_only_new_ones(mem: Memory) -> None:
    out = mem.ok("add_observations", observations=[
        {"entityName": "CS101", "contents": ["Taught by Dr. Moss", "Room 4", "Room 4"]},
        {"entityName": "Ann Lee", "contents": ["Vegetarian"]}])
    assert out == {"results": [{"entityName": "CS101", "addedObservations": ["Room 4"]},
                               {"entityName": "Ann Lee", "addedObservations": ["Vegetarian"]}]}
    assert mem.ok("open_nodes", names=["Ann Lee"])["entities"][0]["observations"][-1] == "Vegetarian"
    before = mem.rows("kg_observation")
    mem.fails("add_observations", "NOT_FOUND", observations=[
        {"entityName": "CS101", "contents": ["Room 5"]}, {"entityName": "Nope", "contents": ["x"]}])
    assert mem.rows("kg_observation") == before
    mem.fails("add_observations", "INVALID_ARGUMENT",
              observations=[{"entityName": "CS101", "contents": []}])


def test_delete_entities_takes_observations_and_relations_along(mem: Memory) -> None:
    out = mem.ok("delete_entities", entityNames=["CS101", "Nobody", "CS101"])
    assert out == {"deleted": ["CS101"], "not_found": ["Nobody"]}
    graph = mem.ok("read_graph")
    assert _names(graph) == ["Ann Lee", "Northfield University"]
    assert graph["relations"] == [{"from": "Ann Lee", "to": "Northfield University",
                                   "relationType": "studies_at"}]
    assert len(mem.rows("kg_observation")) == 3
    mem.ok("create_entities", entities=[{"name": "CS101", "entityType": "course",
                                         "observations": []}])
    assert mem.ok("open_nodes", names=["CS101"])["relations"] == []  # nothing revived


def test_delete_observations_and_relations(mem: Memory) -> None:
    out = mem.ok("delete_observations", deletions=[
        {"entityName": "Ann Lee", "observations": ["Lives in Straße 5, Berlin", "not held"]},
        {"entityName": "CS101", "observations": ["Taught by Dr. Moss"]}])
    assert out == {"deleted": 2}
    mem.fails("delete_observations", "NOT_FOUND",
              deletions=[{"entityName": "Ghost", "observations": ["x"]}])
    mem.ok("add_observations", observations=[{"entityName": "CS101", "contents": ["Room 4"]}])
    assert mem.ok("open_nodes", names=["CS101"])["entities"][0]["observations"] == ["Room 4"]
    out = mem.ok("delete_relations", relations=[
        {"from": "Ann Lee", "to": "CS101", "relationType": "enrolled_in"},
        {"from": "Ann Lee", "to": "CS101", "relationType": "teaches"},
        {"from": "Ghost", "to": "CS101", "relationType": "enrolled_in"}])
    assert out == {"deleted": 1, "not_found": 2}
    assert len(mem.ok("read_graph")["relations"]) == 2


def test_argument_errors_are_readable(mem: Memory) -> None:
    mem.fails("read_graph", "INVALID_ARGUMENT", limit=5)
    mem.fails("open_nodes", "INVALID_ARGUMENT", names="Ann Lee")
    mem.fails("delete_entities", "INVALID_ARGUMENT")
    text = mem.fails("create_relations", "INVALID_ARGUMENT", relations=[{"from": "a"}])
    assert "relations.0.to" in text


# --- output cap, profiles, determinism, schemas ---------------------------------------------

def test_read_graph_stays_under_the_output_cap(make_world: Any) -> None:
    world, db = make_world(["memory"])
    with db.write() as s:
        for i in range(60):
            domain.add_entity(s, f"person {i:02d}", "person", [f"fact {j} " * 10 for j in range(5)])
        for i in range(59):
            domain.add_relation(s, f"person {i:02d}", f"person {i + 1:02d}", "knows")
    small = Memory(toolbox, world, {"max_output_chars": 3000})
    text = small.ok_text("read_graph")
    graph = json.loads(text)
    assert len(text) <= 3000
    shown = _names(graph)
    assert 0 < len(shown) < 60 and shown == [f"person {i:02d}" for i in range(len(shown))]
    assert graph["notice"].startswith(f"output cap reached after {len(shown)} of 60 entities")
    assert all(r["from"] in shown and r["to"] in shown for r in graph["relations"])
    assert len(graph["relations"]) == len(shown) - 1


def test_one_huge_entity_is_cut_after_whole_observations(make_world: Any) -> None:
    world, db = make_world(["memory"])
    with db.write() as s:
        domain.add_entity(s, "diary", "note", [f"entry {i}: " + "x" * 100 for i in range(100)])
    small = Memory(toolbox, world, {"max_output_chars": 2000})
    text = small.ok_text("open_nodes", names=["diary"])
    graph = json.loads(text)
    assert len(text) <= 2000 and graph["not_found"] == []
    kept = graph["entities"][0]["observations"]
    assert 0 < len(kept) < 100
    assert kept == [f"entry {i}: " + "x" * 100 for i in range(len(kept))]  # whole, in order
    assert "observations of 'diary'" in graph["notice"]


def test_jsonl_profile_round_trip(make_world: Any) -> None:
    world, db = make_world(["memory"])
    with db.write() as s:
        domain.load_graph(s, PROFILE)
        exported = domain.export_jsonl(s)
    lines = [json.loads(line) for line in exported.splitlines()]
    assert [line["type"] for line in lines] == ["entity"] * 3 + ["relation"] * 3
    assert lines[0] == {"type": "entity", "name": "Ann Lee", "entityType": "person",
                        "observations": PROFILE["entities"][0]["observations"]}
    relations_first = "\n".join([*exported.splitlines()[3:], "", *exported.splitlines()[:3]])
    _, db2 = make_world(["memory"])
    with db2.write() as s:
        domain.load_jsonl(s, relations_first)
        assert domain.export_jsonl(s) == exported
        with pytest.raises(ValueError, match="line 1"):
            domain.load_jsonl(s, '{"type":"thing","name":"x"}')


def test_domain_rules_for_generators(make_world: Any) -> None:
    world, db = make_world(["memory"])
    with db.write() as s:
        assert domain.add_entity(s, "A", "t", ["o1"]) == {"name": "A", "entityType": "t",
                                                          "observations": ["o1"]}
        domain.add_entity(s, "B", "t")
        assert domain.add_relation(s, "A", "B", "r") is True
        assert domain.add_relation(s, "A", "B", "r") is False
        created, skipped = domain.add_relations(s, [Triple("B", "A", "r"), Triple("B", "A", "r")])
        assert created == [Triple("B", "A", "r")] and skipped == 1
        for bad in (lambda: domain.add_entity(s, "A", "t"), lambda: domain.add_entity(s, "", "t"),
                    lambda: domain.add_relation(s, "A", "Z", "r")):
            with pytest.raises(Exception) as info:
                bad()
            assert type(info.value).__name__ == "ToolFailure"


def test_same_calls_give_identical_outputs(make_world: Any) -> None:
    script: list[tuple[str, dict[str, Any]]] = [
        ("create_entities", {"entities": [{"name": "Zed", "entityType": "p", "observations": ["z"]}]}),
        ("create_relations", {"relations": [{"from": "Zed", "to": "CS101", "relationType": "r"}]}),
        ("read_graph", {}), ("search_nodes", {"query": "z"}), ("open_nodes", {"names": ["Zed"]})]
    first = build_memory(make_world)
    texts = [first.ok_text(tool, **args) for tool, args in script]
    second = build_memory(make_world)
    assert [second.ok_text(tool, **args) for tool, args in script] == texts


