"""Each product's, order's and customer's view as a read shows it, kept as JSON text
(`woo_kept`), so that a page of 100 is read rather than built item by item.

A kept text is exact, else absent. A new world's store gets its texts once its generator is
done (`keep`, the server's prepare step); triggers (models.py) drop an item's text whenever a
row its view is made of changes, and nothing else writes them, so an item a tool changed is
built live from then on. Only views that do not follow the clock are kept (a product on a
dated sale is not). A world made before the table existed has none: it is read live."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import orjson
from sqlmodel import Session

from mock_servers.core import paging, sql
from mock_servers.woocommerce.domain.base import Store

TABLE = "woo_kept"
CHUNK = 500  # items built per batch when a world's texts are kept

Build = Callable[[Store, Sequence[int]], list[dict[str, Any]]]


class Id(NamedTuple):
    id: int


def present(session: Session) -> bool:
    """Whether this world's database has the table."""
    return sql.scalar(session, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)) is not None


def page(store: Store, kind: str, source: str, where: str, order: str, params: Sequence[Any], number: int,
         size: int, build: Build) -> tuple[list[Any], int]:
    """One page of `SELECT ... FROM <source> <where> ORDER BY <order>` (source: `table alias`)
    as views, and the total: kept texts embedded as they are, the other items built. The page's
    ids are found first and their texts looked up after (a join would carry every matching
    item's text through the sort)."""
    alias = source.split()[-1]
    found, total = paging.fetch_page(store.session, Id, f"SELECT {alias}.id FROM {source} {where} ORDER BY {order}",
                                     f"SELECT count(*) FROM {source} {where}", params, number, size)
    ids = [i for (i,) in found]
    texts = dict(sql.run(store.session, f"SELECT id, text FROM {TABLE} WHERE kind = ? AND id IN "
                         f"({sql.marks(len(ids))})", (kind, *ids))) if ids and present(store.session) else {}
    missing = [i for i in ids if i not in texts]
    built = {view["id"]: view for view in build(store, missing)} if missing else {}
    return [orjson.Fragment(texts[i]) if i in texts else built[i] for i in ids], total


def keep(store: Store, kind: str, ids_query: str, build: Build) -> int:
    """Keep the texts of the items `ids_query` selects (their views must not follow the clock);
    how many were kept."""
    cur = sql.cursor(store.session)
    ids = [found[0] for found in cur.execute(ids_query).fetchall()]
    kept = 0
    for start in range(0, len(ids), CHUNK):
        texts = []
        for view in build(store, ids[start:start + CHUNK]):
            try:
                texts.append((kind, view["id"], orjson.dumps(view, option=orjson.OPT_NON_STR_KEYS).decode()))
            except TypeError:  # what orjson refuses is written by the json module: built live
                continue
        cur.executemany(f"INSERT OR REPLACE INTO {TABLE} (kind, id, text) VALUES (?, ?, ?)", texts)
        kept += len(texts)
    return kept
