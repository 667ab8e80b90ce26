"""Search sessions of `search_pdf_content`, kept in the world so that a restarted server (or a
second one on the same world) continues them. Both tables are bookkeeping, not world state."""

from __future__ import annotations

from sqlalchemy import UniqueConstraint
from sqlmodel import Field, SQLModel


class PdfSearch(SQLModel, table=True):
    __tablename__ = "pdf_search"
    __table_args__ = ({"sqlite_autoincrement": True},)  # shown as search_<id>: never reused
    id: int | None = Field(default=None, primary_key=True)
    file: str  # the PDF as shown to the agent
    pattern: str
    page_size: int
    total_matches: int
    stopped: bool = False  # the search stopped at the match limit
    current_page: int = 1


class PdfSearchMatch(SQLModel, table=True):
    __tablename__ = "pdf_search_match"
    __table_args__ = (UniqueConstraint("search_id", "number"),)
    id: int | None = Field(default=None, primary_key=True)
    search_id: int = Field(foreign_key="pdf_search.id")
    number: int  # 1-based, in reading order
    page: int  # 1-based PDF page
    context: str
