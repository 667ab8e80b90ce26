"""Running a parsed statement on SQLite: resolve its tables, lower its functions, type its
result columns, push the row limit into the SQL, and show the rows by their logical types."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlglot import ErrorLevel, exp
from sqlglot.errors import SqlglotError

from mock_servers.core.errors import Code, ToolFailure
from mock_servers.sqlfront import dialect as words
from mock_servers.sqlfront import functions, guards, infer, names, raised, types
from mock_servers.sqlfront.dialect import Dialect
from mock_servers.sqlfront.infer import Scope
from mock_servers.sqlfront.names import Catalog, TableRef
from mock_servers.sqlfront.target import Target
from mock_servers.sqlfront.types import LogicalType

_BATCH = 4096  # rows fetched at once when every row is stepped through


@dataclass
class Prepared:
    """A statement ready for SQLite: its text, the tables it reads and its column types."""

    tree: exp.Expression
    tables: dict[str, TableRef]
    scope: Scope = field(default_factory=Scope)

    def sql(self) -> str:
        try:
            return self.tree.sql(dialect=Target, identify=True, unsupported_level=ErrorLevel.RAISE, copy=False)
        except SqlglotError as exc:
            raise ToolFailure(Code.UNIMPLEMENTED, f"not supported on this engine: {exc}") from None


@dataclass
class Rows:
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool
    types: list[LogicalType | None] = field(default_factory=list)  # of the columns, where known
    total: int | None = None  # how many rows the whole query gives, when it was counted


def _around(query: exp.Query, limit: exp.Expression | None, offset: exp.Expression | None = None) -> exp.Select:
    """`SELECT * FROM (query) AS _q` with `limit` and `offset`, in `query`'s place in its tree
    (the query itself is moved, not copied)."""
    outer = exp.Select(expressions=[exp.Star()], limit=limit, offset=offset)
    query.replace(outer)
    outer.set("from_", exp.From(this=query.subquery("_q", copy=False)))
    return outer


def _limit_after_qualify(tree: exp.Expression) -> exp.Expression:
    """A QUALIFY query's LIMIT and OFFSET apply after its filter: move them to a query around it
    (SQLite has no QUALIFY; the translation filters in an outer query)."""
    for select in list(tree.find_all(exp.Select)):
        if select.args.get("qualify") and (select.args.get("limit") or select.args.get("offset")):
            limit, offset = select.args.get("limit"), select.args.get("offset")
            select.set("limit", None)
            select.set("offset", None)
            outer = _around(select, limit, offset)
            if select is tree:
                return outer
    return tree


def prepare(tree: exp.Expression, catalog: Catalog, now: Callable[[], datetime], dialect: Dialect) -> Prepared:
    """Resolve, lower, check and type `tree` (changed in place)."""
    tree = _limit_after_qualify(tree)
    tables = names.resolve(tree, catalog)
    scope = Scope(dialect=dialect.name)
    for ref in tables.values():
        for column in ref.columns:
            scope.setdefault(column.name, column.type)
    tree = functions.lower(tree, now)
    scope = infer.aliases(tree, scope)
    tree = guards.lower(tree, scope, dialect)
    infer.exact_comparisons(tree, scope)
    return Prepared(tree, tables, scope)


@contextmanager
def running(prepared: Prepared) -> Iterator[None]:
    """Run (and fetch from) the statement: an SQLite error, or the error a function of ours
    raised, is a tool error naming logical tables only."""
    try:
        yield
    except sqlite3.Error as exc:
        if isinstance(exc, sqlite3.OperationalError) and str(exc) == "interrupted":
            raise
        if str(exc) == "integer overflow":  # SQLite's SUM past 64 bits
            raise words.overflow(prepared.scope.dialect, "SUM") from None
        raise raised.failure(exc, names.logical(str(exc), prepared.tables)) from None


def execute(cursor: sqlite3.Cursor, prepared: Prepared, sql: str | None = None) -> sqlite3.Cursor:
    """Run the statement (`sql`: its text, when not its own), as `running` says."""
    with running(prepared):
        return cursor.execute(sql or prepared.sql())


def _leftmost(tree: exp.Expression) -> exp.Select | None:
    while isinstance(tree, exp.SetOperation):
        tree = tree.this
    return tree if isinstance(tree, exp.Select) else None


def name_outputs(tree: exp.Expression, dialect: str) -> None:
    """Give each unnamed computed column of the result the text of its expression as its name,
    as the warehouse does (`SUM(AMOUNT)`), before the expression is rewritten."""
    select = _leftmost(tree)
    if select is None:
        return
    for projection in list(select.expressions):
        if not isinstance(projection, exp.Alias | exp.Column | exp.Star):
            alias = exp.Alias(alias=exp.to_identifier(projection.sql(dialect), quoted=True))
            projection.replace(alias)
            alias.set("this", projection)


def output_types(prepared: Prepared) -> dict[str, LogicalType]:
    select = _leftmost(prepared.tree)
    found: dict[str, LogicalType] = {}
    for projection in select.expressions if select else []:
        kind = infer.type_of(projection, prepared.scope)
        if kind is not None and projection.alias_or_name:
            found[projection.alias_or_name] = kind
    return found


def limit_rows(tree: exp.Expression, most: int, skip: int = 0) -> exp.Expression:
    """`tree` returning at most `most` rows after the first `skip`, both in the SQL itself."""
    if not isinstance(tree, exp.Select | exp.SetOperation):
        return tree
    limit = exp.Limit(expression=exp.Literal.number(most))
    if skip:
        return _around(tree, limit, exp.Offset(expression=exp.Literal.number(skip)))
    if tree.args.get("qualify"):
        return _around(tree, limit)
    current = tree.args.get("limit")
    if current is None:
        tree.set("limit", limit)
        return tree
    if isinstance(current, exp.Limit) and isinstance(current.expression, exp.Literal) \
            and current.expression.is_int and int(current.expression.to_py()) <= most:
        return tree
    return _around(tree, limit)


def _unique(columns: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in columns:
        count = seen.get(name, 0) + 1
        seen[name] = count
        out.append(name if count == 1 else f"{name}_{count}")
    return out


def _run(cursor: sqlite3.Cursor, tree: exp.Expression, catalog: Catalog, now: Callable[[], datetime],
         dialect: Dialect, most: int | None, skip: int = 0
         ) -> tuple[Prepared, sqlite3.Cursor, list[LogicalType | None]]:
    """Prepare and start a query, limited in the SQL to `most` rows after the first `skip`
    (None: every row): the statement, its cursor and the type of each result column."""
    name_outputs(tree, dialect.name)
    prepared = prepare(tree, catalog, now, dialect)
    kinds = output_types(prepared)
    if most is not None:
        prepared.tree = limit_rows(prepared.tree, most, skip)
    result = execute(cursor, prepared)
    shown = [kinds.get(d[0]) or prepared.scope.get(d[0]) for d in result.description or ()]
    return prepared, result, shown


def _page(columns: list[str], shown: list[LogicalType | None], found: list[tuple[Any, ...]], max_rows: int,
          show: types.Display, total: int | None = None) -> Rows:
    """`found` (at most one row more than `max_rows`) as the rows of a result, each value shown."""
    values = [show.column(column, kind) for column, kind in zip(zip(*found[:max_rows]), shown)]
    return Rows(_unique(columns), list(map(list, zip(*values))), len(found) > max_rows, shown, total)


def read(cursor: sqlite3.Cursor, tree: exp.Expression, catalog: Catalog, now: Callable[[], datetime],
         dialect: Dialect, max_rows: int, skip: int = 0, show: types.Display = types.show) -> Rows:
    """Run a query, returning at most `max_rows` rows after the first `skip` (and whether
    there were more), each value as `show` shows it."""
    prepared, result, shown = _run(cursor, tree, catalog, now, dialect, max_rows + 1, skip)
    with running(prepared):  # rows are computed as they are fetched: a function may fail here
        found = result.fetchall()
    return _page([d[0] for d in result.description or ()], shown, found, max_rows, show)


@dataclass
class Result:
    """A query's whole result as SQLite gave it: what its pages are cut from."""

    columns: list[str]
    kinds: list[LogicalType | None]
    rows: list[tuple[Any, ...]]

    def page(self, max_rows: int, skip: int, show: types.Display) -> Rows:
        """At most `max_rows` rows after the first `skip`, shown, with the total."""
        return _page(self.columns, self.kinds, self.rows[skip:skip + max_rows + 1], max_rows, show, len(self.rows))


def read_all(cursor: sqlite3.Cursor, tree: exp.Expression, catalog: Catalog, now: Callable[[], datetime],
             dialect: Dialect, max_rows: int, skip: int, show: types.Display, keep: int) -> tuple[Rows, Result | None]:
    """Run a query and step through every row once, in batches: the page of at most `max_rows`
    rows after the first `skip`, with the total, and the whole result when it has at most
    `keep` rows (else None: memory stays bounded)."""
    prepared, result, shown = _run(cursor, tree, catalog, now, dialect, None)
    end = skip + max_rows + 1
    page: list[tuple[Any, ...]] = []
    kept: list[tuple[Any, ...]] | None = []
    seen = 0
    with running(prepared):
        while batch := result.fetchmany(_BATCH):
            if skip < seen + len(batch) and seen < end:
                page += batch[max(skip - seen, 0):end - seen]
            if kept is not None and len(kept) + len(batch) > keep:
                kept = None
            elif kept is not None:
                kept += batch
            seen += len(batch)
    columns = [d[0] for d in result.description or ()]
    whole = Result(columns, shown, kept) if kept is not None else None
    return _page(columns, shown, page, max_rows, show, seen), whole
