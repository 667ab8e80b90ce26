"""Page texts are pypdf's public `extract_text`: the same for the same world, a known text for a
page drawn as the invoices are, every invoice read by the task's read set and the other PDF
tools, the files in the one-page layout are what pypdf reads, and texts extracted ahead in the
worker process are the ones the server would extract (found by content, never stale)."""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import re
import signal
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader
from reportlab.pdfgen.canvas import Canvas

from envs.core.build import dispatcher, drive, tool_list
from envs.core.registry import get_task
from envs.payable_invoice_checker import FILES
from generators.pdf import pdf_bytes
from loca.core import pdf_text
from loca.core.world import World
from mock_servers.gateway import Gateway
from mock_servers.pdf_tools import one_page

TASK = get_task("payable_invoice_checker")


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> list[World]:
    root = tmp_path_factory.mktemp("invoices")
    return [TASK.generate(root / f"w{seed}", {"num_invoices": 40}, seed) for seed in range(2)]


def _invoice_texts(world: World) -> list[str]:
    return [PdfReader(path).pages[0].extract_text() for path in sorted((world.workspace / FILES).glob("*.pdf"))]


def test_invoice_texts_are_the_same_for_the_same_world(worlds: list[World], tmp_path: Path) -> None:
    again = TASK.generate(tmp_path / "again", {"num_invoices": 40}, 0)
    texts = _invoice_texts(worlds[0])
    assert len(texts) == 40 and _invoice_texts(again) == texts
    assert len(set(texts)) == 40 and all("Phone" in text for text in texts)


def test_a_page_of_text_runs_gives_the_known_text() -> None:
    """The text of a page drawn as the invoice layouts draw theirs, as pypdf extracts it (the
    measured lengths and the calibration tables rest on it: a pypdf release that changes it
    shows here first)."""
    out = io.BytesIO()
    canvas = Canvas(out, invariant=1, pageCompression=0)
    canvas.setFont("Helvetica-Bold", 17)
    canvas.drawString(54, 740, "INVOICE")
    canvas.setFont("Helvetica", 10)
    canvas.drawString(54, 712, "Invoice number: INV-2025-0042")
    canvas.drawString(360, 712, "Date: 2025-01-15")
    canvas.drawString(54, 698, "Vendor: Acme Supplies (net 30)")
    canvas.drawRightString(540, 660, "Total: USD 1,250.00")
    canvas.setFont("Courier", 9)
    canvas.drawString(54, 640, "a\\b  Tax 7.25%")
    canvas.showPage()
    canvas.save()
    assert PdfReader(io.BytesIO(out.getvalue())).pages[0].extract_text() == (
        "INVOICE\nInvoice number: INV-2025-0042\nDate: 2025-01-15\nVendor: Acme Supplies (net 30)\n"
        "Total: USD 1,250.00\na\\b  Tax 7.25%\n")


def _read_set_outputs(world: World) -> list[str]:
    gateway = Gateway(world, TASK.spec.servers, config={"audit": False})
    try:
        replies, _ = asyncio.run(drive(TASK.spec.read_set("", tool_list(gateway)),
                                       dispatcher(gateway, errors_raise=True)))
    finally:
        gateway.close()
    return [reply.text for reply in replies]


def test_the_read_set_reads_every_invoice(worlds: list[World]) -> None:
    outputs = [_read_set_outputs(world) for world in worlds]
    assert sum(text.count("=== Page 1 ===") for world in outputs for text in world) == 80
    assert _read_set_outputs(worlds[0]) == outputs[0]


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


def test_other_pdf_tools_read_the_invoices(worlds: list[World]) -> None:
    outputs = _other_tools(worlds[0])
    assert "Pages: 1" in outputs[0] and "Merged 5 files (5 pages)" in outputs[-2]
    assert "=== Page 5 ===" in outputs[-1] and _other_tools(worlds[0]) == outputs


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
        assert read.extract_text() == PdfReader(io.BytesIO(one_page.write(page))).pages[0].extract_text()


