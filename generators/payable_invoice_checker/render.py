"""Invoice PDFs in five rotating layouts (fonts, colours, label wording, date and money formats
differ). Each layout prints the supplier's name first, then its contact lines, the invoice
number and date, the buyer block (company, attention line, buyer e-mail), the line items, the
totals, and the payment status: in a status box, or (for the subtle ones) only in a small grey
line near the foot of the page. Every string is one drawn text run, so text extraction gives it
as one line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from decimal import Decimal

from reportlab.lib.colors import Color, black, white
from reportlab.lib.rl_accel import escapePDF, fp_str
from reportlab.pdfbase.pdfmetrics import stringWidth

from generators.payable_invoice_checker.plan import PAID, PARTIAL, REVIEW, UNPAID, Invoice
from generators.pdf import PAGE_SIZES, page_pdf

WIDTH, HEIGHT = PAGE_SIZES["letter"]
LEFT, RIGHT = 54.0, WIDTH - 54.0
GREY = Color(0.55, 0.55, 0.55)
STATUS_WORDS = {PAID: "PAID IN FULL", PARTIAL: "PARTIALLY PAID", UNPAID: "UNPAID", REVIEW: "UNDER REVIEW"}


def iso(day: date) -> str:
    return day.isoformat()


def long_date(day: date) -> str:
    return f"{day:%B} {day.day}, {day.year}"


def short_date(day: date) -> str:
    return f"{day:%b} {day.day}, {day.year}"


def day_month(day: date) -> str:
    return f"{day.day:02d} {day:%b} {day.year}"


def dotted(day: date) -> str:
    return f"{day.year}.{day.month:02d}.{day.day:02d}"


def dollars(value: Decimal) -> str:
    return f"${value:,.2f}"


def usd_before(value: Decimal) -> str:
    return f"USD {value:,.2f}"


def usd_after(value: Decimal) -> str:
    return f"{value:,.2f} USD"


@dataclass(frozen=True)
class Style:
    """One layout's wording, fonts and formats."""

    font: str
    bold: str
    accent: Color
    title: str
    id_label: str
    date_label: str
    buyer_label: str
    subtotal_label: str
    tax_label: str  # formatted with the rate in percent
    total_label: str
    remit: str  # formatted with the supplier's name
    day: Callable[[date], str]
    money: Callable[[Decimal], str]
    band: bool = False  # the supplier's name on a coloured band


STYLES = (
    Style("Helvetica", "Helvetica-Bold", Color(0.1, 0.1, 0.1), "INVOICE", "Invoice No.: {}", "Invoice Date: {}",
          "Bill To:", "Subtotal:", "Tax ({}%):", "Total:", "Remit payment to: {}", iso, dollars),
    Style("Helvetica", "Helvetica-Bold", Color(0.12, 0.23, 0.45), "Tax Invoice", "Invoice #{}", "Date: {}",
          "Billed to", "Subtotal", "Sales tax ({}%)", "Grand total", "Payable to: {}", long_date, dollars,
          band=True),
    Style("Courier", "Courier-Bold", Color(0.0, 0.0, 0.0), "I N V O I C E", "DOCUMENT NO. {}", "ISSUED {}",
          "CUSTOMER", "NET AMOUNT", "TAX {}%", "INVOICE TOTAL", "Make checks payable to {}", day_month,
          usd_before),
    Style("Times-Roman", "Times-Bold", Color(0.45, 0.12, 0.12), "Commercial Invoice", "Invoice Number: {}",
          "Issue date: {}", "Purchaser", "Amount before tax", "Tax {}%", "Total incl. tax", "Supplier: {}",
          short_date, dollars),
    Style("Helvetica", "Helvetica-BoldOblique", Color(0.1, 0.4, 0.3), "Invoice", "Reference: {}", "Dated: {}",
          "Invoice to", "Net total", "Tax at {}%", "Total amount", "Issued by: {}", dotted, usd_after),
)


