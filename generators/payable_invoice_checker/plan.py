"""The plan of a payable_invoice_checker world, as plain data: the buyer company and its
purchasing managers, suppliers, the invoice PDFs (line items, tax, payment status, layout) and
the rows the warehouse already holds, with every edge case the task guarantees placed at every
size. Money is `Decimal` with two places throughout."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import NamedTuple

from envs.payable_invoice_checker import TRAP_ROWS
from generators.common import PersonNames

PAID, PARTIAL, UNPAID, REVIEW = "paid", "partial", "unpaid", "review"
STATUS_WEIGHTS = {PAID: 0.6, PARTIAL: 0.2, UNPAID: 0.1, REVIEW: 0.1}
SUBTLE_SHARE = 0.4  # PDFs that show the payment status only in a small grey line
TEMPLATES = 5
TAX_RATES = (Decimal("0.05"), Decimal("0.06"), Decimal("0.0725"), Decimal("0.08"), Decimal("0.0825"),
             Decimal("0.10"))
ID_FORMATS = 5
NEW_FROM, NEW_TO = date(2024, 9, 2), date(2024, 12, 20)  # dates of the PDF invoices
OLD_FROM, OLD_TO = date(2022, 1, 3), date(2023, 12, 29)  # dates of the rows already there
OLD_OUTSTANDING = 0.12  # share of old rows still outstanding
EXISTING_PER_INVOICE = 60
FORMER_PURCHASERS = 3  # buyers of old rows who are no longer managers
CENT = Decimal("0.01")
ID_DRAWS = 1000  # draws of one new invoice ID before its format counts as full
ITEMS = ("Printer paper A4, 5-ream box", "Toner cartridge, black", "Ergonomic office chair",
         "Standing desk frame", "USB-C docking station", "27-inch monitor", "Wireless keyboard and mouse",
         "Network switch, 24 ports", "Cat6 patch cables (pack of 10)", "Safety gloves, size L (pair)",
         "Hard hat, class E", "Hi-vis vest", "Pallet wrap, 18-inch roll", "Corrugated boxes, medium",
         "Packing tape (case of 36)", "Label printer rolls", "Hand sanitizer, 1 gallon", "Nitrile gloves (box)",
         "Floor cleaner concentrate", "Paper towels (case)", "Coffee beans, 5 lb bag", "Bottled water (case)",
         "Laptop, 14-inch business", "Laptop bag", "Projector bulb", "Whiteboard markers (12)",
         "Conference speakerphone", "Server rack shelf", "UPS battery backup 1500VA", "Hydraulic oil, 5 gal",
         "Bearing set 6204", "Drill bits, cobalt set", "Welding rods, 10 lb", "Forklift maintenance visit",
         "Software subscription, monthly seat", "Cloud backup, 1 TB", "IT support, hourly",
         "Courier delivery", "Freight charge", "Installation service, hourly")


@dataclass(frozen=True)
class Person:
    name: str
    email: str


@dataclass(frozen=True)
class Supplier:
    name: str
    email: str
    street: str
    city: str
    phone: str
    id_format: int
    prefix: str  # three capitals, for the ID format that uses them
    tax_rate: Decimal


@dataclass(frozen=True)
class Item:
    description: str
    quantity: int
    unit_price: Decimal

    @property
    def amount(self) -> Decimal:
        return (self.unit_price * self.quantity).quantize(CENT)


@dataclass(frozen=True)
class Invoice:
    """One invoice PDF: what it prints and how."""

    invoice_id: str
    supplier: Supplier
    buyer: Person
    issued: date
    items: tuple[Item, ...]
    status: str
    paid: Decimal
    paid_on: date
    subtle: bool  # the payment status shows only in a small grey line
    template: int
    recorded: bool  # already in both tables

    @property
    def subtotal(self) -> Decimal:
        return sum((i.amount for i in self.items), Decimal("0.00"))

    @property
    def tax(self) -> Decimal:
        return (self.subtotal * self.supplier.tax_rate).quantize(CENT, ROUND_HALF_UP)

    @property
    def total(self) -> Decimal:
        return self.subtotal + self.tax

    @property
    def outstanding(self) -> bool:
        return self.status != PAID


class OldRow(NamedTuple):
    """A row both tables already hold (a tuple: a large world makes some 200,000)."""

    invoice_id: str
    supplier: str
    amount: Decimal
    purchaser: str
    issued: date
    paid: Decimal
    outstanding: bool


@dataclass(frozen=True)
class Plan:
    company: str
    domain: str
    clerk: Person  # the mailbox owner
    managers: tuple[Person, ...]
    suppliers: tuple[Supplier, ...]
    invoices: tuple[Invoice, ...]
    existing: tuple[OldRow, ...]  # in table order, the recorded PDFs among them

    def mail(self) -> dict[str, list[str]]:
        """Manager e-mail -> their outstanding PDF invoice IDs (sorted), for those with any."""
        due: dict[str, list[str]] = {}
        for invoice in self.invoices:
            if invoice.outstanding:
                due.setdefault(invoice.buyer.email, []).append(invoice.invoice_id)
        return {email: sorted(ids) for email, ids in sorted(due.items())}


def num_managers(num_invoices: int) -> int:
    return max(2, min(10, 2 + num_invoices // 3))


def default_existing(num_invoices: int) -> int:
    return EXISTING_PER_INVOICE * num_invoices


def _day(rng: random.Random, start: date, end: date) -> date:
    return start + timedelta(days=rng.randint(0, (end - start).days))


def _money(rng: random.Random, lo: int, hi: int) -> Decimal:
    return Decimal(rng.randint(lo * 100, hi * 100)) / 100


class IdMaker:
    """Invoice IDs unique in the world, in five formats (a supplier keeps one). The narrowest
    formats hold 99,999 IDs a year (some 200,000 over the old rows' two years); a world of the
    largest scale uses a fraction of each."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.taken: set[str] = set()

    def make(self, supplier: Supplier, issued: date) -> str:
        for _ in range(ID_DRAWS):
            candidate = self._draw(supplier, issued)
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate
        raise ValueError(f"no free invoice ID of format {supplier.id_format} left for {issued:%Y-%m} after "
                         f"{ID_DRAWS} draws: too many rows for the format's numbers")

    def _draw(self, supplier: Supplier, issued: date) -> str:
        """One candidate in the supplier's format; every format's numbers are drawn, in order."""
        rng, year = self.rng, issued.year
        n, serial, bill = rng.randint(1, 99_999), rng.randint(1, 999_999), rng.randint(1, 9_999_999)
        match supplier.id_format:
            case 0:
                return f"INV-{year}-{n:05d}"
            case 1:
                return f"{supplier.prefix}-{serial:06d}"
            case 2:
                return f"SI{year % 100:02d}{n:05d}"
            case 3:
                return f"BILL-{bill:07d}"
        return f"{year}{issued.month:02d}-{n % 10_000:04d}"


def _status(rng: random.Random) -> str:
    return rng.choices(list(STATUS_WEIGHTS), weights=list(STATUS_WEIGHTS.values()))[0]


def _paid(rng: random.Random, status: str, total: Decimal) -> Decimal:
    if status in (PAID, REVIEW):
        return total
    if status == UNPAID:
        return Decimal("0.00")
    return (total * Decimal(rng.randint(15, 85)) / 100).quantize(CENT, ROUND_HALF_UP)


@dataclass(frozen=True)
class Forced:
    """What one invoice must be so that every edge case exists (None: drawn)."""

    manager: int | None = None
    status: str | None = None
    subtle: bool | None = None


# Invoice 0: the manager whose invoices are all paid (so "e-mail every buyer" fails); 1: a
# payment under review shown only in the subtle line; 2: a partial payment in the status box;
# 3: an invoice without payment. The recorded invoices are drawn among the others.
FORCED = (Forced(0, PAID), Forced(1, REVIEW, True), Forced(None, PARTIAL, False), Forced(None, UNPAID))


def plan_invoices(rng: random.Random, suppliers: list[Supplier], managers: list[Person], ids: IdMaker,
                  count: int) -> list[Invoice]:
    """`count` invoices with the forced ones first; the all-paid manager's are all paid."""
    offset = rng.randrange(TEMPLATES)
    templates = [(offset + i) % TEMPLATES for i in range(count)]
    rng.shuffle(templates)
    num_recorded = max(1, count // 8)
    recorded = set(rng.sample(range(len(FORCED), count), num_recorded))
    out = []
    for i in range(count):
        forced = FORCED[i] if i < len(FORCED) else Forced()
        manager = forced.manager if forced.manager is not None else rng.randrange(1 if i < len(FORCED) else 0,
                                                                                    len(managers))
        status = forced.status or (PAID if manager == 0 else _status(rng))
        supplier = rng.choice(suppliers)
        issued = _day(rng, NEW_FROM, NEW_TO)
        items = tuple(Item(rng.choice(ITEMS), rng.randint(1, 25), _money(rng, 4, 600))
                      for _ in range(rng.randint(2, 6)))
        subtle = forced.subtle if forced.subtle is not None else rng.random() < SUBTLE_SHARE
        draft = Invoice(ids.make(supplier, issued), supplier, managers[manager], issued, items, status,
                        Decimal("0.00"), issued + timedelta(days=rng.randint(3, 12)), subtle,
                        templates[i], i in recorded)
        out.append(_with_paid(draft, _paid(rng, status, draft.total)))
    return out


def _with_paid(invoice: Invoice, paid: Decimal) -> Invoice:
    return Invoice(invoice.invoice_id, invoice.supplier, invoice.buyer, invoice.issued, invoice.items,
                   invoice.status, paid, invoice.paid_on, invoice.subtle, invoice.template, invoice.recorded)


def plan_existing(rng: random.Random, suppliers: list[Supplier], managers: list[Person], former: list[Person],
                  ids: IdMaker, count: int, recorded: list[Invoice]) -> list[OldRow]:
    """`count` old rows, each manager with at least one still outstanding, and the recorded
    invoices placed beyond the first `TRAP_ROWS` rows."""
    buyers = [*managers, *former]
    days = [OLD_FROM + timedelta(days=n) for n in range((OLD_TO - OLD_FROM).days + 1)]  # as `_day` draws them
    rows = []
    for i in range(count):
        supplier = rng.choice(suppliers)
        issued = days[rng.randint(0, len(days) - 1)]
        buyer = managers[i] if i < len(managers) else rng.choice(buyers)
        amount = _money(rng, 40, 24_000)
        outstanding = i < len(managers) or rng.random() < OLD_OUTSTANDING
        paid = (amount * Decimal(rng.randint(0, 80)) / 100).quantize(CENT, ROUND_HALF_UP) if outstanding else amount
        rows.append(OldRow(ids.make(supplier, issued), supplier.name, amount, buyer.email, issued, paid, outstanding))
    rng.shuffle(rows)
    for invoice in recorded:
        at = rng.randint(min(TRAP_ROWS, len(rows)), len(rows))
        rows.insert(at, OldRow(invoice.invoice_id, invoice.supplier.name, invoice.total, invoice.buyer.email,
                               invoice.issued, invoice.paid, invoice.outstanding))
    return rows


def people(names: PersonNames, domain: str, count: int, taken: set[str]) -> list[Person]:
    """`count` people of the company, e-mail addresses unique in `taken` (updated)."""
    out: list[Person] = []
    while len(out) < count:
        first, last = names.first(), names.last()
        email = f"{first}.{last}@{domain}".lower().replace(" ", "").replace("'", "")
        if email not in taken and email.isascii():
            taken.add(email)
            out.append(Person(f"{first} {last}", email))
    return out
