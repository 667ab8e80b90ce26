"""What every Canvas domain module shares: value checks, inserts (one row through the ORM, many
rows in one executemany), and listings read a page at a time in SQL."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

from sqlmodel import Session, SQLModel

from mock_servers.core import paging, sql
from mock_servers.core.db import bulk_insert
from mock_servers.core.errors import invalid

T = TypeVar("T", bound=SQLModel)

SERVER = "canvas"
ENROLLMENT_TYPES = ("StudentEnrollment", "TeacherEnrollment", "TaEnrollment",
                    "ObserverEnrollment", "DesignerEnrollment")
ENROLLMENT_STATES = ("active", "invited", "inactive", "completed")
STAFF_TYPES = ("TeacherEnrollment", "TaEnrollment")
OPEN_STATES = ("active", "completed")  # enrollment states that let a user into a course
OPEN = sql.quoted(OPEN_STATES)
STAFF = sql.quoted(STAFF_TYPES)
BY_DUE = "x.due_at IS NULL, x.due_at, x.id"  # undated last
NEWEST_FIRST = "x.posted_at DESC, x.id DESC"
MAX_POINTS = 1_000_000  # of an assignment, quiz, question, rubric criterion or grade


def choice(what: str, value: str, allowed: Sequence[str]) -> str:
    """`value` if it is one of `allowed`, else INVALID_ARGUMENT naming them."""
    if value not in allowed:
        raise invalid(f"{what} '{value}' not allowed; use {', '.join(allowed)}")
    return value


def text(what: str, value: str) -> str:
    """A required text value: not blank."""
    if not value.strip():
        raise invalid(f"{what} must not be empty")
    return value


def points(what: str, value: float) -> float:
    """A number of points: finite, 0..MAX_POINTS."""
    if not (math.isfinite(value) and 0 <= value <= MAX_POINTS):
        raise invalid(f"{what} {value} must be a number from 0 to {MAX_POINTS}")
    return float(value)


def insert(session: Session, row: T) -> T:
    """Add one row and flush, so its id is known; the caller's transaction commits."""
    session.add(row)
    session.flush()
    return row


def insert_many(session: Session, model: type[SQLModel], build: Callable[..., dict[str, Any]],
                rows: Iterable[Mapping[str, Any]]) -> int:
    """Check each row of keyword arguments with `build` (the checks of the single-row insert), then
    insert them all in one executemany. Returns how many rows were inserted."""
    values = [build(**row) for row in rows]
    if values:
        bulk_insert(session, model, values)
    return len(values)


def update_row(session: Session, table_name: str, row_id: int, values: Mapping[str, Any],
               allowed: Sequence[str]) -> None:
    """Set `values` (only columns of `allowed`, the fields tools may change) on one row."""
    unknown = sorted(set(values) - set(allowed))
    if unknown:
        raise ValueError(f"{table_name}: {', '.join(unknown)} may not be updated")
    columns = ", ".join(f"{field} = ?" for field in values)
    sql.run(session, f"UPDATE {table_name} SET {columns} WHERE id = ?", (*values.values(), row_id))


def like(term: str) -> str:
    """A case-insensitive LIKE pattern matching `term` anywhere (used with ESCAPE '\\')."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def ids_text(ids: Iterable[int]) -> str:
    """Ids stored as a comma-separated column."""
    return ",".join(str(i) for i in ids)


def ids_of(stored: str) -> list[int]:
    return [int(v) for v in stored.split(",") if v]


class Table(NamedTuple):
    """Rows of `row` read as `columns` from `tables`, whose main table is aliased `x`."""

    row: type[Any]
    columns: str
    tables: str

    def select(self, where: str) -> str:
        return f"SELECT {self.columns} FROM {self.tables} WHERE {where}"


def table(row: type[tuple[Any, ...]], name: str) -> Table:
    """The table `name` read into `row`, whose fields are named after its columns."""
    return Table(row, sql.columns(row, "x"), f"{name} x")


class Listing(NamedTuple):
    """The rows of `table` that match `where` (its `?` take `params`), in `order`, which ends
    in a unique key."""

    table: Table
    where: str
    order: str
    params: tuple[Any, ...] = ()


def fetch_all(session: Session, listing: Listing) -> list[Any]:
    """Every row of a listing."""
    return sql.rows(session, listing.table.row,
                    f"{listing.table.select(listing.where)} ORDER BY {listing.order}",
                    listing.params)


def fetch_one(session: Session, tbl: Table, where: str, params: Sequence[Any]) -> Any:
    """The first row of `tbl` matching `where`, or None."""
    return sql.first(session, tbl.row, tbl.select(where), params)


def paged(session: Session, listing: Listing, page: int, per_page: int,
          render: Callable[[list[Any]], list[dict[str, Any]]]) -> dict[str, Any]:
    """`{items,page,per_page,total,has_more}`, the page read in SQL."""
    tbl, where, order, params = listing
    rows, total = paging.fetch_page(
        session, tbl.row, f"{tbl.select(where)} ORDER BY {order}",
        f"SELECT count(*) FROM {tbl.tables} WHERE {where}", params, page, per_page)
    return envelope(render(rows), page, per_page, total)


def paged_ids(session: Session, listing: Listing, page: int, per_page: int,
              render: Callable[[list[int]], list[Any]]) -> dict[str, Any]:
    """`paged` over the listing's ids, all read in one pass (`paging.key_page`): for listings
    of a few hundred rows, where the count would cost as much as the page."""
    tbl, where, order, params = listing
    ids, total = paging.key_page(session, f"SELECT x.id FROM {tbl.tables} WHERE {where} ORDER BY {order}", params,
                                 page, per_page)
    return envelope(render(ids), page, per_page, total)


def envelope(items: list[Any], page: int, per_page: int, total: int) -> dict[str, Any]:
    return {"items": items, "page": page, "per_page": per_page, "total": total, "has_more": page * per_page < total}


def count_by(session: Session, statement: str, keys: Sequence[int],
             params: Sequence[Any] = ()) -> dict[int, int]:
    """`statement` selects (key, count) grouped by key for keys `IN ({marks})`; missing keys
    count 0."""
    found = dict(sql.run(session, statement.format(marks=sql.marks(len(keys))),
                         (*params, *keys)).fetchall())
    return {k: found.get(k, 0) for k in keys}
