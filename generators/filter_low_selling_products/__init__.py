"""Generator of filter_low_selling_products: a WooCommerce store (5-10 categories, `Clearance`
among them; products with 30-day sales in their meta, lifetime sales, prices, statuses and
creation dates around the 91-day line; customers), the admin's mailbox with its credentials in
`admin_credentials.txt`, a mailbox for everyone on the subscriber list, and the workspace files:
`subscriber.json`, `email_template.txt` and `discount_products.csv` (header and example row).

Scale: `num_low` n (primary), the products to move; `num_normal` ordinary products follow it
(2n, at least 12) unless calibration sets them to land on a length target; five near misses;
max(10, round(0.75 n)) subscribed list entries plus 15% unsubscribed ones; max(3, n // 8) store
customers not on the list.

Every draw comes from the world's named RNG streams; Faker is seeded from one of them and only its
name data is used (its date providers read the wall clock)."""

from __future__ import annotations

import json
import random
from datetime import timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field
from sqlmodel import Session

from envs.filter_low_selling_products import (
    CLEARANCE,
    CREDENTIALS_FILE,
    EXAMPLE_ROW,
    MAIL,
    MOVED,
    OUTLET,
    PLACEHOLDER,
    PRICE,
    PRODUCT,
    PROMO,
    RATIO,
    REPORT,
    SALES_KEY,
    STORE_FILE,
    SUBSCRIBERS_FILE,
    TASK,
    TEMPLATE_FILE,
)
from generators.common import PersonNames, create_world, finish_world, seeded_faker, templates
from generators.filter_low_selling_products.plan import (
    MIN_NORMAL,
    NOW,
    STREAMS,
    Plan,
    Product,
    default_normal,
    missing_edge_cases,
    plan_world,
)
from loca.core.clock import iso_z
from loca.core.credentials import credentials_text
from loca.core.outputs import csv_text
from loca.core.rng import WorldRng
from loca.core.world import World, WorldMeta, write_text_atomic
from mock_servers.core import sql
from mock_servers.email import domain as mail
from mock_servers.woocommerce.domain import products as woo_products
from mock_servers.woocommerce.domain.base import Store
from mock_servers.woocommerce.seed import CategoryDef, CustomerDef, ProductDef, StoreDef, fill

VERSION = "1"
UTC = ZoneInfo("UTC")  # the store's time zone
_TEMPLATES = templates(str(Path(__file__).parent / "templates"))
STORES = (("Maple & Pine Home", "mapleandpine.shop"), ("Northwind Living", "northwindliving.com"),
          ("Harbor Lane Interiors", "harborlane.store"), ("Fjord & Field", "fjordfield.shop"),
          ("Copper Kettle Home", "copperkettlehome.com"), ("Willow Street Goods", "willowstreetgoods.com"))
SUBJECTS = ("{store}: new {outlet} deals", "Fresh markdowns in our {outlet} section",
            "{outlet} picks from {store} this week")
OPENINGS = ("We have just moved a new batch of products into our {outlet} section.",
            "Our {outlet} section has been restocked with new markdowns.",
            "Some of our longest-standing products are now on offer in {outlet}.")
CLOSINGS = ("Stock is limited, so do not wait too long.", "Prices hold while stock lasts.",
            "Reply to this e-mail if you have any question about a product.")
FEATURES = ("Finished by hand and sealed against everyday wear.", "Ships flat and assembles in minutes.",
            "A quiet piece that fits any room.", "Made in a small family workshop.",
            "Easy to clean with a damp cloth.", "Sized for small apartments and busy corners.",
            "Pairs well with the rest of the collection.", "Sustainably sourced materials throughout.",
            "Comes gift-wrapped on request.", "Built to last for years of daily use.",
            "Each piece varies slightly in grain and tone.", "Designed in our own studio.")


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_low: int = Field(ge=TASK.scale.lo, le=TASK.scale.hi)
    num_normal: int | None = Field(default=None, ge=MIN_NORMAL)

    def resolved(self) -> dict[str, int]:
        normal = default_normal(self.num_low) if self.num_normal is None else self.num_normal
        return {"num_low": self.num_low, "num_normal": normal}


def resolve_params(params: dict[str, object]) -> dict[str, int]:
    return Params.model_validate(params).resolved()


def _render(template: str, /, **values: object) -> str:
    return _TEMPLATES.get_template(f"{template}.j2").render(**values).strip()


def _product_def(p: Product, rng: random.Random, domain: str) -> ProductDef:
    style = p.name.split()[0]
    slug = "".join(c if c.isalnum() else "-" for c in p.sku.lower())
    return ProductDef(name=p.name, sku=p.sku, regular_price=p.regular, sale_price=p.sale, created=p.created,
                      status=p.status, stock_quantity=p.stock, categories=p.categories, tags=p.tags,
                      meta={SALES_KEY: p.sales_30},
                      description=_render("description", style=style, kind=p.kind, material=p.material,
                                          feature=rng.choice(FEATURES)),
                      images=[f"https://{domain}/media/{slug}.jpg"])


