"""`bigquery_run_query`'s work: one GoogleSQL statement through the SQL front end, with the
row window (`max_results`, `start_index`), dry runs rolled back, and a job record for every
statement run. As BigQuery answers a query again from its cached results while the tables are
unchanged, a query's whole result is kept (bounded) while the state is unchanged: paging through
it with `start_index` reads it once, not once per page."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlglot import exp

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid
from mock_servers.core.output import dump_json, items_that_fit
from mock_servers.core.recent import Recent
from mock_servers.core.times import instant
from mock_servers.core.toolkit import Call
from mock_servers.google_cloud import base, bq_arrays, bq_functions, bq_types
from mock_servers.google_cloud.bq_catalog import BigQueryCatalog
from mock_servers.sqlfront import Engine, Rows, Statement, parse
from mock_servers.sqlfront.names import name_parts
from mock_servers.sqlfront.query import Result

DIALECT = "bigquery"
RUNS = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE", "MERGE", "CREATE", "DROP", "ALTER", "TRUNCATE"})
_CAP_NOTICE = "output cap reached after {} rows; request the next rows with start_index"
KEPT_ROWS = 200_000  # rows of whole results a server keeps at most, all results together (by (query, state version))


def catalog(call: Call) -> BigQueryCatalog:
    return BigQueryCatalog(call.session, base.project(call), lambda: call.now)


def engine(call: Call, cat: BigQueryCatalog) -> Engine:
    return Engine(sql.cursor(call.session), cat, cat.now, DIALECT, bq_types.show)


def statement_of(call: Call, text: str) -> Statement:
    """The one statement of `text`: NUMERIC without precision read as BigQuery's, its functions
    and arrays in the front end's terms, the CURRENT_* functions read from the clock."""
    statement = parse(text, DIALECT, fold=False)
    if statement.kind not in RUNS:
        raise invalid(f"{statement.kind} is not a BigQuery statement; supported: SELECT, INSERT, UPDATE, "
                      "DELETE, MERGE, CREATE TABLE, DROP TABLE, ALTER TABLE, TRUNCATE TABLE")
    _refuse_parameterized(statement.tree)
    bq_types.exact_numerics(statement.tree)
    statement.tree = bq_arrays.lower(bq_functions.lower(statement.tree))
    if statement.tree.find(exp.CurrentTimestamp, exp.CurrentDatetime, exp.CurrentDate):
        statement.tree = clock(statement.tree, call.now)
    return statement


def _refuse_parameterized(tree: exp.Expression) -> None:
    """A column declared STRING(L), NUMERIC(P, S), ARRAY<T> or STRUCT<...> is UNIMPLEMENTED: its
    table would keep neither the bound nor the shape (the catalog holds plain type names)."""
    for column in tree.find_all(exp.ColumnDef):
        kind = column.args.get("kind")
        if isinstance(kind, exp.DataType) and kind.expressions:
            raise ToolFailure(Code.UNIMPLEMENTED, f"column type {kind.sql(DIALECT)} is not supported; "
                              "use a plain type name (STRING, NUMERIC, ...)")


def statement_type(statement: Statement) -> str:
    tree = statement.tree
    if statement.kind == "CREATE":
        return "CREATE_TABLE_AS_SELECT" if isinstance(tree.expression, exp.Query) else "CREATE_TABLE"
    if statement.kind in ("DROP", "ALTER", "TRUNCATE"):
        return f"{statement.kind}_TABLE"
    return statement.kind


def _guess(values: list[Any]) -> str:
    """The type of a computed column whose type the front end could not tell, from its values."""
    found = {type(v) for v in values if v is not None}
    if found == {bool}:
        return "BOOL"
    if found == {int}:
        return "INT64"
    if found and found <= {int, float}:
        return "FLOAT64"
    return "STRING"


def _schema(columns: list[str], kinds: list[Any], rows: list[list[Any]]) -> list[dict[str, Any]]:
    return [{"name": c, "type": bq_types.name_of(k) if k is not None else _guess([r[i] for r in rows]),
             "mode": "NULLABLE"} for i, (c, k) in enumerate(zip(columns, kinds))]


def clock(tree: exp.Expression, now: datetime) -> exp.Expression:
    """CURRENT_TIMESTAMP(), CURRENT_DATETIME() and CURRENT_DATE() as typed literals of the clock."""
    moment = now.astimezone(UTC).replace(tzinfo=None)
    typed: dict[type[exp.Expression], tuple[str, str]] = {
        exp.CurrentTimestamp: (moment.isoformat(sep=" "), "TIMESTAMP"),
        exp.CurrentDatetime: (moment.isoformat(sep=" "), "DATETIME"),
        exp.CurrentDate: (moment.date().isoformat(), "DATE")}

    def visit(node: exp.Expression) -> exp.Expression:
        if type(node) in typed:
            text, kind = typed[type(node)]
            return exp.cast(exp.Literal.string(text), exp.DataType.build(kind, dialect=DIALECT))
        return node
    return tree.transform(visit, copy=False)


