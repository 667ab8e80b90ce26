"""The Snowflake catalog over `sf_*` tables: name resolution with the session's defaults, the
table metadata the SQL front end keeps in step with DDL, and the listings of the tools."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.errors import invalid, not_found
from mock_servers.core.times import instant
from mock_servers.sqlfront import ColumnInfo, ColumnSpec, TableRef
from mock_servers.sqlfront import types as sqltypes

PHYSICAL = "sf_data_{}"
_TABLE = ("SELECT t.id, t.physical FROM sf_table t JOIN sf_schema s ON s.id = t.schema_id "
          "JOIN sf_database d ON d.id = s.database_id WHERE d.name = ? AND s.name = ? AND t.name = ?")


def missing(parts: tuple[str, ...]) -> str:
    return f"Object '{'.'.join(parts)}' does not exist or not authorized."


class SnowflakeCatalog:
    """The catalog of one call: `defaults` is the current (database, schema); `now` is asked
    only when something is created (a write call's clock ticks when first asked)."""

    def __init__(self, session: Session, defaults: tuple[str | None, str | None],
                 now: Callable[[], datetime]) -> None:
        self.session = session
        self.database, self.schema = defaults
        self.now = now

    # --- names -----------------------------------------------------------------------------
    def qualify(self, parts: tuple[str, ...]) -> tuple[str, ...]:
        if len(parts) == 3:
            return parts
        if len(parts) == 2:
            return (self._current("database"), *parts)
        if len(parts) == 1:
            return (self._current("database"), self._current("schema"), parts[0])
        raise invalid(f"a table name has 1 to 3 parts (received {'.'.join(parts)})")

    def _current(self, what: str) -> str:
        value = self.database if what == "database" else self.schema
        if value is None:
            raise invalid(f"no current {what}: give a fully qualified name or USE {what.upper()} first")
        return value

    def lookup(self, parts: tuple[str, ...]) -> TableRef | None:
        found = sql.run(self.session, _TABLE, parts).fetchone()
        if found is None:
            return None
        columns = sql.run(self.session, "SELECT name, data_type FROM sf_column WHERE table_id = ? "
                          "ORDER BY ordinal", (found[0],)).fetchall()
        return TableRef(parts, found[1], tuple(ColumnInfo(n, sqltypes.from_text(t)) for n, t in columns))

    def missing(self, parts: tuple[str, ...]) -> str:
        return missing(parts)

    def _table_id(self, ref: TableRef) -> int:
        return int(sql.scalar(self.session, "SELECT id FROM sf_table WHERE physical = ?", (ref.physical,)))

    def schema_id(self, database: str, schema: str) -> int:
        found = sql.scalar(self.session, "SELECT s.id FROM sf_schema s JOIN sf_database d ON d.id = s.database_id "
                           "WHERE d.name = ? AND s.name = ?", (database, schema))
        if found is None:
            raise not_found(f"Schema '{database}.{schema}' does not exist or not authorized.")
        return int(found)

    # --- table DDL -------------------------------------------------------------------------
    def create_table(self, parts: tuple[str, ...], columns: list[ColumnSpec], comment: str | None) -> TableRef:
        schema_id = self.schema_id(parts[0], parts[1])
        cur = sql.run(self.session, "INSERT INTO sf_table (schema_id, name, physical, comment, created) "
                      "VALUES (?, ?, '', ?, ?)", (schema_id, parts[2], comment, instant(self.now())))
        table_id = cur.lastrowid
        physical = PHYSICAL.format(table_id)
        sql.run(self.session, "UPDATE sf_table SET physical = ? WHERE id = ?", (physical, table_id))
        sql.cursor(self.session).executemany(
            "INSERT INTO sf_column (table_id, ordinal, name, data_type, nullable, \"default\", comment) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(table_id, i, c.name, c.type.text, c.nullable, c.default, c.comment) for i, c in enumerate(columns, 1)])
        return TableRef(parts, physical, tuple(ColumnInfo(c.name, c.type) for c in columns))

    def drop_table(self, ref: TableRef) -> None:
        table_id = self._table_id(ref)
        sql.run(self.session, "DELETE FROM sf_column WHERE table_id = ?", (table_id,))
        sql.run(self.session, "DELETE FROM sf_table WHERE id = ?", (table_id,))

    def add_column(self, ref: TableRef, column: ColumnSpec) -> None:
        table_id = self._table_id(ref)
        sql.run(self.session, "INSERT INTO sf_column (table_id, ordinal, name, data_type, nullable, \"default\", "
                "comment) SELECT ?, COALESCE(MAX(ordinal), 0) + 1, ?, ?, ?, ?, ? FROM sf_column WHERE table_id = ?",
                (table_id, column.name, column.type.text, column.nullable, column.default, column.comment, table_id))

    def set_comment(self, ref: TableRef, column: str | None, text: str | None) -> None:
        table_id = self._table_id(ref)
        if column is None:
            sql.run(self.session, "UPDATE sf_table SET comment = ? WHERE id = ?", (text, table_id))
        else:
            sql.run(self.session, "UPDATE sf_column SET comment = ? WHERE table_id = ? AND name = ?",
                    (text, table_id, column))

    def rename_table(self, ref: TableRef, parts: tuple[str, ...]) -> None:
        schema_id = self.schema_id(parts[0], parts[1])
        sql.run(self.session, "UPDATE sf_table SET schema_id = ?, name = ? WHERE id = ?",
                (schema_id, parts[2], self._table_id(ref)))


# --- session --------------------------------------------------------------------------------

def defaults(session: Session, accounts: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The current database and schema: the session row, else the world's defaults."""
    found = sql.run(session, "SELECT database, schema_name FROM sf_session WHERE id = 1").fetchone()
    if found is not None:
        return found[0], found[1]
    account = accounts.get("snowflake") or {}
    return account.get("database"), account.get("schema")


def set_defaults(session: Session, database: str | None, schema: str | None) -> None:
    sql.run(session, "INSERT INTO sf_session (id, database, schema_name) VALUES (1, ?, ?) ON CONFLICT(id) "
            "DO UPDATE SET database = excluded.database, schema_name = excluded.schema_name", (database, schema))


# --- containers -----------------------------------------------------------------------------

def database_exists(session: Session, name: str) -> bool:
    return sql.scalar(session, "SELECT 1 FROM sf_database WHERE name = ?", (name,)) is not None


def create_database(session: Session, name: str, created: datetime, comment: str | None = None) -> int:
    cur = sql.run(session, "INSERT INTO sf_database (name, comment, created) VALUES (?, ?, ?)",
                  (name, comment, instant(created)))
    database_id = int(cur.lastrowid or 0)
    create_schema(session, database_id, "PUBLIC", created)
    return database_id


def create_schema(session: Session, database_id: int, name: str, created: datetime,
                  comment: str | None = None) -> int:
    cur = sql.run(session, "INSERT INTO sf_schema (database_id, name, comment, created) VALUES (?, ?, ?, ?)",
                  (database_id, name, comment, instant(created)))
    return int(cur.lastrowid or 0)


def database_id(session: Session, name: str) -> int:
    found = sql.scalar(session, "SELECT id FROM sf_database WHERE name = ?", (name,))
    if found is None:
        raise not_found(f"Database '{name}' does not exist or not authorized.")
    return int(found)


def tables_in(session: Session, where: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """(database, schema, table, comment, physical) of the tables matching `where`, by name."""
    return sql.run(session, "SELECT d.name, s.name, t.name, t.comment, t.physical FROM sf_table t "
                   "JOIN sf_schema s ON s.id = t.schema_id JOIN sf_database d ON d.id = s.database_id "
                   f"WHERE {where} ORDER BY d.name, s.name, t.name", params).fetchall()


def drop_container(session: Session, kind: str, database: str, schema: str | None) -> int:
    """Drop a database or a schema with its tables; how many tables went."""
    if kind == "SCHEMA" and schema is not None:
        found = tables_in(session, "d.name = ? AND s.name = ?", (database, schema))
    else:
        found = tables_in(session, "d.name = ?", (database,))
    for physical in (row[4] for row in found):
        sql.run(session, "DELETE FROM sf_column WHERE table_id = (SELECT id FROM sf_table WHERE physical = ?)",
                (physical,))
        sql.run(session, "DELETE FROM sf_table WHERE physical = ?", (physical,))
        sql.run(session, f'DROP TABLE "{physical}"')
    db_id = database_id(session, database)
    if kind == "SCHEMA" and schema is not None:
        sql.run(session, "DELETE FROM sf_schema WHERE database_id = ? AND name = ?", (db_id, schema))
    else:
        sql.run(session, "DELETE FROM sf_schema WHERE database_id = ?", (db_id,))
        sql.run(session, "DELETE FROM sf_database WHERE id = ?", (db_id,))
    return len(found)
