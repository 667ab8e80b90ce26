"""google_cloud tables: BigQuery's catalog (datasets, tables with their schema, jobs; each table
has its own physical SQLite table `bq_data_<id>`, never shown), Cloud Storage buckets and
objects (bytes as BLOBs), Cloud Logging entries, buckets and sinks, and Compute instances and
their operations."""

from __future__ import annotations

from sqlalchemy import Column, LargeBinary, UniqueConstraint
from sqlmodel import Field, SQLModel


class BqDataset(SQLModel, table=True):
    __tablename__ = "bq_dataset"
    __table_args__ = (UniqueConstraint("project", "dataset"), {"sqlite_autoincrement": True})
    id: int | None = Field(default=None, primary_key=True)
    project: str
    dataset: str
    location: str = "US"
    description: str = ""
    labels: str = "{}"  # JSON object
    created: str
    modified: str


class BqTable(SQLModel, table=True):
    __tablename__ = "bq_table"
    __table_args__ = (UniqueConstraint("dataset_id", "name"), {"sqlite_autoincrement": True})
    id: int | None = Field(default=None, primary_key=True)
    dataset_id: int = Field(foreign_key="bq_dataset.id")
    name: str
    columns_json: str = "[]"  # [{name,type,mode,description}] in column order
    description: str = ""
    physical: str = Field(unique=True)
    created: str
    modified: str


class BqJob(SQLModel, table=True):
    __tablename__ = "bq_job"
    __table_args__ = ({"sqlite_autoincrement": True},)
    id: int | None = Field(default=None, primary_key=True)
    job_id: str = Field(unique=True)
    statement_type: str
    state: str = "DONE"
    query: str
    created: str


class GcsBucket(SQLModel, table=True):
    __tablename__ = "gcs_bucket"
    __table_args__ = ({"sqlite_autoincrement": True},)
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True)
    location: str = "US"
    storage_class: str = "STANDARD"
    versioning_enabled: bool = False
    lifecycle_json: str = "[]"  # [{action,age_days}]
    created: str


class GcsObject(SQLModel, table=True):
    __tablename__ = "gcs_object"
    __table_args__ = (UniqueConstraint("bucket_id", "name"), {"sqlite_autoincrement": True})
    id: int | None = Field(default=None, primary_key=True)
    bucket_id: int = Field(foreign_key="gcs_bucket.id")
    name: str
    blob: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    content_type: str
    size: int
    md5: str  # base64 of the MD5 digest, as GCS shows it
    generation: int
    updated: str


class LogEntry(SQLModel, table=True):
    __tablename__ = "log_entry"
    __table_args__ = ({"sqlite_autoincrement": True},)
    id: int | None = Field(default=None, primary_key=True)
    insert_id: str = Field(unique=True)
    log_name: str = Field(index=True)  # short name (`app`); shown as projects/<p>/logs/<name>
    severity: str
    rank: int  # the severity's order, for comparisons
    timestamp: str = Field(index=True)
    text_payload: str | None = None
    json_payload: str | None = None  # JSON object


class LogBucket(SQLModel, table=True):
    __tablename__ = "log_bucket"
    id: int | None = Field(default=None, primary_key=True)
    bucket_id: str = Field(unique=True)
    location: str
    retention_days: int
    created: str


class LogSink(SQLModel, table=True):
    __tablename__ = "log_sink"
    id: int | None = Field(default=None, primary_key=True)
    sink_name: str = Field(unique=True)
    destination: str
    log_filter: str = ""
    created: str


class GceInstance(SQLModel, table=True):
    __tablename__ = "gce_instance"
    __table_args__ = (UniqueConstraint("zone", "name"), {"sqlite_autoincrement": True})
    id: int | None = Field(default=None, primary_key=True)
    name: str
    zone: str
    machine_type: str
    status: str
    created: str


class GceOperation(SQLModel, table=True):
    __tablename__ = "gce_operation"
    __table_args__ = ({"sqlite_autoincrement": True},)
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True)
    zone: str
    kind: str  # insert, delete, start, stop, reset
    target: str
    status: str = "DONE"
    created: str