def _percent(rate: Decimal) -> str:
    return f"{rate * 100:.2f}".rstrip("0").rstrip(".")


class _Page:
    """The content stream of one page, as the lines reportlab's canvas writes for the same
    drawing (`generators.pdf.page_pdf` writes the file around them). A text run is one text
    object placed with `Td` (from the origin, as `BT` resets the text matrix); the fill colour
    and the font are set only when they change. The page's content stream stays short (cheap
    to write and to parse) and extracts to the same text as one drawString per run."""

    def __init__(self, style: Style) -> None:
        self.style = style
        self.lines: list[str] = []
        self.fonts = {style.font: "/F1"}  # internal names in order of first use, as reportlab's
        self._fill: tuple[float, float, float] | None = None
        self._font: tuple[str, float] | None = None

    def fill(self, colour: Color) -> None:
        rgb = colour.rgb()
        if rgb != self._fill:
            self.lines.append(f"{fp_str(rgb)} rg")
            self._fill = rgb

    def stroke(self, colour: Color, width: float) -> None:
        self.lines += [f"{fp_str(colour.rgb())} RG", f"{fp_str(width)} w"]

    def rect(self, x: float, y: float, width: float, height: float, fill: bool) -> None:
        self.lines.append(f"n {fp_str(x, y, width, height)} re {'f*' if fill else 'S'}")

    def text(self, x: float, y: float, value: str, size: float = 9.5, bold: bool = False,
             colour: Color = black, align: str = "left") -> None:
        """Draw `value` with its left end (or, for align="right", its right end) at x."""
        self.fill(colour)
        font = self.style.bold if bold else self.style.font
        if (font, size) != self._font:
            name = self.fonts.setdefault(font, f"/F{len(self.fonts) + 1}")
            self.lines.append(f"BT {name} {fp_str(size)} Tf {fp_str(size * 1.2)} TL ET")
            self._font = (font, size)
        if align == "right":
            x -= stringWidth(value, font, size)
        self.lines.append(f"BT {fp_str(x, y)} Td ({escapePDF(value.encode('cp1252'))}) Tj T* ET")

    def rule(self, y: float, colour: Color) -> None:
        self.stroke(colour, 0.8)
        self.lines.append(f"n {fp_str(LEFT, y)} m {fp_str(RIGHT, y)} l S")


def _header(page: _Page, invoice: Invoice) -> float:
    style, supplier = page.style, invoice.supplier
    if style.band:
        page.fill(style.accent)
        page.rect(0, HEIGHT - 90, WIDTH, 90, fill=True)
        page.text(LEFT, HEIGHT - 50, supplier.name, 18, True, white)
        page.text(RIGHT, HEIGHT - 50, style.title, 14, True, white, "right")
        y = HEIGHT - 110
    else:
        page.text(LEFT, HEIGHT - 60, supplier.name, 17, True, style.accent)
        page.text(RIGHT, HEIGHT - 60, style.title, 15, True, style.accent, "right")
        y = HEIGHT - 80
    for line in (supplier.street, supplier.city, f"Phone {supplier.phone}", supplier.email):
        page.text(LEFT, y, line, 8.5)
        y -= 12
    return y - 8


def _details(page: _Page, invoice: Invoice, company: str, y: float) -> float:
    style = page.style
    page.text(RIGHT, y + 44, style.id_label.format(invoice.invoice_id), 10, True, align="right")
    page.text(RIGHT, y + 30, style.date_label.format(style.day(invoice.issued)), 9.5, align="right")
    page.text(RIGHT, y + 16, "Terms: Net 30", 9, align="right")
    page.text(LEFT, y, style.buyer_label, 10, True, style.accent)
    for line in (company, f"Attn: {invoice.buyer.name}", invoice.buyer.email):
        y -= 13
        page.text(LEFT, y, line, 9.5)
    return y - 24


