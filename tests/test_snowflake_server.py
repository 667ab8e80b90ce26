"""The snowflake tools: output shapes, name rules, session defaults and USE, argument errors,
the output cap, the insights memo and its resource, rollback, budgets and side effects. The SQL
itself is covered by the corpus (tests/test_snowflake_corpus.py)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from loca.core.world import World
from mock_servers import snapshot_rules
from mock_servers.core import snapshot
from mock_servers.snowflake import toolbox
from tests.harness import ServerHarness, table_rows
from tests.snowflake_seed import seeded


@pytest.fixture
def world(make_world: Any) -> World:
    return seeded(make_world)


@pytest.fixture
def h(world: World) -> ServerHarness:
    return ServerHarness(toolbox, world)


def ok(h: ServerHarness, tool: str, **args: Any) -> Any:
    return json.loads(h.ok_text(tool, **args))


def test_list_databases_schemas_tables(h: ServerHarness) -> None:
    assert ok(h, "list_databases") == {"data": [{"DATABASE_NAME": "HR"}, {"DATABASE_NAME": "SHOP"}]}
    assert ok(h, "list_schemas", database="shop") == {
        "database": "SHOP", "data": [{"SCHEMA_NAME": "PUBLIC"}, {"SCHEMA_NAME": "SALES"}]}
    tables = ok(h, "list_tables", database="SHOP", schema="public")
    assert [t["TABLE_NAME"] for t in tables["data"]] == ["BIG", "CUSTOMERS", "ITEMS", "ORDERS"]
    assert tables["data"][1] == {"TABLE_CATALOG": "SHOP", "TABLE_SCHEMA": "PUBLIC", "TABLE_NAME": "CUSTOMERS",
                                 "COMMENT": "people who buy", "ROW_COUNT": 4}
    h.fails("list_schemas", "NOT_FOUND", database="NOPE")
    h.fails("list_tables", "NOT_FOUND", database="SHOP", schema="NOPE")
    assert ok(h, "list_schemas", database='"SHOP"')["database"] == "SHOP"
    h.fails("list_schemas", "NOT_FOUND", database='"shop"')  # quoted keeps its case


def test_describe_table_in_ordinal_order_with_comments(h: ServerHarness) -> None:
    out = ok(h, "describe_table", table_name="customers")
    assert out["table"] == "SHOP.PUBLIC.CUSTOMERS"
    assert [c["COLUMN_NAME"] for c in out["data"]] == ["ID", "NAME", "EMAIL", "CITY", "CREATED", "VIP"]
    assert out["data"][0] == {"COLUMN_NAME": "ID", "COLUMN_DEFAULT": None, "IS_NULLABLE": "YES",
                              "DATA_TYPE": "NUMBER(10,0)", "COMMENT": "customer id"}
    quoted = ok(h, "describe_table", table_name='SALES."2024Q4REIMBURSEMENT"')
    assert quoted["table"] == "SHOP.SALES.2024Q4REIMBURSEMENT"
    assert ok(h, "describe_table", table_name="hr.core.employees")["table"] == "HR.CORE.EMPLOYEES"
    h.fails("describe_table", "NOT_FOUND", table_name="NOPE")
    h.fails("describe_table", "INVALID_ARGUMENT", table_name="a b c ;")
    h.fails("describe_table", "INVALID_ARGUMENT", table_name="a.b.c.d")


def test_read_query_envelope_and_kinds(h: ServerHarness) -> None:
    text = h.ok_text("read_query", query="SELECT ID, VIP FROM CUSTOMERS ORDER BY ID LIMIT 2")
    assert text == '{"data":[{"ID":1,"VIP":true},{"ID":2,"VIP":false}],"row_count":2,"truncated":false}'
    h.fails("read_query", "INVALID_ARGUMENT", query="INSERT INTO CUSTOMERS (ID) VALUES (9)")
    h.fails("read_query", "INVALID_ARGUMENT", query="USE DATABASE HR")
    h.fails("write_query", "INVALID_ARGUMENT", query="SHOW TABLES")
    h.fails("write_query", "INVALID_ARGUMENT", query="WITH X AS (SELECT 1 AS A) SELECT * FROM X")


def test_argument_errors(h: ServerHarness) -> None:
    assert "missing required parameter 'query'" in h.fails("read_query", "INVALID_ARGUMENT")
    assert "unknown parameter 'limit'" in h.fails("read_query", "INVALID_ARGUMENT", query="SELECT 1", limit=5)
    h.fails("read_query", "INVALID_ARGUMENT", query="")
    h.fails("write_query", "INVALID_ARGUMENT", query=42)
    h.fails("append_insight", "INVALID_ARGUMENT", insight="")
    h.fails("create_table", "INVALID_ARGUMENT", query="DROP TABLE CUSTOMERS")
    h.fails("create_table", "INVALID_ARGUMENT", query="CREATE SCHEMA X")


def test_session_defaults_come_from_the_world_and_use_persists(world: World) -> None:
    h = ServerHarness(toolbox, world)
    assert ok(h, "read_query", query="SELECT COUNT(*) AS N FROM CUSTOMERS")["data"] == [{"N": 4}]
    assert ok(h, "write_query", query="USE SCHEMA HR.CORE") == {"statement_type": "USE SCHEMA", "rows_affected": 0}
    again = ServerHarness(toolbox, world)  # a restarted server reads the session from the world
    assert ok(again, "read_query", query="SELECT COUNT(*) AS N FROM EMPLOYEES")["data"] == [{"N": 4}]
    assert ok(again, "describe_table", table_name="EMPLOYEES")["table"] == "HR.CORE.EMPLOYEES"
    again.fails("read_query", "NOT_FOUND", query="SELECT * FROM CUSTOMERS")


def test_no_defaults_needs_full_names(make_world: Any) -> None:
    world, db = make_world(["snowflake"])
    db.dispose()
    h = ServerHarness(toolbox, world)
    assert ok(h, "list_databases") == {"data": []}  # an empty world is empty
    assert "no current database" in h.fails("read_query", "INVALID_ARGUMENT", query="SELECT * FROM T")
    ok(h, "write_query", query="CREATE DATABASE D")
    ok(h, "write_query", query="CREATE TABLE D.PUBLIC.T (A INT)")
    assert ok(h, "read_query", query="SELECT COUNT(*) AS N FROM D.PUBLIC.T")["data"] == [{"N": 0}]


def test_create_table_tool(h: ServerHarness) -> None:
    assert ok(h, "create_table", query="CREATE TABLE T (A INT)") == {"table": "SHOP.PUBLIC.T", "created": True}
    assert ok(h, "create_table", query="CREATE TABLE IF NOT EXISTS T (B INT)") == {"table": "SHOP.PUBLIC.T",
                                                                                 "created": False}
    h.fails("create_table", "ALREADY_EXISTS", query="CREATE TABLE T (A INT)")
    assert ok(h, "create_table", query="CREATE OR REPLACE TABLE T (C INT)")["created"] is True
    assert [c["COLUMN_NAME"] for c in ok(h, "describe_table", table_name="T")["data"]] == ["C"]


def test_failed_write_rolls_back_everything(h: ServerHarness, world: World) -> None:
    ok(h, "write_query", query="CREATE TABLE NN (A INT NOT NULL)")
    before = table_rows(world.state_path)
    h.fails("write_query", "INVALID_ARGUMENT", query="INSERT INTO NN VALUES (1), (2), (NULL)")
    h.fails("write_query", "INVALID_ARGUMENT", query="CREATE TABLE BAD AS SELECT NOPE FROM CUSTOMERS")
    h.fails("write_query", "UNIMPLEMENTED", query="CREATE TABLE BAD2 AS SELECT HASH(ID) AS H FROM CUSTOMERS")
    assert table_rows(world.state_path) == before


def test_append_insight_and_resource(h: ServerHarness) -> None:
    assert ok(h, "append_insight", insight="Q4 spend doubled") == {"insight_count": 1}
    assert ok(h, "append_insight", insight="Bergen has one buyer") == {"insight_count": 2}
    assert json.loads(h.runtime.read_resource("memo://insights")) == {
        "insights": ["Q4 spend doubled", "Bergen has one buyer"], "insight_count": 2}

    async def over_mcp() -> str:
        async with Client(h.runtime.app) as client:
            contents = await client.read_resource("memo://insights")
            return contents[0].text

    assert json.loads(asyncio.run(over_mcp()))["insight_count"] == 2


def test_output_cap_cuts_rows_and_says_so(world: World) -> None:
    h = ServerHarness(toolbox, world, {"max_output_chars": 2000})
    text = h.ok_text("read_query", query="SELECT N FROM BIG ORDER BY N")
    out = json.loads(text)
    assert len(text) <= 2000 and out["truncated"] is True and "LIMIT/OFFSET" in out["notice"]
    assert out["row_count"] == len(out["data"]) > 10 and out["data"][-1] == {"N": out["row_count"]}


def test_runaway_query_hits_the_call_budget(world: World) -> None:
    h = ServerHarness(toolbox, world, {"max_call_seconds": 0.5})
    endless = "WITH RECURSIVE R (N) AS (SELECT 1 UNION ALL SELECT N + 1 FROM R) SELECT COUNT(*) FROM R"
    h.fails("read_query", "DEADLINE_EXCEEDED", query=endless)
    assert ok(h, "read_query", query="SELECT 1 AS A")["data"] == [{"A": 1}]


def test_reads_and_use_have_no_side_effects_writes_do(h: ServerHarness, world: World) -> None:
    rules = snapshot_rules(["snowflake"])
    before = snapshot.take(world, rules)
    for tool, args in [("list_databases", {}), ("list_tables", {"database": "SHOP", "schema": "PUBLIC"}),
                       ("describe_table", {"table_name": "ORDERS"}), ("read_query", {"query": "SELECT * FROM ORDERS"}),
                       ("read_query", {"query": "SHOW TABLES"}), ("write_query", {"query": "USE DATABASE HR"})]:
        h.ok_text(tool, **args)
    assert snapshot.changes(world, before, rules) == []
    h.ok_text("write_query", query="DELETE FROM SHOP.PUBLIC.ITEMS WHERE SKU = 'A'")
    problems = snapshot.changes(world, before, rules)
    assert problems and all("sf_data_" in p for p in problems)


def test_same_calls_give_the_same_text(world: World, tmp_path: Path) -> None:
    script = [("write_query", "INSERT INTO ORDERS (ID, AMOUNT) VALUES (99, 1.5)"),
              ("read_query", "SELECT ID, AMOUNT, CURRENT_TIMESTAMP() AS T FROM ORDERS ORDER BY ID"),
              ("write_query", "CREATE TABLE X AS SELECT * FROM ITEMS"), ("read_query", "SHOW TABLES")]
    outputs = []
    for n in range(2):
        copy = World.load(shutil.copytree(world.root, tmp_path / f"w{n}"))
        h = ServerHarness(toolbox, copy)
        outputs.append([h.ok_text(tool, query=q) for tool, q in script])
    assert outputs[0] == outputs[1]
