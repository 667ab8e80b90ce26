"""Latency of snowflake `read_query` and google_cloud `bigquery_run_query` beside the same SQL
run directly on SQLite (the overhead as the median of paired differences).

    python bench/bench_sql.py            # print the table
    python bench/bench_sql.py --write    # also write its section of bench/RESULTS.md

A world with a 50,000-row fact table (and 1,000 customers, 200 products) is built through the
generators' seed helpers (`snowflake.seed.build`, `google_cloud.seed.bigquery`); for a point
lookup, a 3-way join with GROUP BY and a window
function over the fact table, it times the whole in-process tool call (parse, resolve, transpile,
run, show, JSON) and the transpiled statement alone on a plain sqlite3 connection, and reports
the medians, the overhead in ms and as a ratio, and the front end's own time (no execution)."""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from generators.common import create_world
from loca.core.world import World, WorldMeta
from mock_servers import google_cloud
from mock_servers.core.toolkit import ServerRuntime, Toolbox
from mock_servers.google_cloud import bq_arrays, bq_functions, bq_types
from mock_servers.google_cloud import seed as bq_seed
from mock_servers.google_cloud.bq_catalog import BigQueryCatalog
from mock_servers.snowflake import seed, toolbox
from mock_servers.snowflake.catalog import SnowflakeCatalog
from mock_servers.sqlfront import parse, query, udf
from mock_servers.sqlfront.dialect import Dialect

ROOT = Path(__file__).resolve().parent
SECTION = "## SQL front end: snowflake read_query against SQLite"
BQ_SECTION = "## SQL front end: google_cloud bigquery_run_query against SQLite"
sys.path.insert(0, str(ROOT))
from results import put_section  # noqa: E402  (a sibling script, not a package)

FACT_ROWS = 50_000
QUERIES = {
    "point lookup": "SELECT * FROM FACT WHERE ID = 31337",
    "3-way join + GROUP BY": (
        "SELECT c.REGION, p.CATEGORY, COUNT(*) AS N, SUM(f.AMOUNT) AS TOTAL FROM FACT f "
        "JOIN CUSTOMERS c ON c.ID = f.CUSTOMER_ID JOIN PRODUCTS p ON p.ID = f.PRODUCT_ID "
        "GROUP BY c.REGION, p.CATEGORY ORDER BY c.REGION, p.CATEGORY"),
    "window function": (
        "SELECT CUSTOMER_ID, ID, AMOUNT, SUM(AMOUNT) OVER (PARTITION BY CUSTOMER_ID ORDER BY DAY, ID) AS RUNNING "
        "FROM FACT QUALIFY ROW_NUMBER() OVER (PARTITION BY CUSTOMER_ID ORDER BY AMOUNT DESC, ID) = 1"),
}
BQ_QUERIES = {
    "point lookup": "SELECT * FROM bench.fact WHERE id = 31337",
    "3-way join + GROUP BY": (
        "SELECT c.region, p.category, COUNT(*) AS n, SUM(f.amount) AS total FROM `local-project.bench.fact` f "
        "JOIN bench.customers c ON c.id = f.customer_id JOIN bench.products p ON p.id = f.product_id "
        "GROUP BY c.region, p.category ORDER BY c.region, p.category"),
    "window function": (
        "SELECT customer_id, id, amount, SUM(amount) OVER (PARTITION BY customer_id ORDER BY day, id) AS running "
        "FROM bench.fact WHERE TRUE QUALIFY ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY amount DESC, id) = 1"),
}
Rows = list[tuple[object, ...]]


def tables() -> tuple[Rows, Rows, Rows]:
    """The fact, customer and product rows (the same for every service)."""
    rng = random.Random(7)
    start = date(2024, 1, 1)
    fact: Rows = [(i, rng.randint(1, 1000), rng.randint(1, 200), round(rng.uniform(1, 500), 2),
                   (start + timedelta(days=rng.randint(0, 364))).isoformat()) for i in range(1, FACT_ROWS + 1)]
    customers: Rows = [(i, f"Customer {i}", rng.choice(["NORTH", "SOUTH", "EAST", "WEST"])) for i in range(1, 1001)]
    products: Rows = [(i, f"Product {i}", f"CAT{i % 12}") for i in range(1, 201)]
    return fact, customers, products


