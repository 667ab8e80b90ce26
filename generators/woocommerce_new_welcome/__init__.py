"""Generator of woocommerce_new_welcome: a WooCommerce store (customers and their orders), the
BigQuery CRM table `woocommerce_crm.customers` with the customers synced before, the admin
mailbox (credentials in `admin_credentials.txt`) and a mailbox for every customer, and the
welcome e-mail template in the workspace.

Scale: `total_orders` o (primary): new customers max(5, round(o/6)), completed orders before the
window = orders placed in the window and not completed = max(2, round(o/40)), the rest to repeat
customers; `num_idle_customers` (fine, default round(o/20)): registered customers who
never ordered.

Every draw comes from the world's named RNG streams; Faker is seeded from them and only its name
and address providers are used (its date providers read the wall clock)."""

from __future__ import annotations

import random
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from sqlmodel import Session

from envs.woocommerce_new_welcome import (
    AMOUNT,
    CATALOG,
    COUPON,
    CREDENTIALS_FILE,
    CRM,
    CRM_COLUMNS,
    CRM_PHYSICAL,
    DATASET,
    MAIL,
    NAME,
    NOW,
    ORDER_DATE,
    ORDER_ID,
    STORE,
    TABLE,
    TASK,
    TEMPLATE_FILE,
)
from generators.common import create_world, finish_world, templates
from generators.woocommerce_new_welcome.model import PRODUCTS, Plan, default_idle
from generators.woocommerce_new_welcome.plan import SUBJECTS, plan_world
from loca.core.clock import iso_z
from loca.core.credentials import credentials_text
from loca.core.rng import WorldRng
from loca.core.world import World, WorldMeta, write_text_atomic
from mock_servers.core import sql
from mock_servers.email import domain as mail
from mock_servers.google_cloud.seed import DatasetDef, FieldDef, TableDef, bigquery
from mock_servers.woocommerce.seed import CustomerDef, OrderDef, ProductDef, StoreDef, fill

VERSION = "1"
PROJECT = "storefront-analytics"
_TEMPLATES = templates(str(Path(__file__).parent / "templates"))
PAYMENTS = (("stripe", "Credit Card (Stripe)"), ("paypal", "PayPal"), ("bacs", "Direct bank transfer"))


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    total_orders: int = Field(ge=TASK.scale.lo, le=TASK.scale.hi)
    num_idle_customers: int | None = Field(default=None, ge=0)

    def resolved(self) -> dict[str, int]:
        idle = self.num_idle_customers
        return {"total_orders": self.total_orders,
                "num_idle_customers": default_idle(self.total_orders) if idle is None else idle}


def resolve_params(params: dict[str, object]) -> dict[str, int]:
    return Params.model_validate(params).resolved()


def money(value: Decimal) -> str:
    return f"{value:.2f}"


def _store(plan: Plan, rng: random.Random) -> StoreDef:
    created = NOW - timedelta(days=800)
    products = [ProductDef(name, sku, price, created, stock_quantity=rng.randint(40, 400))
                for name, sku, price in PRODUCTS]
    customers = []
    for c in plan.customers:
        home = {"first_name": c.first, "last_name": c.last, "address_1": f"{rng.randint(10, 9899)} {c.street}",
                "city": c.city, "state": c.state, "postcode": c.postcode, "country": "US"}
        customers.append(CustomerDef(c.email, c.first, c.last, c.created, billing={**home, "email": c.email,
                                                                                      "phone": c.phone},
                                     shipping=home))
    orders = []
    for o in plan.orders:
        method, title = rng.choice(PAYMENTS)
        orders.append(OrderDef(o.status, o.created, list(o.items), plan.customers[o.customer].email,
                               shipping_total=o.shipping, completed=o.completed, payment_method=method,
                               payment_method_title=title))
    return StoreDef(products=products, customers=customers, orders=orders,
                    settings={("email", "woocommerce_email_from_name"): plan.store_name,
                              ("email", "woocommerce_email_from_address"): admin_address(plan)})


def admin_address(plan: Plan) -> str:
    return f"admin@{plan.domain}"


