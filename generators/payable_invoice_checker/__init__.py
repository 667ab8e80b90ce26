"""Generator of payable_invoice_checker: a Snowflake warehouse `PURCHASE_INVOICE.PUBLIC` with the
tables INVOICES and INVOICE_PAYMENTS already holding old ("interference") rows and a few of the
PDF invoices, the invoice PDFs in `files/`, the accounts-payable mailbox with its credentials in
`email_account.txt`, and a mailbox for every purchasing manager.

Scale: `num_invoices` k (primary, at most 300: one PDF read a call); the existing rows
`num_existing` follow it (60 k) unless calibration sets them to land on a length target (beyond
256K they carry the length); managers = clamp(2 + k // 3, 2, 10).

Every draw comes from the world's named RNG streams; Faker is seeded from them and only its
name, company and address providers are used (its date providers read the wall clock)."""

from __future__ import annotations

import gc
import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from sqlmodel import Session

from envs.payable_invoice_checker import (
    CREDENTIALS_FILE,
    DATABASE,
    FILES,
    FLAG_COLUMN,
    INITIAL_FLAG_COMMENT,
    INVOICE_COLUMNS,
    INVOICES,
    MAIL,
    NEW_INVOICES,
    NEW_PAYMENTS,
    PAYMENT_COLUMNS,
    PAYMENTS,
    PHYSICAL,
    SCHEMA,
    TASK,
    TRAP_ROWS,
)
from generators.common import PersonNames, create_world, finish_world, seeded_faker
from generators.payable_invoice_checker.plan import (
    FORMER_PURCHASERS,
    ID_FORMATS,
    TAX_RATES,
    IdMaker,
    Invoice,
    OldRow,
    Person,
    Plan,
    Supplier,
    default_existing,
    num_managers,
    people,
    plan_existing,
    plan_invoices,
)
from generators.payable_invoice_checker.render import invoice_pdf
from loca.core.clock import iso_z
from loca.core.credentials import credentials_text
from loca.core.pdf_text import extract_soon
from loca.core.rng import WorldRng
from loca.core.world import World, WorldMeta, write_text_atomic
from mock_servers.core import sql
from mock_servers.email import domain as mail
from mock_servers.snowflake.seed import ColumnDef, DatabaseDef, SchemaDef, TableDef, build

VERSION = "2"
NOW = datetime(2025, 1, 1, tzinfo=UTC)
STREAMS = ("company", "suppliers", "invoices", "existing", "ids", "secrets")


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_invoices: int = Field(ge=TASK.scale.lo, le=TASK.scale.hi)
    num_existing: int | None = Field(default=None, ge=TRAP_ROWS + 20)

    def resolved(self) -> dict[str, int]:
        existing = self.num_existing
        return {"num_invoices": self.num_invoices,
                "num_existing": default_existing(self.num_invoices) if existing is None else existing}


def resolve_params(params: dict[str, object]) -> dict[str, int]:
    return Params.model_validate(params).resolved()


def _slug(name: str) -> str:
    return re.sub(r"[^a-z]", "", name.split()[0].lower()) or "supply"


def _suppliers(rng: random.Random, seed_rng: random.Random, count: int) -> list[Supplier]:
    fake = seeded_faker(seed_rng)
    out: list[Supplier] = []
    seen: set[str] = set()
    while len(out) < count:
        name = fake.company()
        slug = _slug(name)
        if name in seen or slug in seen or not name.isascii():
            continue
        seen.update((name, slug))
        letters = re.sub(r"[^A-Z]", "", name.upper())
        out.append(Supplier(name, f"billing@{slug}-supply.com", fake.street_address(),
                            f"{fake.city()}, {fake.state_abbr()} {fake.zipcode()}",
                            f"({rng.randint(201, 989)}) 555-{rng.randint(0, 9999):04d}",
                            rng.randrange(ID_FORMATS), (letters + "XXX")[:3], rng.choice(TAX_RATES)))
    return out


