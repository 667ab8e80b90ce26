"""The statements only Snowflake has, answered from the catalog: SHOW, DESCRIBE, USE and the
container DDL (CREATE / DROP DATABASE and SCHEMA)."""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp
from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.snowflake import catalog
from mock_servers.snowflake.catalog import SnowflakeCatalog
from mock_servers.sqlfront import names


def _like(tree: exp.Expression) -> re.Pattern[str] | None:
    like = tree.args.get("like")
    if like is None:
        return None
    pattern = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in like.name)
    return re.compile(pattern, re.I | re.S)


def _scope(tree: exp.Show) -> tuple[str | None, str | None]:
    scope = tree.args.get("scope")
    if not isinstance(scope, exp.Table):
        return None, None
    parts = names.name_parts(scope)
    if str(tree.args.get("scope_kind") or "").upper() == "DATABASE":
        return parts[-1], None
    return (parts[0], parts[1]) if len(parts) == 2 else (None, parts[-1])


def show(session: Session, tree: exp.Show, cat: SnowflakeCatalog) -> list[dict[str, Any]]:
    """SHOW DATABASES | SCHEMAS | TABLES | COLUMNS [LIKE '...'] [IN ...]."""
    what = str(tree.name).upper()
    like = _like(tree)
    database, schema = _scope(tree)
    if what == "DATABASES":
        rows = [{"created_on": r[2], "name": r[0], "comment": r[1]} for r in sql.run(
            session, "SELECT name, comment, created FROM sf_database ORDER BY name").fetchall()]
    elif what == "SCHEMAS":
        database = database or cat.database
        catalog.database_id(session, database or "")
        rows = [{"created_on": r[2], "name": r[0], "database_name": database, "comment": r[1]}
                for r in sql.run(session, "SELECT s.name, s.comment, s.created FROM sf_schema s JOIN sf_database d "
                                 "ON d.id = s.database_id WHERE d.name = ? ORDER BY s.name", (database,)).fetchall()]
    elif what in ("TABLES", "OBJECTS"):
        rows = _show_tables(session, cat, database, schema, tree)
    elif what == "COLUMNS":
        rows = _show_columns(session, cat, tree)
    else:
        raise ToolFailure(Code.UNIMPLEMENTED, f"SHOW {what} is not supported",
                          hint="supported: SHOW DATABASES, SCHEMAS, TABLES, COLUMNS")
    return [r for r in rows if like is None or like.fullmatch(str(r["name"] if "name" in r else r["column_name"]))]


def _show_tables(session: Session, cat: SnowflakeCatalog, database: str | None, schema: str | None,
                 tree: exp.Show) -> list[dict[str, Any]]:
    if str(tree.args.get("scope_kind") or "").upper() == "DATABASE":
        found = catalog.tables_in(session, "d.name = ?", (database,))
    else:
        database = database or cat._current("database")
        schema = schema or cat._current("schema")
        found = catalog.tables_in(session, "d.name = ? AND s.name = ?", (database, schema))
    return [{"name": t, "database_name": d, "schema_name": s, "kind": "TABLE", "comment": c,
             "rows": sql.scalar(session, f'SELECT COUNT(*) FROM "{p}"')} for d, s, t, c, p in found]


def _show_columns(session: Session, cat: SnowflakeCatalog, tree: exp.Show) -> list[dict[str, Any]]:
    scope = tree.args.get("scope")
    if not isinstance(scope, exp.Table):
        raise invalid("use SHOW COLUMNS IN TABLE <name>")
    return [{"table_name": c["table"], "column_name": c["COLUMN_NAME"], "data_type": c["DATA_TYPE"],
             "null?": c["IS_NULLABLE"] == "YES", "default": c["COLUMN_DEFAULT"], "comment": c["COMMENT"]}
            for c in describe(session, cat, scope)]


