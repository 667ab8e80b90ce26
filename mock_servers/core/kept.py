"""Item views a server keeps as JSON text in a table of its own (`kind`, `id`, `text`), so that
a listing embeds them rather than building each item.

A kept text is exact, else absent. The server fills its table in its prepare step, once a
world's generator is done; triggers drop a text whenever a row its view is made of changes, and
nothing else writes one, so an item a tool changed is built live from then on. A world made
before its server kept texts has no table: it is read live."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from sqlmodel import Session

from mock_servers.core import sql


def texts(session: Session, table: str, kind: str, ids: Sequence[int]) -> dict[int, str]:
    """The kept texts of the items `ids` of `kind` that have one (none in a world without the
    table)."""
    if not ids:
        return {}
    try:
        return dict(sql.run(session, f"SELECT id, text FROM {table} WHERE kind = ? AND id IN "
                            f"({sql.marks(len(ids))})", (kind, *ids)))
    except sqlite3.OperationalError as exc:
        if str(exc) == f"no such table: {table}":
            return {}
        raise


def put(session: Session, table: str, kind: str, items: Iterable[tuple[int, str | None]]) -> int:
    """Keep the (id, text) of each item that has a text; how many were kept."""
    rows = [(kind, item, text) for item, text in items if text is not None]
    sql.cursor(session).executemany(f"INSERT OR REPLACE INTO {table} (kind, id, text) VALUES (?, ?, ?)", rows)
    return len(rows)