def plan_world(rngs: WorldRng, num_invoices: int, num_existing: int) -> Plan:
    streams = {name: rngs.stream(name) for name in STREAMS}
    company_fake = seeded_faker(rngs.stream("faker_company"))
    company = company_fake.company()
    domain = f"{_slug(company)}-corp.com"
    names = PersonNames(seeded_faker(rngs.stream("faker_people")), streams["company"])
    taken: set[str] = set()
    managers = people(names, domain, num_managers(num_invoices), taken)
    former = people(names, domain, FORMER_PURCHASERS, taken)
    clerk = Person("Accounts Payable", f"accounts.payable@{domain}")
    suppliers = _suppliers(streams["suppliers"], rngs.stream("faker_suppliers"), max(6, min(40, num_invoices // 3)))
    ids = IdMaker(streams["ids"])
    invoices = plan_invoices(streams["invoices"], suppliers, managers, ids, num_invoices)
    existing = plan_existing(streams["existing"], suppliers, managers, former, ids, num_existing,
                             [i for i in invoices if i.recorded])
    return Plan(company, domain, clerk, tuple(managers), tuple(suppliers), tuple(invoices), tuple(existing))


def _columns(spec: dict[str, str], comments: dict[str, str]) -> list[ColumnDef]:
    return [ColumnDef(name, kind, comment=comments.get(name)) for name, kind in spec.items()]


def _warehouse(plan: Plan) -> list[DatabaseDef]:
    invoices = TableDef(INVOICES, _columns(INVOICE_COLUMNS, {}), [
        (r.invoice_id, r.supplier, r.amount, r.purchaser, r.issued) for r in plan.existing],
        comment="Supplier invoices received")
    payments = TableDef(PAYMENTS, _columns(PAYMENT_COLUMNS, {FLAG_COLUMN: INITIAL_FLAG_COMMENT}), [
        (r.invoice_id, r.paid, int(r.outstanding)) for r in plan.existing],
        comment="Payments made against supplier invoices")
    return [DatabaseDef(DATABASE, [SchemaDef(SCHEMA, [invoices, payments])])]


def _write_state(session: Session, plan: Plan, password: str, salt: str) -> None:
    build(session, _warehouse(plan), NOW - timedelta(days=30))
    stored = dict(sql.run(session, "SELECT name, physical FROM sf_table"))
    if stored != PHYSICAL:
        raise AssertionError(f"the tables are stored in {stored}, not {PHYSICAL}")
    mail.add_account(session, address=plan.clerk.email, name=plan.clerk.name, password=password, salt=salt,
                     created_at=iso_z(NOW - timedelta(days=700)))
    mail.add_accounts(session, [(m.email, m.name) for m in plan.managers], created_at=iso_z(NOW - timedelta(days=600)))
    first = plan.managers[0]
    mail.deliver(session, sender=first.email, sender_name=first.name, to=[plan.clerk.email],
                 subject="Supplier invoices for this quarter",
                 body=(f"Hi,\n\nThe supplier invoices that reached purchasing this quarter are in the shared "
                       f"{FILES}/ folder. Please get them into the purchase invoice database and let each of us "
                       f"know what is still open.\n\nThanks,\n{first.name}"),
                 date=iso_z(NOW - timedelta(days=2)))


def _secret(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghjkmnpqrstuvwxyz23456789") for _ in range(16))


def _money(value: Any) -> str:
    return f"{value:.2f}"


def _answer(plan: Plan) -> dict[str, Any]:
    new = sorted((i for i in plan.invoices if not i.recorded), key=lambda i: i.invoice_id)
    return {
        NEW_INVOICES: [{"INVOICE_ID": i.invoice_id, "SUPPLIER_NAME": i.supplier.name,
                        "INVOICE_AMOUNT": _money(i.total), "PURCHASER_EMAIL": i.buyer.email,
                        "INVOICE_DATE": i.issued.isoformat()} for i in new],
        NEW_PAYMENTS: [{"INVOICE_ID": i.invoice_id, "PAYMENT_AMOUNT": _money(i.paid),
                        "OUTSTANDING_FLAG": int(i.outstanding)} for i in new],
        MAIL: [{"to": email, "ids": ids} for email, ids in plan.mail().items()],
    }


def _existing(rows: tuple[OldRow, ...]) -> dict[str, list[list[Any]]]:
    return {INVOICES: [[r.invoice_id, r.supplier, _money(r.amount), r.purchaser, r.issued.isoformat()]
                       for r in rows],
            PAYMENTS: [[r.invoice_id, _money(r.paid), int(r.outstanding)] for r in rows]}


def _write_pdfs(world: World, invoices: tuple[Invoice, ...], company: str) -> None:
    """The invoice PDFs, their texts then extracted in a worker while the rest of the world is
    built (the measurement reads every one; `loca.core.pdf_text`)."""
    folder = world.workspace / FILES
    folder.mkdir()
    datas = [invoice_pdf(invoice, company) for invoice in invoices]
    for invoice, data in zip(invoices, datas, strict=True):  # plainly, as generators.pdf.write_pdf does
        (folder / f"{invoice.invoice_id}.pdf").write_bytes(data)
    extract_soon(datas)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a world is made, as it was before afterwards: a
    large world is a million small acyclic objects, and the collector's repeated full passes over
    them cost about as much as making them."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def generate(root: Path, params: dict[str, object], seed: int,
             target_tokens: int | None = None) -> World:
    """Build the world directory for (params, seed). Pure in its inputs: same inputs, same
    content hash."""
    with _collector_paused():
        return _generate(root, Params.model_validate(params).resolved(), seed, target_tokens)


def _generate(root: Path, p: dict[str, int], seed: int, target_tokens: int | None) -> World:
    rngs = WorldRng(TASK.name, seed)
    secrets = rngs.stream("secrets")
    password, salt = _secret(secrets), _secret(secrets)
    plan = plan_world(rngs, p["num_invoices"], p["num_existing"])
    meta = WorldMeta(task=TASK.name, seed=seed, params=p, now=iso_z(NOW), tz="UTC",
                     target_tokens=target_tokens, generator_version=VERSION,
                     accounts={"email": {"address": plan.clerk.email},
                               "snowflake": {"database": DATABASE, "schema": SCHEMA}})
    world, db = create_world(root, meta, TASK.servers.values())
    _write_pdfs(world, plan.invoices, plan.company)
    with db.write() as session:
        _write_state(session, plan, password, salt)
    db.dispose()
    write_text_atomic(world.workspace / CREDENTIALS_FILE,
                      credentials_text("Accounts payable mailbox", plan.clerk.email, password, plan.domain))
    schema = {name: list(spec.items()) for name, spec in ((INVOICES, INVOICE_COLUMNS), (PAYMENTS, PAYMENT_COLUMNS))}
    return finish_world(world, TASK, _answer(plan), existing=_existing(plan.existing), schema=schema,
                        recorded=sorted(i.invoice_id for i in plan.invoices if i.recorded))
