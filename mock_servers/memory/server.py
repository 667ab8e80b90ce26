"""Knowledge-graph memory tools (official memory server names). Outputs are compact JSON; a
`Graph` is `{entities:[{name,entityType,observations}],relations:[{from,to,relationType}]}`."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from mock_servers.core.output import dump_json, items_that_fit
from mock_servers.core.toolkit import Call, Toolbox
from mock_servers.memory import domain
from mock_servers.memory.domain import Triple

toolbox = Toolbox("memory", table_prefix="kg_", list_keys=("entities", "relations", "created", "results"),
                  instructions="A knowledge graph of what is known about the user: entities "
                  "with observations, and relations between entities.")
build = toolbox.build

MAX_BATCH = 500
MAX_OBSERVATIONS = 1000
_CAP_HINT = "use search_nodes or open_nodes for the rest"

Name = Annotated[str, Field(min_length=1, max_length=256)]
Observation = Annotated[str, Field(min_length=1, max_length=4096)]


class EntityIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Name = Field(description="Unique entity name (case-sensitive)")
    entityType: str = Field(min_length=1, max_length=256,
                            description="Entity type, e.g. person, course, organization")
    observations: list[Observation] = Field(max_length=MAX_OBSERVATIONS,
                                            description="Facts about the entity")


class RelationIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source: Name = Field(alias="from", description="Name of the entity the relation starts at")
    to: Name = Field(description="Name of the entity the relation points to")
    relationType: str = Field(min_length=1, max_length=256,
                              description="Relation in active voice, e.g. works_at")

    def triple(self) -> Triple:
        return Triple(self.source, self.to, self.relationType)


class ObservationsIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entityName: Name = Field(description="Name of an existing entity")
    contents: list[Observation] = Field(min_length=1, max_length=MAX_OBSERVATIONS,
                                        description="Observations to add")


class DeletionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entityName: Name = Field(description="Name of an existing entity")
    observations: list[Observation] = Field(min_length=1, max_length=MAX_OBSERVATIONS,
                                            description="Observations to delete (exact text)")


Relations = Annotated[list[RelationIn], Field(min_length=1, max_length=MAX_BATCH,
                                              description=f"Relations (1 to {MAX_BATCH})")]


def _capped(call: Call, whole: dict[str, Any]) -> dict[str, Any]:
    """`whole` (a `Graph`, maybe with extra keys) within the output cap: the longest prefix of
    its entities that fits, with the relations among them and a notice; a single entity too
    large to show is cut after as many observations as fit."""
    limit = call.max_output_chars
    if len(dump_json(whole)) <= limit:
        return whole
    entities, budget = whole["entities"], limit - 200  # room for the notice

    def first(k: int) -> dict[str, Any]:
        names = {e["name"] for e in entities[:k]}
        return {**whole, "entities": entities[:k], "relations": [
            r for r in whole["relations"] if r["from"] in names and r["to"] in names]}

    shown = items_that_fit(len(entities), first, budget)
    if shown:
        return {**first(shown), "notice": f"output cap reached after {shown} of "
                f"{len(entities)} entities (relations among them only); {_CAP_HINT}"}
    head, notes = entities[0], entities[0]["observations"]

    def cut(k: int) -> dict[str, Any]:
        return {**whole, "entities": [{**head, "observations": notes[:k]}], "relations": []}

    kept = items_that_fit(len(notes), cut, budget)
    return {**cut(kept), "notice": f"output cap reached after {kept} of {len(notes)} "
            f"observations of '{head['name']}' (1 of {len(entities)} entities); {_CAP_HINT}"}


# --- writing ----------------------------------------------------------------------------------

@toolbox.tool(rw="write")
def create_entities(call: Call, entities: Annotated[list[EntityIn], Field(
        min_length=1, max_length=MAX_BATCH, description=f"Entities to create (1 to {MAX_BATCH})")],
                    ) -> dict[str, Any]:
    """Create entities with their observations. Names that already exist (or repeat within
    the request) are skipped and listed: {created:[{name,entityType,observations}],
    skipped_existing:[names]}."""
    existing = set(domain.entity_ids(call.session, [e.name for e in entities]))
    created, skipped = [], []
    for entity in entities:
        if entity.name in existing:
            skipped.append(entity.name)
            continue
        created.append(domain.add_entity(call.session, entity.name, entity.entityType,
                                         entity.observations))
        existing.add(entity.name)
    return {"created": created, "skipped_existing": skipped}


@toolbox.tool(rw="write")
def create_relations(call: Call, relations: Relations) -> dict[str, Any]:
    """Create relations between existing entities: {created:[{from,to,relationType}],
    skipped_duplicates:n}. Relations that already exist are skipped; an unknown entity name is
    NOT_FOUND and nothing is created."""
    created, skipped = domain.add_relations(call.session, [r.triple() for r in relations])
    return {"created": [{"from": t.source, "to": t.target, "relationType": t.relation_type}
                        for t in created], "skipped_duplicates": skipped}


@toolbox.tool(rw="write")
def add_observations(call: Call, observations: Annotated[list[ObservationsIn], Field(
        min_length=1, max_length=MAX_BATCH, description="Observations to add, per entity")],
                     ) -> dict[str, Any]:
    """Add observations to existing entities; ones an entity already holds are not repeated:
    {results:[{entityName,addedObservations}]}. An unknown entity is NOT_FOUND and nothing is
    added."""
    ids = domain.require_entities(call.session, [item.entityName for item in observations])
    results = [{"entityName": item.entityName, "addedObservations": domain.add_observations(
        call.session, ids[item.entityName], item.contents)} for item in observations]
    return {"results": results}


@toolbox.tool(rw="write", destructive=True)
def delete_entities(call: Call, entityNames: Annotated[list[Name], Field(
        min_length=1, max_length=MAX_BATCH, description=f"Entity names (1 to {MAX_BATCH})")],
                    ) -> dict[str, Any]:
    """Delete entities with their observations and every relation to or from them:
    {deleted:[names],not_found:[names]}."""
    deleted, missing = domain.delete_entities(call.session, entityNames)
    return {"deleted": deleted, "not_found": missing}


@toolbox.tool(rw="write", destructive=True)
def delete_observations(call: Call, deletions: Annotated[list[DeletionIn], Field(
        min_length=1, max_length=MAX_BATCH, description="Observations to delete, per entity")],
                        ) -> dict[str, Any]:
    """Delete observations (exact text) from entities: {deleted:n}. Texts an entity does not
    hold are not counted; an unknown entity is NOT_FOUND and nothing is deleted."""
    ids = domain.require_entities(call.session, [d.entityName for d in deletions])
    deleted = sum(domain.delete_observations(call.session, ids[d.entityName], d.observations)
                  for d in deletions)
    return {"deleted": deleted}


@toolbox.tool(rw="write", destructive=True)
def delete_relations(call: Call, relations: Relations) -> dict[str, Any]:
    """Delete relations: {deleted:n,not_found:n}."""
    deleted, missing = domain.delete_relations(call.session, [r.triple() for r in relations])
    return {"deleted": deleted, "not_found": missing}


# --- reading ----------------------------------------------------------------------------------

@toolbox.tool(rw="read", core=True)
def read_graph(call: Call) -> dict[str, Any]:
    """The whole knowledge graph: {entities:[{name,entityType,observations}],
    relations:[{from,to,relationType}]}, entities by name. Beyond the output cap it lists the
    first entities that fit (with a notice); use search_nodes or open_nodes for the rest."""
    return _capped(call, domain.graph(call.session))


@toolbox.tool(rw="read", core=True)
def search_nodes(call: Call, query: Annotated[str, Field(
        min_length=1, max_length=1024,
        description="Text to find in entity names, types and observations (case-insensitive)")],
                 ) -> dict[str, Any]:
    """The entities whose name, type or any observation contains the query (case-insensitive),
    with the relations among them, as a Graph {entities,relations}."""
    return _capped(call, domain.search(call.session, query))


@toolbox.tool(rw="read", core=True)
def open_nodes(call: Call, names: Annotated[list[Name], Field(
        min_length=1, max_length=MAX_BATCH, description=f"Entity names (1 to {MAX_BATCH})")],
               ) -> dict[str, Any]:
    """The named entities with the relations among them, as a Graph plus the names that do not
    exist: {entities,relations,not_found}."""
    found = domain.entity_ids(call.session, names)
    whole = domain.graph(call.session, list(found))
    return _capped(call, {**whole, "not_found": [n for n in dict.fromkeys(names) if n not in found]})
