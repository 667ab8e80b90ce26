"""What generators build a warehouse with: `build(session, spec, created)` creates databases,
schemas and tables (columns, comments, rows) through the same catalog the tools use, rows in
one executemany per table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.snowflake import catalog
from mock_servers.snowflake.catalog import SnowflakeCatalog
from mock_servers.sqlfront import ColumnSpec, moments
from mock_servers.sqlfront import types as sqltypes
from mock_servers.sqlfront.ddl import create_physical
from mock_servers.sqlfront.dialect import SNOWFLAKE, Dialect
from mock_servers.sqlfront.store import conform


@dataclass
class ColumnDef:
    name: str
    type: str  # Snowflake type text: NUMBER(10,2), VARCHAR, DATE, BOOLEAN ...
    nullable: bool = True
    comment: str | None = None


@dataclass
class TableDef:
    name: str
    columns: list[ColumnDef]
    rows: Sequence[Sequence[Any]] = ()
    comment: str | None = None


@dataclass
class SchemaDef:
    name: str
    tables: list[TableDef] = field(default_factory=list)
    comment: str | None = None


@dataclass
class DatabaseDef:
    name: str
    schemas: list[SchemaDef] = field(default_factory=list)
    comment: str | None = None


_NATIVE = frozenset({str, int, float, type(None)})  # kept as they are (bool, a subclass of int, is not)


def stored(value: Any) -> Any:
    """A Python value as the physical table keeps it."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, datetime):
        return moments.text(value)
    if isinstance(value, date):
        return value.isoformat()
    return value


def build(session: Session, spec: Sequence[DatabaseDef], created: datetime) -> None:
    """Create every database, schema and table of `spec` with its rows (a schema PUBLIC comes
    with each database, as in Snowflake)."""
    cursor = sql.cursor(session)
    for database in spec:
        db_id = catalog.create_database(session, database.name, created, database.comment)
        for schema in database.schemas:
            if schema.name != "PUBLIC":
                catalog.create_schema(session, db_id, schema.name, created, schema.comment)
            cat = SnowflakeCatalog(session, (database.name, schema.name), lambda: created)
            for table in schema.tables:
                columns = [ColumnSpec(c.name, sqltypes.from_text(c.type), c.nullable, None, c.comment)
                           for c in table.columns]
                ref = cat.create_table((database.name, schema.name, table.name), columns, table.comment)
                create_physical(cursor, ref, columns)
                if table.rows:
                    marks = sql.marks(len(columns))
                    cursor.executemany(f'INSERT INTO "{ref.physical}" VALUES ({marks})',
                                       ([v if type(v) in _NATIVE else stored(v) for v in row] for row in table.rows))
                    conform(cursor, ref, Dialect(SNOWFLAKE))
