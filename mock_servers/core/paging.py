"""Paged listings in SQL (LIMIT/OFFSET, never a whole table loaded and sliced). Each server
wraps the page in its service's native envelope (see docs/concepts/servers.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.limits import MAX_INT

R = TypeVar("R")


def offset(page: int, size: int) -> int:
    """Rows before the page; a page that far is past the end of any table (SQLite's offsets
    are 64-bit)."""
    return min((page - 1) * size, MAX_INT)


def fetch_page(session: Session, row: type[R], query: str, count_query: str,
               params: Sequence[Any], page: int, size: int) -> tuple[list[R], int]:
    """One page of `query` (which ends in an ORDER BY whose last key is unique) and the total
    number of rows. `count_query` runs only when the page does not tell the total by itself:
    the page is read with one row more, so a last page tells it even when it is full."""
    start = offset(page, size)
    rows = sql.rows(session, row, f"{query} LIMIT ? OFFSET ?", (*params, min(size + 1, MAX_INT), start))
    if len(rows) <= size and (rows or page == 1):
        return rows, start + len(rows)
    return rows[:size], int(sql.scalar(session, count_query, params))


def total_pages(total: int, size: int) -> int:
    return -(-total // size)


def cut(page: int, size: int, fit: int) -> tuple[int, int, int]:
    """A page (number `page` of `size` items) of which only the first `fit` items fit in the
    output: (items to show, next page, next page size) such that the next page starts right
    after the last item shown. Shows as many as such a continuation allows."""
    skip = offset(page, size)
    shown, next_size = max((d - skip % d, d) for d in range(1, fit + 1))
    return shown, (skip + shown) // next_size + 1, next_size


def key_page(session: Session, query: str, params: Sequence[Any], page: int,
             size: int) -> tuple[list[Any], int]:
    """One page of the first column of `query` (which ends in an ORDER BY whose last key is
    unique) and the total, from one pass over the matching rows: for filters that test every
    row anyway (substring search), where `fetch_page` would scan them twice. The caller loads
    the page's rows by key."""
    keys = [r[0] for r in sql.run(session, query, params)]
    start = offset(page, size)
    return keys[start:start + size], len(keys)
