"""The PDF tools' direct path gives exactly what pypdf gives: the text of every invoice PDF of
generated payable_invoice_checker worlds (five layouts, status boxes and grey lines) and of
pages of random text runs, the page, content stream and fonts pypdf reads from a file in the
one-page layout, and the outputs of the task's whole read set and of the other PDF tools;
anything else goes to pypdf."""

from __future__ import annotations

import asyncio
import io
import random
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from pypdf import PdfReader
from reportlab.lib.rl_accel import escapePDF, fp_str
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

from envs.core.build import dispatcher, drive, tool_list
from envs.core.registry import get_task
from envs.payable_invoice_checker import FILES
from generators.pdf import pdf_bytes
from loca.core.world import World
from mock_servers.gateway import Gateway
from mock_servers.pdf_tools import documents, one_page
from mock_servers.pdf_tools.plain_text import one_page_text, page_text

TASK = get_task("payable_invoice_checker")
FONTS = ("Helvetica", "Helvetica-Bold", "Courier", "Times-Roman", "Helvetica-BoldOblique")
WORDS = ("Invoice", "Total:", "USD 1,250.00", "(net)", "a\\b", "Paid in full", "", "x", "Tax 7.25%")


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> list[World]:
    root = tmp_path_factory.mktemp("plain")
    return [TASK.generate(root / f"w{seed}", {"num_invoices": 40}, seed) for seed in range(3)]


def _same_text(data: bytes) -> bool:
    """The direct path applies to every page of `data` and gives pypdf's text."""
    for page in PdfReader(io.BytesIO(data)).pages:
        text = page_text(page)
        if text is None or text != page.extract_text():
            return False
    return True


def test_every_invoice_pdf_gives_pypdfs_text(worlds: list[World]) -> None:
    paths = [path for world in worlds for path in sorted((world.workspace / FILES).glob("*.pdf"))]
    assert len(paths) == 120
    assert all(_same_text(path.read_bytes()) for path in paths)


def _random_runs(rng: random.Random) -> bytes:
    """A page of text runs as the invoice layouts draw them: fonts and sizes changing, runs
    on one baseline or a little off it, right-aligned ones, empty and escaped strings, and a
    font change inside a text object."""
    out = io.BytesIO()
    canvas = Canvas(out, invariant=1, pageCompression=0, initialFontName="Helvetica")
    x, y, font, size = 54.0, 740.0, "Helvetica", 12.0
    for _ in range(60):
        if rng.random() < 0.3:
            font, size = rng.choice(FONTS), rng.choice((6.5, 8.5, 9, 10.5, 17))
            canvas.setFont(font, size)
        step = rng.random()
        if step < 0.4:
            y -= rng.choice((12, 13, 14, 2, 30))
            x = rng.choice((54.0, 64.0))
        elif step < 0.7:
            x += rng.uniform(-40, 200)
        else:
            y += rng.choice((-1.5, 1.5, 4, 16))
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 3)))
        text = f"({escapePDF(words.encode('cp1252'))}) Tj"
        if rng.random() < 0.1:
            gap = stringWidth(words, font, size) + rng.choice((0.5, 1.2, 2.0, 3.0, 5.0))
            text += f" /F1 {rng.choice((7, 12))} Tf {fp_str(gap)} 0 Td (more) Tj"
        canvas.addLiteral(f"BT {fp_str(round(x, 2), round(y, 2))} Td {text} T* ET")
    canvas.showPage()
    canvas.save()
    return out.getvalue()


def test_random_text_runs_give_pypdfs_text() -> None:
    rng = random.Random(7)
    assert all(_same_text(_random_runs(rng)) for _ in range(150))


@pytest.mark.parametrize("content", [
    "BT 1 0 0 1 72 700 Tm (placed by a text matrix) Tj ET",
    "q BT 72 700 Td (in a saved state) Tj ET Q",
    "BT 72 700 Td [(kerned) -250 (text)] TJ ET",
    "BT 72 700 Td <48656c6c6f> Tj ET",
    "2 0 0 2 0 0 cm BT 72 700 Td (scaled) Tj ET",
    "BT 72 700 Td (\\101\\102) Tj ET",
    "BT 72 700 Td (caf\xe9) Tj ET",
    "BT 72 700 Td 3 Tc (spaced) Tj ET",
    "BT 72 700 Td (two)Tj ET",
    "% a comment\nBT 72 700 Td (x) Tj ET",
])
def test_other_content_goes_to_pypdf(content: str) -> None:
    out = io.BytesIO()
    canvas = Canvas(out, invariant=1, pageCompression=0)
    canvas.setFont("Helvetica", 10)
    canvas.addLiteral(content)
    canvas.showPage()
    canvas.save()
    assert page_text(PdfReader(io.BytesIO(out.getvalue())).pages[0]) is None


