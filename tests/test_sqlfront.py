"""The SQL front end on its own, with a catalog of two tables held in memory: statement kinds
and refusals, syntax errors with their position, name resolution in another dialect (BigQuery's
hyphenated projects), the row limit in the SQL, exact decimals, and the date functions."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

import pytest
import sqlglot
from hypothesis import given
from hypothesis import strategies as st
from sqlglot.parsers.bigquery import BigQueryParser

from mock_servers.core.errors import ToolFailure
from mock_servers.sqlfront import ColumnInfo, Engine, TableRef, dates, moments, parse, query, udf
from mock_servers.sqlfront import types as sqltypes

NOW = datetime(2025, 1, 15, 9, 0, tzinfo=UTC)


class MemoryCatalog:
    """Tables `proj-1.ds.t` (physical p_t) and `proj-1.ds.u` (physical p_u); default project
    and dataset `proj-1.ds`."""

    def __init__(self) -> None:
        self.tables: dict[tuple[str, ...], TableRef] = {
            ("proj-1", "ds", "t"): TableRef(("proj-1", "ds", "t"), "p_t", (
                ColumnInfo("id", sqltypes.INT), ColumnInfo("amount", sqltypes.from_text("NUMBER(10,2)")),
                ColumnInfo("mail", sqltypes.TEXT))),
            ("proj-1", "ds", "u"): TableRef(("proj-1", "ds", "u"), "p_u", (ColumnInfo("id", sqltypes.INT),)),
        }

    def qualify(self, parts: tuple[str, ...]) -> tuple[str, ...]:
        return (("proj-1", "ds")[: 3 - len(parts)]) + parts

    def lookup(self, parts: tuple[str, ...]) -> TableRef | None:
        return self.tables.get(parts)

    def missing(self, parts: tuple[str, ...]) -> str:
        return f"Not found: Table {parts[0]}:{parts[1]}.{parts[2]}"

    def create_table(self, *args: object) -> TableRef:
        raise NotImplementedError

    drop_table = add_column = set_comment = rename_table = create_table


@pytest.fixture
def engine() -> Engine:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE p_t (id INTEGER, amount REAL, mail TEXT)")
    conn.executemany("INSERT INTO p_t VALUES (?, ?, ?)", [(1, 0.1, "a.b.c@x.com"), (2, 0.2, "d@e.f"), (3, 7.0, None)])
    conn.execute("CREATE TABLE p_u (id INTEGER)")
    conn.executemany("INSERT INTO p_u VALUES (?)", [(i,) for i in range(1, 51)])
    return Engine(conn.cursor(), MemoryCatalog(), lambda: NOW, "bigquery")  # type: ignore[arg-type]


def bq(engine: Engine, sql: str, max_rows: int = 100) -> query.Rows:
    return engine.read(parse(sql, "bigquery", fold=False), max_rows)


@pytest.mark.parametrize(("sql", "kind"), [
    ("SELECT 1", "SELECT"), ("WITH a AS (SELECT 1) SELECT * FROM a", "SELECT"),
    ("SELECT 1 UNION ALL SELECT 2", "SELECT"),
    ("INSERT INTO t VALUES (1)", "INSERT"), ("UPDATE t SET a = 1", "UPDATE"), ("DELETE FROM t", "DELETE"),
    ("MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN DELETE", "MERGE"), ("CREATE TABLE t (a INT)", "CREATE"),
    ("DROP TABLE t", "DROP"), ("ALTER TABLE t ADD COLUMN b INT", "ALTER"), ("TRUNCATE TABLE t", "TRUNCATE"),
    ("COMMENT ON TABLE t IS 'x'", "COMMENT"), ("USE DATABASE d", "USE"), ("SHOW TABLES", "SHOW"),
])
def test_statement_kinds(sql: str, kind: str) -> None:
    assert parse(sql, "snowflake").kind == kind


@pytest.mark.parametrize("sql", ["ATTACH DATABASE 'x' AS y", "PRAGMA foo", "DETACH x", "VACUUM", "reindex",
                                 "SELECT 1; SELECT 2", "", "GRANT ROLE r TO USER u"])
def test_refused_statements(sql: str) -> None:
    with pytest.raises(ToolFailure) as caught:
        parse(sql, "snowflake")
    assert caught.value.code.value == "INVALID_ARGUMENT"


def test_syntax_errors_say_where() -> None:
    with pytest.raises(ToolFailure) as caught:
        parse("SELECT a,\n FROM t WHERE (", "snowflake")
    assert "line 2" in caught.value.message and "column" in caught.value.message


def test_bigquery_names_with_hyphenated_projects_in_every_clause(engine: Engine) -> None:
    rows = bq(engine, "SELECT t.id FROM `proj-1.ds.t` AS t WHERE t.id IN (SELECT id FROM `proj-1`.ds.u) "
                      "AND mail = 'a.b.c@x.com'")
    assert rows.rows == [[1]]
    assert bq(engine, "SELECT COUNT(*) AS n FROM ds.u").rows == [[50]]
    with pytest.raises(ToolFailure) as caught:
        bq(engine, "SELECT * FROM `proj-1.ds.nope`")
    assert caught.value.message == "Not found: Table proj-1:ds.nope"


def test_row_limit_is_pushed_into_the_sql(engine: Engine) -> None:
    tree = parse("SELECT id FROM ds.u", "bigquery", fold=False).tree
    assert query.limit_rows(tree, 11).args["limit"].expression.to_py() == 11
    capped = bq(engine, "SELECT id FROM ds.u ORDER BY id", max_rows=10)
    assert capped.truncated and [r[0] for r in capped.rows] == list(range(1, 11))
    assert not bq(engine, "SELECT id FROM ds.u LIMIT 10", max_rows=10).truncated


def test_exact_decimals_and_unsupported_functions(engine: Engine) -> None:
    assert bq(engine, "SELECT SUM(amount) AS s, SUM(amount) = 0.3 AS ok FROM ds.t WHERE id < 3").rows == [[0.3, True]]
    assert bq(engine, "SELECT amount FROM ds.t WHERE id = 3").rows == [[7]]
    with pytest.raises(ToolFailure) as caught:
        bq(engine, "SELECT FARM_FINGERPRINT(mail) FROM ds.t")
    assert caught.value.code.value == "UNIMPLEMENTED" and "FARM_FINGERPRINT" in caught.value.message


@pytest.mark.parametrize(("value", "kind", "shown"), [
    (0.30000000000000004, "NUMBER(10,2)", 0.3), (1.0, "NUMBER(10,0)", 1), (2.5, "NUMBER(10,0)", 3),
    (1, "BOOLEAN", True), ("2024-01-05 00:00:00", "DATE", "2024-01-05"),
    ("2024-01-05T10:00:00", "TIMESTAMP_NTZ", "2024-01-05 10:00:00.000"), (float("nan"), "FLOAT", "NaN"),
    ("abc", "NUMBER(10,2)", "abc"), (None, "NUMBER(10,2)", None),
])
def test_values_show_by_declared_type(value: object, kind: str, shown: object) -> None:
    assert sqltypes.show(value, sqltypes.from_text(kind)) == shown


DATE_TEXTS = ["2024-01-05", "2024-02-30", "0000-01-01", "2024-1-05", "2024-01-05 00:00:00", "2024-W01-1",
              "2024-01-0٥", "20240105", "2024-01-05\n2024-01-06", "", "  2024-01-05"]


@given(st.lists(st.one_of(st.none(), st.sampled_from(DATE_TEXTS), st.dates().map(str), st.text(max_size=12),
                          st.integers(), st.floats(allow_nan=False)), max_size=8))
def test_a_date_column_shows_each_value_as_one_value_shows(values: list[object]) -> None:
    """Including the whole-column shortcut for columns of `YYYY-MM-DD` texts."""
    kind = sqltypes.from_text("DATE")
    assert list(sqltypes.show.column(values, kind)) == [sqltypes.show(v, kind) for v in values]


def test_date_functions_follow_the_calendar() -> None:
    assert dates.date_add("month", 1, "2024-01-31") == "2024-02-29"
    assert dates.date_add("day", -1, "2024-03-01") == "2024-02-29"
    assert dates.date_add("hour", 25, "2024-01-01") == "2024-01-02 01:00:00"
    assert dates.date_diff("month", "2024-01-31", "2024-02-01") == 1
    assert dates.date_diff("year", "2024-12-31", "2025-01-01") == 1
    assert dates.date_diff("day", "2024-01-02 23:00:00", "2024-01-03 01:00:00") == 1
    assert dates.date_trunc("quarter", "2024-05-17") == "2024-04-01"
    assert dates.last_day("2023-02-10") == "2023-02-28"
    assert udf.split_part("a,b,c", ",", -1) == "c" and udf.split_part("a,b", ",", 5) == ""
    assert dates.date_add("fortnight", 1, "2024-01-01") is None


def test_weeks_start_on_the_day_their_part_names() -> None:
    """WEEK is Snowflake's (Monday), WEEK_SUNDAY BigQuery's; the offset of a TIMESTAMP_TZ stays."""
    assert dates.date_trunc("week", "2017-10-15") == "2017-10-09"
    assert dates.date_trunc("WEEK_SUNDAY", "2017-10-14") == "2017-10-08"
    assert dates.date_diff("WEEK_SUNDAY", "2017-10-14", "2017-10-15") == 1
    assert dates.date_diff("week", "2017-10-14", "2017-10-15") == 0
    assert dates.date_part("WEEK_SUNDAY", "2017-10-15") == 42 and dates.date_part("ISOWEEK", "2017-10-15") == 41
    assert dates.date_part("DAYOFWEEK", "2017-10-15") == 0 and dates.date_part("DAYOFWEEK_FROM_1", "2017-10-15") == 1
    assert dates.date_add("hour", 1, "2025-01-15 10:37:00+05:00") == "2025-01-15 11:37:00+05:00"


def test_texts_of_moments_are_read_with_their_zones() -> None:
    assert moments.parse("2025-01-15 10:37:00 UTC") == datetime(2025, 1, 15, 10, 37, tzinfo=UTC)
    assert moments.in_utc(moments.parse("2025-01-15 10:37:00 America/New_York")) == datetime(2025, 1, 15, 15, 37)
    assert moments.in_utc(moments.parse("2025-01-15T10:37:00.5+0530")) == datetime(2025, 1, 15, 5, 7, 0, 500000)
    assert moments.parse("2025-1-5 9:05:00") == datetime(2025, 1, 5, 9, 5)
    for bad in ("2025-02-30", "2025-01-15 25:00:00", "2025-01-15 10:00:00 Mars/Base", "soon",
                "2025-01-15 10:00:00.1234567"):
        assert moments.parse(bad) is None, bad


@pytest.mark.parametrize("sql", [
    "SELECT x FROM d.t, t.arr AS x", "SELECT * FROM d.a AS a CROSS JOIN a.items",
    "SELECT * FROM d.a JOIN d.b USING (id)",
    "SELECT * FROM d.a JOIN d.b ON a.id = b.id JOIN d.c ON c.id = b.id", "SELECT (SELECT 1 FROM d.t, t.y) FROM d.z",
    "WITH c AS (SELECT * FROM d.t, t.arr) SELECT * FROM c JOIN d.q ON c.a = q.a", "SELECT 1"])
def test_bigquery_statements_parse_as_with_the_implicit_unnest_check_on_every_join(sql: str) -> None:
    BigQueryParser.SUPPORTS_IMPLICIT_UNNEST = True  # sqlglot's own parse, for reference
    try:
        expected = sqlglot.parse_one(sql, read="bigquery")
    finally:
        BigQueryParser.SUPPORTS_IMPLICIT_UNNEST = False
    assert repr(parse(sql, "bigquery", fold=False).tree) == repr(expected)
