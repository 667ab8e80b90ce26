"""Regex search over a PDF's text and the search sessions that page through its matches. A
session is a `pdf_search` row (id shown as `search_<n>`) with its matches, so it survives a
server restart and never expires within an episode."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import NamedTuple

import regex
from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.pdf_tools.documents import Pdf

MAX_MATCHES = 5000
CONTEXT_CHARS = 100
MAX_MATCH_CHARS = 300
SEARCH_SECONDS = 8.0
_ID = re.compile(r"search_([1-9][0-9]{0,17})")
_SPACE = regex.compile(r"\s+")


class Match(NamedTuple):
    number: int
    page: int
    context: str


class Search(NamedTuple):
    id: int
    file: str
    pattern: str
    page_size: int
    total_matches: int
    stopped: bool
    current_page: int

    @property
    def pages(self) -> int:
        """How many pages of matches (at least 1, which may be empty)."""
        return max(1, -(-self.total_matches // self.page_size))


def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """A case-insensitive pattern; invalid syntax, or one that matches empty text, is
    INVALID_ARGUMENT."""
    try:
        compiled = regex.compile(pattern, regex.IGNORECASE)
    except (regex.error, ValueError, OverflowError) as exc:
        raise invalid(f"pattern is not a valid regular expression: {exc}") from None
    if compiled.fullmatch("") is not None:
        raise invalid("pattern matches empty text; give a pattern that needs at least one "
                      "character")
    return compiled


def _context(text: str, start: int, end: int) -> str:
    found = text[start:end]
    if len(found) > MAX_MATCH_CHARS:
        found = found[:MAX_MATCH_CHARS] + "…"
    before = text[max(0, start - CONTEXT_CHARS):start]
    after = text[end:end + CONTEXT_CHARS]
    line = (("…" if start > CONTEXT_CHARS else "") + before + found + after
            + ("…" if end + CONTEXT_CHARS < len(text) else ""))
    return _SPACE.sub(" ", line).strip()


def find(pdf: Pdf, pattern: regex.Pattern[str]) -> tuple[list[tuple[int, str]], bool]:
    """(page, context) of each non-empty match in reading order, and whether the search
    stopped at MAX_MATCHES. Slow patterns or huge documents are DEADLINE_EXCEEDED."""
    pdf.require_open()
    deadline = time.monotonic() + SEARCH_SECONDS
    found: list[tuple[int, str]] = []
    for number in range(1, pdf.pages + 1):
        text = pdf.text(number)
        left = deadline - time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            for m in pattern.finditer(text, timeout=left):
                if m.end() > m.start():
                    found.append((number, _context(text, m.start(), m.end())))
                    if len(found) >= MAX_MATCHES:
                        return found, True
        except TimeoutError:
            raise ToolFailure(Code.DEADLINE_EXCEEDED, f"searching {pdf.shown} took longer than "
                              f"{SEARCH_SECONDS:g} s", hint="use a simpler pattern") from None
    return found, False


# --- sessions ---------------------------------------------------------------------------------

_COLUMNS = "id, file, pattern, page_size, total_matches, stopped, current_page"


def create(session: Session, *, file: str, pattern: str, page_size: int,
           matches: list[tuple[int, str]], stopped: bool) -> Search:
    """Store a new search session (on its first page) with its matches."""
    search_id = sql.scalar(session, "INSERT INTO pdf_search (file, pattern, page_size, "
                                    "total_matches, stopped, current_page) "
                                    "VALUES (?, ?, ?, ?, ?, 1) RETURNING id",
                           (file, pattern, page_size, len(matches), stopped))
    sql.cursor(session).executemany(
        "INSERT INTO pdf_search_match (search_id, number, page, context) VALUES (?, ?, ?, ?)",
        [(search_id, i, page, context) for i, (page, context) in enumerate(matches, start=1)])
    return Search(search_id, file, pattern, page_size, len(matches), stopped, 1)


def search_id(value: str) -> int:
    found = _ID.fullmatch(value.strip())
    if not found:
        raise invalid(f"search_id '{value:.60}' is not a search id such as search_3",
                      hint="search_pdf_content returns one")
    return int(found.group(1))


def load(session: Session, value: str) -> Search:
    row = sql.first(session, Search, f"SELECT {_COLUMNS} FROM pdf_search WHERE id = ?",
                    (search_id(value),))
    if row is None:
        raise not_found(f"no search session {value.strip()}", hint="start one with "
                        "search_pdf_content")
    return row._replace(stopped=bool(row.stopped))


def matches(session: Session, search: Search, page: int) -> list[Match]:
    """The matches on `page` of the session (1-based)."""
    first = (page - 1) * search.page_size + 1
    return sql.rows(session, Match, "SELECT number, page, context FROM pdf_search_match "
                                    "WHERE search_id = ? AND number BETWEEN ? AND ? ORDER BY number",
                    (search.id, first, first + search.page_size - 1))


def move(session: Session, search: Search, page: int) -> Search:
    """Make `page` the current page (1..pages, else INVALID_ARGUMENT)."""
    if not 1 <= page <= search.pages:
        raise invalid(f"page_number {page} is out of range 1..{search.pages} (pages of "
                      f"matches of search_{search.id})")
    sql.run(session, "UPDATE pdf_search SET current_page = ? WHERE id = ?", (page, search.id))
    return search._replace(current_page=page)


@dataclass(frozen=True)
class Step:
    """A relative move (next/previous) and how to say there is nowhere to go."""

    delta: int
    edge: str


NEXT, PREVIOUS = Step(1, "last"), Step(-1, "first")


def step(session: Session, search: Search, direction: Step) -> Search:
    """Move one page forward or back; at the edge it is FAILED_PRECONDITION."""
    target = search.current_page + direction.delta
    if not 1 <= target <= search.pages:
        raise ToolFailure(Code.FAILED_PRECONDITION, f"already on the {direction.edge} page "
                          f"({search.current_page} of {search.pages})")
    return move(session, search, target)
