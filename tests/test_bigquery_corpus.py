"""The BigQuery SQL conformance corpus (tests/sql_corpus/bigquery.yaml): every statement with
its expected rows or error, on the datasets of tests/gcloud_seed.py; the tool's description
(its `query` parameter's) lists exactly the functions and casts the corpus covers; and a
property test: random table contents come back unchanged through INSERT and SELECT."""

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

from generators.common import create_world
from loca.core.world import World, WorldMeta
from mock_servers.google_cloud import bq_supported, toolbox
from tests.gcloud_seed import seeded
from tests.harness import ServerHarness
from tests.sql_corpus_support import called_functions, cast_types, expect_error, load_corpus, mutations, seeded_world

pytestmark = pytest.mark.slow  # a conformance corpus

CORPUS = load_corpus("bigquery")
WRITES = ("INSERT", "UPDATE", "DELETE", "MERGE", "CREATE", "DROP", "ALTER", "TRUNCATE")


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> World:
    return seeded_world(tmp_path_factory.mktemp("corpus"), seeded)


@pytest.fixture(scope="module")
def shared(base: World) -> ServerHarness:
    return ServerHarness(toolbox, base)


def test_corpus_is_large_and_ids_are_unique() -> None:
    ids = [case["id"] for case in CORPUS]
    assert len(ids) >= 300 and len(ids) == len(set(ids))


def test_the_tool_description_lists_exactly_what_the_corpus_covers() -> None:
    assert sorted(called_functions(CORPUS, "bigquery")) == sorted(bq_supported.FUNCTIONS)
    assert cast_types(CORPUS, "bigquery", lambda t: t.sql("bigquery").split("(")[0]) == set(bq_supported.CASTS)
    query = inspect.signature(toolbox.defs["bigquery_run_query"].fn, eval_str=True).parameters["query"].annotation
    assert any(bq_supported.DESCRIPTION in (getattr(meta, "description", None) or "") for meta in query.__metadata__)


def _call(h: ServerHarness, sql: str, **args: Any) -> tuple[str, bool]:
    return h.call("bigquery_run_query", query=sql, **args)


def _expect(h: ServerHarness, case: dict[str, Any], text: str, is_error: bool) -> None:
    if expect_error(case, text, is_error):
        return
    out = json.loads(text)
    for key, value in (case.get("result") or {}).items():
        assert out[key] == value, (key, out)
    if "types" in case:
        assert [f["type"] for f in out["schema"]] == case["types"], out["schema"]
    if "rows" not in out:
        return
    if "columns" in case:
        assert [f["name"] for f in out["schema"]] == case["columns"], out["schema"]
    if "rows" in case:
        rows = [[r[case["pick"]]] if "pick" in case else list(r.values()) for r in out["rows"]]
        assert rows == case["rows"], rows
    for key in ("total_rows", "has_more"):
        if key in case:
            assert out[key] == case[key], (key, out[key])


@pytest.mark.parametrize("case", CORPUS, ids=[c["id"] for c in CORPUS])
def test_statement(case: dict[str, Any], base: World, shared: ServerHarness, tmp_path: Path) -> None:
    h = shared
    if case["sql"].lstrip().upper().startswith(WRITES) or case.get("setup") or case.get("check"):
        shutil.copytree(base.root, tmp_path / "w")
        h = ServerHarness(toolbox, World.load(tmp_path / "w"))
    for statement in case.get("setup") or []:
        text, is_error = _call(h, statement)
        assert not is_error, (statement, text)
    text, is_error = _call(h, case["sql"], **case.get("args", {}))
    _expect(h, case, text, is_error)
    if case.get("check"):
        text, is_error = _call(h, case["check"]["sql"])
        _expect(h, case["check"], text, is_error)


# --- property: contents round-trip -------------------------------------------------------------

_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufffe\uffff"), max_size=30)
_ROW = st.tuples(
    st.integers(-(10**15), 10**15),
    st.decimals(min_value=Decimal("-9999999999.99"), max_value=Decimal("9999999999.99"), places=2, allow_nan=False,
                allow_infinity=False),
    _TEXT, st.booleans(), st.dates(date(1900, 1, 1), date(2999, 12, 31)),
    st.datetimes(datetime(1970, 1, 1), datetime(2100, 1, 1)),
    st.floats(-1e30, 1e30, allow_nan=False).filter(lambda x: x == 0 or abs(x) >= 1e-30))
_NULLABLE = _ROW.flatmap(lambda row: st.tuples(*(st.one_of(st.just(v), st.none()) for v in row)))


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, datetime | date | str):  # GoogleSQL strings escape with a backslash
        text = value.isoformat(sep=" ") if isinstance(value, datetime) else str(value)
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return repr(value) if isinstance(value, float) else str(value)


def _shown(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, datetime):
        fraction = f".{value.microsecond:06d}" if value.microsecond else ""
        return value.strftime("%Y-%m-%d %H:%M:%S") + fraction + " UTC"
    if isinstance(value, date):
        return value.isoformat()
    return value


@pytest.fixture(scope="module")
def empty(tmp_path_factory: pytest.TempPathFactory) -> ServerHarness:
    root = tmp_path_factory.mktemp("roundtrip")
    meta = WorldMeta(task="test", seed=0, params={}, now="2025-01-15T09:00:00Z", generator_version="test")
    world, db = create_world(root / "world", meta, ["google_cloud"])
    db.dispose()
    h = ServerHarness(toolbox, world)
    h.ok_text("bigquery_create_dataset", dataset_id="d")
    h.ok_text("bigquery_run_query", query="CREATE TABLE d.r (i INT64, n NUMERIC, s STRING, b BOOL, dt DATE, "
              "ts TIMESTAMP, f FLOAT64)")
    return h


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(rows=st.lists(_NULLABLE, min_size=1, max_size=5))
def test_random_contents_round_trip(empty: ServerHarness, rows: list[tuple[Any, ...]]) -> None:
    empty.ok_text("bigquery_run_query", query="DELETE FROM d.r WHERE TRUE")
    values = ", ".join("(" + ", ".join(_literal(v) for v in row) + ")" for row in rows)
    empty.ok_text("bigquery_run_query", query=f"INSERT INTO d.r VALUES {values}")
    out = json.loads(empty.ok_text("bigquery_run_query", query="SELECT * FROM d.r"))
    assert [list(r.values()) for r in out["rows"]] == [[_shown(v) for v in row] for row in rows]


# --- mutated statements never crash -------------------------------------------------------------

_TOKEN = re.compile(r"'[^']*'|`[^`]*`|\w+|[^\s\w]")


def test_mutated_statements_give_results_or_readable_errors(base: World, tmp_path: Path) -> None:
    """Each corpus statement with a token dropped, duplicated, replaced or swapped: a result or
    an error of a documented code, never INTERNAL."""
    h = ServerHarness(toolbox, World.load(shutil.copytree(base.root, tmp_path / "w")))
    for sql in mutations([c["sql"] for c in CORPUS], _TOKEN, ["`a-b.c.d`"], 300):
        text, is_error = _call(h, sql)
        assert not text.startswith("Error [INTERNAL]"), (sql, text)
        assert not is_error or text.startswith("Error ["), text

