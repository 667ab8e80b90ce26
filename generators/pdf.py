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

from mock_servers.pdf_tools import one_page
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


_PRODUCER = "ReportLab PDF Library - (opensource)"  # reportlab's default
_PREAMBLE = "1 0 0 1 0 0 cm  BT /F1 12 Tf 14.4 TL ET"  # what a canvas starts each page with


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
    stream = "".join(f"{line}\n" for line in (_PREAMBLE, *content, " ")).encode("latin-1")
    info = tuple(map(_string, (author, date, CREATOR, "", date, _PRODUCER, subject, title)))
    return one_page.write(one_page.OnePage(stream, tuple(fonts), (fp_str(width), fp_str(height)), info,
                                           signature.hexdigest()))
