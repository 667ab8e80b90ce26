"""The knowledge graph shared by the memory tools, world generators and checkers: entities with
ordered observations, relations between them, the `Graph` projection, and JSONL import/export
(the official memory server's line format: `{"type":"entity",...}` / `{"type":"relation",...}`).

Nothing here commits; the caller owns the transaction. Entity names are case-sensitive and
unique; entities are listed by name, observations by position, relations by (from, to, type).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found


class Triple(NamedTuple):
    """A relation by entity names."""

    source: str
    target: str
    relation_type: str


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise invalid(f"{what} must be a non-empty string (received {value!r:.60})")
    return value


# `column {IN_LIST}` with one parameter, a JSON array (`listed`): no limit on its length.
IN_LIST = "IN (SELECT value FROM json_each(?))"


def listed(values: Iterable[Any]) -> str:
    return json.dumps(list(values), ensure_ascii=False)


def entity_ids(session: Session, names: Iterable[str]) -> dict[str, int]:
    """name -> id of the entities among `names` that exist."""
    return dict(sql.run(session, f"SELECT name, id FROM kg_entity WHERE name {IN_LIST}",
                        (listed(names),)).fetchall())


def require_entities(session: Session, names: Iterable[str]) -> dict[str, int]:
    """Like `entity_ids`, but every name must exist (NOT_FOUND lists the missing ones)."""
    wanted = list(dict.fromkeys(names))
    found = entity_ids(session, wanted)
    missing = [n for n in wanted if n not in found]
    if missing:
        raise not_found(f"no entity named {', '.join(map(repr, missing))}",
                        hint="create_entities adds entities; read_graph lists them")
    return found


# --- writing ----------------------------------------------------------------------------------

def add_entity(session: Session, name: str, entity_type: str,
               observations: Sequence[str] = ()) -> dict[str, Any]:
    """Create an entity with its observations (duplicates kept once, in order); returns it as
    a `Graph` entity. An existing name is ALREADY_EXISTS."""
    _text(name, "entity name")
    _text(entity_type, "entityType")
    if entity_ids(session, [name]):
        raise ToolFailure(Code.ALREADY_EXISTS, f"entity '{name}' already exists")
    entity_id = sql.scalar(session, "INSERT INTO kg_entity (name, entity_type) VALUES (?, ?) "
                                    "RETURNING id", (name, entity_type))
    added = add_observations(session, entity_id, observations)
    return {"name": name, "entityType": entity_type, "observations": added}


def add_observations(session: Session, entity_id: int, texts: Sequence[str]) -> list[str]:
    """Append the texts the entity does not hold yet (each once, in order); returns them."""
    held = {t for (t,) in sql.run(session, "SELECT text FROM kg_observation WHERE entity_id = ?",
                                  (entity_id,))}
    fresh = [t for t in dict.fromkeys(_text(t, "observation") for t in texts) if t not in held]
    last = sql.scalar(session, "SELECT max(position) FROM kg_observation WHERE entity_id = ?",
                      (entity_id,))
    start = 0 if last is None else last + 1
    sql.cursor(session).executemany(
        "INSERT INTO kg_observation (entity_id, position, text) VALUES (?, ?, ?)",
        [(entity_id, start + i, t) for i, t in enumerate(fresh)])
    return fresh


def add_relations(session: Session, triples: Sequence[Triple]) -> tuple[list[Triple], int]:
    """Create the relations that do not exist yet: (created, number of duplicates skipped).
    Every named entity must exist (NOT_FOUND otherwise, and nothing is created)."""
    for t in triples:
        _text(t.relation_type, "relationType")
    ids = require_entities(session, [n for t in triples for n in (t.source, t.target)])
    created: list[Triple] = []
    for t in dict.fromkeys(triples):
        inserted = sql.run(session, "INSERT INTO kg_relation (from_id, to_id, relation_type) "
                                    "VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                           (ids[t.source], ids[t.target], t.relation_type)).rowcount
        if inserted:
            created.append(t)
    return created, len(triples) - len(created)


def add_relation(session: Session, source: str, target: str, relation_type: str) -> bool:
    """One relation; False when it already existed."""
    created, _ = add_relations(session, [Triple(source, target, relation_type)])
    return bool(created)


def delete_entities(session: Session, names: Sequence[str]) -> tuple[list[str], list[str]]:
    """Delete entities with their observations and every relation touching them:
    (deleted names, names not found), each in the order given."""
    found = entity_ids(session, names)
    ids = listed(found.values())
    sql.run(session, f"DELETE FROM kg_relation WHERE from_id {IN_LIST} OR to_id {IN_LIST}",
            (ids, ids))
    sql.run(session, f"DELETE FROM kg_observation WHERE entity_id {IN_LIST}", (ids,))
    sql.run(session, f"DELETE FROM kg_entity WHERE id {IN_LIST}", (ids,))
    given = list(dict.fromkeys(names))
    return [n for n in given if n in found], [n for n in given if n not in found]


def delete_observations(session: Session, entity_id: int, texts: Sequence[str]) -> int:
    """Delete those observations of an entity; texts it does not hold are ignored. Returns how
    many were deleted."""
    return sql.run(session, f"DELETE FROM kg_observation WHERE entity_id = ? AND text {IN_LIST}",
                   (entity_id, listed(texts))).rowcount


def delete_relations(session: Session, triples: Sequence[Triple]) -> tuple[int, int]:
    """(deleted, not found); a relation naming an unknown entity counts as not found."""
    ids = entity_ids(session, [n for t in triples for n in (t.source, t.target)])
    deleted = 0
    unique = list(dict.fromkeys(triples))
    for t in unique:
        if t.source in ids and t.target in ids:
            deleted += sql.run(session, "DELETE FROM kg_relation WHERE from_id = ? AND to_id = ? "
                                        "AND relation_type = ?",
                               (ids[t.source], ids[t.target], t.relation_type)).rowcount
    return deleted, len(unique) - deleted


# --- reading ----------------------------------------------------------------------------------

_CASEFOLD = "loca_casefold"


def _casefold(value: str | None) -> str | None:
    return None if value is None else value.casefold()


def graph(session: Session, names: Sequence[str] | None = None) -> dict[str, Any]:
    """The `Graph` of the whole memory, or of the named entities (unknown names are left out)
    with the relations among them."""
    return _graph_of(session, None if names is None else entity_ids(session, names).values())


def search(session: Session, query: str) -> dict[str, Any]:
    """The `Graph` of the entities whose name, type or any observation contains `query`
    (case-insensitive, Unicode case folding), with the relations among them."""
    _text(query, "query")
    sql.cursor(session).connection.create_function(_CASEFOLD, 1, _casefold, deterministic=True)
    folded = query.casefold()
    ids = sql.run(session, f"SELECT id FROM kg_entity WHERE instr({_CASEFOLD}(name), ?) "
                           f"OR instr({_CASEFOLD}(entity_type), ?) UNION "
                           f"SELECT entity_id FROM kg_observation WHERE instr({_CASEFOLD}(text), ?)",
                  (folded, folded, folded)).fetchall()
    return _graph_of(session, [i for (i,) in ids])


def _graph_of(session: Session, ids: Iterable[int] | None) -> dict[str, Any]:
    """The `Graph` of the entities with those ids (all when None) and the relations among
    them."""
    params = () if ids is None else (listed(ids),)

    def among(column: str) -> str:
        return "" if ids is None else f"WHERE {column} {IN_LIST}"

    rows = sql.run(session, f"SELECT id, name, entity_type FROM kg_entity {among('id')} "
                            f"ORDER BY name", params).fetchall()
    names = {entity_id: name for entity_id, name, _ in rows}
    notes: dict[int, list[str]] = defaultdict(list)
    for entity_id, text in sql.run(session, f"SELECT entity_id, text FROM kg_observation "
                                            f"{among('entity_id')} ORDER BY entity_id, position",
                                   params):
        notes[entity_id].append(text)
    relations = sorted((names[a], names[b], kind) for a, b, kind in sql.run(
        session, f"SELECT from_id, to_id, relation_type FROM kg_relation {among('from_id')}",
        params) if b in names)
    return {"entities": [{"name": name, "entityType": kind, "observations": notes[entity_id]}
                         for entity_id, name, kind in rows],
            "relations": [{"from": a, "to": b, "relationType": kind} for a, b, kind in relations]}


# --- profiles ---------------------------------------------------------------------------------

def load_graph(session: Session, profile: dict[str, Any]) -> None:
    """Seed the memory from a JSON profile `{entities:[{name,entityType,observations}],
    relations:[{from,to,relationType}]}` (the `Graph` shape)."""
    for entity in profile.get("entities", []):
        add_entity(session, entity["name"], entity["entityType"], entity.get("observations", []))
    add_relations(session, [Triple(r["from"], r["to"], r["relationType"])
                            for r in profile.get("relations", [])])


_PROFILE_KEYS = {"entity": "entities", "relation": "relations"}


def load_jsonl(session: Session, text: str) -> None:
    """Seed the memory from JSONL: one `{"type":"entity",...}` or `{"type":"relation",...}`
    object per line (blank lines skipped); entities may come after relations naming them."""
    profile: dict[str, list[dict[str, Any]]] = {"entities": [], "relations": []}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        record = json.loads(line)
        kind = record.pop("type", None)
        if kind not in _PROFILE_KEYS:
            raise ValueError(f"line {number}: type must be 'entity' or 'relation', not {kind!r}")
        profile[_PROFILE_KEYS[kind]].append(record)
    load_graph(session, profile)


def export_jsonl(session: Session) -> str:
    """The whole memory as JSONL (entities by name, then relations), one object per line."""
    whole = graph(session)
    lines = [{"type": "entity", **e} for e in whole["entities"]]
    lines += [{"type": "relation", **r} for r in whole["relations"]]
    return "".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"
                   for line in lines)
