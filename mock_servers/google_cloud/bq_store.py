"""What a write leaves in TIMESTAMP and DATETIME columns: the canonical text
`YYYY-MM-DD HH:MM:SS[.ffffff]` (TIMESTAMP in UTC), whatever spelling the statement used
(`2024-12-24T18:00:00Z`, `... +02:00`, `... UTC`, a bare date), so stored values compare in
time order; a value that is no timestamp is an error (the statement rolls back)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from mock_servers.core.errors import invalid
from mock_servers.google_cloud import bq_types
from mock_servers.sqlfront import TableRef
from mock_servers.sqlfront.target import ident

_CANON = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]"


def canonical(text: str, zoned: bool) -> str | None:
    """The stored form of a timestamp text, None when it is none."""
    raw = text.strip()
    raw = raw[:-4] if raw.endswith(" UTC") else raw
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None) if zoned else moment.replace(tzinfo=None)
    return moment.isoformat(sep=" ")


def normalize(cursor: sqlite3.Cursor, ref: TableRef) -> None:
    """Rewrite the non-canonical timestamp texts of `ref`'s table (a scan per such column)."""
    table = ident(ref.physical)
    for column in ref.columns:
        if column.type.kind != "timestamp":
            continue
        name = ident(column.name)
        zoned = bq_types.name_of(column.type) == "TIMESTAMP"
        found = cursor.execute(f"SELECT rowid, {name} FROM {table} WHERE {name} IS NOT NULL AND NOT "
                               f"({name} GLOB '{_CANON}' OR {name} GLOB '{_CANON}.[0-9]*')").fetchall()
        fixed = []
        for rowid, value in found:
            text = canonical(value, zoned) if isinstance(value, str) else None
            if text is None:
                raise invalid(f"value '{str(value)[:100]}' is not a {bq_types.name_of(column.type)} "
                              f"(column {column.name} of {ref.display})")
            fixed.append((text, rowid))
        cursor.executemany(f"UPDATE {table} SET {name} = ? WHERE rowid = ?", fixed)
