"""Each product's, order's and customer's view kept as JSON text (`woo_kept`, see
`core.kept`), so that a page of 100 is read rather than built item by item. The triggers that
drop a text are in models.py. Only views that do not follow the clock are kept: a product on a
dated sale is not."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import orjson

from mock_servers.core import kept, paging, sql
from mock_servers.core.output import orjson_text
from mock_servers.woocommerce.domain.base import Store

TABLE = "woo_kept"
CHUNK = 500  # items built per batch when a world's texts are kept

Build = Callable[[Store, Sequence[int]], list[dict[str, Any]]]


class Id(NamedTuple):
    id: int


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
    texts = kept.texts(store.session, TABLE, kind, ids)
    missing = [i for i in ids if i not in texts]
    built = {view["id"]: view for view in build(store, missing)} if missing else {}
    return [orjson.Fragment(texts[i]) if i in texts else built[i] for i in ids], total


def keep(store: Store, kind: str, ids_query: str, build: Build) -> int:
    """Keep the texts of the items `ids_query` selects (their views must not follow the clock;
    one that orjson refuses, written by the json module, is not kept); how many were kept."""
    ids = [found[0] for found in sql.run(store.session, ids_query).fetchall()]
    return sum(kept.put(store.session, TABLE, kind, ((view["id"], orjson_text(view))
                                                     for view in build(store, ids[start:start + CHUNK])))
               for start in range(0, len(ids), CHUNK))
