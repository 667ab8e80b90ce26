"""Table DDL against a server's catalog: CREATE [OR REPLACE] TABLE [IF NOT EXISTS] (columns or
AS SELECT), DROP TABLE [IF EXISTS], ALTER TABLE (ADD COLUMN, column COMMENT, RENAME TO),
TRUNCATE and COMMENT ON. The catalog's metadata and the physical table change in the same
transaction, so a failure leaves neither changed."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from sqlglot import exp

from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.sqlfront import names, query, store, types
from mock_servers.sqlfront.dialect import Dialect
from mock_servers.sqlfront.names import Catalog, TableRef
from mock_servers.sqlfront.target import Target, ident
from mock_servers.sqlfront.types import LogicalType


@dataclass(frozen=True)
class ColumnSpec:
    name: str
    type: LogicalType
    nullable: bool = True
    default: str | None = None  # SQL text of the default, in the dialect
    comment: str | None = None


class WritableCatalog(Catalog, Protocol):
    def create_table(self, parts: tuple[str, ...], columns: list[ColumnSpec], comment: str | None) -> TableRef:
        """Record a new table (its container must exist) and choose its physical name."""

    def drop_table(self, ref: TableRef) -> None: ...

    def add_column(self, ref: TableRef, column: ColumnSpec) -> None: ...

    def set_comment(self, ref: TableRef, column: str | None, text: str | None) -> None: ...

    def rename_table(self, ref: TableRef, parts: tuple[str, ...]) -> None: ...


@dataclass
class Outcome:
    table: str | None = None
    created: bool | None = None
    rows: int = 0


def _run(cursor: sqlite3.Cursor, sql: str, ref: TableRef) -> sqlite3.Cursor:
    """Run DDL on `ref`'s physical table; an SQLite error is INVALID_ARGUMENT naming the table."""
    try:
        return cursor.execute(sql)
    except sqlite3.Error as exc:
        raise invalid(names.logical(f"SQL error: {exc}", {ref.physical: ref})) from None


def _physical_column(spec: ColumnSpec) -> str:
    text = f"{ident(spec.name)} {spec.type.affinity}"
    if not spec.nullable:
        text += " NOT NULL"
    if spec.default is not None:
        text += f" DEFAULT ({spec.default})"
    return text


def create_physical(cursor: sqlite3.Cursor, ref: TableRef, columns: list[ColumnSpec]) -> None:
    body = ", ".join(_physical_column(c) for c in columns)
    _run(cursor, f"CREATE TABLE {ident(ref.physical)} ({body})", ref)


def column_spec(node: exp.ColumnDef) -> ColumnSpec:
    """A column definition of CREATE or ALTER TABLE."""
    if not isinstance(node.args.get("kind"), exp.DataType):
        raise invalid(f"column {node.name} needs a type")
    kind = types.from_datatype(node.args["kind"])
    nullable, default, comment = True, None, None
    for constraint in node.args.get("constraints") or []:
        what = constraint.args.get("kind")
        if isinstance(what, exp.NotNullColumnConstraint) and not what.args.get("allow_null"):
            nullable = False
        elif isinstance(what, exp.DefaultColumnConstraint):
            if not isinstance(what.this, exp.Literal | exp.Null | exp.Boolean | exp.Neg):
                raise ToolFailure(Code.UNIMPLEMENTED, f"column {node.name}: only constant defaults are supported")
            default = what.this.sql(dialect=Target)
        elif isinstance(what, exp.CommentColumnConstraint):
            comment = what.this.name
    return ColumnSpec(node.name, kind, nullable, default, comment)


def _check_names(columns: list[ColumnSpec]) -> None:
    seen: set[str] = set()
    for column in columns:
        if not column.name:
            raise invalid("a column needs a name")
        if column.name.casefold() in seen:
            raise invalid(f"duplicate column name {column.name}")
        seen.add(column.name.casefold())


