"""BigQuery tools (10): run a GoogleSQL statement, datasets, tables and their schemas, CSV loads
from the workspace, exports to Cloud Storage, and the jobs that run_query records."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import Field

from mock_servers.core import files, sql
from mock_servers.core.errors import Code, ToolFailure, not_found
from mock_servers.core.times import instant
from mock_servers.core.toolkit import Call
from mock_servers.google_cloud import base, bq_catalog, bq_load, bq_query, bq_supported, bq_types, gcs
from mock_servers.google_cloud.base import toolbox
from mock_servers.sqlfront import ColumnSpec, TableRef
from mock_servers.sqlfront.ddl import create_physical
from mock_servers.sqlfront.target import ident

MAX_QUERY = 100_000
DatasetId = Annotated[str, Field(min_length=1, max_length=1024, description="Dataset id (letters, digits, _)")]
TableId = Annotated[str, Field(min_length=1, max_length=1024, description="Table id within the dataset")]
_DATASET = "SELECT id, dataset, location, description, labels, created, modified FROM bq_dataset"


def _dataset(call: Call, dataset_id: str) -> tuple[Any, ...]:
    found = sql.run(call.session, f"{_DATASET} WHERE project = ? AND dataset = ?",
                    (base.project(call), dataset_id)).fetchone()
    if found is None:
        raise bq_catalog.dataset_missing(base.project(call), dataset_id)
    return tuple(found)


def _table(call: Call, dataset_id: str, table_id: str) -> TableRef:
    _dataset(call, dataset_id)
    cat = bq_query.catalog(call)
    parts = (base.project(call), dataset_id, table_id)
    ref = cat.lookup(parts)
    if ref is None or ref.physical.startswith("bq_info_"):
        raise not_found(cat.missing(parts), hint="see bigquery_list_tables")
    return ref


@toolbox.tool(rw="write", core=True, destructive=True, idempotent=False, guarded=True,
              narrow_hint="lower max_results, select fewer columns, or page with start_index")
def bigquery_run_query(
        call: Call,
        query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY,
                                    description=f"One GoogleSQL statement. {bq_supported.DESCRIPTION}")],
        dry_run: Annotated[bool, Field(description="Check the statement and report its schema without "
                                       "running it")] = False,
        max_results: Annotated[int, Field(ge=1, le=10_000, description="Rows to return (default 1000, "
                                          "max 10000)")] = 1000,
        start_index: Annotated[int, Field(ge=0, le=2**62, description="Result rows to skip (default 0)")] = 0,
) -> dict[str, Any] | str:
    """Run one BigQuery statement: SELECT (joins, CTEs, window functions, UNION, subqueries), INSERT,
    UPDATE, DELETE, MERGE, CREATE [OR REPLACE] TABLE [AS SELECT], DROP TABLE, ALTER TABLE ADD COLUMN,
    TRUNCATE TABLE. Tables: dataset.table, `project.dataset.table`, `project:dataset.table`;
    dataset.INFORMATION_SCHEMA.TABLES and .COLUMNS are queryable. SELECT returns {job_id,
    statement_type,schema:[{name,type,mode}],total_rows,start_index,rows:[{col:value}],has_more};
    DML {job_id,statement_type,num_dml_affected_rows}; DDL {job_id,statement_type,ddl_target_table};
    dry_run {statement_type,schema,valid} and changes nothing. Values: INT64 integers, NUMERIC exact,
    BOOL true/false, TIMESTAMP 'YYYY-MM-DD HH:MM:SS[.ffffff] UTC', DATETIME 'YYYY-MM-DDTHH:MM:SS',
    DATE 'YYYY-MM-DD'. One statement per call; the functions, casts and literals it runs are
    listed with `query`, and any other is UNIMPLEMENTED."""
    if dry_run:
        return bq_query.dry_run(call, query)
    return bq_query.run(call, query, max_results, start_index)


def _dataset_view(call: Call, row: tuple[Any, ...]) -> dict[str, Any]:
    return {"dataset_id": row[1], "project_id": base.project(call), "location": row[2], "description": row[3]}


@toolbox.tool(rw="read", core=True)
def bigquery_list_datasets(call: Call) -> dict[str, Any]:
    """List the project's datasets by id. Returns {datasets:[{dataset_id,project_id,location,
    description}],total}."""
    found = sql.run(call.session, f"{_DATASET} WHERE project = ? ORDER BY dataset, id", (base.project(call),))
    datasets = [_dataset_view(call, tuple(r)) for r in found.fetchall()]
    return {"datasets": datasets, "total": len(datasets)}


@toolbox.tool(rw="write", idempotent=False)
def bigquery_create_dataset(
        call: Call, dataset_id: DatasetId,
        description: Annotated[str, Field(max_length=16_384, description="Description")] = "",
        location: Annotated[str, Field(min_length=1, max_length=64, description="Location, e.g. US, EU")] = "US",
) -> dict[str, Any]:
    """Create a dataset in the project. Returns {dataset_id,project_id,location,description}; an
    existing id is ALREADY_EXISTS; ids are letters, digits and _ (1-1024)."""
    bq_catalog.create_dataset(call.session, base.project(call), dataset_id, call.now, description, location)
    return _dataset_view(call, _dataset(call, dataset_id))


@toolbox.tool(rw="read")
def bigquery_get_dataset_info(call: Call, dataset_id: DatasetId) -> dict[str, Any]:
    """Describe a dataset. Returns {dataset_id,project_id,full_name,location,description,labels,
    created,modified,table_count}."""
    row = _dataset(call, dataset_id)
    count = sql.scalar(call.session, "SELECT COUNT(*) FROM bq_table WHERE dataset_id = ?", (row[0],))
    return {"dataset_id": row[1], "project_id": base.project(call), "full_name": f"{base.project(call)}:{row[1]}",
            "location": row[2], "description": row[3], "labels": json.loads(row[4]), "created": row[5],
            "modified": row[6], "table_count": count}


def _count(call: Call, physical: str) -> int:
    return int(sql.scalar(call.session, f"SELECT COUNT(*) FROM {ident(physical)}"))


@toolbox.tool(rw="read", core=True)
def bigquery_list_tables(
        call: Call, dataset_id: DatasetId,
        max_results: Annotated[int, Field(ge=1, le=1000, description="Tables per page (default 100, max 1000)")] = 100,
        page_token: base.PageToken = None,
) -> dict[str, Any]:
    """List a dataset's tables by id. Returns {tables:[{table_id,type,num_rows,created}],total,
    next_page_token} (null on the last page)."""
    dataset = _dataset(call, dataset_id)
    after = base.read_token(call, page_token, ["tables", dataset_id, max_results]) or ""
    found = sql.run(call.session, "SELECT name, physical, created FROM bq_table WHERE dataset_id = ? AND name > ? "
                    "ORDER BY name LIMIT ?", (dataset[0], after, max_results + 1)).fetchall()
    rows = found[:max_results]
    total = sql.scalar(call.session, "SELECT COUNT(*) FROM bq_table WHERE dataset_id = ?", (dataset[0],))
    tables = [{"table_id": n, "type": "TABLE", "num_rows": _count(call, p), "created": c} for n, p, c in rows]
    return base.page(call, "tables", tables, [r[0] for r in rows], ["tables", dataset_id, max_results],
                     len(found) > max_results, total=total)


@toolbox.tool(rw="read", core=True)
def bigquery_get_table_info(call: Call, dataset_id: DatasetId, table_id: TableId) -> dict[str, Any]:
    """Describe a table: its schema in column order and size. Returns {project_id,dataset_id,
    table_id,description,schema:[{name,type,mode,description}],num_rows,num_bytes,created,modified}."""
    ref = _table(call, dataset_id, table_id)
    row = sql.run(call.session, "SELECT columns_json, description, created, modified FROM bq_table WHERE physical = ?",
                  (ref.physical,)).fetchone()
    size = sql.scalar(call.session, "SELECT pgsize FROM dbstat WHERE name = ? AND aggregate = TRUE", (ref.physical,))
    return {"project_id": base.project(call), "dataset_id": dataset_id, "table_id": table_id,
            "description": row[1], "schema": json.loads(row[0]), "num_rows": _count(call, ref.physical),
            "num_bytes": int(size or 0), "created": row[2], "modified": row[3]}


def _load_target(call: Call, dataset_id: str, table_id: str, header: list[str] | None,
                 records: list[list[str]]) -> tuple[TableRef, list[dict[str, Any]]]:
    cat = bq_query.catalog(call)
    parts = (base.project(call), dataset_id, table_id)
    _dataset(call, dataset_id)
    ref = cat.lookup(parts)
    if ref is not None:
        row = sql.scalar(call.session, "SELECT columns_json FROM bq_table WHERE physical = ?", (ref.physical,))
        return ref, json.loads(row)
    schema = bq_load.infer_schema(header, records)
    columns = [ColumnSpec(f["name"], bq_types.named(f["type"])) for f in schema]
    ref = cat.create_table(parts, columns, None)
    create_physical(sql.cursor(call.session), ref, columns)
    return ref, schema


@toolbox.tool(rw="write", destructive=True, idempotent=False)
def bigquery_load_csv_data(
        call: Call, dataset_id: DatasetId, table_id: TableId,
        csv_file_path: Annotated[str, Field(min_length=1, max_length=4096, description="CSV file in the workspace")],
        skip_header: Annotated[bool, Field(description="The first row holds column names")] = True,
        write_mode: Annotated[Literal["WRITE_TRUNCATE", "WRITE_APPEND", "WRITE_EMPTY"], Field(
            description="Replace the rows, append, or load only into an empty table")] = "WRITE_TRUNCATE",
) -> dict[str, Any]:
    """Load a workspace CSV file into a table (created with detected types when missing). All rows
    load or none: a bad value is INVALID_ARGUMENT naming its row (file line) and column. Returns
    {table,rows_loaded,write_mode}."""
    path = files.resolve(call.world, csv_file_path)
    if not path.is_file():
        raise not_found(f"file '{csv_file_path}' does not exist")
    if path.stat().st_size > gcs.MAX_OBJECT_BYTES:
        raise ToolFailure(Code.RESOURCE_EXHAUSTED, "the CSV file is over the 100 MB limit")
    header, records = bq_load.read_csv(path.read_bytes(), skip_header)
    ref, schema = _load_target(call, dataset_id, table_id, header, records)
    rows = bq_load.convert(records, schema, 2 if skip_header else 1)
    table = ident(ref.physical)
    if write_mode == "WRITE_EMPTY":
        bq_load.refuse_nonempty(_count(call, ref.physical), ref.display)
    if write_mode == "WRITE_TRUNCATE":
        sql.run(call.session, f"DELETE FROM {table}")
    sql.cursor(call.session).executemany(f"INSERT INTO {table} VALUES ({sql.marks(len(schema))})", rows)
    sql.run(call.session, "UPDATE bq_table SET modified = ? WHERE physical = ?", (instant(call.now), ref.physical))
    return {"table": ref.display, "rows_loaded": len(rows), "write_mode": write_mode}


@toolbox.tool(rw="write", idempotent=False)
def bigquery_export_table(
        call: Call, dataset_id: DatasetId, table_id: TableId,
        destination_bucket: Annotated[str, Field(min_length=1, max_length=222, description="Bucket name")],
        destination_path: Annotated[str, Field(min_length=1, max_length=1024, description="Object name to write")],
        file_format: Annotated[Literal["CSV", "NEWLINE_DELIMITED_JSON"], Field(
            description="CSV with a header row, or one JSON object per line")] = "CSV",
) -> dict[str, Any]:
    """Export a table's rows to a Cloud Storage object (overwritten if present). Returns
    {bucket,object,rows,size}."""
    ref = _table(call, dataset_id, table_id)
    gcs.bucket_row(call.session, destination_bucket)
    columns = [c.name for c in ref.columns]
    found = sql.run(call.session, f"SELECT * FROM {ident(ref.physical)} ORDER BY rowid").fetchall()
    values = [bq_types.show.column(column, c.type) for column, c in zip(zip(*found), ref.columns)]
    rows = list(map(list, zip(*values)))
    data = bq_load.export(columns, rows, file_format)
    kind = "application/x-ndjson" if file_format == "NEWLINE_DELIMITED_JSON" else "text/csv"
    meta = gcs.put_object(call.session, destination_bucket, destination_path, data, kind, call.now)
    return {"bucket": destination_bucket, "object": destination_path, "rows": len(rows), "size": meta["size"]}


@toolbox.tool(rw="read")
def bigquery_list_jobs(
        call: Call,
        max_results: Annotated[int, Field(ge=1, le=1000, description="Jobs to return (default 50, max 1000)")] = 50,
        state_filter: Annotated[Literal["", "DONE", "RUNNING", "PENDING"], Field(
            description="Only jobs in this state (empty: all)")] = "",
) -> dict[str, Any]:
    """List the jobs run_query recorded, newest first. Jobs run synchronously, so every job is
    DONE. Returns {jobs:[{job_id,statement_type,state,created,query}],total}."""
    where, params = ("WHERE state = ?", (state_filter,)) if state_filter else ("", ())
    found = sql.run(call.session, f"SELECT job_id, statement_type, state, created, query FROM bq_job {where} "
                    "ORDER BY id DESC LIMIT ?", (*params, max_results)).fetchall()
    total = sql.scalar(call.session, f"SELECT COUNT(*) FROM bq_job {where}", params)
    return {"jobs": [{"job_id": j, "statement_type": k, "state": s, "created": c, "query": q}
                     for j, k, s, c, q in found], "total": total}


@toolbox.tool(rw="write")
def bigquery_cancel_job(call: Call, job_id: Annotated[str, Field(min_length=1, max_length=200,
                                                                  description="Job id from bigquery_list_jobs")]
                        ) -> dict[str, Any]:
    """Cancel a job. Jobs finish when run_query returns, so a known job is FAILED_PRECONDITION
    (already DONE) and an unknown one NOT_FOUND."""
    state = sql.scalar(call.session, "SELECT state FROM bq_job WHERE job_id = ?", (job_id,))
    if state is None:
        raise not_found(f"Not found: Job {base.project(call)}:{job_id}", hint="see bigquery_list_jobs")
    raise ToolFailure(Code.FAILED_PRECONDITION, f"job {job_id} is already {state}; it cannot be cancelled")


