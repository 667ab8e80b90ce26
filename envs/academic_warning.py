"""academic_warning: compare each student's latest quiz score with the mean of their historical
exam scores across many BigQuery tables, list the big drops in `bad_student.csv` and log every
critical one."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any

from loca.core.outputs import Column, DbRows, TableFile, sql_text
from loca.core.script import Script, Tools, call, paged_by_offset, paged_by_token
from loca.core.task import Scale, TaskSpec

if TYPE_CHECKING:
    from loca.core.world import World

DATASET = "academic_warning"
EXAM_TABLE = re.compile(r"scores_\d{4}")  # the whole table id
LATEST_FILE = "latest_quiz_scores.csv"
LATEST_HEADERS = ("student_id", "name", "class_id", "score")
REPORT = TableFile(file="bad_student.csv", columns=(
    Column("student_id"), Column("name"), Column("score", "N"), Column("hist_avg", "N"),
    Column("drop_ratio", "N")), key=("student_id",))
WARN, CRITICAL = Decimal("0.25"), Decimal("0.45")  # drop_ratio above these: listed, logged
LOG = "exam_log"
LOG_ENTRIES = DbRows(table="log_entry", key=("insert_id",), where=f"log_name = {sql_text(LOG)}", values=("severity",))
EXACT = "exact"  # truth.json entry: student_id -> [hist_avg, drop_ratio] unrounded
CRITICAL_KEY = "critical"  # truth.json answer entry: the critical students' ids and names
KNOWN = "students"  # truth.json entry: every student_id of the world -> name
# The pagination trap: the table listing, read one page of this size, misses exam tables.
TRAP_PAGE = 2
LIST_PAGE = 100  # bigquery_list_tables' default page size
ROWS_PAGE = 5000

TOOLS: dict[str, tuple[str, ...]] = {
    "google_cloud": ("bigquery_list_tables", "bigquery_get_table_info", "bigquery_run_query", "logging_write_log",
                     "logging_list_logs", "logging_read_logs"),
    "filesystem": ("list_directory", "read_text_file", "write_file", "edit_file"),
    "python_execute": ("python_execute",),
    "claim_done": ("claim_done",),
}

INSTRUCTION = """\
`{latest}` in the workspace holds each student's latest quiz score ({latest_headers}). Historical \
exam scores are in the BigQuery dataset `{dataset}`, one table per exam named exactly \
`scores_<YYMM>` (four digits; other tables are not exam scores; an exam a student missed has no row \
for them and is not a score). For each student in the latest file who has at least one historical \
score: hist_avg = the mean of all their historical scores, drop_ratio = (hist_avg − latest score) ÷ \
hist_avg, both computed exactly (drop_ratio from the unrounded hist_avg); round only what you write. \
Write `{report}` with the header `{header}` listing exactly the students with drop_ratio > {warn}, sorted \
by drop_ratio descending (ties by student_id); name and score as in the latest file, hist_avg rounded \
to 2 decimals, drop_ratio as a fraction rounded to 4 decimals. For every student with drop_ratio > \
{critical} write exactly one entry with \
severity CRITICAL to the log `{log}` whose message contains the student's name and student_id (and \
no other student's id). Write no other entries to `{log}` and no entries to other logs. Change \
nothing else."""


def instruction(_world: World) -> str:
    return INSTRUCTION.format(latest=LATEST_FILE, latest_headers=", ".join(LATEST_HEADERS), dataset=DATASET,
                              report=REPORT.file, header=",".join(REPORT.headers), warn=WARN, critical=CRITICAL,
                              log=LOG)


def rounded(value: Decimal, places: int) -> str:
    """`value` rounded half up to `places` decimals."""
    return str(value.quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP))


def exam_tables(tools: Tools, page_size: int = LIST_PAGE, first_page_only: bool = False) -> Script:
    """The ids of the dataset's tables (every page, or the first only)."""
    tables = yield from paged_by_token(tools("google_cloud", "bigquery_list_tables"), {"dataset_id": DATASET},
                                       "tables", "max_results", page_size, first_page_only)
    return [t["table_id"] for t in tables]


def dump(tools: Tools, tables: list[str]) -> Script:
    """Every row of each table, all pages, the pages of all tables asked at once."""
    queries = [{"query": f"SELECT * FROM `{DATASET}.{t}`"} for t in tables]
    rows = yield from paged_by_offset(tools("google_cloud", "bigquery_run_query"), queries, "rows", "max_results",
                                      ROWS_PAGE)
    return rows


def read_everything(tools: Tools, page_size: int = LIST_PAGE, first_page_only: bool = False,
                    keep: re.Pattern[str] = EXAM_TABLE) -> Script:
    """The read set: the latest file, the table listing (all pages) and every row of every
    table whose id `keep` matches whole. Returns (the latest file's text, rows per table id)."""
    latest = yield from call(tools("filesystem", "read_text_file"), {"path": LATEST_FILE})
    tables = yield from exam_tables(tools, page_size, first_page_only)
    chosen = [t for t in tables if keep.fullmatch(t)]
    rows = yield from dump(tools, chosen)
    return str(latest), dict(zip(chosen, rows, strict=True))


def read_set(_instruction: str, tools: list[dict[str, Any]]) -> Script:
    yield from read_everything(Tools(tools))


TASK = TaskSpec(
    name="academic_warning",
    version=0,
    summary="students whose latest score dropped over 25% below their exam history, CRITICAL logs over 45%",
    servers={key: key for key in TOOLS},
    scale=Scale(primary="num_students", lo=40, hi=5800, fine="num_former_students"),
    instruction=instruction,
    read_set=read_set,
    outputs=(REPORT, LOG_ENTRIES),
    tools=tuple((key, tool) for key, names in TOOLS.items() for tool in names),
)