def _table_comment(tree: exp.Create) -> str | None:
    props = tree.args.get("properties")
    for prop in props.expressions if props else []:
        if isinstance(prop, exp.SchemaCommentProperty):
            return prop.this.name
    return None


def _select_columns(cursor: sqlite3.Cursor, select: exp.Expression, catalog: Catalog,
                    now: Callable[[], datetime], dialect: Dialect) -> tuple[query.Prepared, list[ColumnSpec]]:
    query.name_outputs(select, dialect.name)
    prepared = query.prepare(select, catalog, now, dialect)
    kinds = query.output_types(prepared)
    probe = query.execute(cursor, prepared, f"SELECT * FROM ({prepared.sql()}) LIMIT 1")
    first = probe.fetchone()
    columns = []
    for i, description in enumerate(probe.description or ()):
        name = description[0]
        kind = kinds.get(name) or prepared.scope.get(name)
        if kind is None:
            value = first[i] if first else None
            kind = types.INT if isinstance(value, int) else types.FLOAT if isinstance(value, float) \
                else types.TEXT
        columns.append(ColumnSpec(name, kind))
    return prepared, columns


def create(cursor: sqlite3.Cursor, tree: exp.Create, catalog: WritableCatalog,
           now: Callable[[], datetime], dialect: Dialect) -> Outcome:
    props = tree.args.get("properties")
    if props and any(isinstance(p, exp.TemporaryProperty) for p in props.expressions):
        raise ToolFailure(Code.UNIMPLEMENTED, "temporary tables are not supported")
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    full = catalog.qualify(names.name_parts(target))
    old = catalog.lookup(full)
    if old is not None and tree.args.get("exists"):
        return Outcome(".".join(full), False)
    if old is not None and not tree.args.get("replace"):
        raise ToolFailure(Code.ALREADY_EXISTS, f"Object '{'.'.join(full)}' already exists.")
    if not full[-1]:
        raise invalid("a table needs a name")
    select, source = tree.args.get("expression"), _copied(tree, catalog)
    prepared = None
    if select is not None:
        prepared, columns = _select_columns(cursor, select, catalog, now, dialect)
    elif source is not None:
        columns = [ColumnSpec(c.name, c.type) for c in source.columns]
    else:
        columns = [column_spec(c) for c in tree.this.expressions if isinstance(c, exp.ColumnDef)]
    if not columns:
        raise invalid("a table needs at least one column")
    _check_names(columns)
    if old is not None:
        drop(cursor, old, catalog)
    ref = catalog.create_table(full, columns, _table_comment(tree))
    create_physical(cursor, ref, columns)
    rows = 0
    if prepared is not None:
        rows = query.execute(cursor, prepared, f"INSERT INTO {ident(ref.physical)} {prepared.sql()}").rowcount
    elif source is not None and tree.args.get("clone"):
        rows = _run(cursor, f"INSERT INTO {ident(ref.physical)} SELECT * FROM {ident(source.physical)}", ref).rowcount
    if rows:
        store.conform(cursor, ref, dialect)
    return Outcome(ref.display, True, max(rows, 0))


def _copied(tree: exp.Create, catalog: Catalog) -> TableRef | None:
    """The table whose columns CREATE TABLE ... LIKE (columns) or CLONE (columns and rows) copies."""
    clone = tree.args.get("clone")
    if isinstance(clone, exp.Clone) and isinstance(clone.this, exp.Table):
        return names.find(catalog, clone.this)
    props = tree.args.get("properties")
    like = next((p for p in props.expressions if isinstance(p, exp.LikeProperty)), None) if props else None
    return names.find(catalog, like.this) if like is not None and isinstance(like.this, exp.Table) else None


def drop(cursor: sqlite3.Cursor, ref: TableRef, catalog: WritableCatalog) -> None:
    catalog.drop_table(ref)
    cursor.execute(f"DROP TABLE {ident(ref.physical)}")