def _customer_def(name: str, email: str, rng: random.Random) -> CustomerDef:
    first, last = name.split(maxsplit=1)
    return CustomerDef(email=email, first_name=first, last_name=last,
                       created=NOW - timedelta(seconds=rng.randint(200 * 86400, 900 * 86400)))


def _write_store(session: Session, plan: Plan, rng: random.Random) -> dict[str, int]:
    """Fill the store; the product ids by SKU."""
    shop = StoreDef(
        categories=[CategoryDef(c, description=_render("category", name=c, clearance=CLEARANCE))
                    for c in plan.categories],
        products=[_product_def(p, rng, plan.domain) for p in plan.products],
        customers=[_customer_def(p.name, p.email, rng) for p in plan.people if p.customer])
    ids = fill(session, shop).products
    sql.cursor(session).executemany("UPDATE woo_product SET total_sales = ? WHERE id = ?",
                                    [(p.lifetime, ids[p.sku]) for p in plan.products if p.lifetime])
    return ids


def _write_mail(session: Session, plan: Plan, password: str, salt: str) -> None:
    mail.add_account(session, address=plan.admin.email, name=plan.admin.name, password=password, salt=salt,
                     created_at=iso_z(NOW.replace(year=2023)))
    mail.add_accounts(session, [(p.email, p.name) for p in plan.people], created_at=iso_z(NOW.replace(year=2024)))


def _secret(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghjkmnpqrstuvwxyz23456789") for _ in range(16))


def _template(plan: Plan, rng: random.Random) -> str:
    """The template file: the subject on its first line, then the body."""
    values = {"store": plan.store, "outlet": OUTLET}
    subject = rng.choice(SUBJECTS).format(**values)
    text = _render("email_template", subject=subject, outlet=OUTLET, store=plan.store, admin=plan.admin.name,
                   opening=rng.choice(OPENINGS).format(**values), closing=rng.choice(CLOSINGS))
    return text + "\n"


def _write_workspace(world: World, plan: Plan, template: str, password: str) -> None:
    listed = [{"email": p.email, "name": p.name, "subscribed": p.subscribed} for p in plan.subscribers]
    write_text_atomic(world.workspace / SUBSCRIBERS_FILE,
                      json.dumps({"subscriber_list": listed}, indent=2, ensure_ascii=False) + "\n")
    write_text_atomic(world.workspace / TEMPLATE_FILE, template)
    write_text_atomic(world.workspace / REPORT.file, csv_text(REPORT.headers, [EXAMPLE_ROW]))
    write_text_atomic(world.workspace / CREDENTIALS_FILE,
                      credentials_text(f"{plan.store} admin mailbox", plan.admin.email, password, plan.domain))


def report_rows(plan: Plan) -> list[dict[str, str]]:
    return [{PRODUCT: p.name, PRICE: str(p.regular), PROMO: str(p.promo), RATIO: f"{p.ratio}%"}
            for p in plan.to_move]


def store_state(session: Session) -> dict[str, dict[str, Any]]:
    """Every product as the tools show it (date_modified left out), by id."""
    found = sql.rows(session, woo_products.Product, f"SELECT {woo_products.COLUMNS} FROM woo_product p ORDER BY p.id")
    views = woo_products.views(Store(session, NOW, UTC), found)
    return {str(v["id"]): {k: x for k, x in v.items() if k != "date_modified"} for v in views}


def generate(root: Path, params: dict[str, object], seed: int,
             target_tokens: int | None = None) -> World:
    """Build the world directory for (params, seed). Pure in its inputs: same inputs, same
    content hash."""
    p = Params.model_validate(params).resolved()
    rngs = WorldRng(TASK.name, seed)
    streams = {name: rngs.stream(name) for name in STREAMS}
    names = PersonNames(seeded_faker(rngs.stream("faker_people")), rngs.stream("names"))
    secrets = rngs.stream("secrets")
    password, salt = _secret(secrets), _secret(secrets)
    store = rngs.stream("store").choice(STORES)
    plan = plan_world(streams, names, p["num_low"], p["num_normal"], store)
    missing = missing_edge_cases(plan)
    if missing:
        raise ValueError(f"{TASK.name} seed {seed}: the plan lacks {missing}")
    meta = WorldMeta(task=TASK.name, seed=seed, params=p, now=iso_z(NOW), tz="UTC", target_tokens=target_tokens,
                     generator_version=VERSION, accounts={"email": {"address": plan.admin.email}})
    world, db = create_world(root, meta, TASK.servers.values())
    with db.write() as session:
        ids = _write_store(session, plan, rngs.stream("texts"))
        _write_mail(session, plan, password, salt)
    with db.read() as session:
        products = store_state(session)
    db.dispose()
    template = _template(plan, rngs.stream("template"))
    _write_workspace(world, plan, template, password)
    answer = {REPORT.file: report_rows(plan),
              MAIL: [{"to": s.email, "fill": {PLACEHOLDER: s.name}}
                     for s in sorted((s for s in plan.subscribers if s.subscribed), key=lambda s: s.email)],
              MOVED: sorted(ids[p.sku] for p in plan.to_move)}
    write_text_atomic(world.truth_dir / STORE_FILE, json.dumps({"products": products},
                                                               ensure_ascii=False, separators=(",", ":")))
    return finish_world(world, TASK, answer)