def crm_rows(plan: Plan) -> list[list[Any]]:
    """The CRM's rows as the table shows them, in column order."""
    out: list[list[Any]] = []
    for r in plan.crm:
        c = plan.customers[r.customer]
        out.append([r.id, r.customer + 1, c.email, c.first, c.last, c.phone, r.first_order.isoformat(),
                    r.welcomed is not None, r.welcomed and r.welcomed.isoformat(), r.synced.isoformat()])
    return out


def _write_state(session: Session, plan: Plan, rngs: WorldRng, password: str, salt: str) -> None:
    seeded = fill(session, _store(plan, rngs.stream("store_details")), salt=salt)
    if list(seeded.customers.values()) != list(range(1, len(plan.customers) + 1)):
        raise AssertionError("customers were not numbered as planned")
    fields = [FieldDef(name, kind, "REQUIRED" if name in ("id", "woocommerce_id", "email") else "NULLABLE")
              for name, kind in CRM_COLUMNS.items()]
    table = TableDef(TABLE, fields, crm_rows(plan), description="Customers synced from the WooCommerce store")
    bigquery(session, PROJECT, [DatasetDef(DATASET, [table], description="Customer relationship data")],
             NOW - timedelta(days=400))
    catalog = [row[0] for row in sql.run(session, CATALOG)]
    if catalog != [CRM_PHYSICAL]:
        raise AssertionError(f"the CRM table is stored in {catalog}, not {CRM_PHYSICAL}")
    mail.add_account(session, address=admin_address(plan), name=f"{plan.store_name} Admin", password=password,
                     salt=salt, created_at=iso_z(NOW - timedelta(days=800)))
    mail.add_accounts(session, [(c.email, c.full_name) for c in plan.customers],
                      created_at=iso_z(NOW - timedelta(days=800)))


def answer(plan: Plan) -> dict[str, Any]:
    crm, sent = [], []
    for c, n in plan.new_customers():
        person, order = plan.customers[c], plan.orders[n]
        assert order.completed is not None
        crm.append({"woocommerce_id": c + 1, "email": person.email, "first_name": person.first,
                    "last_name": person.last, "phone": person.phone,
                    "first_order_date": order.completed.date().isoformat()})
        sent.append({"to": person.email, "fill": {
            STORE: plan.store_name, NAME: person.first, ORDER_ID: str(n + 1), AMOUNT: f"${money(order.total)}",
            ORDER_DATE: order.created.date().isoformat()}})
    return {CRM: crm, MAIL: sent}


def _secret(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghjkmnpqrstuvwxyz23456789") for _ in range(16))


def generate(root: Path, params: dict[str, object], seed: int,
             target_tokens: int | None = None) -> World:
    """Build the world directory for (params, seed). Pure in its inputs: same inputs, same
    content hash."""
    p = Params.model_validate(params).resolved()
    rngs = WorldRng(TASK.name, seed)
    secrets = rngs.stream("secrets")
    password, salt = _secret(secrets), _secret(secrets)
    plan = plan_world(rngs, p["total_orders"], p["num_idle_customers"])
    meta = WorldMeta(task=TASK.name, seed=seed, params=p, now=iso_z(NOW), tz="UTC",
                     target_tokens=target_tokens, generator_version=VERSION,
                     accounts={"email": {"address": admin_address(plan)}, "google_cloud": {"project": PROJECT},
                               "woocommerce": {"store_name": plan.store_name}})
    world, db = create_world(root, meta, TASK.servers.values())
    with db.write() as session:
        _write_state(session, plan, rngs, password, salt)
    db.dispose()
    write_text_atomic(world.workspace / TEMPLATE_FILE, _TEMPLATES.get_template(TEMPLATE_FILE).render(
        subject=SUBJECTS[plan.subject], coupon=COUPON) + "\n")
    write_text_atomic(world.workspace / CREDENTIALS_FILE,
                      credentials_text(f"{plan.store_name} admin mailbox", admin_address(plan), password, plan.domain))
    existing = crm_rows(plan)
    return finish_world(world, TASK, answer(plan), existing=existing, next_id=len(existing) + 1)