def build_world(root: Path) -> tuple[World, float]:
    """The snowflake benchmark world and the seconds `seed.build` took for it."""
    meta = WorldMeta(task="bench", seed=0, params={}, now="2025-01-15T09:00:00Z", generator_version="0",
                     accounts={"snowflake": {"database": "BENCH", "schema": "PUBLIC"}})
    world, db = create_world(root, meta, ["snowflake"])
    fact, customers, products = tables()
    c = seed.ColumnDef
    spec = [seed.DatabaseDef("BENCH", [seed.SchemaDef("PUBLIC", [
        seed.TableDef("FACT", [c("ID", "NUMBER(10,0)"), c("CUSTOMER_ID", "NUMBER(10,0)"),
                               c("PRODUCT_ID", "NUMBER(10,0)"), c("AMOUNT", "NUMBER(10,2)"), c("DAY", "DATE")], fact),
        seed.TableDef("CUSTOMERS", [c("ID", "NUMBER(10,0)"), c("NAME", "VARCHAR"), c("REGION", "VARCHAR")], customers),
        seed.TableDef("PRODUCTS", [c("ID", "NUMBER(10,0)"), c("NAME", "VARCHAR"), c("CATEGORY", "VARCHAR")], products),
    ])])]
    with db.write() as session:
        began = time.perf_counter()
        seed.build(session, spec, world.clock.at(0))
        built = time.perf_counter() - began
    db.dispose()
    return world, built


def build_bigquery_world(root: Path) -> tuple[World, float]:
    """The BigQuery benchmark world (dataset bench) and the seconds `seed.bigquery` took for it."""
    meta = WorldMeta(task="bench", seed=0, params={}, now="2025-01-15T09:00:00Z", generator_version="0")
    world, db = create_world(root, meta, ["google_cloud"])
    fact, customers, products = tables()
    f = bq_seed.FieldDef
    spec = [bq_seed.DatasetDef("bench", [
        bq_seed.TableDef("fact", [f("id", "INT64"), f("customer_id", "INT64"), f("product_id", "INT64"),
                                  f("amount", "NUMERIC"), f("day", "DATE")], fact),
        bq_seed.TableDef("customers", [f("id", "INT64"), f("name", "STRING"), f("region", "STRING")], customers),
        bq_seed.TableDef("products", [f("id", "INT64"), f("name", "STRING"), f("category", "STRING")], products)])]
    with db.write() as session:
        began = time.perf_counter()
        bq_seed.bigquery(session, "local-project", spec, world.clock.at(0))
        built = time.perf_counter() - began
    db.dispose()
    return world, built


def bq_transpiled(runtime: ServerRuntime, sql: str) -> str:
    """The SQLite text bigquery_run_query runs for `sql`: every row (its page is cut from the
    whole result, with the total)."""
    with runtime.db.read() as session:
        statement = parse(sql, "bigquery", fold=False)
        tree = bq_arrays.lower(bq_functions.lower(bq_types.exact_numerics(statement.tree)))
        cat = BigQueryCatalog(session, "local-project", lambda: runtime.world.clock.at(0))
        query.name_outputs(tree, "bigquery")
        return query.prepare(tree, cat, lambda: runtime.world.clock.at(0), Dialect("bigquery")).sql()


def transpiled(runtime: ServerRuntime, sql: str) -> str:
    """The SQLite text the front end runs for `sql` (with its row limit)."""
    with runtime.db.read() as session:
        statement = parse(sql, "snowflake")
        cat = SnowflakeCatalog(session, ("BENCH", "PUBLIC"), lambda: runtime.world.clock.at(0))
        query.name_outputs(statement.tree, "snowflake")
        prepared = query.prepare(statement.tree, cat, lambda: runtime.world.clock.at(0), Dialect("snowflake"))
        prepared.tree = query.limit_rows(prepared.tree, 10_001)
        return prepared.sql()


