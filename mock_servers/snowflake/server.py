"""Snowflake tools (the reference's 8): list databases, schemas and tables, describe a table,
read and write SQL, create a table, and the insights memo (also the resource
`memo://insights`). SQL is Snowflake's dialect, one statement per call, run through
`mock_servers.sqlfront` on the world's SQLite state."""

from __future__ import annotations

from datetime import UTC
from typing import Annotated, Any

import sqlglot
from pydantic import Field
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

from mock_servers.core import sql
from mock_servers.core.errors import invalid
from mock_servers.core.output import dump_json, items_that_fit
from mock_servers.core.times import instant
from mock_servers.core.toolkit import Call, Toolbox
from mock_servers.snowflake import catalog, statements, supported
from mock_servers.snowflake.catalog import SnowflakeCatalog
from mock_servers.sqlfront import Engine, Statement, moments, parse, types

DIALECT = "snowflake"
MAX_ROWS = 10_000
MAX_QUERY = 100_000  # characters of one SQL statement
_CAP_NOTICE = "output cap reached after {} rows; select fewer columns or page with LIMIT/OFFSET"
WRITES = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE", "CREATE", "ALTER", "DROP", "TRUNCATE", "COMMENT", "USE"})

toolbox = Toolbox("snowflake", table_prefix="sf_", list_keys=("data",),
                  snapshot_ignore={"sf_session": None},
                  instructions="A Snowflake warehouse: databases, schemas and tables queried with "
                  "Snowflake SQL. Unquoted names are upper-case; quoted names keep their case.")
build = toolbox.build

Query = Annotated[str, Field(min_length=1, max_length=MAX_QUERY, description="One SQL statement")]
ReadQuery = Annotated[str, Field(min_length=1, max_length=MAX_QUERY,
                                 description=f"One SQL statement. {supported.DESCRIPTION}")]
Name = Annotated[str, Field(min_length=1, max_length=255,
                            description="Name; unquoted is upper-cased, \"quoted\" keeps its case")]


def _catalog(call: Call) -> SnowflakeCatalog:
    return SnowflakeCatalog(call.session, catalog.defaults(call.session, call.world.meta.accounts), lambda: call.now)


def _engine(call: Call, cat: SnowflakeCatalog) -> Engine:
    """The SQL engine of a call; the session's time zone is the world's."""
    zone = call.world.clock.tz
    return Engine(sql.cursor(call.session), cat, cat.now, DIALECT, types.Display(moments.zone(zone) or UTC),
                  zone)


def _container(call: Call, name: str, table: str) -> str:
    """A database or schema name as given: exact, or quoted, or in upper case."""
    text = name.strip()
    if len(text) > 1 and text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    exact = sql.scalar(call.session, f"SELECT 1 FROM {table} WHERE name = ?", (text,))
    return text if exact else text.upper()


def _table_name(name: str) -> exp.Table:
    try:
        table = sqlglot.parse_one(name, into=exp.Table, read=DIALECT)
    except SqlglotError:
        raise invalid(f"'{name}' is not a table name (use table, schema.table or db.schema.table)") from None
    return normalize_identifiers(table, dialect=DIALECT)


@toolbox.tool(rw="read", core=True)
def list_databases(call: Call) -> dict[str, Any]:
    """List the databases, by name. Returns {data:[{DATABASE_NAME}]}."""
    found = sql.run(call.session, "SELECT name FROM sf_database ORDER BY name").fetchall()
    return {"data": [{"DATABASE_NAME": r[0]} for r in found]}


@toolbox.tool(rw="read", core=True)
def list_schemas(call: Call, database: Annotated[Name, Field(description="Database name")]) -> dict[str, Any]:
    """List the schemas of a database, by name. Returns {database,data:[{SCHEMA_NAME}]}; an unknown
    database is NOT_FOUND."""
    name = _container(call, database, "sf_database")
    db_id = catalog.database_id(call.session, name)
    found = sql.run(call.session, "SELECT name FROM sf_schema WHERE database_id = ? ORDER BY name", (db_id,))
    return {"database": name, "data": [{"SCHEMA_NAME": r[0]} for r in found.fetchall()]}


