"""The front end of a SQL service: `Engine(...).read(sql)` and `.write(sql)` parse one
statement in the service's dialect, check it is of the kind the tool runs, and run it on the
call's SQLite transaction against the service's catalog."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime

from sqlglot import exp

from mock_servers.core.errors import Code, ToolFailure, invalid
from mock_servers.sqlfront import ddl, merge, query, store, types, udf
from mock_servers.sqlfront.ddl import Outcome, WritableCatalog
from mock_servers.sqlfront.dialect import Dialect
from mock_servers.sqlfront.parse import Statement
from mock_servers.sqlfront.query import Rows


def _strip_set_qualifiers(tree: exp.Expression) -> None:
    """SQLite names UPDATE targets without a table qualifier."""
    if isinstance(tree, exp.Update):
        for assignment in tree.expressions:
            if isinstance(assignment.this, exp.Column):
                assignment.this.set("table", None)


class Engine:
    def __init__(self, cursor: sqlite3.Cursor, catalog: WritableCatalog, now: Callable[[], datetime],
                 dialect: str, show: types.Display = types.show, zone: str = "UTC") -> None:
        """`show`: how a stored value of a type is shown (the service's canonical forms);
        `zone`: the session's time zone."""
        self.cursor = cursor
        self.show = show
        self.catalog = catalog
        self.now = now
        self.dialect = Dialect(dialect, zone)
        udf.register(cursor.connection)  # ~20 us; a connection cannot be marked as done

    def read(self, statement: Statement, max_rows: int, skip: int = 0) -> Rows:
        """Rows of a SELECT (with CTEs, set operations, subqueries), at most `max_rows` after
        the first `skip`."""
        return query.read(self.cursor, self._query(statement), self.catalog, self.now, self.dialect, max_rows, skip,
                          self.show)

    def read_all(self, statement: Statement, max_rows: int, skip: int, keep: int) -> tuple[Rows, query.Result | None]:
        """`read` from one pass over every row: the page with the total, and the whole result
        when it has at most `keep` rows."""
        return query.read_all(self.cursor, self._query(statement), self.catalog, self.now, self.dialect, max_rows,
                              skip, self.show, keep)

    @staticmethod
    def _query(statement: Statement) -> exp.Expression:
        if statement.kind != "SELECT":
            raise invalid(f"{statement.kind} is not a query")
        return statement.tree

    def _conformed(self, prepared: query.Prepared, kind: str) -> str | None:
        """Bring the table a DML statement wrote to its column types; its logical name."""
        target = prepared.tree.this
        if isinstance(target, exp.Schema):
            target = target.this
        ref = prepared.tables.get(target.name) if isinstance(target, exp.Table) else None
        if ref is not None and kind != "DELETE":
            store.conform(self.cursor, ref, self.dialect)
        return ref.display if ref else None

    def write(self, statement: Statement) -> Outcome:
        """Run a DML or table DDL statement; what it changed."""
        tree, kind = statement.tree, statement.kind
        if kind in ("INSERT", "UPDATE", "DELETE"):
            _strip_set_qualifiers(tree)
            prepared = query.prepare(tree, self.catalog, self.now, self.dialect)
            rows = max(query.execute(self.cursor, prepared).rowcount, 0)
            return Outcome(self._conformed(prepared, kind), rows=rows)
        if kind == "MERGE":
            prepared = query.prepare(tree, self.catalog, self.now, self.dialect)
            rows = merge.merge(self.cursor, prepared)
            self._conformed(prepared, kind)
            return Outcome(rows=rows)
        if kind == "CREATE" and isinstance(tree, exp.Create) and str(tree.args.get("kind")).upper() == "TABLE":
            return ddl.create(self.cursor, tree, self.catalog, self.now, self.dialect)
        if kind == "DROP" and isinstance(tree, exp.Drop) and str(tree.args.get("kind")).upper() == "TABLE":
            return ddl.drop_table(self.cursor, tree, self.catalog)
        if kind == "ALTER" and isinstance(tree, exp.Alter) and str(tree.args.get("kind")).upper() == "TABLE":
            return ddl.alter(self.cursor, tree, self.catalog)
        if kind == "TRUNCATE" and isinstance(tree, exp.TruncateTable):
            return ddl.truncate(self.cursor, tree, self.catalog)
        if kind == "COMMENT" and isinstance(tree, exp.Comment):
            return ddl.comment(tree, self.catalog)
        what = str(tree.args.get("kind") or "").upper()
        raise ToolFailure(Code.UNIMPLEMENTED, f"{kind} {what}".strip() + " is not supported")
