"""The warehouse the snowflake tests and the SQL corpus run against."""

from __future__ import annotations

from collections.abc import Callable

from loca.core.world import World
from mock_servers.core.db import Database
from mock_servers.snowflake.seed import ColumnDef, DatabaseDef, SchemaDef, TableDef, build

ACCOUNTS = {"snowflake": {"database": "SHOP", "schema": "PUBLIC"}}
BIG_ROWS = 10_050


def _c(name: str, kind: str, comment: str | None = None) -> ColumnDef:
    return ColumnDef(name, kind, comment=comment)


def warehouse() -> list[DatabaseDef]:
    customers = TableDef("CUSTOMERS", [
        _c("ID", "NUMBER(10,0)", "customer id"), _c("NAME", "VARCHAR"), _c("EMAIL", "VARCHAR"), _c("CITY", "VARCHAR"),
        _c("CREATED", "DATE"), _c("VIP", "BOOLEAN")], [
        (1, "Ann", "a.b.c@x.com", "Oslo", "2024-01-05", True), (2, "Bob", "bob@y.org", "Bergen", "2024-02-10", False),
        (3, "Cid", "cid@x.com", "Oslo", "2024-03-15", None), (4, "Dee", None, None, "2024-03-31", False)],
        comment="people who buy")
    orders = TableDef("ORDERS", [
        _c("ID", "NUMBER(10,0)"), _c("CUSTOMER_ID", "NUMBER(10,0)"), _c("AMOUNT", "NUMBER(10,2)"),
        _c("ORDERED_AT", "TIMESTAMP_NTZ"), _c("STATUS", "VARCHAR")], [
        (10, 1, 0.10, "2024-01-06 10:00:00.000", "paid"), (11, 1, 0.20, "2024-01-20 12:30:00.000", "paid"),
        (12, 2, 100.50, "2024-02-11 09:15:00.000", "open"), (13, 3, 19.99, "2024-03-16 18:00:00.000", "paid"),
        (14, 3, 5.01, "2024-04-01 08:00:00.000", "cancelled"), (15, None, 7.00, "2024-04-02 00:00:00.000", "open")])
    items = TableDef("ITEMS", [
        _c("ORDER_ID", "NUMBER(10,0)"), _c("SKU", "VARCHAR"), _c("QTY", "NUMBER(5,0)"), _c("PRICE", "NUMBER(8,2)")], [
        (10, "A", 1, 0.10), (11, "B", 2, 0.10), (12, "A", 3, 33.50), (13, "C", 1, 19.99), (14, "B", 1, 5.01)])
    big = TableDef("BIG", [_c("N", "NUMBER(10,0)")], [(n,) for n in range(1, BIG_ROWS + 1)])
    reimbursement = TableDef("2024Q4REIMBURSEMENT", [
        _c("ID", "NUMBER(10,0)"), _c("Employee Name", "VARCHAR"), _c("AMOUNT", "NUMBER(12,2)")],
        [(1, "Eve", 120.40), (2, "Finn", 79.60)])
    targets = TableDef("TARGETS", [_c("REGION", "VARCHAR"), _c("Q", "NUMBER(1,0)"), _c("GOAL", "NUMBER(10,2)")],
                       [("N", 1, 100.00), ("S", 1, 200.00)])
    employees = TableDef("EMPLOYEES", [
        _c("ID", "NUMBER(10,0)"), _c("NAME", "VARCHAR"), _c("DEPT", "VARCHAR"), _c("SALARY", "NUMBER(10,2)"),
        _c("MANAGER_ID", "NUMBER(10,0)")], [
        (1, "Ida", "ENG", 5000.00, None), (2, "Jon", "ENG", 4000.00, 1), (3, "Kai", "OPS", 3500.50, 1),
        (4, "Liv", "OPS", 3499.50, 3)])
    return [DatabaseDef("SHOP", [SchemaDef("PUBLIC", [customers, orders, items, big]),
                                 SchemaDef("SALES", [reimbursement, targets])]),
            DatabaseDef("HR", [SchemaDef("CORE", [employees])])]


def seeded(make_world: Callable[..., tuple[World, Database]]) -> World:
    world, db = make_world(["snowflake"], accounts=ACCOUNTS)
    with db.write() as session:
        build(session, warehouse(), world.clock.at(0))
    db.dispose()
    return world