def _existing(catalog: Catalog, table: exp.Table, if_exists: bool) -> TableRef | None:
    full = catalog.qualify(names.name_parts(table))
    ref = catalog.lookup(full)
    if ref is None and not if_exists:
        raise not_found(catalog.missing(full))
    return ref


def drop_table(cursor: sqlite3.Cursor, tree: exp.Drop, catalog: WritableCatalog) -> Outcome:
    shown = None
    for table in tree.args.get("tables") or []:
        ref = _existing(catalog, table, bool(tree.args.get("exists")))
        if ref is not None:
            drop(cursor, ref, catalog)
            shown = ref.display
    return Outcome(shown)


def alter(cursor: sqlite3.Cursor, tree: exp.Alter, catalog: WritableCatalog) -> Outcome:
    ref = _existing(catalog, tree.this, bool(tree.args.get("exists")))
    if ref is None:
        return Outcome()
    for action in tree.args.get("actions") or []:
        if isinstance(action, exp.ColumnDef):
            spec = column_spec(action)
            _check_names([*(ColumnSpec(c.name, c.type) for c in ref.columns), spec])
            catalog.add_column(ref, spec)
            _run(cursor, f"ALTER TABLE {ident(ref.physical)} ADD COLUMN {_physical_column(spec)}", ref)
        elif isinstance(action, exp.AlterColumn) and action.args.get("comment") is not None \
                and not any(v for k, v in action.args.items() if k not in ("this", "comment")):
            _column(ref, action.name)
            catalog.set_comment(ref, action.name, action.args["comment"].name)
        elif isinstance(action, exp.AlterRename):
            new = catalog.qualify(names.name_parts(action.this))
            if catalog.lookup(new) is not None:
                raise ToolFailure(Code.ALREADY_EXISTS, f"Object '{'.'.join(new)}' already exists.")
            catalog.rename_table(ref, new)
        else:
            raise ToolFailure(Code.UNIMPLEMENTED, f"ALTER TABLE action not supported: {action.sql()}",
                              hint="supported: ADD COLUMN, ALTER COLUMN ... COMMENT, RENAME TO")
    return Outcome(ref.display)


def _column(ref: TableRef, name: str) -> None:
    if ref.column(name) is None:
        raise invalid(f"invalid identifier '{name}': no such column in {ref.display}")


def truncate(cursor: sqlite3.Cursor, tree: exp.TruncateTable, catalog: Catalog) -> Outcome:
    shown = None
    for table in tree.expressions:
        ref = _existing(catalog, table, bool(tree.args.get("exists")))
        if ref is not None:
            cursor.execute(f"DELETE FROM {ident(ref.physical)}")
            shown = ref.display
    return Outcome(shown)


def comment(tree: exp.Comment, catalog: WritableCatalog) -> Outcome:
    kind = str(tree.args.get("kind") or "").upper()
    text = tree.expression.name if tree.expression is not None else None
    exists = bool(tree.args.get("exists"))
    if kind == "TABLE" and isinstance(tree.this, exp.Table):
        ref = _existing(catalog, tree.this, exists)
        if ref is not None:
            catalog.set_comment(ref, None, text)
        return Outcome(ref.display if ref else None)
    if kind == "COLUMN" and isinstance(tree.this, exp.Column) and tree.this.table:
        column = tree.this
        table = exp.Table(this=column.args["table"], db=column.args.get("db"), catalog=column.args.get("catalog"))
        ref = _existing(catalog, table, exists)
        if ref is not None:
            _column(ref, column.name)
            catalog.set_comment(ref, column.name, text)
        return Outcome(ref.display if ref else None)
    raise ToolFailure(Code.UNIMPLEMENTED, f"COMMENT ON {kind or '?'} is not supported",
                      hint="use COMMENT ON TABLE t IS '...' or COMMENT ON COLUMN t.c IS '...'")