def _items(page: _Page, invoice: Invoice, y: float) -> float:
    style = page.style
    columns = ((LEFT, "Description", "left"), (360, "Qty", "right"), (450, "Unit price", "right"),
               (RIGHT, "Amount", "right"))
    for x, label, align in columns:
        page.text(x, y, label, 9, True, align=align)
    page.rule(y - 5, style.accent)
    y -= 18
    for item in invoice.items:
        cells = (item.description, str(item.quantity), style.money(item.unit_price), style.money(item.amount))
        for (x, _, align), value in zip(columns, cells, strict=True):
            page.text(x, y, value, 9, align=align)
        y -= 14
    page.rule(y + 6, style.accent)
    y -= 10
    rate = _percent(invoice.supplier.tax_rate)
    totals = ((style.subtotal_label, invoice.subtotal, False), (style.tax_label.format(rate), invoice.tax, False),
              (style.total_label, invoice.total, True))
    for label, amount, bold in totals:
        page.text(400, y, label, 10 if bold else 9.5, bold, align="right")
        page.text(RIGHT, y, style.money(amount), 10 if bold else 9.5, bold, align="right")
        y -= 15
    return y - 20


def _status_box(page: _Page, invoice: Invoice, y: float) -> None:
    style = page.style
    page.stroke(style.accent, 1.2)
    page.rect(LEFT, y - 48, 260, 62, fill=False)
    page.text(LEFT + 10, y, f"PAYMENT STATUS: {STATUS_WORDS[invoice.status]}", 10.5, True, style.accent)
    paid = style.money(invoice.paid) + (" (under review)" if invoice.status == REVIEW else "")
    page.text(LEFT + 10, y - 16, f"Amount paid: {paid}", 9.5)
    page.text(LEFT + 10, y - 30, f"Balance due: {style.money(invoice.total - invoice.paid)}", 9.5)


def subtle_line(invoice: Invoice, money: Callable[[Decimal], str]) -> str:
    """The small grey line that alone tells a subtle invoice's payment status."""
    on = iso(invoice.paid_on)
    if invoice.status == PAID:
        return f"Paid in full: {money(invoice.paid)} received on {on}. Thank you for your business."
    if invoice.status == PARTIAL:
        return (f"Partial payment of {money(invoice.paid)} received on {on}; a balance of "
                f"{money(invoice.total - invoice.paid)} remains open.")
    if invoice.status == REVIEW:
        return f"A payment of {money(invoice.paid)} received on {on} is under review and has not cleared yet."
    assert invoice.status == UNPAID
    return f"No payment has been received for this invoice as of {on}."


def _footer(page: _Page, invoice: Invoice) -> None:
    style = page.style
    y = 96.0
    page.text(LEFT, y, style.remit.format(invoice.supplier.name), 9, True)
    page.text(LEFT, y - 13, f"Bank transfer: account {invoice.supplier.phone[-4:]}{invoice.issued:%m%d}, "
                            f"quote the invoice number as reference.", 8.5)
    page.text(LEFT, y - 26, f"Questions about this invoice: {invoice.supplier.email}", 8.5)
    if invoice.subtle:
        page.text(LEFT, y - 46, subtle_line(invoice, style.money), 6.5, colour=GREY)


def invoice_pdf(invoice: Invoice, company: str) -> bytes:
    """The PDF of one invoice to `company` in its layout."""
    style = STYLES[invoice.template]
    page = _Page(style)
    y = _header(page, invoice)
    y = _details(page, invoice, company, y)
    y = _items(page, invoice, y)
    if not invoice.subtle:
        _status_box(page, invoice, y)
    _footer(page, invoice)
    moment = datetime.combine(invoice.issued, time(9, 0), tzinfo=UTC)
    return page_pdf(page.lines, list(page.fonts), identity=invoice.invoice_id,
                    title=f"Invoice {invoice.invoice_id}", author=invoice.supplier.name, moment=moment)
