"""Workspace PDFs through pypdf: open (confined, size-limited, parsed once per content and
kept in the server's memory), page texts, metadata, and deterministic writes of page
selections (document dates from the virtual clock, no random document id)."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from pypdf import PageObject, PdfReader, PdfWriter

from loca.core import pdf_text
from loca.core.clock import iso_z
from loca.core.world import write_bytes_atomic
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.files import display, resolve
from mock_servers.core.recent import Recent
from mock_servers.core.toolkit import Call
from mock_servers.pdf_tools import one_page

MAX_PDF_BYTES = 50 * 1024 * 1024
MAX_OUTPUT_BYTES = 100 * 1024 * 1024
PRODUCER = "LOCA pdf_tools (pypdf)"
_CACHE_KEY = "pdf_tools.documents"
_CACHE_MAX_BYTES, _CACHE_TOTAL_BYTES = 8 * 1024 * 1024, 32 * 1024 * 1024
"""Parsed PDFs kept per server: files up to 8 MB, the most recently read up to 32 MB in all."""


def pdf_date(moment: datetime) -> str:
    """A PDF date string (`D:YYYYMMDDHHmmSS+00'00'`) of an aware datetime, in UTC."""
    if moment.tzinfo is None:
        raise ValueError("a PDF date must be timezone-aware")
    return moment.astimezone(UTC).strftime("D:%Y%m%d%H%M%S+00'00'")


def pages_text(count: int) -> str:
    """`1 page`, `5 pages`."""
    return f"{count} page{'' if count == 1 else 's'}"


def _unreadable(shown: str, exc: Exception) -> ToolFailure:
    reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
    return invalid(f"{shown} is not a readable PDF ({reason})")


class Pdf:
    """One parsed PDF: page count, metadata and page texts (extracted once, on demand). A file
    in the one-page layout the generators write is counted without parsing it; pypdf reads it
    when a page, its text or the metadata is wanted."""

    def __init__(self, data: bytes, shown: str, digest: bytes) -> None:
        """`digest`: the sha256 of `data`."""
        self.shown = shown
        self.size = len(data)
        self.digest = digest
        self._data = data
        self._texts: dict[int, str] = {}
        if one_page.read(data) is not None:
            self.encrypted = self.locked = False
            self.pages = 1
            return
        try:  # pypdf raises many kinds of errors on malformed files
            self.encrypted = self.reader.is_encrypted
            self.locked = self.encrypted and not self.reader.decrypt("")
            self.pages = 0 if self.locked else len(self.reader.pages)
        except Exception as exc:
            raise _unreadable(shown, exc) from None

    def require_open(self) -> None:
        if self.locked:
            raise ToolFailure(Code.FAILED_PRECONDITION, f"{self.shown} is encrypted with a "
                              "password; its pages cannot be read")

    def check_pages(self, numbers: Sequence[int]) -> None:
        self.require_open()
        wrong = [n for n in dict.fromkeys(numbers) if not 1 <= n <= self.pages]
        if wrong:
            raise invalid(f"page {', '.join(map(str, wrong))} out of range: {self.shown} has "
                          f"{pages_text(self.pages)} (numbered from 1)")

    @cached_property
    def reader(self) -> PdfReader:
        return PdfReader(io.BytesIO(self._data))

    def page(self, number: int) -> PageObject:
        return self.reader.pages[number - 1]

    def text(self, number: int) -> str:
        """The extracted text of a 1-based page, pypdf's `extract_text` (a note in its place
        when it cannot be), or all pages' texts as extracted ahead (`loca.core.pdf_text`)."""
        if number not in self._texts:
            ahead = pdf_text.extracted(self.digest)
            if ahead is not None and len(ahead) == self.pages:
                self._texts.update(enumerate(ahead, start=1))
            else:
                self._texts[number] = pdf_text.page_text(self.page(number))
        return self._texts[number]

    @cached_property
    def info(self) -> dict[str, Any]:
        """Document metadata (None when absent or unreadable)."""
        meta = None if self.locked else self._metadata()
        fields: dict[str, Any] = {"title": None, "author": None, "creator": None,
                                  "producer": None, "created": None}
        if meta is not None:
            for key in ("title", "author", "creator", "producer"):
                fields[key] = _clean(meta.get(f"/{key.title()}"))
            fields["created"] = _date_text(meta)
        return fields

    def _metadata(self) -> Any:
        try:
            return self.reader.metadata
        except Exception:
            return None


def _clean(value: Any) -> str | None:
    text = None if value is None else str(value).strip()
    return text or None


def _date_text(meta: Any) -> str | None:
    """The creation date as ISO 8601 (UTC with `Z` when it has a zone), else as stored."""
    try:
        moment = meta.creation_date
    except Exception:
        return _clean(meta.get("/CreationDate"))
    if moment is None:
        return None
    return iso_z(moment) if moment.tzinfo is not None else moment.isoformat()


def _existing_file(call: Call, path: str) -> Path:
    target = resolve(call.world, path)
    if not target.exists():
        raise not_found(f"no such file: {path}", hint="list_directory or search_files shows "
                        "what exists")
    if target.is_dir():
        raise invalid(f"{display(call.world, target)} is a directory, not a PDF")
    return target


def open_pdf(call: Call, path: str) -> Pdf:
    """The workspace PDF at `path`, parsed (or taken from this server's memory when the same
    content was parsed before; small files only)."""
    target = _existing_file(call, path)
    shown = display(call.world, target)
    if target.stat().st_size > MAX_PDF_BYTES:
        raise ToolFailure(Code.RESOURCE_EXHAUSTED, f"{shown} is larger than "
                          f"{MAX_PDF_BYTES // (1024 * 1024)} MB")
    data = target.read_bytes()
    key = (shown, hashlib.sha256(data).digest())
    parsed: Recent[tuple[str, bytes], Pdf] = call.state.setdefault(
        _CACHE_KEY, Recent(lambda pdf: pdf.size, _CACHE_TOTAL_BYTES, _CACHE_MAX_BYTES))
    pdf = parsed.get(key)
    if pdf is None:
        pdf = Pdf(data, shown, key[1])
        parsed.keep(key, pdf)
    return pdf


def output_file(call: Call, path: str) -> Path:
    """A workspace path to write a PDF to (its folders are created; an existing file is
    replaced)."""
    target = resolve(call.world, path)
    if target.suffix.lower() != ".pdf":
        raise invalid(f"output path '{path}' must end in .pdf")
    if target.is_dir():
        raise invalid(f"{display(call.world, target)} is a directory; give a file path")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise invalid(f"cannot create the folders of '{path}': a file is in the way") from None
    return target


def write_pages(call: Call, pages: Sequence[tuple[Pdf, int]], target: Path) -> None:
    """Write the given (document, 1-based page) pairs, in order, as one new PDF at `target`."""
    writer = PdfWriter()
    try:
        for pdf, number in pages:
            writer.add_page(pdf.page(number))
        moment = pdf_date(call.now)
        writer.add_metadata({"/Producer": PRODUCER, "/CreationDate": moment, "/ModDate": moment})
        out = io.BytesIO()
        writer.write(out)
    except Exception as exc:  # malformed page objects surface only when copied
        raise invalid(f"the pages could not be copied ({type(exc).__name__}: {exc})") from None
    if out.tell() > MAX_OUTPUT_BYTES:
        raise ToolFailure(Code.RESOURCE_EXHAUSTED, "the resulting PDF would be larger than "
                          f"{MAX_OUTPUT_BYTES // (1024 * 1024)} MB")
    write_bytes_atomic(target, out.getvalue())
