"""What a write leaves in a table is what its declared types hold, as in the warehouse: numbers
rounded to their column's scale (whole numbers for NUMBER(p,0)), booleans as 0/1, and a value
that is no number in a numeric column an error (the whole statement then rolls back)."""

from __future__ import annotations

import sqlite3

from mock_servers.core.errors import invalid
from mock_servers.sqlfront.names import TableRef
from mock_servers.sqlfront.target import ident

_NUMERIC = ("int", "decimal", "float", "bool")


def _refuse_text(cursor: sqlite3.Cursor, table: str, column: str, ref: TableRef, type_text: str) -> None:
    bad = cursor.execute(f"SELECT {column} FROM {table} WHERE typeof({column}) IN ('text', 'blob') "
                         "LIMIT 1").fetchone()
    if bad is not None:
        shown = bad[0] if isinstance(bad[0], str) else "<binary>"
        raise invalid(f"value '{shown[:100]}' is not a {type_text} (column {column} of {ref.display})")


def conform(cursor: sqlite3.Cursor, ref: TableRef) -> None:
    """Bring every row of `ref`'s table to its columns' types (one scan per numeric column)."""
    table = ident(ref.physical)
    for info in ref.columns:
        kind = info.type.kind
        if kind not in _NUMERIC:
            continue
        column = ident(info.name)
        if kind == "bool":
            cursor.execute(f"UPDATE {table} SET {column} = (lower({column}) = 'true') "
                           f"WHERE lower({column}) IN ('true', 'false')")
        _refuse_text(cursor, table, column, ref, info.type.text)
        if kind == "int":
            cursor.execute(f"UPDATE {table} SET {column} = CAST(ROUND({column}) AS INTEGER) "
                           f"WHERE typeof({column}) = 'real'")
        elif kind == "decimal":
            scale = info.type.scale
            cursor.execute(f"UPDATE {table} SET {column} = ROUND({column}, {scale}) "
                           f"WHERE {column} <> ROUND({column}, {scale})")
        elif kind == "bool":
            cursor.execute(f"UPDATE {table} SET {column} = ({column} <> 0) WHERE {column} NOT IN (0, 1)")
