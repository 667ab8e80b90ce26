"""The BigQuery catalog over `bq_*` tables: datasets, tables with their schema (JSON, in column
order), name resolution (`project.dataset.table`, `project:dataset.table`, `dataset.table`,
`dataset.INFORMATION_SCHEMA.TABLES|COLUMNS`), and the metadata the SQL front end keeps in step
with DDL. Messages are BigQuery's (`Not found: Table local-project:ds.t`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.times import instant
from mock_servers.google_cloud import bq_types
from mock_servers.sqlfront import ColumnInfo, ColumnSpec, TableRef

PHYSICAL = "bq_data_{}"
DATASET_ID = re.compile(r"[A-Za-z0-9_]{1,1024}")
TABLE_ID = re.compile(r"[\w-]{1,1024}")
INFO_VIEWS = {"INFORMATION_SCHEMA.TABLES": "bq_info_tables_{}", "INFORMATION_SCHEMA.COLUMNS": "bq_info_columns_{}"}
_INFO_COLUMNS = {
    "INFORMATION_SCHEMA.TABLES": (("table_catalog", "STRING"), ("table_schema", "STRING"), ("table_name", "STRING"),
                                  ("table_type", "STRING"), ("creation_time", "TIMESTAMP")),
    "INFORMATION_SCHEMA.COLUMNS": (("table_catalog", "STRING"), ("table_schema", "STRING"), ("table_name", "STRING"),
                                   ("column_name", "STRING"), ("ordinal_position", "INT64"),
                                   ("is_nullable", "STRING"), ("data_type", "STRING")),
}
_VIEW_SQL = {
    "INFORMATION_SCHEMA.TABLES": (
        "SELECT d.project AS table_catalog, d.dataset AS table_schema, t.name AS table_name, "
        "'BASE TABLE' AS table_type, t.created AS creation_time FROM bq_table t "
        "JOIN bq_dataset d ON d.id = t.dataset_id WHERE d.id = {id}"),
    "INFORMATION_SCHEMA.COLUMNS": (
        "SELECT d.project AS table_catalog, d.dataset AS table_schema, t.name AS table_name, "
        "json_extract(c.value, '$.name') AS column_name, CAST(c.key AS INTEGER) + 1 AS ordinal_position, "
        "CASE json_extract(c.value, '$.mode') WHEN 'REQUIRED' THEN 'NO' ELSE 'YES' END AS is_nullable, "
        "json_extract(c.value, '$.type') AS data_type FROM bq_table t JOIN bq_dataset d ON d.id = t.dataset_id, "
        "json_each(t.columns_json) c WHERE d.id = {id}"),
}


def table_name(parts: tuple[str, ...]) -> str:
    """`project:dataset.table`, as BigQuery names a table in messages."""
    return f"{parts[0]}:{'.'.join(parts[1:])}"


def dataset_missing(project: str, dataset: str) -> ToolFailure:
    return not_found(f"Not found: Dataset {project}:{dataset}")


def schema_field(name: str, kind: str, mode: str = "NULLABLE", description: str = "") -> dict[str, Any]:
    return {"name": name, "type": kind, "mode": mode, "description": description}


@lru_cache(maxsize=256)
def _columns(schema_json: str) -> tuple[ColumnInfo, ...]:
    """The columns of a table's stored schema (immutable: kept per schema text)."""
    return tuple(ColumnInfo(f["name"], bq_types.named(f["type"])) for f in json.loads(schema_json))