def interleaved(fns: list[object], repeats: int) -> list[list[float]]:
    """Seconds of each of `fns` per repeat, run in turn within every repeat (so a busy machine
    slows all of them alike)."""
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            began = time.perf_counter()
            fn()  # type: ignore[operator]
            samples[i].append(time.perf_counter() - began)
    return samples


def median_ms(samples: list[float]) -> float:
    return 1000 * statistics.median(samples)


@dataclass(frozen=True)
class Service:
    section: str
    toolbox: Toolbox
    tool: str
    extra: dict[str, object]  # more arguments of the tool
    build: Callable[[Path], tuple[World, float]]
    helper: str  # the seed helper, as named in the text
    lower: Callable[[ServerRuntime, str], str]
    queries: dict[str, str]


SERVICES = {
    "snowflake": Service(SECTION, toolbox, "read_query", {}, build_world, "snowflake.seed.build", transpiled,
                         QUERIES),
    "bigquery": Service(BQ_SECTION, google_cloud.toolbox, "bigquery_run_query", {"max_results": 10_000},
                        build_bigquery_world, "google_cloud.seed.bigquery", bq_transpiled, BQ_QUERIES),
}


def run(repeats: int, name: str = "snowflake") -> list[str]:
    service = SERVICES[name]
    tool_name, lower = service.tool, service.lower
    loop = asyncio.new_event_loop()  # one loop for every call, as the gym's env keeps one
    with tempfile.TemporaryDirectory() as tmp:
        world, built = service.build(Path(tmp) / "world")
        runtime = ServerRuntime(service.toolbox, world, {})
        direct = sqlite3.connect(world.state_path)
        udf.register(direct)
        lines = [service.section, "",
                 f"{FACT_ROWS:,}-row fact table built by `{service.helper}` in {built:.2f} s. Medians of "
                 f"{repeats} interleaved runs, in process, on a shared 2-core machine (`python bench/bench_sql.py`). "
                 f"\"{tool_name}\" is the whole tool call (transaction, parse, resolve, transpile, run, typed "
                 "values, JSON, audit row); \"SQLite\" the transpiled statement alone on a plain connection; "
                 "\"overhead\" the median of the differences between a call and the SQLite run beside it; "
                 "\"front end\" parse, catalog look-ups, lowering and generation without running anything. "
                 "Physical tables carry no indexes (the warehouse has none either).", "",
                 f"| query | rows | {tool_name} ms | SQLite ms | overhead ms | ratio | front end ms |",
                 "|---|---|---|---|---|---|---|"]
        for label, sql in service.queries.items():
            text = lower(runtime, sql)

            def tool(sql: str = sql) -> None:
                outcome = loop.run_until_complete(runtime.call(tool_name, {"query": sql, **service.extra}))
                assert not outcome.is_error, outcome.text

            def plain(text: str = text) -> None:
                direct.execute(text).fetchall()

            def front(sql: str = sql) -> None:
                lower(runtime, sql)

            tool()
            rows = len(direct.execute(text).fetchall())
            calls, runs, fronts = interleaved([tool, plain, front], repeats)
            ours, theirs = median_ms(calls), median_ms(runs)
            overhead = median_ms([c - r for c, r in zip(calls, runs, strict=True)])  # paired: noise cancels
            lines.append(f"| {label} | {rows} | {ours:.2f} | {theirs:.2f} | {overhead:.2f} | "
                         f"{ours / theirs:.2f} | {median_ms(fronts):.2f} |")
        direct.close()
        runtime.db.dispose()
    loop.close()
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=60)
    parser.add_argument("--write", action="store_true", help="write the section of bench/RESULTS.md")
    args = parser.parse_args()
    for service in SERVICES:
        lines = run(args.repeats, service)
        print("\n".join(lines) + "\n")
        if args.write:
            put_section(lines)


if __name__ == "__main__":
    main()
