"""Generator of woocommerce_stock_alert: a WooCommerce store whose products carry a stock
threshold and a supplier in their metadata, the Google Sheet `WooCommerce Stock Alert` (tab
`Stock Alert` with stale rows and one still valid, tab `Suppliers`), the admin's mailbox and the
purchasing manager's, and in the workspace the alert template, the manager's address and the
admin's mail credentials.

Scale: `num_low` (primary), the products low on stock; suppliers follow from it
(clamp(ceil(n/4), 3, 40)), and so do the near misses (1 + n/25 of each kind). `num_normal`, the
products comfortably above their threshold, is round(2.5 n) unless calibration sets it to land on
a length target (at least MIN_NORMAL, so the default product listing always has a second page)."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from sqlmodel import Session

from envs.woocommerce_stock_alert import (
    ALERT_HEADERS,
    ALERT_TAB,
    BOOK_TITLE,
    CREDENTIALS_FILE,
    MAIL,
    MANAGER_FILE,
    ROWS,
    SPREADSHEET,
    SUPPLIER_HEADERS,
    SUPPLIERS_TAB,
    TASK,
    TEMPLATE_FILE,
    mail_entry,
)
from generators.common import PersonNames, create_world, finish_world, seeded_faker, templates
from generators.woocommerce_stock_alert.plan import (
    NOW,
    STREAMS,
    UNMANAGED,
    Counts,
    Plan,
    default_normal,
    plan_world,
    problems,
)
from loca.core.clock import iso_z
from loca.core.credentials import credentials_text
from loca.core.rng import WorldRng
from loca.core.world import World, WorldMeta, write_text_atomic
from mock_servers.email import domain as mail
from mock_servers.google_sheet import domain as sheets
from mock_servers.woocommerce.seed import CategoryDef, ProductDef, StoreDef, fill

VERSION = "1"
MIN_NORMAL = 4
_TEMPLATES = templates(str(Path(__file__).parent / "templates"))


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_low: int = Field(ge=TASK.scale.lo, le=TASK.scale.hi)
    num_normal: int | None = Field(default=None, ge=0)

    def resolved(self) -> dict[str, int]:
        normal = default_normal(self.num_low) if self.num_normal is None else self.num_normal
        return {"num_low": self.num_low, "num_normal": max(MIN_NORMAL, normal)}


def resolve_params(params: dict[str, object]) -> dict[str, int]:
    return Params.model_validate(params).resolved()


def _secret(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghjkmnpqrstuvwxyz23456789") for _ in range(16))


def _store(session: Session, plan: Plan) -> None:
    categories = list(dict.fromkeys(p.category for p in plan.products))
    seeded = fill(session, StoreDef(
        categories=[CategoryDef(c) for c in sorted(categories)],
        products=[ProductDef(p.name, p.sku, p.price, p.created, manage_stock=p.manage_stock, stock_quantity=p.stock,
                             stock_status="outofstock" if p.kind == UNMANAGED else "instock",
                             low_stock_amount=p.low_stock_amount, categories=[p.category], meta=p.meta,
                             description=p.description) for p in plan.products]))
    if seeded.products != {p.sku: p.id for p in plan.products}:
        raise RuntimeError("the store gave other product ids than planned")


def _mail(session: Session, plan: Plan, password: str, salt: str) -> None:
    (admin_name, admin), (manager_name, manager) = plan.admin, plan.manager
    mail.add_account(session, address=admin, name=admin_name, password=password, salt=salt,
                     created_at=iso_z(NOW - timedelta(days=700)))
    mail.add_accounts(session, [(manager, manager_name)], created_at=iso_z(NOW - timedelta(days=500)))


def _sheet(session: Session, plan: Plan, seed: int) -> str:
    alerts = [list(ALERT_HEADERS), *([row[h] for h in ALERT_HEADERS] for row in plan.sheet_rows)]
    suppliers = [list(SUPPLIER_HEADERS), *(s.row() for s in plan.suppliers)]
    book = sheets.create(session, task=TASK.name, seed=seed, title=BOOK_TITLE,
                         created=iso_z(NOW - timedelta(days=60)), today=NOW.date(),
                         sheets=[sheets.SheetSpec(ALERT_TAB, alerts, column_count=len(ALERT_HEADERS)),
                                 sheets.SheetSpec(SUPPLIERS_TAB, suppliers, column_count=len(SUPPLIER_HEADERS))])
    return book.id


def _workspace(world: World, plan: Plan, password: str) -> None:
    template = _TEMPLATES.get_template(f"{TEMPLATE_FILE}.j2").render(sender=plan.admin[0], store=plan.store)
    write_text_atomic(world.workspace / TEMPLATE_FILE, template.strip() + "\n")
    write_text_atomic(world.workspace / MANAGER_FILE, plan.manager[1] + "\n")
    write_text_atomic(world.workspace / CREDENTIALS_FILE,
                      credentials_text("WooCommerce store admin mailbox", plan.admin[1], password, plan.domain))


def plan_of(params: dict[str, object], seed: int) -> Plan:
    """The plan of the world of (params, seed); it holds every guarantee of the task or raises."""
    p = resolve_params(params)
    rngs = WorldRng(TASK.name, seed)
    streams = {name: rngs.stream(name) for name in STREAMS}
    names = PersonNames(seeded_faker(rngs.stream("faker_people")), rngs.stream("names"))
    plan = plan_world(streams, names, Counts.of(p["num_low"], p["num_normal"]))
    broken = problems(plan)
    if broken:
        raise RuntimeError(f"{TASK.name} seed {seed} {p}: the plan breaks its guarantees: {broken}")
    return plan


def generate(root: Path, params: dict[str, object], seed: int, target_tokens: int | None = None) -> World:
    """Build the world directory for (params, seed). Pure in its inputs: same inputs, same
    content hash."""
    p = resolve_params(params)
    plan = plan_of(params, seed)
    secrets = WorldRng(TASK.name, seed).stream("secrets")
    password, salt = _secret(secrets), _secret(secrets)
    meta = WorldMeta(task=TASK.name, seed=seed, params=p, now=iso_z(NOW), tz="UTC", target_tokens=target_tokens,
                     generator_version=VERSION, accounts={"email": {"address": plan.admin[1]}})
    world, db = create_world(root, meta, TASK.servers.values())
    with db.write() as session:
        _store(session, plan)
        _mail(session, plan, password, salt)
        book = _sheet(session, plan, seed)
    db.dispose()
    _workspace(world, plan, password)
    rows = plan.expected_rows()
    answer = {ROWS: rows, MAIL: [mail_entry(r, plan.manager[1], book) for r in rows], SPREADSHEET: book}
    return finish_world(world, TASK, answer, stale=plan.stale, kept=plan.kept)
