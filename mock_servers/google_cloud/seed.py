"""What generators build a Google Cloud world with, through the same catalog and rules the tools
use, in bulk: BigQuery datasets and tables with rows (multi-row INSERTs), Cloud
Storage buckets and objects, log entries and Compute instances."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.times import instant
from mock_servers.google_cloud import bq_catalog, bq_types, gcs, logfilter
from mock_servers.sqlfront import ColumnSpec, TableRef
from mock_servers.sqlfront.ddl import create_physical
from mock_servers.sqlfront.target import ident
from mock_servers.sqlfront.types import LogicalType


@dataclass
class FieldDef:
    name: str
    type: str  # BigQuery type name: INT64, NUMERIC, FLOAT64, STRING, BOOL, DATE, DATETIME, TIMESTAMP ...
    mode: str = "NULLABLE"  # or REQUIRED
    description: str = ""


@dataclass
class TableDef:
    name: str
    fields: list[FieldDef]
    rows: Sequence[Sequence[Any]] = ()
    description: str = ""
    columns: Sequence[Sequence[Any]] = ()  # the rows given column by column instead (no tuple per row)


@dataclass
class DatasetDef:
    name: str
    tables: list[TableDef] = field(default_factory=list)
    description: str = ""
    location: str = "US"
    labels: Mapping[str, str] = field(default_factory=dict)


def bigquery(session: Session, project: str, spec: Sequence[DatasetDef], created: datetime) -> dict[str, str]:
    """Create every dataset and table of `spec` with its rows in `project`; the physical
    table of each, by `dataset.table`."""
    cursor = sql.cursor(session)
    physical = {}
    for dataset in spec:
        dataset_id = bq_catalog.create_dataset(session, project, dataset.name, created, dataset.description,
                                               dataset.location, dict(dataset.labels))
        for table in dataset.tables:
            schema = [bq_catalog.schema_field(f.name.replace("\ufeff", ""), bq_types.named(f.type).text,
                                              f.mode, f.description) for f in table.fields]
            table_id = bq_catalog.create_table_row(session, dataset_id, table.name, schema, table.description,
                                                   created)
            kinds = [bq_types.named(f["type"]) for f in schema]
            columns = [ColumnSpec(f["name"], k, f["mode"] != "REQUIRED") for f, k in zip(schema, kinds)]
            ref = TableRef((project, dataset.name, table.name), bq_catalog.PHYSICAL.format(table_id), ())
            create_physical(cursor, ref, columns)
            if table.rows or table.columns:
                _insert(cursor, ref.physical, _stored_values(table, kinds), len(columns))
            physical[f"{dataset.name}.{table.name}"] = ref.physical
    return physical


_NATIVE = frozenset({str, int, float, type(None)})
_INSERT_VALUES = 30_000  # values bound per INSERT (SQLite allows 32766)


def _insert(cursor: sqlite3.Cursor, table: str, values: list[Any], width: int) -> None:
    """Insert the rows of `values` (row after row) in order, many per statement: about 40 %
    cheaper than an executemany of one row each (fewer statement steps and resets)."""
    per = max(1, _INSERT_VALUES // width) * width
    for start in range(0, len(values), per):
        chunk = values[start:start + per]
        rows = ", ".join([f"({sql.marks(width)})"] * (len(chunk) // width))
        cursor.execute(f"INSERT INTO {ident(table)} VALUES {rows}", chunk)


def _stored_values(table: TableDef, kinds: list[LogicalType]) -> list[Any]:
    """The table's values row after row, as the physical table keeps them; only the values
    SQLite cannot take are converted (types are checked a column at a time, in C)."""
    if table.rows and set(map(len, table.rows)) != {len(kinds)}:
        raise ValueError(f"every row needs {len(kinds)} values")
    columns = table.columns or list(zip(*table.rows))
    if len(columns) != len(kinds) or len(set(map(len, columns))) != 1:
        raise ValueError(f"{len(kinds)} columns of one length are needed")
    values: list[Any] = [None] * (len(columns[0]) * len(kinds))
    for i, (column, kind) in enumerate(zip(columns, kinds)):
        if not set(map(type, column)) <= _NATIVE:
            column = [bq_types.stored(v, kind) if type(v) not in _NATIVE else v for v in column]
        values[i::len(kinds)] = column
    return values


def buckets(session: Session, spec: Mapping[str, Mapping[str, bytes]], created: datetime,
            location: str = "US") -> None:
    """Create buckets (name -> {object name -> bytes}) with their objects."""
    for name, objects in spec.items():
        gcs.create_bucket(session, name, location, created)
        for object_name, data in objects.items():
            gcs.put_object(session, name, object_name, data, gcs.content_type_of(object_name), created)


@dataclass
class EntryDef:
    log_name: str  # short name
    at: datetime
    severity: str = "INFO"
    text: str | None = None
    json_payload: Mapping[str, Any] | None = None


def log_entries(session: Session, entries: Sequence[EntryDef], id_prefix: str = "seed") -> None:
    """Add log entries in bulk (insert ids `<id_prefix>-<n>`)."""
    sql.cursor(session).executemany(
        "INSERT INTO log_entry (insert_id, log_name, severity, rank, timestamp, text_payload, json_payload) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        ((f"{id_prefix}-{n}", e.log_name, e.severity, logfilter.SEVERITIES[e.severity], logfilter.stamp(e.at),
          e.text, json.dumps(e.json_payload, ensure_ascii=False, separators=(",", ":"))
          if e.json_payload is not None else None) for n, e in enumerate(entries, 1)))


def instances(session: Session, spec: Sequence[tuple[str, str, str, str]], created: datetime) -> None:
    """Add Compute instances: (name, zone, machine_type, status RUNNING|TERMINATED)."""
    sql.cursor(session).executemany(
        "INSERT INTO gce_instance (name, zone, machine_type, status, created) VALUES (?, ?, ?, ?, ?)",
        ((name, zone, kind, status, instant(created)) for name, zone, kind, status in spec))
