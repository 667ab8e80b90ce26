"""The Google Cloud world the google_cloud tests and the BigQuery corpus run against: datasets
shop and hr, buckets raw-data (251 objects) and empty-bucket, logs app and audit, two instances."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from loca.core.world import World
from mock_servers.core.db import Database
from mock_servers.google_cloud.seed import (
    DatasetDef,
    EntryDef,
    FieldDef,
    TableDef,
    bigquery,
    buckets,
    instances,
    log_entries,
)

PROJECT = "local-project"
ACCOUNTS = {"google_cloud": {"project": PROJECT}}
BIG_ROWS = 10_050


def _f(name: str, kind: str, mode: str = "NULLABLE", description: str = "") -> FieldDef:
    return FieldDef(name, kind, mode, description)


def datasets() -> list[DatasetDef]:
    customers = TableDef("customers", [
        _f("id", "INT64", "REQUIRED", "customer id"), _f("name", "STRING"), _f("email", "STRING"),
        _f("city", "STRING"), _f("created", "DATE"), _f("vip", "BOOL")], [
        (1, "Ann", "a.b.c@x.com", "Oslo", "2024-01-05", True), (2, "Bob", "bob@y.org", "Bergen", "2024-02-10", False),
        (3, "Cid", "cid@x.com", "Oslo", "2024-03-15", None), (4, "Dee", None, None, "2024-03-31", False)],
        description="people who buy")
    orders = TableDef("orders", [
        _f("id", "INT64"), _f("customer_id", "INT64"), _f("amount", "NUMERIC"), _f("ordered_at", "TIMESTAMP"),
        _f("status", "STRING")], [
        (10, 1, 0.10, "2024-01-06 10:00:00", "paid"), (11, 1, 0.20, "2024-01-20 12:30:00", "paid"),
        (12, 2, 100.50, "2024-02-11 09:15:00", "open"), (13, 3, 19.99, "2024-03-16 18:00:00.250000", "paid"),
        (14, 3, 5.01, "2024-04-01 08:00:00", "cancelled"), (15, None, 7.00, "2024-04-02 00:00:00", "open")])
    items = TableDef("items", [_f("order_id", "INT64"), _f("sku", "STRING"), _f("qty", "INT64"),
                               _f("price", "NUMERIC")], [
        (10, "A", 1, 0.10), (11, "B", 2, 0.10), (12, "A", 3, 33.50), (13, "C", 1, 19.99), (14, "B", 1, 5.01)])
    big = TableDef("big", [_f("n", "INT64")], [(n,) for n in range(1, BIG_ROWS + 1)])
    visits = TableDef("visits", [_f("id", "INT64"), _f("at", "DATETIME"), _f("score", "FLOAT64"),
                                 _f("meta", "JSON")], [
        (1, "2024-05-01 08:30:00", 1.5, '{"page":"home"}'), (2, "2024-05-01 09:45:30.125000", 2.25, None)])
    employees = TableDef("employees", [
        _f("id", "INT64"), _f("name", "STRING"), _f("dept", "STRING"), _f("salary", "NUMERIC"),
        _f("manager_id", "INT64")], [
        (1, "Ida", "ENG", 5000.00, None), (2, "Jon", "ENG", 4000.00, 1), (3, "Kai", "OPS", 3500.50, 1),
        (4, "Liv", "OPS", 3499.50, 3)])
    return [DatasetDef("shop", [customers, orders, items, big, visits], description="the shop"),
            DatasetDef("hr", [employees], location="EU")]


def seeded(make_world: Callable[..., tuple[World, Database]]) -> World:
    world, db = make_world(["google_cloud"], accounts=ACCOUNTS)
    with db.write() as session:
        t0 = world.clock.at(0)
        bigquery(session, PROJECT, datasets(), t0)
        buckets(session, {"raw-data": {f"logs/day-{i:03d}.txt": f"day {i}\n".encode() for i in range(250)}
                          | {"readme.md": b"# data\n"}, "empty-bucket": {}}, t0)
        log_entries(session, [
            EntryDef("app", t0 - timedelta(hours=3), "INFO", text="service started"),
            EntryDef("app", t0 - timedelta(hours=2), "WARNING", text="slow response: " + "x" * 500),
            EntryDef("app", t0 - timedelta(hours=1), "ERROR", json_payload={"user": "ann", "code": 503}),
            EntryDef("audit", t0 - timedelta(minutes=30), "NOTICE", text="login by ann"),
            EntryDef("audit", t0 - timedelta(minutes=10), "CRITICAL", json_payload={"user": "bob", "code": 401})])
        instances(session, [("web-1", "us-central1-a", "e2-micro", "RUNNING"),
                            ("batch-1", "europe-north1-a", "e2-standard-2", "TERMINATED")], t0)
    db.dispose()
    return world