@toolbox.tool(rw="read", core=True)
def list_tables(call: Call, database: Annotated[Name, Field(description="Database name")],
                schema: Annotated[Name, Field(description="Schema name")]) -> dict[str, Any]:
    """List the tables of a schema, by name, with their comments and row counts. Returns
    {database,schema,data:[{TABLE_CATALOG,TABLE_SCHEMA,TABLE_NAME,COMMENT,ROW_COUNT}]}."""
    db_name = _container(call, database, "sf_database")
    schema_name = _container(call, schema, "sf_schema")
    SnowflakeCatalog(call.session, (db_name, schema_name), lambda: call.now).schema_id(db_name, schema_name)
    found = catalog.tables_in(call.session, "d.name = ? AND s.name = ?", (db_name, schema_name))
    data = [{"TABLE_CATALOG": d, "TABLE_SCHEMA": s, "TABLE_NAME": t, "COMMENT": c,
             "ROW_COUNT": sql.scalar(call.session, f'SELECT COUNT(*) FROM "{p}"')} for d, s, t, c, p in found]
    return {"database": db_name, "schema": schema_name, "data": data}


@toolbox.tool(rw="read", core=True)
def describe_table(call: Call, table_name: Annotated[str, Field(
        min_length=1, max_length=800, description="Table name: table, schema.table or database.schema.table; "
        "1- and 2-part names use the current database and schema")]) -> dict[str, Any]:
    """Describe a table's columns in their defined order. Returns {table,data:[{COLUMN_NAME,
    COLUMN_DEFAULT,IS_NULLABLE,DATA_TYPE,COMMENT}]} (table: the full name)."""
    columns = statements.describe(call.session, _catalog(call), _table_name(table_name))
    table = columns[0].pop("table") if columns else table_name
    for column in columns[1:]:
        column.pop("table")
    return {"table": table, "data": columns}


def _rows(data: list[dict[str, Any]], truncated: bool, cap: int) -> dict[str, Any] | str:
    """The result envelope (its JSON text when it fits the output cap, which the toolkit sends
    as it is); rows past the cap are left out as if a limit had cut them."""
    text = dump_json({"data": data, "row_count": len(data), "truncated": truncated})
    if len(text) <= cap:
        return text
    fit = items_that_fit(len(data), lambda k: {"data": data[:k], "row_count": k, "truncated": True,
                                               "notice": _CAP_NOTICE.format(k)}, cap)
    return {"data": data[:fit], "row_count": fit, "truncated": True, "notice": _CAP_NOTICE.format(fit)}


@toolbox.tool(rw="read", core=True, narrow_hint="add a LIMIT or a WHERE clause, or select fewer columns")
def read_query(call: Call, query: ReadQuery) -> dict[str, Any] | str:
    """Run one read-only statement: SELECT (with WITH, UNION, joins, window functions,
    subqueries), SHOW DATABASES|SCHEMAS|TABLES|COLUMNS or DESCRIBE TABLE. Returns
    {data:[{COLUMN:value}],row_count,truncated}; at most 10000 rows, and no more than fit the
    output cap (truncated:true when there were more: page with LIMIT/OFFSET). NUMBER(p,0)
    values are integers, NUMBER(p,s) exact decimals, BOOLEAN true/false, DATE YYYY-MM-DD,
    TIMESTAMP_NTZ YYYY-MM-DD HH:MM:SS.fff, TIMESTAMP_TZ / _LTZ YYYY-MM-DD HH:MM:SS.fff +HHMM.
    Writes are INVALID_ARGUMENT (use write_query). The functions and casts it runs are listed
    with `query`; any other is UNIMPLEMENTED."""
    statement = parse(query, DIALECT)
    cat = _catalog(call)
    if statement.kind == "SHOW":
        data = statements.show(call.session, statement.tree, cat)  # type: ignore[arg-type]
        return _rows(data[:MAX_ROWS], len(data) > MAX_ROWS, call.max_output_chars)
    if statement.kind == "DESCRIBE":
        columns = statements.describe(call.session, cat, statement.tree.this)
        return _rows([{"name": c["COLUMN_NAME"], "type": c["DATA_TYPE"], "kind": "COLUMN",
                       "null?": "Y" if c["IS_NULLABLE"] == "YES" else "N", "default": c["COLUMN_DEFAULT"],
                       "comment": c["COMMENT"]} for c in columns], False, call.max_output_chars)
    if statement.kind != "SELECT":
        raise invalid(f"{statement.kind} changes data: use write_query")
    rows = _engine(call, cat).read(statement, MAX_ROWS)
    return _rows([dict(zip(rows.columns, row)) for row in rows.rows], rows.truncated, call.max_output_chars)


