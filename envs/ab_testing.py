"""ab_testing: aggregate the hourly A/B clickstream of many BigQuery tables into per-scenario and
pooled conversion rates in `record.csv`, then act on the winner in Cloud Storage or Cloud Logging."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any

from loca.core.outputs import Column, DbRows, TableFile, sql_text
from loca.core.script import Script, Tools, paged_by_offset, paged_by_token
from loca.core.task import Scale, TaskSpec

if TYPE_CHECKING:
    from loca.core.world import World

DATASET = "ab_testing"
PREFIX = "ab_"  # a scenario table is `ab_<scenario>`
ARMS = ("A", "B")
DATA_COLUMNS = ("time_window", "A_clicks", "A_store_views", "B_clicks", "B_store_views")
RECORD = TableFile(file="record.csv", columns=(Column("scenario"), Column("A_conversion %"),
                                               Column("B_conversion %")), key=("scenario",))
PLACEHOLDER = "scenario_name"
OVERALL = "overall (total_store_views/total_clicks)"
INITIAL_ROWS = ((PLACEHOLDER, "", ""), (OVERALL, "", ""))  # record.csv's rows as the agent finds it
BUCKET = "promo-assets-for-b"  # created when B wins
LOG = "abtesting_logging"  # one entry when A wins
PAYLOAD = {"status": "AB_Test_Concluded", "winner": "A", "action": "No_Change"}
WINNER = "winner"  # truth.json answer entry: "A" or "B"
# The winner's action: only bucket BUCKET may appear, and entries only in log LOG (which of the two
# the winner asks for is judged by `winner_action` and `no_wrong_action`).
ACTIONS = (DbRows(table="gcs_bucket", key=("name",), where=f"name = {sql_text(BUCKET)}", values=("name",)),
           DbRows(table="log_entry", key=("insert_id",), where=f"log_name = {sql_text(LOG)}",
                  values=("json_payload", "text_payload")))
# The pagination trap: the table listing, read one page of this size, misses scenario tables.
TRAP_PAGE = 2
LIST_PAGE = 100  # bigquery_list_tables' default page size
ROWS_PAGE = 1000  # rows per bigquery_run_query page in the read set

TOOLS: dict[str, tuple[str, ...]] = {
    "google_cloud": ("bigquery_list_datasets", "bigquery_list_tables", "bigquery_get_table_info",
                     "bigquery_run_query", "storage_create_bucket", "storage_list_buckets",
                     "logging_write_log", "logging_read_logs"),
    "filesystem": ("list_directory", "read_text_file", "write_file", "edit_file"),
    "python_execute": ("python_execute",),
    "claim_done": ("claim_done",),
}

INSTRUCTION = """\
The homepage A/B test clickstream is in the BigQuery dataset `{dataset}`: each table \
`{prefix}<scenario>` holds the hourly rows ({columns}) of one scenario; the other tables of the \
dataset are not scenario data. A version's conversion rate is its total store views ÷ its total \
clicks × 100. Fill `{file}` in the workspace: keep its header `{header}` exactly, remove the \
placeholder row `{placeholder}`, write one row per scenario, named as its table without the \
`{prefix}` prefix, sorted alphabetically by name, then as the last row the row labelled \
`{overall}` with the pooled rate of each version over all scenarios (the sum of all its store \
views ÷ the sum of all its clicks, not the average of the scenario rates). Write every rate with \
exactly 3 decimals and a `%` sign, e.g. `73.215%`. The winner is the version with the higher \
overall pooled rate. If B wins, create the Cloud Storage bucket `{bucket}` and write no log \
entry. Otherwise create no bucket and write exactly one entry to the log `{log}` whose JSON \
payload is `{payload}`. Create no other bucket or log entry. Change nothing else."""


def instruction(_world: World) -> str:
    return INSTRUCTION.format(dataset=DATASET, prefix=PREFIX, columns=", ".join(DATA_COLUMNS),
                              file=RECORD.file, header=",".join(RECORD.headers), placeholder=PLACEHOLDER,
                              overall=OVERALL, bucket=BUCKET, log=LOG, payload=payload_text())


def payload_text() -> str:
    """The required payload as JSON text, keys in the stated order."""
    return "{" + ", ".join(f'"{k}": "{v}"' for k, v in PAYLOAD.items()) + "}"


def rate_text(views: int, clicks: int) -> str:
    """views ÷ clicks × 100 with exactly 3 decimals (half up) and a `%` sign."""
    rate = (Decimal(views) * 100 / Decimal(clicks)).quantize(Decimal("0.001"), ROUND_HALF_UP)
    return f"{rate}%"


def list_tables(tools: Tools, page_size: int = LIST_PAGE, first_page_only: bool = False) -> Script:
    """The dataset's table ids, every page (or the first only)."""
    tables = yield from paged_by_token(tools("google_cloud", "bigquery_list_tables"), {"dataset_id": DATASET},
                                       "tables", "max_results", page_size, first_page_only)
    return [t["table_id"] for t in tables]


def query_all(tools: Tools, queries: list[str]) -> Script:
    """Every result row of each SELECT, all pages, the pages of all queries asked at once."""
    rows = yield from paged_by_offset(tools("google_cloud", "bigquery_run_query"), [{"query": q} for q in queries],
                                      "rows", "max_results", ROWS_PAGE)
    return rows


def table_ref(table: str) -> str:
    return f"`{DATASET}.{table}`"


def read_set(_instruction: str, tools: list[dict[str, Any]]) -> Script:
    """The table listing (all pages) and every row of every scenario table (all pages)."""
    named = Tools(tools)
    tables = yield from list_tables(named)
    scenarios = [t for t in tables if t.startswith(PREFIX)]
    yield from query_all(named, [f"SELECT * FROM {table_ref(t)} ORDER BY time_window" for t in scenarios])


TASK = TaskSpec(
    name="ab_testing",
    version=0,
    summary="per-scenario and pooled A/B conversion rates from many BigQuery tables, then act on the winner",
    servers={key: key for key in TOOLS},
    scale=Scale(primary="num_scenarios", lo=3, hi=84, fine="num_extra_hours"),
    instruction=instruction,
    read_set=read_set,
    outputs=(RECORD, *ACTIONS),
    tools=tuple((key, tool) for key, names in TOOLS.items() for tool in names),
)