def test_compressed_pages_of_the_pdf_writer_go_to_pypdf() -> None:
    data = pdf_bytes([["Invoice INV-1", "Total: 10.00"]], title="T", author="A",
                     moment=datetime(2025, 1, 1, tzinfo=UTC))
    assert page_text(PdfReader(io.BytesIO(data)).pages[0]) is None


def _read_set_outputs(world: World) -> list[str]:
    gateway = Gateway(world, TASK.spec.servers, config={"audit": False})
    try:
        replies, _ = asyncio.run(drive(TASK.spec.read_set("", tool_list(gateway)),
                                       dispatcher(gateway, errors_raise=True)))
    finally:
        gateway.close()
    return [reply.text for reply in replies]


def _pypdf_only(monkeypatch: Any) -> None:
    monkeypatch.setattr(documents.one_page, "read", lambda _data: None)
    monkeypatch.setattr(documents, "page_text", lambda _page: None)


def test_read_set_outputs_are_pypdfs(worlds: list[World], monkeypatch: Any) -> None:
    direct = [_read_set_outputs(world) for world in worlds]
    _pypdf_only(monkeypatch)
    assert [_read_set_outputs(world) for world in worlds] == direct
    assert sum(text.count("=== Page 1 ===") for outputs in direct for text in outputs) == 120


def _other_tools(world: World) -> list[str]:
    gateway = Gateway(world, TASK.spec.servers, config={"audit": False})
    paths = [f"{FILES}/{path.name}" for path in sorted((world.workspace / FILES).glob("*.pdf"))[:5]]
    calls: list[tuple[str, dict[str, Any]]] = [
        *(("pdf_tools_get_pdf_info", {"pdf_file_path": path}) for path in paths),
        ("pdf_tools_search_pdf_content", {"pdf_file_path": paths[0], "pattern": "total"}),
        ("pdf_tools_merge_pdfs", {"pdf_paths": paths, "output_path": "merged.pdf"}),
        ("pdf_tools_read_pdf_pages", {"pdf_file_path": "merged.pdf", "end_page": 5})]
    try:
        outputs = [asyncio.run(gateway.call(name, arguments)).text for name, arguments in calls]
    finally:
        gateway.close()
    return [re.sub(r"search_\d+", "search_N", text) for text in outputs]  # sessions are numbered in the world


def test_other_pdf_tools_give_pypdfs_outputs(worlds: list[World], monkeypatch: Any) -> None:
    direct = _other_tools(worlds[0])
    _pypdf_only(monkeypatch)
    assert _other_tools(worlds[0]) == direct
    assert "Pages: 1" in direct[0] and "Merged 5 files (5 pages)" in direct[-2]


def test_one_page_files_are_what_pypdf_reads(worlds: list[World]) -> None:
    for path in sorted((worlds[1].workspace / FILES).glob("*.pdf")):
        data = path.read_bytes()
        page = one_page.read(data)
        assert page is not None and one_page.write(page) == data
        [read] = PdfReader(io.BytesIO(data)).pages
        fonts: Any = read["/Resources"]["/Font"]  # type: ignore[index]
        contents: Any = read["/Contents"].get_object()
        assert contents.get_data() == page.stream
        assert [fonts[f"/F{n}"]["/BaseFont"] for n in range(1, len(fonts) + 1)] == [f"/{f}" for f in page.fonts]
        assert one_page_text(page) == page_text(read) == read.extract_text()


def test_other_files_are_not_one_page_files(worlds: list[World]) -> None:
    data = next((worlds[0].workspace / FILES).glob("*.pdf")).read_bytes()
    changed = [data[:-1], data.replace(b"/Rotate 0", b"/Rotate 90"), data.replace(b"Tj T* ET", b"Tj T*  ET", 1),
               data.replace(b"/Trapped /False", b"/Trapped /True ")]
    written = pdf_bytes([["Invoice INV-1"]], title="T", author="A", moment=datetime(2025, 1, 1, tzinfo=UTC))
    assert all(one_page.read(other) is None for other in [*changed, written])
