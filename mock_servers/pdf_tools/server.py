"""PDF tools (pdf-tools server names) over workspace files. Outputs are plain text. Search
sessions are bookkeeping rows of the world: the search tools are read-only for the world but
commit their session rows themselves."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mock_servers.core.errors import invalid
from mock_servers.core.files import display
from mock_servers.core.toolkit import Call, Toolbox
from mock_servers.core.types import Int
from mock_servers.pdf_tools import search
from mock_servers.pdf_tools.documents import open_pdf, output_file, pages_text, write_pages
from mock_servers.pdf_tools.search import NEXT, PREVIOUS, Search, Step

toolbox = Toolbox("pdf_tools", table_prefix="pdf_", snapshot_ignore={"pdf_search": None, "pdf_search_match": None},
                  instructions="Read, inspect, search, merge and split the PDF files of the "
                  "workspace (paths relative to /workspace or absolute under it).")
build = toolbox.build

MAX_PAGES_PER_READ = 50
MAX_MERGE_FILES = 100
MAX_EXTRACT_PAGES = 1000
DEFAULT_SEARCH_PAGE, MAX_SEARCH_PAGE = 10, 50

PdfPath = Annotated[str, Field(min_length=1, max_length=4096,
                               description="PDF path, relative to /workspace or absolute under it")]
OutputPath = Annotated[str, Field(min_length=1, max_length=4096, description=(
    "Where to write the new PDF (.pdf), relative to /workspace or absolute under it; folders "
    "are created and an existing file is replaced"))]
SearchId = Annotated[str, Field(min_length=1, max_length=64,
                                description="Search id such as search_3 (from search_pdf_content)")]


# --- reading ----------------------------------------------------------------------------------

@toolbox.tool(rw="read", core=True, narrow_hint="read fewer pages (start_page, end_page)")
def read_pdf_pages(call: Call, pdf_file_path: PdfPath,
                   start_page: Annotated[Int, Field(ge=1, description="First page (1-based)")] = 1,
                   end_page: Annotated[Int, Field(ge=1, description="Last page (inclusive)")] = 1,
                   ) -> str:
    """Extract the text of pages start_page..end_page (default: page 1 only) as plain text:
    `PDF total pages: N`, `Extracted page range: a-b`, then one `=== Page k ===` block per
    page. At most 50 pages per call; an end_page past the last page is clamped, with a note.
    start_page after end_page, or past the last page, is INVALID_ARGUMENT."""
    if start_page > end_page:
        raise invalid(f"start_page {start_page} is after end_page {end_page}")
    pdf = open_pdf(call, pdf_file_path)
    pdf.require_open()
    if start_page > pdf.pages:
        raise invalid(f"start_page {start_page} is past the last page: {pdf.shown} has "
                      f"{pages_text(pdf.pages)}")
    last = min(end_page, pdf.pages, start_page + MAX_PAGES_PER_READ - 1)
    notes = []
    if end_page > pdf.pages:
        notes.append(f"Note: end_page {end_page} is past the last page; the document has "
                     f"{pages_text(pdf.pages)}.")
    if last < min(end_page, pdf.pages):
        notes.append(f"Note: at most {MAX_PAGES_PER_READ} pages per call; continue with "
                     f"start_page={last + 1}.")
    lines = [f"PDF total pages: {pdf.pages}", f"Extracted page range: {start_page}-{last}", *notes]
    for number in range(start_page, last + 1):
        text = pdf.text(number).strip("\n")
        lines += ["", f"=== Page {number} ===", text or "[no extractable text on this page]"]
    return "\n".join(lines)


def _info_line(value: str | None) -> str:
    return "(none)" if value is None else " ".join(value.split())


@toolbox.tool(rw="read", core=True)
def get_pdf_info(call: Call, pdf_file_path: PdfPath) -> str:
    """Document information as lines: pages, title, author, creator, producer, created (ISO
    8601), encrypted, file size. A password-protected PDF is reported, with what cannot be
    read without the password marked as such."""
    pdf = open_pdf(call, pdf_file_path)
    info = pdf.info
    locked = "(encrypted; password required)"
    encrypted = ("yes, password required" if pdf.locked else
                 "yes, opens without a password" if pdf.encrypted else "no")
    return "\n".join([
        f"File: {pdf.shown}",
        f"Pages: {locked if pdf.locked else pdf.pages}",
        *(f"{key.title()}: {locked if pdf.locked else _info_line(info[key])}"
          for key in ("title", "author", "creator", "producer", "created")),
        f"Encrypted: {encrypted}",
        f"File size: {pdf.size} bytes",
    ])


# --- writing ----------------------------------------------------------------------------------

@toolbox.tool(rw="write", core=True, destructive=True)
def merge_pdfs(call: Call,
               pdf_paths: Annotated[list[PdfPath], Field(
                   min_length=2, max_length=MAX_MERGE_FILES,
                   description=f"PDFs to merge, in order (2 to {MAX_MERGE_FILES})")],
               output_path: OutputPath) -> str:
    """Merge PDFs, all pages of each in the order given, into one new PDF at output_path
    (replacing an existing file): `Merged N files (P pages) into <path>`."""
    target = output_file(call, output_path)
    documents = [open_pdf(call, path) for path in pdf_paths]
    for pdf in documents:
        pdf.require_open()
    pages = [(pdf, n) for pdf in documents for n in range(1, pdf.pages + 1)]
    write_pages(call, pages, target)
    return f"Merged {len(documents)} files ({len(pages)} pages) into {display(call.world, target)}"


@toolbox.tool(rw="write", core=True, destructive=True)
def extract_pdf_pages(call: Call, source_path: PdfPath,
                      page_numbers: Annotated[list[Int], Field(
                          min_length=1, max_length=MAX_EXTRACT_PAGES,
                          description="1-based page numbers, in the order wanted")],
                      output_path: OutputPath) -> str:
    """Copy the given pages of a PDF, in the order given, into a new PDF at output_path
    (replacing an existing file): `Extracted pages [...] into <path>`. A page number out of
    range is INVALID_ARGUMENT."""
    target = output_file(call, output_path)
    pdf = open_pdf(call, source_path)
    pdf.check_pages(page_numbers)
    write_pages(call, [(pdf, n) for n in page_numbers], target)
    return f"Extracted pages {list(page_numbers)} into {display(call.world, target)}"


# --- searching --------------------------------------------------------------------------------

def _search_page(call: Call, found: Search) -> str:
    """The session's header and its current page of matches."""
    total = (f"{found.total_matches} (the search stopped there; use a more specific pattern)"
             if found.stopped else str(found.total_matches))
    lines = [f"Search ID: search_{found.id}", f"File: {found.file}", f"Pattern: {found.pattern}",
             f"Total matches: {total}",
             f"Page {found.current_page} of {found.pages} ({found.page_size} matches per page)", ""]
    hits = search.matches(call.session, found, found.current_page)
    lines += [f"[{m.number}] Page {m.page}: {m.context}" for m in hits] or ["No matches found."]
    call.session.commit()  # the session row is bookkeeping: keep it although the tool reads
    return "\n".join(lines)


