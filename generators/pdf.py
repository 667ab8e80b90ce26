"""Deterministic PDFs for world generators: pages of text lines, title and author metadata, and
creation/modification dates from the world's clock; the same input gives the same bytes on any
machine, any day (reportlab in invariant mode, document id derived from the content)."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from reportlab.lib.pagesizes import A4, LETTER
from reportlab.lib.rl_accel import escapePDF, fp_str
from reportlab.lib.utils import simpleSplit
from reportlab.pdfgen.canvas import Canvas

from mock_servers.pdf_tools.documents import pdf_date

PAGE_SIZES = {"letter": LETTER, "a4": A4}
FONT, FONT_SIZE, LEADING, MARGIN = "Helvetica", 10.5, 14.0, 72.0
CREATOR = "LOCA gym"


def _signature(content: object, title: str, author: str, subject: str, date: str,
               page_size: str) -> Any:
    """The md5 a document id starts from (reportlab then adds the metadata)."""
    identity = json.dumps([content, title, author, subject, date, page_size])
    return hashlib.md5(identity.encode(), usedforsecurity=False)


def deterministic_canvas(out: io.BytesIO, content: object, *, title: str, author: str, moment: datetime,
                         subject: str = "", page_size: str = "letter", compress: bool = True,
                         initial_font: str = FONT) -> Canvas:
    """A reportlab canvas writing to `out` whose bytes depend only on its arguments and what is
    drawn: invariant mode, dates from `moment`, and a document id derived from `content` (any
    JSON value that identifies what will be drawn). `compress=False` leaves the page streams
    plain (a short page is cheaper to write and to read back uncompressed); `initial_font` is
    the font each page starts in (the only font a page then lists, if it draws in no other)."""
    date = pdf_date(moment)
    canvas = Canvas(out, pagesize=PAGE_SIZES[page_size], invariant=1, pageCompression=int(compress),
                    initialFontName=initial_font)
    # The document id would otherwise hash reportlab's fixed timestamp (or SOURCE_DATE_EPOCH).
    canvas._doc.signature = _signature(content, title, author, subject, date, page_size)
    canvas.setDateFormatter(lambda *_: date)
    canvas.setTitle(title)
    canvas.setAuthor(author)
    canvas.setSubject(subject)
    canvas.setCreator(CREATOR)
    canvas.setKeywords("")
    return canvas


def pdf_bytes(pages: Sequence[Sequence[str]], *, title: str, author: str, moment: datetime,
              subject: str = "", page_size: str = "letter") -> bytes:
    """A PDF with one page per item of `pages`, each a list of text lines (long lines are
    wrapped at the margins). A page whose lines do not fit, or text the standard PDF fonts
    cannot show (beyond Windows-1252), is a ValueError."""
    if not pages:
        raise ValueError("a PDF needs at least one page")
    width, height = PAGE_SIZES[page_size]
    out = io.BytesIO()
    canvas = deterministic_canvas(out, [list(p) for p in pages], title=title, author=author,
                                  moment=moment, subject=subject, page_size=page_size)
    usable = int((height - 2 * MARGIN) // LEADING)
    for number, lines in enumerate(pages, start=1):
        for line in lines:
            line.encode("cp1252")  # UnicodeEncodeError (a ValueError) names the character
        wrapped = [part for line in lines
                   for part in (simpleSplit(line, FONT, FONT_SIZE, width - 2 * MARGIN) or [""])]
        if len(wrapped) > usable:
            raise ValueError(f"page {number} has {len(wrapped)} lines after wrapping; "
                             f"at most {usable} fit")
        text = canvas.beginText(MARGIN, height - MARGIN)
        text.setFont(FONT, FONT_SIZE, LEADING)
        for line in wrapped:
            text.textLine(line)
        canvas.drawText(text)
        canvas.showPage()
    canvas.save()
    return out.getvalue()


def write_pdf(path: Path, pages: Sequence[Sequence[str]], *, title: str, author: str,
              moment: datetime, subject: str = "", page_size: str = "letter") -> Path:
    """`pdf_bytes` written to `path` (its folder is created) of a world being built: plainly,
    not synced file by file (nothing serves a world before it is finished, and an unfinished
    one is built again)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pdf_bytes(pages, title=title, author=author, moment=moment, subject=subject,
                               page_size=page_size))
    return path