def _record(call: Call, kind: str, text: str) -> str:
    """Record the statement as a job; its id. Calls that are not an agent's (server config
    `audit: false`, the measurement of a new world) leave no job behind and do not tick the clock."""
    if not call.config.get("audit", True):
        return f"job_{base.name_id(call, 'bq-job-unrecorded', 0)}"
    cur = sql.run(call.session, "INSERT INTO bq_job (job_id, statement_type, state, query, created) "
                  "VALUES ('', ?, 'DONE', ?, ?)", (kind, text, instant(call.now)))
    job_id = f"job_{base.name_id(call, 'bq-job', int(cur.lastrowid or 0))}"
    sql.run(call.session, "UPDATE bq_job SET job_id = ? WHERE id = ?", (job_id, cur.lastrowid))
    return job_id


def dry_run(call: Call, text: str) -> dict[str, Any]:
    """Check and plan a statement without leaving any change: it runs in a savepoint rolled back."""
    statement = statement_of(call, text)
    cat = catalog(call)
    call.now  # noqa: B018 - the clock ticks outside the savepoint
    cursor = sql.cursor(call.session)
    cursor.execute("SAVEPOINT bq_dry_run")
    try:
        if statement.kind == "SELECT":
            rows = engine(call, cat).read(statement, 0)
            schema = _schema(rows.columns, rows.types, rows.rows)
        else:
            engine(call, cat).write(statement)
            schema = []
    finally:
        cursor.execute("ROLLBACK TO bq_dry_run")
        cursor.execute("RELEASE bq_dry_run")
    return {"statement_type": statement_type(statement), "schema": schema, "valid": True}


def _fit(envelope: dict[str, Any], rows: Rows, cap: int) -> dict[str, Any] | str:
    """The envelope with `rows`: its JSON text when it fits the output cap (the toolkit sends a
    text that fits as it is), else with the rows that fit and a notice."""
    data = [dict(zip(rows.columns, row)) for row in rows.rows]
    text = dump_json({**envelope, "rows": data})
    if len(text) <= cap:
        return text

    def render(k: int) -> dict[str, Any]:
        return {**envelope, "rows": data[:k], "has_more": True, "notice": _CAP_NOTICE.format(k)}
    return render(items_that_fit(len(data), render, cap))


def run(call: Call, text: str, max_results: int, start_index: int) -> dict[str, Any] | str:
    statement = statement_of(call, text)
    kind = statement_type(statement)
    cat = catalog(call)
    if statement.kind != "SELECT":
        if call.config.get("read_only"):
            raise ToolFailure(Code.PERMISSION_DENIED, f"this view of the project is read-only: a {kind} "
                              "statement is refused; only SELECT runs")
        target = _target(cat, statement)
        outcome = engine(call, cat).write(statement)
        job_id = _record(call, kind, text)
        if statement.kind in ("INSERT", "UPDATE", "DELETE", "MERGE"):
            return {"job_id": job_id, "statement_type": kind, "num_dml_affected_rows": outcome.rows}
        shown = outcome.table or ".".join(target or ())
        return {"job_id": job_id, "statement_type": kind, "ddl_target_table": shown}
    rows = _select(call, cat, statement, max_results, start_index)
    job_id = _record(call, kind, text)
    return _fit({"job_id": job_id, "statement_type": kind, "schema": _schema(rows.columns, rows.types, rows.rows),
                 "total_rows": rows.total, "start_index": start_index, "rows": [], "has_more": rows.truncated},
                rows, call.max_output_chars)


def _select(call: Call, cat: BigQueryCatalog, statement: Statement, max_results: int, start_index: int) -> Rows:
    """The page of a SELECT's result, with its total: cut from the kept result of the same query
    on the same state, else from a new run (kept when small enough). The call has begun its
    write transaction (`BEGIN IMMEDIATE`) before the version is read: nothing commits until
    it ends, so the version is that of the state it reads."""
    front = engine(call, cat)
    key = (statement.tree.sql(DIALECT), call.db.version())
    results: Recent[tuple[str, int], Result] = call.state.setdefault(
        "bigquery_results", Recent(lambda result: len(result.rows), KEPT_ROWS))
    whole = results.get(key)
    if whole is not None:
        return whole.page(max_results, start_index, front.show)
    rows, whole = front.read_all(statement, max_results, start_index, KEPT_ROWS)
    if whole is not None:
        results.keep(key, whole)
    return rows


def _target(cat: BigQueryCatalog, statement: Statement) -> tuple[str, ...] | None:
    """The full name of the table a write statement changes (read before the run rewrites it)."""
    table = statement.tree.find(exp.Table)
    return cat.qualify(name_parts(table)) if table is not None else None