def _write(call: Call, statement: Statement) -> dict[str, Any]:
    cat = _catalog(call)
    tree = statement.tree
    if statement.kind == "USE":
        return {"statement_type": statements.use(call.session, tree, cat), "rows_affected": 0}  # type: ignore[arg-type]
    done = statements.containers(call.session, tree, cat)
    if done is not None:
        return {"statement_type": done, "rows_affected": 0}
    outcome = _engine(call, cat).write(statement)
    what = str(tree.args.get("kind") or "").upper() if statement.kind in ("CREATE", "DROP", "ALTER", "COMMENT") \
        else ""
    return {"statement_type": f"{statement.kind} {what}".strip(), "rows_affected": outcome.rows}


@toolbox.tool(rw="write", core=True, destructive=True, idempotent=False)
def write_query(call: Call, query: Query) -> dict[str, Any]:
    """Run one statement that changes data or the catalog: INSERT, UPDATE, DELETE, MERGE,
    CREATE/DROP TABLE|SCHEMA|DATABASE, ALTER TABLE (ADD COLUMN, ALTER COLUMN c COMMENT '...',
    RENAME TO), TRUNCATE TABLE, COMMENT ON TABLE|COLUMN, USE DATABASE|SCHEMA. Returns
    {statement_type,rows_affected}. Reads are INVALID_ARGUMENT (use read_query); ATTACH, PRAGMA
    and anything else are refused; the whole statement rolls back on any error. Functions and
    casts as read_query's `query` lists them; a value a column's type cannot hold is refused."""
    statement = parse(query, DIALECT)
    if statement.kind not in WRITES:
        raise invalid(f"{statement.kind} does not change data: use read_query")
    return _write(call, statement)


@toolbox.tool(rw="write", destructive=True, idempotent=False)
def create_table(call: Call, query: Annotated[str, Field(
        min_length=1, max_length=MAX_QUERY,
        description="CREATE [OR REPLACE] TABLE [IF NOT EXISTS] name (col type [NOT NULL] [DEFAULT v] "
        "[COMMENT '...'], ...) [COMMENT = '...'], or CREATE TABLE name AS SELECT ...")]) -> dict[str, Any]:
    """Create a table. Returns {table,created}: created is false when IF NOT EXISTS found the
    table already there; an existing table without OR REPLACE or IF NOT EXISTS is ALREADY_EXISTS."""
    statement = parse(query, DIALECT)
    tree = statement.tree
    if statement.kind != "CREATE" or str(tree.args.get("kind") or "").upper() != "TABLE":
        raise invalid("create_table takes one CREATE TABLE statement")
    outcome = _engine(call, _catalog(call)).write(statement)
    return {"table": outcome.table, "created": bool(outcome.created)}


@toolbox.tool(rw="write", idempotent=False)
def append_insight(call: Call, insight: Annotated[str, Field(
        min_length=1, max_length=10_000, description="A finding to keep in the insights memo")]) -> dict[str, Any]:
    """Add a data insight to the memo (readable as the resource memo://insights). Returns
    {insight_count}."""
    sql.run(call.session, "INSERT INTO sf_insight (text, created) VALUES (?, ?)", (insight, instant(call.now)))
    return {"insight_count": sql.scalar(call.session, "SELECT COUNT(*) FROM sf_insight")}


@toolbox.resource("memo://insights", "The data insights appended so far, oldest first")
def insights(call: Call) -> dict[str, Any]:
    found = sql.run(call.session, "SELECT text FROM sf_insight ORDER BY id").fetchall()
    return {"insights": [r[0] for r in found], "insight_count": len(found)}


