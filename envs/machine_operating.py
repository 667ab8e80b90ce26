"""machine_operating: find the out-of-range sensor readings of a time window in a large BigQuery
table, using per-machine ranges from a workbook; report them in a CSV and upload it to Cloud
Storage."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loca.core.outputs import Column, DbRows, TableFile, sql_text
from loca.core.script import Script, Tools, call
from loca.core.task import Scale, TaskSpec

if TYPE_CHECKING:
    from loca.core.world import World

DATASET, TABLE = "machine_operating", "live_sensor"
PARAMS_FILE = "machine_operating_parameters.xlsx"
PARAMS_SHEET, SUMMARY_SHEET = "Operating Parameters", "Machine Summary"
PARAMS_HEADERS = ("machine_id", "machine_description", "sensor_type", "unit", "min_value", "max_value",
                  "calibration_date", "next_maintenance")
BUCKET = "iot_anomaly_reports"
WINDOW = ("2025-08-19 11:30:00", "2025-08-19 12:30:00")  # UTC, both ends inclusive
REPORT = TableFile(
    file="anomaly_report.csv",
    columns=(Column("timestamp"), Column("machine_id"), Column("sensor_type"), Column("reading", "N"),
             Column("normal_range")),
    key=("timestamp", "machine_id", "sensor_type"),
)
OBJECT = REPORT.file
# The upload: the bucket (created unless there) and the report's object in it, nothing else.
_BUCKET = f"name = {sql_text(BUCKET)}"
UPLOAD_BUCKET = DbRows("gcs_bucket", ("name",), where=_BUCKET, values=("name",))
UPLOAD = DbRows("gcs_object", ("bucket_id", "name"), values=("blob", "name"),
                where=f"name = {sql_text(OBJECT)} AND bucket_id = (SELECT id FROM gcs_bucket WHERE {_BUCKET})")
# The oracle reads the window query in pages of the tool's default size; the last rows (12:30:00,
# where an anomaly always lies) are beyond the first page of TRAP_PAGE rows, which every world
# exceeds, so an agent reading one such page misses ground truth.
PAGE, TRAP_PAGE = 1000, 100
MAX_SHEET_CELLS = 20000

TOOLS: dict[str, tuple[str, ...]] = {
    "google_cloud": ("bigquery_run_query", "bigquery_list_datasets", "bigquery_list_tables",
                     "bigquery_get_table_info", "storage_list_buckets", "storage_create_bucket",
                     "storage_list_objects", "storage_upload_file"),
    "excel": ("get_workbook_metadata", "read_data_from_excel"),
    "filesystem": ("list_directory", "read_text_file", "write_file"),
    "python_execute": ("python_execute",),
    "claim_done": ("claim_done",),
}

INSTRUCTION = """\
Sensor readings stream into BigQuery table `{dataset}.{table}` (timestamp, machine_id, \
sensor_type, reading; timestamps in UTC). Normal ranges are in sheet `{sheet}` of `{params}` \
(min_value, max_value per machine and sensor). Find every reading with timestamp from {start} to \
{end} UTC, both ends inclusive, that is strictly below min_value or strictly above max_value. \
Readings equal to a bound are normal; machine/sensor pairs without a row in the sheet are \
ignored; identical duplicate rows count once. Write `{file}` with header `{header}`, one row per \
anomaly sorted by timestamp, machine_id, sensor_type; timestamp as `YYYY-MM-DD HH:MM:SS`, reading \
exactly as stored (2 decimals), normal_range as `<min> - <max>` with 2 decimals. Save it in the \
workspace and upload the same file as object `{object}` to Cloud Storage bucket `{bucket}` \
(create the bucket if missing). Change nothing else."""


def instruction(_world: World) -> str:
    return INSTRUCTION.format(dataset=DATASET, table=TABLE, sheet=PARAMS_SHEET, params=PARAMS_FILE,
                              start=WINDOW[0], end=WINDOW[1], file=REPORT.file, header=",".join(REPORT.headers),
                              object=OBJECT, bucket=BUCKET)


def window_query(end_inclusive: bool = True) -> str:
    """The distinct readings of the window, in report order."""
    until = "<=" if end_inclusive else "<"
    return (f"SELECT DISTINCT timestamp, machine_id, sensor_type, reading FROM {DATASET}.{TABLE} "
            f"WHERE timestamp >= TIMESTAMP '{WINDOW[0]}' AND timestamp {until} TIMESTAMP '{WINDOW[1]}' "
            f"ORDER BY timestamp, machine_id, sensor_type, reading")


def read_sheet(tools: Tools) -> Script:
    """Every row of the parameter sheet, all pages."""
    rows: list[list[Any]] = []
    start = "A1"
    while True:
        page = yield from call(tools("excel", "read_data_from_excel"), {
            "filepath": PARAMS_FILE, "sheet_name": PARAMS_SHEET, "start_cell": start,
            "max_cells": MAX_SHEET_CELLS})
        rows += page["values"]
        if not page["has_more"]:
            return rows
        start = page["next_start_cell"]


def read_window(tools: Tools, end_inclusive: bool = True, page_size: int = PAGE,
                first_page_only: bool = False) -> Script:
    """The window query's rows, page by page (`start_index`)."""
    rows: list[dict[str, Any]] = []
    while True:
        page = yield from call(tools("google_cloud", "bigquery_run_query"), {
            "query": window_query(end_inclusive), "max_results": page_size, "start_index": len(rows)})
        rows += page["rows"]
        if not page["has_more"] or first_page_only:
            return rows


def read_set(_instruction: str, tools: list[dict[str, Any]]) -> Script:
    named = Tools(tools)
    yield from read_sheet(named)
    yield from read_window(named)


TASK = TaskSpec(
    name="machine_operating",
    version=0,
    summary="out-of-range sensor readings of a time window into a CSV, saved and uploaded",
    servers={key: key for key in TOOLS},
    scale=Scale(primary="total_machines", lo=5, hi=520, fine="num_unknown_readings"),
    instruction=instruction,
    read_set=read_set,
    outputs=(REPORT, UPLOAD_BUCKET, UPLOAD),
    tools=tuple((key, tool) for key, names in TOOLS.items() for tool in names),
)
