"""Snowflake catalog tables: databases, schemas, tables (each with its own physical SQLite
table `sf_data_<id>`, never shown), columns in ordinal order, the session's current database
and schema, and the insights memo."""

from __future__ import annotations

from sqlalchemy import UniqueConstraint
from sqlmodel import Field, SQLModel


class SfDatabase(SQLModel, table=True):
    __tablename__ = "sf_database"
    __table_args__ = ({"sqlite_autoincrement": True},)
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True)
    comment: str | None = None
    created: str


class SfSchema(SQLModel, table=True):
    __tablename__ = "sf_schema"
    __table_args__ = (UniqueConstraint("database_id", "name"), {"sqlite_autoincrement": True})
    id: int | None = Field(default=None, primary_key=True)
    database_id: int = Field(foreign_key="sf_database.id")
    name: str
    comment: str | None = None
    created: str


class SfTable(SQLModel, table=True):
    __tablename__ = "sf_table"
    __table_args__ = (UniqueConstraint("schema_id", "name"), {"sqlite_autoincrement": True})
    id: int | None = Field(default=None, primary_key=True)
    schema_id: int = Field(foreign_key="sf_schema.id")
    name: str
    physical: str = Field(unique=True)
    comment: str | None = None
    created: str


class SfColumn(SQLModel, table=True):
    __tablename__ = "sf_column"
    __table_args__ = (UniqueConstraint("table_id", "name"), UniqueConstraint("table_id", "ordinal"))
    id: int | None = Field(default=None, primary_key=True)
    table_id: int = Field(foreign_key="sf_table.id")
    ordinal: int
    name: str
    data_type: str  # Snowflake spelling: NUMBER(10,2), VARCHAR(16777216), TIMESTAMP_NTZ(9)
    nullable: bool = True
    default: str | None = None
    comment: str | None = None


class SfSession(SQLModel, table=True):
    """The current database and schema (one row; absent: the world's defaults)."""

    __tablename__ = "sf_session"
    id: int = Field(default=1, primary_key=True)
    database: str | None = None
    schema_name: str | None = None


class SfInsight(SQLModel, table=True):
    __tablename__ = "sf_insight"
    id: int | None = Field(default=None, primary_key=True)
    text: str
    created: str
