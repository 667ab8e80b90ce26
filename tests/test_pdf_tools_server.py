"""The PDF tools over workspace PDFs written by the generators' deterministic PDF writer."""

from __future__ import annotations

import asyncio
import io
import sys
from datetime import UTC, datetime
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from pypdf import PdfReader, PdfWriter
from reportlab.lib.colors import black

from generators.pdf import deterministic_canvas, page_pdf, pdf_bytes, write_pdf
from mock_servers import snapshot_rules
from mock_servers.core import snapshot
from mock_servers.pdf_tools import documents, search, toolbox
from tests.harness import ServerHarness

MOMENT = datetime(2025, 1, 15, 10, 0, tzinfo=UTC)
INVOICE_PAGES = [[f"Invoice INV-{100 + p}", f"Amount due: {p * 125}.00 USD", "Thank you."]
                 for p in range(1, 6)]


def _pdf(pages: list[list[str]], title: str = "Doc") -> bytes:
    return pdf_bytes(pages, title=title, author="ACME Billing", moment=MOMENT)


def _encrypted(user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(_pdf([["top secret"]]))))
    writer.encrypt(user_password=user_password, owner_password="owner-pw", algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def build_pdfs(make_world: Any, config: dict[str, Any] | None = None) -> ServerHarness:
    world, _ = make_world(["pdf_tools"])
    ws = world.workspace
    write_pdf(ws / "invoices.pdf", INVOICE_PAGES, title="Invoices Q1", author="ACME Billing",
              moment=MOMENT)
    write_pdf(ws / "cv" / "ann.pdf", [["Ann Lee - Curriculum Vitae", "PhD applicant"],
                                      ["Publications", "1. Sparse attention (2024)"]],
              title="CV", author="Ann Lee", moment=MOMENT)
    write_pdf(ws / "long.pdf", [[f"long page {p}"] for p in range(1, 61)], title="Long",
              author="A", moment=MOMENT)
    (ws / "notes.pdf").write_bytes(b"just some text, not a PDF")
    (ws / "open.pdf").write_bytes(_encrypted(""))
    (ws / "locked.pdf").write_bytes(_encrypted("user-pw"))
    (world.truth_dir / "answer.pdf").write_bytes(_pdf([["the answer"]]))
    (ws / "sneaky.pdf").symlink_to(world.truth_dir / "answer.pdf")
    (ws / "folder.pdf").mkdir()
    return ServerHarness(toolbox, world, config)


@pytest.fixture
def pdfs(make_world: Any) -> ServerHarness:
    return build_pdfs(make_world)


# --- the generators' PDF writer ---------------------------------------------------------------

def test_writer_is_deterministic_and_reads_back(pdfs: ServerHarness, monkeypatch: Any) -> None:
    first = _pdf(INVOICE_PAGES)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert _pdf(INVOICE_PAGES) == first
    assert _pdf(INVOICE_PAGES, title="Other") != first
    assert (pdfs.ws / "invoices.pdf").read_bytes() == pdf_bytes(
        INVOICE_PAGES, title="Invoices Q1", author="ACME Billing", moment=MOMENT)
    text = pdfs.ok_text("read_pdf_pages", pdf_file_path="invoices.pdf", start_page=2, end_page=2)
    assert text == ("PDF total pages: 5\nExtracted page range: 2-2\n\n=== Page 2 ===\n"
                    "Invoice INV-102\nAmount due: 250.00 USD\nThank you.")


@pytest.mark.parametrize("fonts", [["Helvetica"], ["Courier", "Courier-Bold"],
                                   ["Times-Roman", "Times-Bold", "Helvetica-BoldOblique"]])
@pytest.mark.parametrize("page_size", ["letter", "a4"])
def test_page_pdf_writes_reportlabs_file(fonts: list[str], page_size: str) -> None:
    content = ["BT 54 732 Td (Bruce \\(PLC\\)) Tj T* ET", "n 54 588 m 558 588 l S"]
    meta: dict[str, Any] = {"title": "Invoice X-1", "author": "Bruce (PLC)", "moment": MOMENT,
                            "subject": "bills", "page_size": page_size}
    out = io.BytesIO()
    canvas = deterministic_canvas(out, "X-1", compress=False, initial_font=fonts[0], **meta)
    for font in [*fonts[1:], fonts[0]]:
        canvas.setFont(font, 10)
    canvas.setFillColor(black)
    for line in content:
        canvas.addLiteral(line)
    canvas.showPage()
    canvas.save()
    selected = [f"BT /F{n} 10 Tf 12 TL ET" for n in [*range(2, len(fonts) + 1), 1]]
    assert page_pdf([*selected, "0 0 0 rg", *content], fonts, identity="X-1", **meta) == out.getvalue()


def test_writer_rejects_what_it_cannot_show() -> None:
    with pytest.raises(ValueError, match="at most"):
        _pdf([[f"line {i}" for i in range(200)]])
    with pytest.raises(ValueError):
        _pdf([["数学"]])
    with pytest.raises(ValueError):
        _pdf([])
    with pytest.raises(ValueError):
        pdf_bytes([["x"]], title="t", author="a", moment=datetime(2025, 1, 1))


# --- reading ----------------------------------------------------------------------------------

def test_read_defaults_to_the_first_page_and_clamps_the_end(pdfs: ServerHarness) -> None:
    first = pdfs.ok_text("read_pdf_pages", pdf_file_path="/workspace/invoices.pdf")
    assert first.startswith("PDF total pages: 5\nExtracted page range: 1-1\n\n=== Page 1 ===\n"
                            "Invoice INV-101")
    text = pdfs.ok_text("read_pdf_pages", pdf_file_path="invoices.pdf", start_page=4, end_page=9)
    assert text.splitlines()[:3] == [
        "PDF total pages: 5", "Extracted page range: 4-5",
        "Note: end_page 9 is past the last page; the document has 5 pages."]
    assert "=== Page 5 ===\nInvoice INV-105" in text and "=== Page 6" not in text


def test_read_returns_at_most_fifty_pages(pdfs: ServerHarness) -> None:
    text = pdfs.ok_text("read_pdf_pages", pdf_file_path="long.pdf", start_page=3, end_page=60)
    assert "Extracted page range: 3-52" in text
    assert "Note: at most 50 pages per call; continue with start_page=53." in text
    assert text.count("=== Page ") == 50 and text.endswith("long page 52")


def test_read_argument_errors(pdfs: ServerHarness) -> None:
    assert "after end_page" in pdfs.fails("read_pdf_pages", "INVALID_ARGUMENT",
                                          pdf_file_path="invoices.pdf", start_page=3, end_page=2)
    assert "past the last page" in pdfs.fails("read_pdf_pages", "INVALID_ARGUMENT",
                                              pdf_file_path="invoices.pdf", start_page=6,
                                              end_page=7)
    pdfs.fails("read_pdf_pages", "INVALID_ARGUMENT", pdf_file_path="invoices.pdf", start_page=0)
    pdfs.fails("read_pdf_pages", "INVALID_ARGUMENT", pdf_file_path="invoices.pdf", end_page="x")
    pdfs.fails("read_pdf_pages", "INVALID_ARGUMENT", pdf_file_path="invoices.pdf", pages=2)
    pdfs.fails("read_pdf_pages", "NOT_FOUND", pdf_file_path="missing.pdf")
    assert "is a directory" in pdfs.fails("read_pdf_pages", "INVALID_ARGUMENT",
                                          pdf_file_path="folder.pdf")


def test_unparseable_file_names_the_file(pdfs: ServerHarness) -> None:
    for tool in ("read_pdf_pages", "get_pdf_info", "search_pdf_content"):
        args = {"pattern": "x"} if tool == "search_pdf_content" else {}
        text = pdfs.fails(tool, "INVALID_ARGUMENT", pdf_file_path="notes.pdf", **args)
        assert "/workspace/notes.pdf is not a readable PDF" in text


def test_paths_stay_in_the_workspace(pdfs: ServerHarness) -> None:
    outside = ["../truth/answer.pdf", "/workspace/../truth/answer.pdf", "/etc/passwd",
               str(pdfs.world.truth_dir / "answer.pdf"), "sneaky.pdf", "../state.sqlite",
               "../world.json"]
    for path in outside:
        pdfs.fails("read_pdf_pages", "PERMISSION_DENIED", pdf_file_path=path)
        pdfs.fails("get_pdf_info", "PERMISSION_DENIED", pdf_file_path=path)
        pdfs.fails("merge_pdfs", "PERMISSION_DENIED", pdf_paths=["invoices.pdf", path],
                   output_path="out.pdf")
        pdfs.fails("search_pdf_content", "PERMISSION_DENIED", pdf_file_path=path, pattern="a")
    for target in ("../truth/out.pdf", "/tmp/out.pdf", "sneaky.pdf"):
        pdfs.fails("extract_pdf_pages", "PERMISSION_DENIED", source_path="invoices.pdf",
                   page_numbers=[1], output_path=target)
    assert not (pdfs.world.truth_dir / "out.pdf").exists()
    assert (pdfs.world.truth_dir / "answer.pdf").read_bytes() == _pdf([["the answer"]])
    pdfs.fails("read_pdf_pages", "INVALID_ARGUMENT", pdf_file_path="a\x00.pdf")


def test_pdf_info_lines(pdfs: ServerHarness) -> None:
    size = (pdfs.ws / "invoices.pdf").stat().st_size
    assert pdfs.ok_text("get_pdf_info", pdf_file_path="invoices.pdf") == "\n".join([
        "File: /workspace/invoices.pdf", "Pages: 5", "Title: Invoices Q1",
        "Author: ACME Billing", "Creator: LOCA gym", "Producer: ReportLab PDF Library - (opensource)",
        "Created: 2025-01-15T10:00:00Z", "Encrypted: no", f"File size: {size} bytes"])


def test_encrypted_pdfs_are_reported_not_crashed_on(pdfs: ServerHarness) -> None:
    info = pdfs.ok_text("get_pdf_info", pdf_file_path="open.pdf")
    assert "Pages: 1" in info and "Encrypted: yes, opens without a password" in info
    assert "top secret" in pdfs.ok_text("read_pdf_pages", pdf_file_path="open.pdf")
    info = pdfs.ok_text("get_pdf_info", pdf_file_path="locked.pdf")
    assert "Encrypted: yes, password required" in info
    assert "Pages: (encrypted; password required)" in info
    for tool, args in [("read_pdf_pages", {"pdf_file_path": "locked.pdf"}),
                       ("search_pdf_content", {"pdf_file_path": "locked.pdf", "pattern": "secret"}),
                       ("merge_pdfs", {"pdf_paths": ["invoices.pdf", "locked.pdf"],
                                       "output_path": "m.pdf"}),
                       ("extract_pdf_pages", {"source_path": "locked.pdf", "page_numbers": [1],
                                              "output_path": "m.pdf"})]:
        assert "encrypted with a password" in pdfs.fails(tool, "FAILED_PRECONDITION", **args)
    assert not (pdfs.ws / "m.pdf").exists()


def test_a_changed_file_is_read_again(pdfs: ServerHarness) -> None:
    assert "Invoice INV-101" in pdfs.ok_text("read_pdf_pages", pdf_file_path="invoices.pdf")
    (pdfs.ws / "invoices.pdf").write_bytes(_pdf([["Credit note CN-1"]]))
    assert "Credit note CN-1" in pdfs.ok_text("read_pdf_pages", pdf_file_path="invoices.pdf")


def test_parsed_pdfs_are_kept_within_their_budget(pdfs: ServerHarness, monkeypatch: Any) -> None:
    for name in "abc":
        (pdfs.ws / f"{name}.pdf").write_bytes(_pdf([[f"page {name}"]], title=name.upper()))
    monkeypatch.setattr(documents, "_CACHE_TOTAL_BYTES", 2 * (pdfs.ws / "a.pdf").stat().st_size)
    for name in "abac":
        assert f"page {name}" in pdfs.ok_text("read_pdf_pages", pdf_file_path=f"{name}.pdf")
    kept = pdfs.runtime.state["pdf_tools.documents"]
    assert [shown for shown, _ in kept.values] == ["/workspace/a.pdf", "/workspace/c.pdf"]
    assert kept.held == sum(pdf.size for pdf in kept.values.values())


def test_text_output_is_cut_at_a_line_boundary(make_world: Any) -> None:
    small = build_pdfs(make_world, {"max_output_chars": 400})
    text = small.ok_text("read_pdf_pages", pdf_file_path="long.pdf", end_page=40)
    assert len(text) <= 400
    body, notice = text.rsplit("\n", 1)
    assert notice.startswith("[output truncated: showing ") and "read fewer pages" in notice
    assert body.splitlines()[-1] in ("", *(f"long page {p}" for p in range(1, 41)),
                                     *(f"=== Page {p} ===" for p in range(1, 41)))


# --- writing ----------------------------------------------------------------------------------

def _texts(path: Any) -> list[str]:
    return [page.extract_text() for page in PdfReader(path).pages]


def test_merge_pdfs(pdfs: ServerHarness) -> None:
    out = pdfs.ok_text("merge_pdfs", pdf_paths=["cv/ann.pdf", "/workspace/invoices.pdf",
                                                "open.pdf"], output_path="apply/packet.pdf")
    assert out == "Merged 3 files (8 pages) into /workspace/apply/packet.pdf"
    texts = _texts(pdfs.ws / "apply" / "packet.pdf")
    assert texts[0].startswith("Ann Lee") and texts[2].startswith("Invoice INV-101")
    assert texts[7].strip() == "top secret"
    info = pdfs.ok_text("get_pdf_info", pdf_file_path="apply/packet.pdf")
    assert "Created: 2025-01-15T09:00:01Z" in info and "Producer: LOCA pdf_tools (pypdf)" in info
    pdfs.fails("merge_pdfs", "INVALID_ARGUMENT", pdf_paths=["invoices.pdf"], output_path="x.pdf")
    pdfs.fails("merge_pdfs", "INVALID_ARGUMENT", pdf_paths=["invoices.pdf", "cv/ann.pdf"],
               output_path="x.txt")
    pdfs.fails("merge_pdfs", "INVALID_ARGUMENT", pdf_paths=["invoices.pdf", "cv/ann.pdf"],
               output_path="folder.pdf")
    pdfs.fails("merge_pdfs", "INVALID_ARGUMENT", pdf_paths=["invoices.pdf", "notes.pdf"],
               output_path="x.pdf")
    pdfs.fails("merge_pdfs", "NOT_FOUND", pdf_paths=["invoices.pdf", "nope.pdf"],
               output_path="x.pdf")
    assert not (pdfs.ws / "x.pdf").exists() and not (pdfs.ws / "x.txt").exists()


def test_merge_may_replace_one_of_its_inputs(pdfs: ServerHarness) -> None:
    pdfs.ok_text("merge_pdfs", pdf_paths=["invoices.pdf", "cv/ann.pdf"], output_path="invoices.pdf")
    assert len(_texts(pdfs.ws / "invoices.pdf")) == 7
    assert not list(pdfs.ws.glob(".*.tmp"))


def test_extract_pdf_pages_keeps_the_order_given(pdfs: ServerHarness) -> None:
    out = pdfs.ok_text("extract_pdf_pages", source_path="invoices.pdf", page_numbers=[5, 2, 2],
                       output_path="sel.pdf")
    assert out == "Extracted pages [5, 2, 2] into /workspace/sel.pdf"
    assert [t.splitlines()[0] for t in _texts(pdfs.ws / "sel.pdf")] == [
        "Invoice INV-105", "Invoice INV-102", "Invoice INV-102"]
    text = pdfs.fails("extract_pdf_pages", "INVALID_ARGUMENT", source_path="invoices.pdf",
                      page_numbers=[1, 6, 0], output_path="bad.pdf")
    assert "page 6, 0 out of range" in text and not (pdfs.ws / "bad.pdf").exists()
    pdfs.fails("extract_pdf_pages", "INVALID_ARGUMENT", source_path="invoices.pdf",
               page_numbers=[], output_path="bad.pdf")
    pdfs.fails("extract_pdf_pages", "INVALID_ARGUMENT", source_path="invoices.pdf",
               page_numbers=[1.5], output_path="bad.pdf")


def test_written_pdfs_are_deterministic(make_world: Any) -> None:
    def run() -> bytes:
        pdfs = build_pdfs(make_world)
        pdfs.ok_text("merge_pdfs", pdf_paths=["invoices.pdf", "cv/ann.pdf"], output_path="m.pdf")
        pdfs.ok_text("extract_pdf_pages", source_path="m.pdf", page_numbers=[6, 1],
                     output_path="e.pdf")
        return (pdfs.ws / "m.pdf").read_bytes() + (pdfs.ws / "e.pdf").read_bytes()

    assert run() == run()


# --- searching --------------------------------------------------------------------------------

def test_search_pages_through_matches(make_world: Any) -> None:
    pdfs = build_pdfs(make_world)
    first = pdfs.ok_text("search_pdf_content", pdf_file_path="long.pdf", pattern=r"LONG PAGE \d*5\b")
    assert first.splitlines()[:6] == [
        "Search ID: search_1", "File: /workspace/long.pdf", "Pattern: LONG PAGE \\d*5\\b",
        "Total matches: 6", "Page 1 of 1 (10 matches per page)", ""]
    assert first.splitlines()[6:8] == ["[1] Page 5: long page 5", "[2] Page 15: long page 15"]
    listing = pdfs.ok_text("search_pdf_content", pdf_file_path="long.pdf", pattern="page",
                           page_size=25)
    assert listing.startswith("Search ID: search_2\n") and "Page 1 of 3 (25 matches per page)" in listing
    second = pdfs.ok_text("search_pdf_next_page", search_id="search_2")
    assert "Page 2 of 3" in second and "[26] Page 26: long page 26" in second
    assert "[51] Page 51" in pdfs.ok_text("search_pdf_go_page", search_id="search_2", page_number=3)
    assert "already on the last page (3 of 3)" in pdfs.fails(
        "search_pdf_next_page", "FAILED_PRECONDITION", search_id="search_2")
    pdfs.fails("search_pdf_go_page", "INVALID_ARGUMENT", search_id="search_2", page_number=4)
    pdfs.ok_text("search_pdf_go_page", search_id="search_2", page_number=1)
    pdfs.fails("search_pdf_prev_page", "FAILED_PRECONDITION", search_id="search_2")
    assert pdfs.ok_text("search_pdf_info", search_id="search_2") == "\n".join([
        "Search ID: search_2", "File: /workspace/long.pdf", "Pattern: page",
        "Total matches: 60", "Pages: 3 (25 matches per page)", "Current page: 1"])


def test_search_context_and_no_matches(pdfs: ServerHarness) -> None:
    (pdfs.ws / "wide.pdf").write_bytes(_pdf([[("word " * 40).strip(), "NEEDLE here",
                                              ("tail " * 40).strip()]]))
    text = pdfs.ok_text("search_pdf_content", pdf_file_path="wide.pdf", pattern="needle")
    line = text.splitlines()[-1]
    assert line.startswith("[1] Page 1: …") and line.endswith("…")
    before, after = line.split("NEEDLE", 1)
    assert len(before.split(": …", 1)[1]) == 100 and len(after) == 101  # context and the ellipsis
    none = pdfs.ok_text("search_pdf_content", pdf_file_path="wide.pdf", pattern="haystack")
    assert "Total matches: 0" in none and none.endswith("No matches found.")


def test_search_argument_errors(pdfs: ServerHarness) -> None:
    assert "not a valid regular expression" in pdfs.fails(
        "search_pdf_content", "INVALID_ARGUMENT", pdf_file_path="invoices.pdf", pattern="(unclosed")
    assert "matches empty text" in pdfs.fails(
        "search_pdf_content", "INVALID_ARGUMENT", pdf_file_path="invoices.pdf", pattern="x*|y?")
    for size in (9, 51):
        pdfs.fails("search_pdf_content", "INVALID_ARGUMENT", pdf_file_path="invoices.pdf",
                   pattern="x", page_size=size)
    pdfs.fails("search_pdf_next_page", "NOT_FOUND", search_id="search_7")
    for bad in ("7", "search_0", "search_x", "search_-1"):
        pdfs.fails("search_pdf_info", "INVALID_ARGUMENT", search_id=bad)


def test_search_stops_at_the_match_limit(pdfs: ServerHarness, monkeypatch: Any) -> None:
    monkeypatch.setattr(search, "MAX_MATCHES", 7)
    text = pdfs.ok_text("search_pdf_content", pdf_file_path="long.pdf", pattern="page")
    assert "Total matches: 7 (the search stopped there; use a more specific pattern)" in text


def test_search_sessions_survive_a_restart(make_world: Any) -> None:
    pdfs = build_pdfs(make_world)
    pdfs.ok_text("search_pdf_content", pdf_file_path="long.pdf", pattern="page")
    pdfs.ok_text("search_pdf_next_page", search_id="search_1")
    pdfs.runtime.db.dispose()
    restarted = ServerHarness(toolbox, pdfs.world)
    assert restarted.ok_text("search_pdf_info", search_id="search_1").endswith("Current page: 2")
    assert "Page 3 of 6" in restarted.ok_text("search_pdf_next_page", search_id="search_1")
    assert restarted.ok_text("search_pdf_content", pdf_file_path="invoices.pdf",
                             pattern="due").startswith("Search ID: search_2\n")


@pytest.mark.slow
def test_search_continues_across_stdio_server_processes(make_world: Any) -> None:
    pdfs = build_pdfs(make_world)
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "mock_servers", "pdf_tools", "--world", str(pdfs.world.root)])

    async def one_process(calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            return [(await client.call_tool(name, args)).content[0].text for name, args in calls]

    first = asyncio.run(one_process([
        ("search_pdf_content", {"pdf_file_path": "long.pdf", "pattern": "page"}),
        ("search_pdf_next_page", {"search_id": "search_1"})]))
    second = asyncio.run(one_process([("search_pdf_next_page", {"search_id": "search_1"})]))
    assert first[0].startswith("Search ID: search_1\n") and "Page 2 of 6" in first[1]
    assert "Page 3 of 6" in second[0]
    assert pdfs.ok_text("search_pdf_go_page", search_id="search_1", page_number=3) == second[0]


def test_search_sessions_are_not_side_effects(pdfs: ServerHarness) -> None:
    rules = snapshot_rules(["pdf_tools"])
    before = snapshot.take(pdfs.world, rules)
    pdfs.ok_text("search_pdf_content", pdf_file_path="invoices.pdf", pattern="invoice")
    pdfs.ok_text("search_pdf_go_page", search_id="search_1", page_number=1)
    pdfs.ok_text("read_pdf_pages", pdf_file_path="invoices.pdf", end_page=5)
    assert snapshot.changes(pdfs.world, before, rules) == []
    pdfs.ok_text("extract_pdf_pages", source_path="invoices.pdf", page_numbers=[1],
                 output_path="invoices.pdf")
    assert snapshot.changes(pdfs.world, before, rules) == ["workspace file invoices.pdf was changed"]


# --- determinism, schemas ---------------------------------------------------------------------

def test_same_calls_give_identical_outputs(make_world: Any) -> None:
    script: list[tuple[str, dict[str, Any]]] = [
        ("get_pdf_info", {"pdf_file_path": "cv/ann.pdf"}),
        ("read_pdf_pages", {"pdf_file_path": "invoices.pdf", "end_page": 5}),
        ("merge_pdfs", {"pdf_paths": ["invoices.pdf", "cv/ann.pdf"], "output_path": "m.pdf"}),
        ("get_pdf_info", {"pdf_file_path": "m.pdf"}),
        ("search_pdf_content", {"pdf_file_path": "m.pdf", "pattern": "a"}),
        ("search_pdf_next_page", {"search_id": "search_1"})]
    first = build_pdfs(make_world)
    texts = [first.ok_text(tool, **args) for tool, args in script]
    second = build_pdfs(make_world)
    assert [second.ok_text(tool, **args) for tool, args in script] == texts


