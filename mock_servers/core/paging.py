"""Paged listings in SQL (LIMIT/OFFSET, never a whole table loaded and sliced). Each server
wraps the page in its service's native envelope (`servers.md` §1.7)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from sqlmodel import Session

from mock_servers.core import sql

R = TypeVar("R")


def offset(page: int, size: int) -> int:
    return (page - 1) * size


def fetch_page(session: Session, row: type[R], query: str, count_query: str,
               params: Sequence[Any], page: int, size: int) -> tuple[list[R], int]:
    """One page of `query` (which ends in an ORDER BY whose last key is unique) and the total
    number of rows. `count_query` runs only when the page does not tell the total by itself."""
    start = offset(page, size)
    rows = sql.rows(session, row, f"{query} LIMIT ? OFFSET ?", (*params, size, start))
    if 0 < len(rows) < size or (page == 1 and not rows):
        return rows, start + len(rows)
    return rows, int(sql.scalar(session, count_query, params))


def total_pages(total: int, size: int) -> int:
    return -(-total // size)