def describe(session: Session, cat: SnowflakeCatalog, table: exp.Table) -> list[dict[str, Any]]:
    """The columns of a table in ordinal order, with their comments."""
    ref = names.find(cat, table)
    found = sql.run(session, "SELECT c.name, c.\"default\", c.nullable, c.data_type, c.comment FROM sf_column c "
                    "JOIN sf_table t ON t.id = c.table_id WHERE t.physical = ? ORDER BY c.ordinal",
                    (ref.physical,)).fetchall()
    return [{"table": ref.display, "COLUMN_NAME": n, "COLUMN_DEFAULT": d, "IS_NULLABLE": "YES" if null else "NO",
             "DATA_TYPE": t, "COMMENT": c} for n, d, null, t, c in found]


def use(session: Session, tree: exp.Use, cat: SnowflakeCatalog) -> str:
    """USE [DATABASE | SCHEMA] name; the statement type."""
    kind = tree.args["kind"].name.upper() if tree.args.get("kind") else ""
    parts = names.name_parts(tree.this) if isinstance(tree.this, exp.Table) else ()
    if kind == "DATABASE" or (not kind and len(parts) == 1):
        if len(parts) != 1:
            raise invalid("USE DATABASE takes one name")
        catalog.database_id(session, parts[0])
        has_public = sql.scalar(session, "SELECT 1 FROM sf_schema s JOIN sf_database d ON d.id = s.database_id "
                                "WHERE d.name = ? AND s.name = 'PUBLIC'", (parts[0],))
        catalog.set_defaults(session, parts[0], "PUBLIC" if has_public else None)
        return "USE DATABASE"
    if kind == "SCHEMA" or (not kind and len(parts) == 2):
        if len(parts) not in (1, 2):
            raise invalid("USE SCHEMA takes a schema name or database.schema")
        database = parts[0] if len(parts) == 2 else cat._current("database")
        cat.schema_id(database, parts[-1])
        catalog.set_defaults(session, database, parts[-1])
        return "USE SCHEMA"
    raise ToolFailure(Code.UNIMPLEMENTED, f"USE {kind} is not supported", hint="USE DATABASE d or USE SCHEMA d.s")


def containers(session: Session, tree: exp.Expression, cat: SnowflakeCatalog) -> str | None:
    """CREATE / DROP DATABASE or SCHEMA; the statement type, None when `tree` is neither."""
    kind = str(tree.args.get("kind") or "").upper()
    if not isinstance(tree, exp.Create | exp.Drop) or kind not in ("DATABASE", "SCHEMA"):
        return None
    target = tree.this if isinstance(tree, exp.Create) else (tree.args.get("tables") or [None])[0]
    parts = names.name_parts(target) if isinstance(target, exp.Table) else ()
    if not parts or len(parts) > (1 if kind == "DATABASE" else 2):
        raise invalid(f"a {kind.lower()} name has {'1' if kind == 'DATABASE' else '1 or 2'} part(s)")
    database = parts[0] if kind == "DATABASE" or len(parts) == 2 else cat._current("database")
    schema = parts[-1] if kind == "SCHEMA" else None
    exists = catalog.database_exists(session, database) if schema is None else \
        catalog.database_exists(session, database) and sql.scalar(
            session, "SELECT 1 FROM sf_schema s JOIN sf_database d ON d.id = s.database_id WHERE d.name = ? "
            "AND s.name = ?", (database, schema)) is not None
    verb = "CREATE" if isinstance(tree, exp.Create) else "DROP"
    if verb == "DROP":
        if exists:
            catalog.drop_container(session, kind, database, schema)
        elif not tree.args.get("exists"):
            raise not_found(f"{kind.title()} '{'.'.join(parts)}' does not exist or not authorized.")
        return f"DROP {kind}"
    if exists and not tree.args.get("exists"):
        if not tree.args.get("replace"):
            raise ToolFailure(Code.ALREADY_EXISTS, f"Object '{'.'.join(parts)}' already exists.")
        catalog.drop_container(session, kind, database, schema)
        exists = False
    if not exists:
        if schema is None:
            catalog.create_database(session, database, cat.now())
        else:
            catalog.create_schema(session, catalog.database_id(session, database), schema, cat.now())
    return f"CREATE {kind}"
