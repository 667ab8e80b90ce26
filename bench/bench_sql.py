"""Latency of snowflake `read_query` beside the same SQL run directly on SQLite.

    python bench/bench_sql.py            # print the table
    python bench/bench_sql.py --write    # also write its section of bench/RESULTS.md

A world with a 50,000-row fact table (and 1,000 customers, 200 products) is built through the
generators' `snowflake.seed.build`; for a point lookup, a 3-way join with GROUP BY and a window
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
from datetime import date, timedelta
from pathlib import Path

from generators.common import create_world
from loca.core.world import World, WorldMeta
from mock_servers.core.toolkit import ServerRuntime
from mock_servers.snowflake import seed, toolbox
from mock_servers.snowflake.catalog import SnowflakeCatalog
from mock_servers.sqlfront import parse, query, udf

ROOT = Path(__file__).resolve().parent
SECTION = "## SQL front end: snowflake read_query against SQLite"
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


def build_world(root: Path) -> tuple[World, float]:
    """The benchmark world and the seconds `seed.build` took for it."""
    rng = random.Random(7)
    meta = WorldMeta(task="bench", seed=0, params={}, now="2025-01-15T09:00:00Z", generator_version="0",
                     accounts={"snowflake": {"database": "BENCH", "schema": "PUBLIC"}})
    world, db = create_world(root, meta, ["snowflake"])
    start = date(2024, 1, 1)
    fact = [(i, rng.randint(1, 1000), rng.randint(1, 200), round(rng.uniform(1, 500), 2),
             start + timedelta(days=rng.randint(0, 364))) for i in range(1, FACT_ROWS + 1)]
    customers = [(i, f"Customer {i}", rng.choice(["NORTH", "SOUTH", "EAST", "WEST"])) for i in range(1, 1001)]
    products = [(i, f"Product {i}", f"CAT{i % 12}") for i in range(1, 201)]
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


def transpiled(runtime: ServerRuntime, sql: str) -> str:
    """The SQLite text the front end runs for `sql` (with its row limit)."""
    with runtime.db.read() as session:
        statement = parse(sql, "snowflake")
        cat = SnowflakeCatalog(session, ("BENCH", "PUBLIC"), lambda: runtime.world.clock.at(0))
        query.name_outputs(statement.tree, "snowflake")
        prepared = query.prepare(statement.tree, cat, lambda: runtime.world.clock.at(0))
        prepared.tree = query.limit_rows(prepared.tree, 10_001)
        return prepared.sql()


def interleaved(fns: list[object], repeats: int) -> list[float]:
    """Median ms of each of `fns`, run in turn within every repeat (so a busy machine slows all
    of them alike)."""
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            began = time.perf_counter()
            fn()  # type: ignore[operator]
            samples[i].append(time.perf_counter() - began)
    return [1000 * statistics.median(s) for s in samples]


def run(repeats: int) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        world, built = build_world(Path(tmp) / "world")
        runtime = ServerRuntime(toolbox, world, {})
        direct = sqlite3.connect(world.state_path)
        udf.register(direct)
        lines = [SECTION, "",
                 f"{FACT_ROWS:,}-row fact table built by `snowflake.seed.build` in {built:.2f} s. Medians of "
                 f"{repeats} interleaved runs, in process, on a shared 2-core machine (`python bench/bench_sql.py`). "
                 "\"read_query\" is the whole tool call (transaction, parse, resolve, transpile, run, typed "
                 "values, JSON, audit row); \"SQLite\" the transpiled statement alone on a plain connection; "
                 "\"front end\" parse, catalog look-ups, lowering and generation without running anything. "
                 "Physical tables carry no indexes (Snowflake has none either).", "",
                 "| query | rows | read_query ms | SQLite ms | overhead ms | ratio | front end ms |",
                 "|---|---|---|---|---|---|---|"]
        for name, sql in QUERIES.items():
            text = transpiled(runtime, sql)

            def tool(sql: str = sql) -> None:
                outcome = asyncio.run(runtime.call("read_query", {"query": sql}))
                assert not outcome.is_error, outcome.text

            def plain(text: str = text) -> None:
                direct.execute(text).fetchall()

            def front(sql: str = sql) -> None:
                transpiled(runtime, sql)

            tool()
            rows = len(direct.execute(text).fetchall())
            ours, theirs, front_ms = interleaved([tool, plain, front], repeats)
            lines.append(f"| {name} | {rows} | {ours:.2f} | {theirs:.2f} | {ours - theirs:.2f} | "
                         f"{ours / theirs:.2f} | {front_ms:.2f} |")
        direct.close()
        runtime.db.dispose()
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--write", action="store_true", help="write the section of bench/RESULTS.md")
    args = parser.parse_args()
    lines = run(args.repeats)
    print("\n".join(lines))
    if args.write:
        put_section(lines)


if __name__ == "__main__":
    main()
