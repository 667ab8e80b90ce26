"""What a write leaves in a table is what its declared types hold, as in the warehouse: numbers
rounded to their column's scale (whole numbers for NUMBER(p,0)), booleans as 0/1, dates and
timestamps in their one stored form (`sqlfront.moments`; a TIMESTAMP_TZ keeps its offset),
and a value the type cannot hold (text in a numeric column, more digits than NUMBER(p,s) or
characters than VARCHAR(n) hold, a timestamp that is no time) an error: the whole statement
then rolls back."""

from __future__ import annotations

import sqlite3

from mock_servers.core.errors import invalid
from mock_servers.sqlfront import convert, types
from mock_servers.sqlfront.dialect import Dialect
from mock_servers.sqlfront.names import ColumnInfo, TableRef
from mock_servers.sqlfront.target import ident
from mock_servers.sqlfront.types import TEXT

_NUMERIC = ("int", "decimal", "float", "bool")
_DIGITS = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"
_CLOCK = f"{_DIGITS} [0-9][0-9]:[0-9][0-9]:[0-9][0-9]"
_OFFSET = "[+-][0-9][0-9]:[0-9][0-9]"


def _refuse_text(cursor: sqlite3.Cursor, table: str, column: str, ref: TableRef, type_text: str) -> None:
    bad = cursor.execute(f"SELECT {column} FROM {table} WHERE typeof({column}) IN ('text', 'blob') "
                         "LIMIT 1").fetchone()
    if bad is not None:
        shown = bad[0] if isinstance(bad[0], str) else "<binary>"
        raise invalid(f"value '{shown[:100]}' is not a {type_text} (column {column} of {ref.display})")


def _numbers(cursor: sqlite3.Cursor, table: str, info: ColumnInfo, ref: TableRef) -> None:
    kind, column = info.type.kind, ident(info.name)
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
    if kind in ("int", "decimal") and info.type.precision < 38:  # a declared NUMBER(p,s) holds p digits
        _refuse_past(cursor, table, column, ref, info)
    elif kind == "bool":
        cursor.execute(f"UPDATE {table} SET {column} = ({column} <> 0) WHERE {column} NOT IN (0, 1)")


def _refuse_past(cursor: sqlite3.Cursor, table: str, column: str, ref: TableRef, info: ColumnInfo) -> None:
    """Refuse a number with more integer digits than NUMBER(p,s) holds (p - s)."""
    limit = 10 ** (info.type.precision - info.type.scale)
    bad = cursor.execute(f"SELECT {column} FROM {table} WHERE abs({column}) >= {limit} LIMIT 1").fetchone()
    if bad is not None:
        raise invalid(f"value {bad[0]} is out of range for {info.type.text} (column {info.name} of {ref.display})")


def _text_length(cursor: sqlite3.Cursor, table: str, info: ColumnInfo, ref: TableRef) -> None:
    """Refuse a text longer than a VARCHAR(n) (STRING(n)) column holds."""
    column, most = ident(info.name), int(info.type.text.partition("(")[2].rstrip(")"))
    bad = cursor.execute(f"SELECT {column} FROM {table} WHERE length({column}) > {most} LIMIT 1").fetchone()
    if bad is not None:
        raise invalid(f"value '{str(bad[0])[:100]}' is longer than {info.type.text} holds "
                      f"(column {info.name} of {ref.display})")


def _stored_form(column: str, info: ColumnInfo, dialect: Dialect) -> str:
    """The SQL condition that a value of a date or timestamp column is in its stored form (a
    valid date or time, spelt as `moments` spells it)."""
    if info.type.kind == "date":  # the modifier makes SQLite carry an impossible day over (Feb 30: Mar 2)
        return f"({column} GLOB '{_DIGITS}' AND date({column}, '+0 days') IS {column})"
    zone = _OFFSET if info.type.flavor == "tz" and not dialect.bigquery else ""
    spelt = f"({column} GLOB '{_CLOCK}{zone}' OR {column} GLOB '{_CLOCK}.[0-9][0-9][0-9][0-9][0-9][0-9]{zone}')"
    return f"({spelt} AND {column} NOT GLOB '*.000000*' AND datetime({column}, '+0 days') IS substr({column}, 1, 19))"


def _moments(cursor: sqlite3.Cursor, table: str, info: ColumnInfo, ref: TableRef, dialect: Dialect) -> None:
    """Rewrite the values of a date or timestamp column that are not in their stored form (a
    scan of the column), refusing one that is no date or time."""
    column = ident(info.name)
    found = cursor.execute(f"SELECT rowid, {column} FROM {table} WHERE {column} IS NOT NULL "
                           f"AND NOT {_stored_form(column, info, dialect)}").fetchall()
    fixed = []
    for rowid, value in found:
        try:
            fixed.append((convert.convert(value, TEXT if isinstance(value, str) else None, info.type, dialect), rowid))
        except convert.Unconvertible:
            raise invalid(f"value '{str(value)[:100]}' is not a {info.type.text} "
                          f"(column {info.name} of {ref.display})") from None
    cursor.executemany(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", fixed)


def conform(cursor: sqlite3.Cursor, ref: TableRef, dialect: Dialect) -> None:
    """Bring every row of `ref`'s table to its columns' types (a scan per typed column)."""
    table = ident(ref.physical)
    for info in ref.columns:
        if info.type.kind in _NUMERIC:
            _numbers(cursor, table, info, ref)
        elif info.type.kind in ("date", "timestamp"):
            _moments(cursor, table, info, ref, dialect)
        elif info.type.kind == "text" and "(" in info.type.text and info.type.text != types.TEXT.text:
            _text_length(cursor, table, info, ref)
