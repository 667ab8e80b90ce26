"""What `mock_servers.core` gives every server: row types, paging arithmetic, the output cap's
bisection and page continuation, and MIME types."""

from __future__ import annotations

import json
import re
from typing import NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlmodel import Session, create_engine

from mock_servers.core import paging, sql
from mock_servers.core.files import content_type
from mock_servers.core.output import cap_json, most_that_fit


@given(st.integers(1, 10_000), st.integers(1, 100), st.data())
def test_a_cut_page_continues_right_after_the_last_item_shown(page, size, data):
    fit = data.draw(st.integers(1, size))
    shown, next_page, next_size = paging.cut(page, size, fit)
    assert 1 <= shown <= fit and 1 <= next_size <= fit
    assert paging.offset(next_page, next_size) == paging.offset(page, size) + shown


def test_a_cut_first_page_shows_all_that_fit():
    assert paging.cut(1, 20, 6) == (6, 2, 6)
    assert paging.cut(2, 7, 5) == (3, 3, 5)  # 3 shown, then items 11-15 on page 3


class _Item(NamedTuple):
    n: int


@given(st.integers(0, 30), st.integers(1, 12), st.integers(1, 8))
def test_a_page_and_its_total_come_from_sql_counting_only_when_the_page_cannot_tell(rows, size, page):
    """Any page of any listing is the slice of the whole, with the right total; the count query
    runs only for a full page with more rows after it, or a page past the end."""
    engine = create_engine("sqlite://")
    with Session(engine) as session:
        sql.run(session, "CREATE TABLE t (n INTEGER PRIMARY KEY)")
        sql.cursor(session).executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(rows)])
        counted: list[str] = []
        sql.cursor(session).connection.set_trace_callback(lambda s: counted.append(s) if "count" in s else None)
        found, total = paging.fetch_page(session, _Item, "SELECT n FROM t ORDER BY n", "SELECT count(*) FROM t",
                                         (), page, size)
        start = (page - 1) * size
        assert [r.n for r in found] == list(range(rows))[start:start + size] and total == rows
        assert bool(counted) == (rows > start + size or (page > 1 and rows <= start))


def test_most_that_fit_bisects():
    assert most_that_fit(0, 100, lambda n: n <= 37) == 37
    assert most_that_fit(0, 100, lambda n: False) == 0
    assert most_that_fit(5, 5, lambda n: False) == 5
    assert most_that_fit(1, 9, lambda n: True) == 9


def test_cap_json_names_the_continuing_page_when_told_the_page_keys():
    obj = {"emails": [{"n": i, "text": "x" * 50} for i in range(20)], "total": 45, "page": 2,
           "page_size": 20, "total_pages": 3}
    text = cap_json(obj, 500, ("emails",), ("page", "page_size"))
    data = json.loads(text)
    shown = len(data["emails"])
    assert len(text) <= 500 and list(data)[:5] == list(obj)
    follow = re.fullmatch(r"output cap reached after (\d+) items; request the next page "
                          r"with page=(\d+) and page_size=(\d+)", data["notice"])
    assert follow and int(follow[1]) == shown
    next_page, next_size = int(follow[2]), int(follow[3])
    assert paging.offset(next_page, next_size) == paging.offset(2, 20) + shown
    plain = json.loads(cap_json(obj, 500, ("emails",)))
    assert plain["notice"] == \
        f"output cap reached after {len(plain['emails'])} items; request the next page"


def test_content_types_come_from_a_fixed_table():
    assert content_type("Report.PDF") == "application/pdf"
    assert content_type("out/results.zip") == "application/zip"
    assert content_type("song.mp3") == "audio/mpeg"
    assert content_type("README") == content_type("x.unknownext") == "application/octet-stream"


class _Pair(NamedTuple):
    number: int
    word: str


def test_rows_come_back_as_named_tuples_of_the_right_width(make_world):
    _, db = make_world([])
    with db.read() as s:
        found = sql.rows(s, _Pair, "SELECT 1, 'one' UNION ALL SELECT 2, 'two' ORDER BY 1")
        assert found == [(1, "one"), (2, "two")] and found[1].word == "two"
        assert type(found[0]) is _Pair and sql.rows(s, _Pair, "SELECT 1, 'x' WHERE 0") == []
        with pytest.raises(TypeError, match="2 fields; the query gives 3"):
            sql.rows(s, _Pair, "SELECT 1, 'one', 'extra'")


def test_every_connection_has_a_unicode_casefold(make_world):
    _, db = make_world([])
    with db.read() as s:
        assert sql.scalar(s, "SELECT casefold('STRAßE Ÿ')") == "strasse ÿ"
        assert sql.scalar(s, "SELECT casefold(NULL)") is None