_HEADER = b"%PDF-1.4\n%\x93\x8c\x8b\x9e ReportLab Generated PDF document (opensource)\n"
_PRODUCER = "ReportLab PDF Library - (opensource)"  # reportlab's default
_PREAMBLE = "1 0 0 1 0 0 cm  BT /F1 12 Tf 14.4 TL ET"  # what a canvas starts each page with


def _dictionary(entries: Sequence[str]) -> str:
    """A dictionary as reportlab formats one: its entries (sorted by the caller), a line
    break after every sixth."""
    lines = [" ".join(entries[i:i + 6]) for i in range(0, len(entries), 6)]
    return "<<\n" + " \n  ".join(lines) + "\n>>"


def _string(text: str) -> str:
    return f"({escapePDF(text.encode('ascii'))})"


def page_pdf(content: Sequence[str], fonts: Sequence[str], *, identity: object, title: str,
             author: str, moment: datetime, subject: str = "", page_size: str = "letter") -> bytes:
    """A one-page PDF whose uncompressed page stream is the `content` lines, drawn in the
    standard `fonts` (named /F1, /F2, ... in that order, the first being the font the page
    starts in), written directly: byte for byte the file of a `deterministic_canvas(out,
    identity, ...)` (compress=False, initial_font=fonts[0]) that drew the same lines and
    selected the fonts in that order, without reportlab's object model. Metadata is ASCII."""
    date = pdf_date(moment)
    signature = _signature(identity, title, author, subject, date, page_size)
    for field in (title, author, subject, ""):  # and the keywords, as reportlab's document info does
        signature.update(field.encode())
    width, height = PAGE_SIZES[page_size]
    lines = (_PREAMBLE, *content, " ")
    stream = "".join(f"{line}\n" for line in lines).encode("latin-1")
    count = len(fonts)
    page, catalog, info, pages = range(count + 2, count + 6)
    objects = [
        _dictionary([f"/F{n} {n + 1} 0 R" for n in range(1, count + 1)]),
        *(_dictionary([f"/BaseFont /{font}", "/Encoding /WinAnsiEncoding", f"/Name /F{n}", "/Subtype /Type1",
                       "/Type /Font"]) for n, font in enumerate(fonts, start=1)),
        _dictionary([f"/Contents {pages + 1} 0 R", f"/MediaBox [ 0 0 {fp_str(width)} {fp_str(height)} ]",
                     f"/Parent {pages} 0 R",
                     "/Resources <<\n/Font 1 0 R /ProcSet [ /PDF /Text /ImageB /ImageC /ImageI ]\n>>",
                     "/Rotate 0", "/Trans <<\n\n>>", "/Type /Page"]),
        _dictionary(["/PageMode /UseNone", f"/Pages {pages} 0 R", "/Type /Catalog"]),
        _dictionary([f"/Author {_string(author)}", f"/CreationDate ({date})", f"/Creator {_string(CREATOR)}",
                     "/Keywords ()", f"/ModDate ({date})", f"/Producer {_string(_PRODUCER)}",
                     f"/Subject {_string(subject)}", f"/Title {_string(title)}", "/Trapped /False"]),
        _dictionary(["/Count 1", f"/Kids [ {page} 0 R ]", "/Type /Pages"]),
    ]
    out = bytearray(_HEADER)
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    offsets.append(len(out))
    out += f"{len(objects) + 1} 0 obj\n<<\n/Length {len(stream)}\n>>\nstream\n".encode() + stream
    out += b"endstream\nendobj\n"
    xref = len(out)
    ids = f"<{signature.hexdigest()}>" * 2
    out += (f"xref\n0 {len(offsets) + 1}\n0000000000 65535 f \n"
            + "".join(f"{offset:010d} 00000 n \n" for offset in offsets)
            + f"trailer\n<<\n/ID \n[{ids}]\n% ReportLab generated PDF document -- digest (opensource)\n\n"
            f"/Info {info} 0 R\n/Root {catalog} 0 R\n/Size {len(offsets) + 1}\n>>\nstartxref\n{xref}\n%%EOF\n"
            ).encode()
    return bytes(out)