@toolbox.tool(rw="read", narrow_hint="use a smaller page_size")
def search_pdf_content(call: Call, pdf_file_path: PdfPath,
                       pattern: Annotated[str, Field(min_length=1, max_length=1000, description=(
                           "Regular expression (case-insensitive), e.g. 'invoice\\s+#?\\d+'"))],
                       page_size: Annotated[Int, Field(
                           ge=DEFAULT_SEARCH_PAGE, le=MAX_SEARCH_PAGE,
                           description="Matches per page (default 10, 10..50)")]
                       = DEFAULT_SEARCH_PAGE) -> str:
    """Search a PDF's text for a regular expression (case-insensitive). Starts a search
    session and shows `Search ID: search_<n>`, the total matches and the first page of matches,
    each with its PDF page number and up to 100 characters of context either side. Page
    through with search_pdf_next_page, search_pdf_prev_page and search_pdf_go_page."""
    compiled = search.compile_pattern(pattern)
    pdf = open_pdf(call, pdf_file_path)
    found, stopped = search.find(pdf, compiled)
    return _search_page(call, search.create(call.session, file=pdf.shown, pattern=pattern,
                                            page_size=page_size, matches=found, stopped=stopped))


def _step(call: Call, search_id: str, direction: Step) -> str:
    found = search.load(call.session, search_id)
    return _search_page(call, search.step(call.session, found, direction))


@toolbox.tool(rw="read")
def search_pdf_next_page(call: Call, search_id: SearchId) -> str:
    """The next page of a search session's matches; on the last page it is
    FAILED_PRECONDITION."""
    return _step(call, search_id, NEXT)


@toolbox.tool(rw="read")
def search_pdf_prev_page(call: Call, search_id: SearchId) -> str:
    """The previous page of a search session's matches; on the first page it is
    FAILED_PRECONDITION."""
    return _step(call, search_id, PREVIOUS)


@toolbox.tool(rw="read")
def search_pdf_go_page(call: Call, search_id: SearchId,
                       page_number: Annotated[Int, Field(ge=1, description="Page of matches "
                                                                           "(1-based)")]) -> str:
    """A given page of a search session's matches (it becomes the current page)."""
    found = search.load(call.session, search_id)
    return _search_page(call, search.move(call.session, found, page_number))


@toolbox.tool(rw="read")
def search_pdf_info(call: Call, search_id: SearchId) -> str:
    """A search session's pattern, file, total matches, number of pages and current page."""
    found = search.load(call.session, search_id)
    return "\n".join([f"Search ID: search_{found.id}", f"File: {found.file}",
                      f"Pattern: {found.pattern}", f"Total matches: {found.total_matches}"
                      + (" (the search stopped there)" if found.stopped else ""),
                      f"Pages: {found.pages} ({found.page_size} matches per page)",
                      f"Current page: {found.current_page}"])

