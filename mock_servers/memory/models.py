"""Knowledge-graph tables: named entities with ordered observations, and typed relations
between entities (each (from, to, type) triple at most once)."""

from __future__ import annotations

from sqlalchemy import UniqueConstraint
from sqlmodel import Field, SQLModel


class KgEntity(SQLModel, table=True):
    __tablename__ = "kg_entity"
    __table_args__ = ({"sqlite_autoincrement": True},)
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True)
    entity_type: str


class KgObservation(SQLModel, table=True):
    __tablename__ = "kg_observation"
    __table_args__ = (UniqueConstraint("entity_id", "position"),)
    id: int | None = Field(default=None, primary_key=True)
    entity_id: int = Field(foreign_key="kg_entity.id")
    position: int  # order within the entity; gaps are allowed after deletions
    text: str


class KgRelation(SQLModel, table=True):
    __tablename__ = "kg_relation"
    __table_args__ = (UniqueConstraint("from_id", "to_id", "relation_type"),)
    id: int | None = Field(default=None, primary_key=True)
    from_id: int = Field(foreign_key="kg_entity.id")
    to_id: int = Field(foreign_key="kg_entity.id", index=True)
    relation_type: str
