"""One-page PDFs in the layout reportlab's canvas writes for a single uncompressed page in
standard fonts (as the invoices of payable_invoice_checker are): written straight from their
parts, and recognised by reading the parts back and writing them again. A file is taken for
one only when it is, byte for byte, what `write` makes of its parts, so the page pypdf would
read from it is known without parsing it: one page, that content stream, those fonts."""

from __future__ import annotations

import re
from dataclasses import dataclass

HEADER = b"%PDF-1.4\n%\x93\x8c\x8b\x9e ReportLab Generated PDF document (opensource)\n"
_LITERAL = rb"(\((?:[^\\()]|\\.)*\))"
_INFO = re.compile(rb"/Author L /CreationDate L /Creator L /Keywords L /ModDate L /Producer L \n  /Subject L "
                   rb"/Title L /Trapped /False".replace(b"L", _LITERAL))
_FONT = re.compile(rb"/BaseFont /([A-Za-z0-9-]+) /Encoding")
_SIZE = re.compile(rb"/MediaBox \[ 0 0 ([0-9.]+) ([0-9.]+) \]")
_STREAM = re.compile(rb"/Length ([0-9]+)\n>>\nstream\n")
_DIGEST = re.compile(rb"/ID \n\[<([0-9a-f]{32})>")


@dataclass(frozen=True)
class OnePage:
    """The parts of a one-page PDF; the strings as the file holds them."""

    stream: bytes  # the page's content stream
    fonts: tuple[str, ...]  # the standard fonts named /F1, /F2, ... in that order
    size: tuple[str, str]  # the page's width and height
    info: tuple[str, ...]  # the literals (in parentheses) of Author, CreationDate, Creator, Keywords,
    # ModDate, Producer, Subject and Title
    digest: str  # the document id, 32 hex digits


def _dictionary(entries: list[str]) -> str:
    """A dictionary as reportlab formats one: its entries (sorted by the caller), a line
    break after every sixth."""
    lines = [" ".join(entries[i:i + 6]) for i in range(0, len(entries), 6)]
    return "<<\n" + " \n  ".join(lines) + "\n>>"


def write(page: OnePage) -> bytes:
    """The file of `page`: the objects reportlab writes, in its order and formatting."""
    count = len(page.fonts)
    first, catalog, info, pages = range(count + 2, count + 6)
    author, created, creator, keywords, modified, producer, subject, title = page.info
    objects = [
        _dictionary([f"/F{n} {n + 1} 0 R" for n in range(1, count + 1)]),
        *(_dictionary([f"/BaseFont /{font}", "/Encoding /WinAnsiEncoding", f"/Name /F{n}", "/Subtype /Type1",
                       "/Type /Font"]) for n, font in enumerate(page.fonts, start=1)),
        _dictionary([f"/Contents {pages + 1} 0 R", f"/MediaBox [ 0 0 {page.size[0]} {page.size[1]} ]",
                     f"/Parent {pages} 0 R",
                     "/Resources <<\n/Font 1 0 R /ProcSet [ /PDF /Text /ImageB /ImageC /ImageI ]\n>>",
                     "/Rotate 0", "/Trans <<\n\n>>", "/Type /Page"]),
        _dictionary(["/PageMode /UseNone", f"/Pages {pages} 0 R", "/Type /Catalog"]),
        _dictionary([f"/Author {author}", f"/CreationDate {created}", f"/Creator {creator}",
                     f"/Keywords {keywords}", f"/ModDate {modified}", f"/Producer {producer}",
                     f"/Subject {subject}", f"/Title {title}", "/Trapped /False"]),
        _dictionary(["/Count 1", f"/Kids [ {first} 0 R ]", "/Type /Pages"]),
    ]
    out = bytearray(HEADER)
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    offsets.append(len(out))
    out += f"{len(objects) + 1} 0 obj\n<<\n/Length {len(page.stream)}\n>>\nstream\n".encode()
    out += page.stream + b"endstream\nendobj\n"
    xref = len(out)
    ids = f"<{page.digest}>" * 2
    out += (f"xref\n0 {len(offsets) + 1}\n0000000000 65535 f \n"
            + "".join(f"{offset:010d} 00000 n \n" for offset in offsets)
            + f"trailer\n<<\n/ID \n[{ids}]\n% ReportLab generated PDF document -- digest (opensource)\n\n"
            f"/Info {info} 0 R\n/Root {catalog} 0 R\n/Size {len(offsets) + 1}\n>>\nstartxref\n{xref}\n%%EOF\n"
            ).encode()
    return bytes(out)


def read(data: bytes) -> OnePage | None:
    """The parts of `data` when it is a one-page PDF as `write` makes them, else None."""
    if not data.startswith(HEADER):
        return None
    info, size, stream, digest = (pattern.search(data) for pattern in (_INFO, _SIZE, _STREAM, _DIGEST))
    if info is None or size is None or stream is None or digest is None:
        return None
    start = stream.end()
    page = OnePage(data[start:start + int(stream[1])], tuple(font.decode() for font in _FONT.findall(data)),
                   (size[1].decode(), size[2].decode()), tuple(field.decode("latin-1") for field in info.groups()),
                   digest[1].decode())
    return page if write(page) == data else None