class BigQueryCatalog:
    """The catalog of one call in `project`; `now` is asked only when something is created."""

    def __init__(self, session: Session, project: str, now: Callable[[], datetime]) -> None:
        self.session = session
        self.project = project
        self.now = now

    # --- names -----------------------------------------------------------------------------
    def qualify(self, parts: tuple[str, ...]) -> tuple[str, ...]:
        if ":" in parts[0]:
            project, _, rest = parts[0].partition(":")
            parts = (project, *rest.split("."), *parts[1:])
        if len(parts) == 3:
            return parts
        if len(parts) == 2:
            return (self.project, *parts)
        raise invalid(f'Table name "{".".join(parts)}" missing dataset while no default dataset is set in '
                      "the request (write dataset.table or project.dataset.table)")

    def dataset_id(self, project: str, dataset: str) -> int:
        found = sql.scalar(self.session, "SELECT id FROM bq_dataset WHERE project = ? AND dataset = ?",
                           (project, dataset))
        if found is None:
            raise dataset_missing(project, dataset)
        return int(found)

    def lookup(self, parts: tuple[str, ...]) -> TableRef | None:
        if parts[2].upper() in INFO_VIEWS:
            view = parts[2].upper()
            dataset = self.dataset_id(parts[0], parts[1])
            columns = tuple(ColumnInfo(n, bq_types.named(t)) for n, t in _INFO_COLUMNS[view])
            return TableRef(parts, INFO_VIEWS[view].format(dataset), columns)
        found = sql.run(self.session, "SELECT t.physical, t.columns_json FROM bq_table t JOIN bq_dataset d "
                        "ON d.id = t.dataset_id WHERE d.project = ? AND d.dataset = ? AND t.name = ?",
                        parts).fetchone()
        return None if found is None else TableRef(parts, found[0], _columns(found[1]))

    def missing(self, parts: tuple[str, ...]) -> str:
        if not sql.scalar(self.session, "SELECT 1 FROM bq_dataset WHERE project = ? AND dataset = ?", parts[:2]):
            return f"Not found: Dataset {parts[0]}:{parts[1]}"
        return f"Not found: Table {table_name(parts)}"

    def _row(self, ref: TableRef) -> tuple[int, list[dict[str, Any]]]:
        if ref.physical.startswith("bq_info_"):
            raise ToolFailure(Code.PERMISSION_DENIED, f"{ref.display} is a read-only view")
        found = sql.run(self.session, "SELECT id, columns_json FROM bq_table WHERE physical = ?",
                        (ref.physical,)).fetchone()
        return int(found[0]), json.loads(found[1])

    def _save(self, table_id: int, schema: list[dict[str, Any]]) -> None:
        sql.run(self.session, "UPDATE bq_table SET columns_json = ?, modified = ? WHERE id = ?",
                (json.dumps(schema, separators=(",", ":")), instant(self.now()), table_id))

    # --- table DDL -------------------------------------------------------------------------
    def create_table(self, parts: tuple[str, ...], columns: list[ColumnSpec], comment: str | None) -> TableRef:
        if not TABLE_ID.fullmatch(parts[2]):
            raise invalid(f"Invalid table ID \"{parts[2]}\": letters, digits, _ and - only")
        schema = [schema_field(c.name, bq_types.name_of(c.type), "NULLABLE" if c.nullable else "REQUIRED",
                               c.comment or "") for c in columns]
        table_id = create_table_row(self.session, self.dataset_id(parts[0], parts[1]), parts[2], schema,
                                    comment or "", self.now())
        kinds = tuple(ColumnInfo(f["name"], bq_types.named(f["type"])) for f in schema)
        return TableRef(parts, PHYSICAL.format(table_id), kinds)

    def drop_table(self, ref: TableRef) -> None:
        table_id, _ = self._row(ref)
        sql.run(self.session, "DELETE FROM bq_table WHERE id = ?", (table_id,))

    def add_column(self, ref: TableRef, column: ColumnSpec) -> None:
        table_id, schema = self._row(ref)
        schema.append(schema_field(column.name, bq_types.name_of(column.type), "NULLABLE", column.comment or ""))
        self._save(table_id, schema)

    def set_comment(self, ref: TableRef, column: str | None, text: str | None) -> None:
        table_id, schema = self._row(ref)
        if column is None:
            sql.run(self.session, "UPDATE bq_table SET description = ? WHERE id = ?", (text or "", table_id))
            return
        for field in schema:
            if field["name"].lower() == column.lower():
                field["description"] = text or ""
        self._save(table_id, schema)

    def rename_table(self, ref: TableRef, parts: tuple[str, ...]) -> None:
        table_id, _ = self._row(ref)
        sql.run(self.session, "UPDATE bq_table SET dataset_id = ?, name = ? WHERE id = ?",
                (self.dataset_id(parts[0], parts[1]), parts[2], table_id))


# --- datasets and tables ----------------------------------------------------------------------

def create_dataset(session: Session, project: str, dataset: str, created: datetime, description: str = "",
                   location: str = "US", labels: dict[str, str] | None = None) -> int:
    """A new dataset with its INFORMATION_SCHEMA views; an existing one is ALREADY_EXISTS."""
    if not DATASET_ID.fullmatch(dataset):
        raise invalid(f"Invalid dataset ID \"{dataset[:100]}\": use letters, digits and underscores (1-1024)")
    if sql.scalar(session, "SELECT 1 FROM bq_dataset WHERE project = ? AND dataset = ?", (project, dataset)):
        raise ToolFailure(Code.ALREADY_EXISTS, f"Already Exists: Dataset {project}:{dataset}")
    when = instant(created)
    cur = sql.run(session, "INSERT INTO bq_dataset (project, dataset, location, description, labels, created, "
                  "modified) VALUES (?, ?, ?, ?, ?, ?, ?)",
                  (project, dataset, location, description, json.dumps(labels or {}), when, when))
    dataset_id = int(cur.lastrowid or 0)
    for view, physical in INFO_VIEWS.items():
        sql.run(session, f'CREATE VIEW "{physical.format(dataset_id)}" AS {_VIEW_SQL[view].format(id=dataset_id)}')
    return dataset_id


def create_table_row(session: Session, dataset_id: int, name: str, schema: list[dict[str, Any]],
                     description: str, created: datetime) -> int:
    """Record a table (its physical table is made by the caller); its id."""
    when = instant(created)
    cur = sql.run(session, "INSERT INTO bq_table (dataset_id, name, columns_json, description, physical, "
                  "created, modified) VALUES (?, ?, ?, ?, ?, ?, ?)",
                  (dataset_id, name, json.dumps(schema, separators=(",", ":")), description,
                   f"pending_{name}", when, when))
    table_id = int(cur.lastrowid or 0)
    sql.run(session, "UPDATE bq_table SET physical = ? WHERE id = ?", (PHYSICAL.format(table_id), table_id))
    return table_id
