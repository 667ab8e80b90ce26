"""The kept views of products, orders and customers (`woo_kept`): after any sequence of writes
every kept text equals the view built live, listings return the very text they return with no
kept views, a product on a dated sale is never kept, and a generated world keeps the rest."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envs.core.registry import get_task
from mock_servers.core import sql
from mock_servers.gateway import Gateway
from mock_servers.woocommerce.domain import Store, customers, kept, orders, products
from tests.woocommerce_seed import Woo, build_store

BUILDERS = {"product": products.built, "order": orders.built, "customer": customers.built}
LISTINGS: list[tuple[str, dict[str, Any]]] = [
            ("woo_products_list", {"perPage": 100}), ("woo_products_list", {"perPage": 3, "page": 2}),
            ("woo_products_list", {"perPage": 100, "orderby": "price", "status": "trash"}),
            ("woo_orders_list", {"perPage": 100}), ("woo_orders_list", {"perPage": 4, "orderby": "id"}),
            ("woo_orders_list", {"perPage": 100, "status": ["completed", "processing", "cancelled"]}),
            ("woo_customers_list", {"perPage": 100}), ("woo_customers_list", {"perPage": 2, "orderby": "name"})]


def check(woo: Woo) -> int:
    """Every kept text is the view built now, and no product on a dated sale is kept; how
    many texts are kept."""
    with woo.runtime.db.read() as session:
        store = Store(session, woo.world.clock.at(0), woo.world.clock.zone)
        found = sql.run(session, f"SELECT kind, id, text FROM {kept.TABLE}").fetchall()
        for kind, item, text in found:
            assert text == orjson.dumps(BUILDERS[kind](store, [item])[0]).decode(), (kind, item)
        dated = sql.run(session, f"SELECT k.id FROM {kept.TABLE} k JOIN woo_product p ON p.id = k.id WHERE "
                        "k.kind = 'product' AND p.sale_price IS NOT NULL AND (p.date_on_sale_from IS NOT NULL OR "
                        "p.date_on_sale_to IS NOT NULL)").fetchall()
        assert dated == []
    return len(found)


def listings(woo: Woo) -> list[str]:
    return [woo.ok_text(tool, **args) for tool, args in LISTINGS]


def forget(state: Path) -> None:
    with sqlite3.connect(state) as conn:
        conn.execute(f"DELETE FROM {kept.TABLE}")


def _ids(woo: Woo, tool: str, **args: Any) -> list[int]:
    return [item["id"] for item in woo.ok(tool, perPage=100, **args)["items"]]


def _step(woo: Woo, rng: random.Random, n: int) -> None:
    """One write of a random kind, through the tools (some of them fail, which changes nothing)."""
    pids = _ids(woo, "woo_products_list") or [1]
    oids = _ids(woo, "woo_orders_list") or [1]
    cids = _ids(woo, "woo_customers_list")
    pid, oid, cid = rng.choice(pids), rng.choice(oids), rng.choice(cids)
    kind = rng.choice(["product", "product", "sale", "order", "order", "new order", "refund", "customer", "delete",
                       "batch", "category", "system"])
    if kind == "product":
        data = rng.choice([{"regular_price": f"{rng.randint(5, 90)}"}, {"stock_quantity": rng.randint(0, 9)},
                           {"name": f"Item {n}"}, {"categories": [{"id": rng.randint(1, 3)}]},
                           {"tags": []}, {"images": [{"src": f"https://shop.example/{n}.jpg"}]},
                           {"meta_data": [{"key": "note", "value": n}]}, {"sale_price": ""}])
        woo.call("woo_products_update", productId=pid, productData=data)
    elif kind == "sale":
        woo.call("woo_products_update", productId=pid, productData={
            "regular_price": "50", "sale_price": "40", "date_on_sale_to": rng.choice(["", "2025-03-20"])})
    elif kind == "order":
        data = rng.choice([{"status": rng.choice(["processing", "completed", "cancelled", "on-hold", "refunded"])},
                           {"billing": {"city": f"Town {n}"}}, {"meta_data": [{"key": "gift", "value": True}]},
                           {"customer_id": cid}, {"shipping_lines": [{"method_id": "flat_rate", "total": "4"}]}])
        woo.call("woo_orders_update", orderId=oid, orderData=data)
    elif kind == "new order":
        woo.call("woo_orders_create", orderData={"customer_id": cid, "status": rng.choice(["pending", "completed"]),
                                                 "line_items": [{"product_id": pid, "quantity": 1}]})
    elif kind == "refund":
        woo.call("woo_orders_refunds_create", orderId=oid, amount="1.00", reason=f"refund {n}")
    elif kind == "customer":
        data = rng.choice([{"first_name": f"Name {n}"}, {"billing": {"city": f"City {n}"}},
                           {"meta_data": [{"key": "vip", "value": n % 2 == 0}]}])
        woo.call("woo_customers_update", customerId=cid, customerData=data)
    elif kind == "delete":
        tool, key, target = rng.choice([("woo_products_delete", "productId", pid),
                                        ("woo_orders_delete", "orderId", oid)])
        woo.call(tool, **{key: target, "force": rng.random() < 0.5})
    elif kind == "batch":
        woo.call("woo_products_batch_update", update=[{"id": p, "stock_quantity": rng.randint(0, 5)}
                                                      for p in rng.sample(pids, min(2, len(pids)))])
    elif kind == "category":
        made = woo.ok("woo_products_categories_create", categoryData={"name": f"Cat {n}"})
        woo.call("woo_products_update", productId=pid, productData={"categories": [{"id": made["id"]}]})
    else:
        woo.call("woo_system_tools_run", toolId=rng.choice(["recount_terms", "clear_orphaned_variations"]))


@pytest.mark.slow
@settings(max_examples=20, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1))
def test_kept_views_stay_exact_under_any_writes(make_world: Any, seed: int) -> None:
    woo = build_store(make_world)
    rng = random.Random(seed)
    try:
        check(woo)
        for n in range(10):
            _step(woo, rng, n)
            check(woo)
        seen = listings(woo)
        forget(woo.world.state_path)
        assert listings(woo) == seen
    finally:
        woo.runtime.db.dispose()


def test_a_prepared_store_keeps_every_view_but_those_on_a_dated_sale(make_world: Any) -> None:
    woo = build_store(make_world)
    try:
        with woo.runtime.db.read() as session:
            found = sorted(sql.run(session, f"SELECT kind, count(*) FROM {kept.TABLE} GROUP BY kind").fetchall())
        # 7 products of which Boot and T-Shirt have sale dates; 7 orders; 4 customers
        assert found == [("customer", 4), ("order", 7), ("product", 5)]
        assert check(woo) == 16
        woo.ok("woo_orders_update", orderId=2, orderData={"status": "completed"})
        with woo.runtime.db.read() as session:
            gone = sql.run(session, f"SELECT kind, id FROM {kept.TABLE} WHERE (kind = 'order' AND id = 2) OR "
                           "(kind = 'customer' AND id = 2)").fetchall()
        assert gone == []  # the order changed, and so did its customer's spending
    finally:
        woo.runtime.db.dispose()


def test_a_world_made_before_the_table_is_read_live(make_world: Any) -> None:
    woo = build_store(make_world)
    seen = listings(woo)
    with sqlite3.connect(woo.world.state_path) as conn:
        triggers = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND "
                                                     "name LIKE '%_kept_%'")]
        conn.executescript("".join(f"DROP TRIGGER {name};" for name in triggers) + f"DROP TABLE {kept.TABLE};")
    assert listings(woo) == seen
    woo.ok("woo_products_update", productId=2, productData={"name": "Wool scarf"})
    assert woo.ok("woo_products_list", sku="SCARF-1")["items"][0]["name"] == "Wool scarf"
    woo.runtime.db.dispose()


def test_a_generated_world_keeps_its_views_and_lists_the_same_without_them(tmp_path: Path) -> None:
    task = get_task("woocommerce_new_welcome")
    world = task.generate(tmp_path / "world", {"total_orders": 150}, 0)
    calls = [("woocommerce_woo_orders_list", {"perPage": 100}), ("woocommerce_woo_customers_list", {"perPage": 100}),
             ("woocommerce_woo_products_list", {"perPage": 100})]
    with sqlite3.connect(world.state_path) as conn:
        counts = dict(conn.execute(f"SELECT kind, count(*) FROM {kept.TABLE} GROUP BY kind").fetchall())
        assert counts == {kind: conn.execute(f"SELECT count(*) FROM woo_{kind}").fetchone()[0]
                          for kind in ("customer", "order", "product")}

    def texts() -> list[str]:
        gateway = Gateway(world, task.spec.servers)
        try:
            return [asyncio.run(gateway.call(tool, args)).text for tool, args in calls]
        finally:
            gateway.close()

    seen = texts()
    assert all(json.loads(text)["items"] for text in seen)
    forget(world.state_path)
    assert texts() == seen
