"""MERGE, which SQLite lacks, as plain statements in one transaction: first the INSERTs of the
NOT MATCHED clauses (judged against the target as it was), then the UPDATEs and DELETEs of the
MATCHED clauses, restricted to the rows that existed before. Clauses apply in order: a row is
taken by the first clause whose condition holds."""

from __future__ import annotations

import sqlite3

from sqlglot import exp

from mock_servers.core.errors import Code, ToolFailure, invalid
from mock_servers.sqlfront import query
from mock_servers.sqlfront.query import Prepared
from mock_servers.sqlfront.target import ident


def _sql(node: exp.Expression) -> str:
    return Prepared(node, {}).sql()


def _holds(condition: exp.Expression | None) -> str:
    return "1" if condition is None else f"COALESCE(({_sql(condition)}), 0) <> 0"


def _not_taken(earlier: list[exp.Expression | None]) -> str:
    return " AND ".join(f"NOT {_holds(c)}" for c in earlier) or "1"


def _insert(when: exp.When, target: str, alias: str, source: str, on: str,
            earlier: list[exp.Expression | None]) -> str:
    then = when.args["then"]
    if not isinstance(then, exp.Insert):
        raise invalid("WHEN NOT MATCHED can only INSERT")
    columns = then.this
    names = f" ({', '.join(_sql(c) for c in columns.expressions)})" if isinstance(columns, exp.Tuple) else ""
    values = then.expression
    if not isinstance(values, exp.Tuple):
        raise invalid("WHEN NOT MATCHED THEN INSERT needs VALUES (...)")
    picked = ", ".join(_sql(v) for v in values.expressions)
    return (f'INSERT INTO {target}{names} SELECT {picked} FROM {source} WHERE NOT EXISTS '
            f'(SELECT 1 FROM {target} AS {alias} WHERE {on}) AND {_holds(when.args.get("condition"))} '
            f"AND {_not_taken(earlier)}")


def _matched(when: exp.When, target: str, alias: str, source: str, on: str,
             earlier: list[exp.Expression | None], top: int) -> str:
    then = when.args["then"]
    where = f'{alias}.rowid <= {top} AND ({on}) AND {_holds(when.args.get("condition"))} AND {_not_taken(earlier)}'
    if isinstance(then, exp.Update):
        sets = []
        for assignment in then.expressions:
            column = assignment.this
            if not isinstance(column, exp.Column):
                raise invalid(f"cannot assign to {column.sql()}")
            sets.append(f"{ident(column.name)} = {_sql(assignment.expression)}")
        return f'UPDATE {target} AS {alias} SET {", ".join(sets)} FROM {source} WHERE {where}'
    if isinstance(then, exp.Var) and then.name.upper() == "DELETE":
        return (f'DELETE FROM {target} WHERE rowid IN (SELECT {alias}.rowid FROM {target} AS {alias}, '
                f"{source} WHERE {where})")
    raise invalid("WHEN MATCHED can only UPDATE or DELETE")


def merge(cursor: sqlite3.Cursor, prepared: Prepared) -> int:
    """Run a prepared MERGE; the number of rows inserted, updated and deleted."""
    tree = prepared.tree
    target_node = tree.this
    if not isinstance(target_node, exp.Table) or tree.args.get("using") is None:
        raise invalid("MERGE needs INTO <table> USING <source> ON <condition>")
    target, alias = ident(target_node.name), ident(target_node.alias)
    source, on = _sql(tree.args["using"]), _sql(tree.args["on"])
    whens = tree.args["whens"].expressions if tree.args.get("whens") else []
    if not whens:
        raise invalid("MERGE needs at least one WHEN clause")
    if any(w.args.get("source") for w in whens):
        raise ToolFailure(Code.UNIMPLEMENTED, "WHEN NOT MATCHED BY SOURCE is not supported")
    top = cursor.execute(f'SELECT COALESCE(MAX(rowid), 0) FROM {target}').fetchone()[0]
    statements: list[str] = []
    earlier: list[exp.Expression | None] = []
    for when in (w for w in whens if not w.args.get("matched")):
        statements.append(_insert(when, target, alias, source, on, earlier))
        earlier.append(when.args.get("condition"))
    earlier = []
    for when in (w for w in whens if w.args.get("matched")):
        statements.append(_matched(when, target, alias, source, on, earlier, top))
        earlier.append(when.args.get("condition"))
    return sum(max(query.execute(cursor, prepared, sql).rowcount, 0) for sql in statements)