def test_other_files_are_not_one_page_files(worlds: list[World]) -> None:
    data = next((worlds[0].workspace / FILES).glob("*.pdf")).read_bytes()
    changed = [data[:-1], data.replace(b"/Rotate 0", b"/Rotate 90"), data.replace(b"Tj T* ET", b"Tj T*  ET", 1),
               data.replace(b"/Trapped /False", b"/Trapped /True ")]
    written = pdf_bytes([["Invoice INV-1"]], title="T", author="A", moment=datetime(2025, 1, 1, tzinfo=UTC))
    assert all(one_page.read(other) is None for other in [*changed, written])


def _invoice_bytes(world: World) -> list[bytes]:
    return [path.read_bytes() for path in sorted((world.workspace / FILES).glob("*.pdf"))]


def test_texts_extracted_ahead_are_the_ones_the_server_extracts(worlds: list[World],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    pdf_text.extract_soon([])  # no batch: every text is extracted in this process
    expected = _read_set_outputs(worlds[0])
    pdf_text.extract_soon(_invoice_bytes(worlds[0]))

    def in_process(_page: Any) -> str:
        raise AssertionError("a text was extracted in this process")

    monkeypatch.setattr(pdf_text, "page_text", in_process)  # the worker is another process
    assert _read_set_outputs(worlds[0]) == expected
    with pytest.raises(RuntimeError, match="extracted in this process"):
        _read_set_outputs(worlds[1])  # its files are not in the batch


def test_only_the_latest_batch_is_found_and_a_dead_worker_is_done_without(worlds: list[World]) -> None:
    first, second = (_invoice_bytes(world)[:3] for world in worlds)
    digest = hashlib.sha256(first[0]).digest()
    pdf_text.extract_soon(first)
    assert pdf_text.extracted(digest) == pdf_text.file_texts(first[0]) and pdf_text.extracted(digest)
    pdf_text.extract_soon(second)
    assert pdf_text.extracted(digest) is None
    assert pdf_text.extracted(hashlib.sha256(second[2]).digest()) == pdf_text.file_texts(second[2])
    worker = pdf_text._AHEAD.worker
    assert worker is not None
    pdf_text.extract_soon(first)
    worker.kill()
    worker.wait()
    assert pdf_text.extracted(digest) is None  # the answer never came: the server extracts it
    pdf_text.extract_soon(first)  # a new worker
    assert pdf_text.extracted(digest) == pdf_text.file_texts(first[0])
    assert pdf_text.file_texts(b"not a PDF") is None


def test_a_forked_child_never_reads_the_parents_answers(worlds: list[World]) -> None:
    datas = _invoice_bytes(worlds[0])[:2]
    first, second = (hashlib.sha256(data).digest() for data in datas)
    pdf_text.extract_soon(datas[:1])
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's batch is not its own; a batch of its own has a worker of its own
        ok = pdf_text.extracted(first) is None
        pdf_text.extract_soon(datas[1:])
        ok = ok and pdf_text.extracted(second) == pdf_text.file_texts(datas[1])
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"
    assert pdf_text.extracted(first) == pdf_text.file_texts(datas[0])  # the parent's answer is still its own
    os.close(read)
    os.close(write)


def test_a_worker_that_never_answers_is_given_up(worlds: list[World], monkeypatch: pytest.MonkeyPatch) -> None:
    data = _invoice_bytes(worlds[0])[0]
    digest = hashlib.sha256(data).digest()
    pdf_text.extract_soon([data])
    worker = pdf_text._AHEAD.worker
    assert worker is not None and pdf_text.extracted(digest) == pdf_text.file_texts(data)
    monkeypatch.setattr(pdf_text, "ANSWER_SECONDS", 1)
    worker.send_signal(signal.SIGSTOP)  # alive, silent
    pdf_text.extract_soon([data])
    assert pdf_text.extracted(digest) is None and worker.poll() is not None  # killed
    pdf_text.extract_soon([data])
    assert pdf_text.extracted(digest) == pdf_text.file_texts(data)  # a new worker
