"""The Snowflake SQL conformance corpus (tests/sql_corpus/snowflake.yaml): every statement with
its expected rows or error, on the warehouse of tests/snowflake_seed.py; read_query's
description (its `query` parameter's) lists exactly the functions and casts the corpus
covers; and a property test: random table contents come back unchanged through INSERT and
SELECT."""

from __future__ import annotations

import inspect
import json
import re
import shutil
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from generators.common import create_world
from loca.core.world import World, WorldMeta
from mock_servers.snowflake import supported, toolbox
from mock_servers.sqlfront import types
from tests.harness import ServerHarness
from tests.snowflake_seed import ACCOUNTS, seeded
from tests.sql_corpus_support import called_functions, cast_types, expect_error, load_corpus, mutations, seeded_world

pytestmark = pytest.mark.slow  # a conformance corpus

CORPUS = load_corpus("snowflake")
TOOLS = {"read": ("read_query", "query"), "write": ("write_query", "query"), "create": ("create_table", "query")}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> World:
    return seeded_world(tmp_path_factory.mktemp("corpus"), seeded)


@pytest.fixture(scope="module")
def shared(base: World) -> ServerHarness:
    return ServerHarness(toolbox, base)


def test_corpus_is_large_and_ids_are_unique() -> None:
    ids = [case["id"] for case in CORPUS]
    assert len(ids) >= 300 and len(ids) == len(set(ids))


def _cast_name(dtype: exp.DataType) -> str:
    return types.from_datatype(dtype).portable.split("(")[0]


def test_the_tool_description_lists_exactly_what_the_corpus_covers() -> None:
    assert sorted(called_functions(CORPUS, "snowflake")) == sorted(supported.FUNCTIONS)
    assert cast_types(CORPUS, "snowflake", _cast_name) == set(supported.CASTS)
    query = inspect.signature(toolbox.defs["read_query"].fn, eval_str=True).parameters["query"].annotation
    assert any(supported.DESCRIPTION in (getattr(meta, "description", None) or "") for meta in query.__metadata__)


def _call(h: ServerHarness, tool: str, sql: str) -> tuple[str, bool]:
    name, param = TOOLS[tool]
    return h.call(name, **{param: sql})


def _expect(h: ServerHarness, case: dict[str, Any], text: str, is_error: bool) -> None:
    if expect_error(case, text, is_error):
        return
    out = json.loads(text)
    for key, value in (case.get("result") or {}).items():
        assert out[key] == value, (key, out)
    if "data" not in out:
        return
    if "columns" in case:
        assert (list(out["data"][0]) if out["data"] else case["columns"]) == case["columns"], out["data"][:1]
    if "rows" in case:
        rows = [[r[case["pick"]]] if "pick" in case else list(r.values()) for r in out["data"]]
        assert rows == case["rows"], rows
    for key in ("row_count", "truncated"):
        if key in case:
            assert out[key] == case[key], (key, out[key])


@pytest.mark.parametrize("case", CORPUS, ids=[c["id"] for c in CORPUS])
def test_statement(case: dict[str, Any], base: World, shared: ServerHarness, tmp_path: Path) -> None:
    tool = case.get("tool", "read")
    h = shared
    if tool != "read" or case.get("setup") or case.get("check"):
        shutil.copytree(base.root, tmp_path / "w")
        h = ServerHarness(toolbox, World.load(tmp_path / "w"))
    for statement in case.get("setup") or []:
        text, is_error = _call(h, "write", statement)
        assert not is_error, (statement, text)
    text, is_error = _call(h, tool, case["sql"])
    _expect(h, case, text, is_error)
    if case.get("check"):
        text, is_error = _call(h, "read", case["check"]["sql"])
        _expect(h, case["check"], text, is_error)


# --- property: contents round-trip -------------------------------------------------------------

_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufffe\uffff"), max_size=30)
_ROW = st.tuples(
    st.integers(-(10**15), 10**15), st.decimals(min_value=Decimal("-9999999999.99"), max_value=Decimal("9999999999.99"),
                                                places=2, allow_nan=False, allow_infinity=False),
    _TEXT, st.booleans(), st.dates(date(1900, 1, 1), date(2999, 12, 31)),
    st.datetimes(datetime(1970, 1, 1), datetime(2100, 1, 1)).map(
        lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)),
    st.floats(-1e30, 1e30, allow_nan=False).filter(lambda x: x == 0 or abs(x) >= 1e-30))  # see below
_NULLABLE = _ROW.flatmap(lambda row: st.tuples(*(st.one_of(st.just(v), st.none()) for v in row)))


# FLOAT literals beyond 1e±30 can come back one bit off: SQLite's own text-to-double conversion,
# which every SQL literal goes through, is not correctly rounded there.


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, datetime):
        return f"'{value.isoformat(sep=' ', timespec='milliseconds')}'"
    if isinstance(value, date | str):  # Snowflake strings escape with a backslash
        return "'" + str(value).replace("\\", "\\\\").replace("'", "''") + "'"
    return repr(value) if isinstance(value, float) else str(value)


def _shown(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="milliseconds")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float) and value == int(value) and abs(value) < 2**53:
        return float(value)
    return value


@pytest.fixture(scope="module")
def empty(tmp_path_factory: pytest.TempPathFactory) -> ServerHarness:
    root = tmp_path_factory.mktemp("roundtrip")
    meta = WorldMeta(task="test", seed=0, params={}, now="2025-01-15T09:00:00Z", generator_version="test",
                     accounts=ACCOUNTS)
    world, db = create_world(root / "world", meta, ["snowflake"])
    db.dispose()
    h = ServerHarness(toolbox, world)
    for statement in ("CREATE DATABASE SHOP", "CREATE TABLE R (I NUMBER(18,0), D NUMBER(12,2), S VARCHAR, "
                      "B BOOLEAN, DT DATE, TS TIMESTAMP_NTZ, F FLOAT)"):
        h.ok_text("write_query", query=statement)
    return h


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(rows=st.lists(_NULLABLE, min_size=1, max_size=5))
def test_random_contents_round_trip(empty: ServerHarness, rows: list[tuple[Any, ...]]) -> None:
    empty.ok_text("write_query", query="DELETE FROM R")
    values = ", ".join("(" + ", ".join(_literal(v) for v in row) + ")" for row in rows)
    empty.ok_text("write_query", query=f"INSERT INTO R VALUES {values}")
    out = json.loads(empty.ok_text("read_query", query="SELECT * FROM R"))
    assert [list(r.values()) for r in out["data"]] == [[_shown(v) for v in row] for row in rows]


# --- mutated statements never crash -------------------------------------------------------------

_TOKEN = re.compile(r"'[^']*'|\"[^\"]*\"|\w+|[^\s\w]")


def test_mutated_statements_give_results_or_readable_errors(base: World, tmp_path: Path) -> None:
    """Each corpus statement with a token dropped, duplicated, replaced or swapped, sent to any
    of the SQL tools: a result or an error of a documented code, never INTERNAL."""
    h = ServerHarness(toolbox, World.load(shutil.copytree(base.root, tmp_path / "w")))
    tools = list(TOOLS)
    for n, sql in enumerate(mutations([c["sql"] for c in CORPUS], _TOKEN, ["::"], 400)):
        text, is_error = _call(h, tools[n % len(tools)], sql)
        assert not text.startswith("Error [INTERNAL]"), (sql, text)
        assert not is_error or text.startswith("Error ["), text
