"""Google Sheets tables. A spreadsheet has a row key (`pk`) and its public 44-character `id`;
sheets have a row key (`pk`, which cells hang from, never the title) and a `sheet_id` from the
spreadsheet's own sequence (`next_sheet_id`), never reused. A cell keeps what was entered
(`input`), its formula, and its value in SQLite's own types (a REAL for numbers and dates, 0/1
for booleans, TEXT for strings and error codes, NULL for an empty formula result) with the
value's type (number, date, bool, string, error, empty); empty cells have no row. Rows and columns are 0-based.
`gs_row_values` is derived from the cells (domain/row_values.py); triggers keep it exact."""

from __future__ import annotations

from sqlalchemy import DDL, Column, ForeignKey, Index, Integer, LargeBinary, UniqueConstraint, event, text
from sqlmodel import Field, SQLModel


class GsSpreadsheet(SQLModel, table=True):
    __tablename__ = "gs_spreadsheet"
    __table_args__ = ({"sqlite_autoincrement": True},)
    pk: int | None = Field(default=None, primary_key=True)
    id: str = Field(unique=True)
    title: str
    locale: str = "en_US"
    time_zone: str = "UTC"
    folder: str | None = None
    created: str
    modified: str = Field(index=True)
    next_sheet_id: int = 0


class GsSheet(SQLModel, table=True):
    __tablename__ = "gs_sheet"
    __table_args__ = (
        UniqueConstraint("spreadsheet", "title_key"),
        UniqueConstraint("spreadsheet", "sheet_id"),
        {"sqlite_autoincrement": True},
    )
    pk: int | None = Field(default=None, primary_key=True)
    spreadsheet: int = Field(sa_column=Column(Integer, ForeignKey("gs_spreadsheet.pk", ondelete="CASCADE"),
                                              nullable=False))
    sheet_id: int
    title: str
    title_key: str  # the title case-folded: titles are unique without regard to case
    index: int
    row_count: int = 1000
    column_count: int = 26


class GsCell(SQLModel, table=True):
    __tablename__ = "gs_cell"
    __table_args__ = (
        Index("ix_gs_cell_formula", "sheet", "row", "col", sqlite_where=text("formula IS NOT NULL")),
    )
    sheet: int = Field(sa_column=Column(Integer, ForeignKey("gs_sheet.pk", ondelete="CASCADE"),
                                        primary_key=True))
    row: int = Field(primary_key=True)
    col: int = Field(primary_key=True)
    input: str
    formula: str | None = None
    value: float | str | None = Field(default=None, sa_column=Column(LargeBinary))  # BLOB affinity: kept as given
    value_type: str = "empty"


class GsRowValues(SQLModel, table=True):
    """A sheet row's values as a read shows them: the JSON array `get_sheet_data` returns for
    the row from column A (`text`, trailing empty cells left out) and its length (`width`).
    Stored rows are exact; a row not stored is read cell by cell."""

    __tablename__ = "gs_row_values"
    sheet: int = Field(sa_column=Column(Integer, ForeignKey("gs_sheet.pk", ondelete="CASCADE"),
                                        primary_key=True))
    row: int = Field(primary_key=True)
    width: int
    text: str


# A cell's value changing or the cell going drops its row's values; inserted and moved cells
# drop or move them where they are inserted or moved (a trigger on every inserted cell would
# cost a world's bulk build about 1 µs a cell).
for _ddl in (
        "CREATE TRIGGER gs_cell_value AFTER UPDATE OF value, value_type ON gs_cell "
        "WHEN OLD.value IS NOT NEW.value OR OLD.value_type IS NOT NEW.value_type BEGIN "
        "DELETE FROM gs_row_values WHERE sheet = OLD.sheet AND row = OLD.row; "
        "DELETE FROM gs_row_values WHERE sheet = NEW.sheet AND row = NEW.row; END",
        "CREATE TRIGGER gs_cell_gone AFTER DELETE ON gs_cell BEGIN "
        "DELETE FROM gs_row_values WHERE sheet = OLD.sheet AND row = OLD.row; END"):
    event.listen(GsCell.__table__, "after_create", DDL(_ddl))  # type: ignore[attr-defined]


class GsPermission(SQLModel, table=True):
    __tablename__ = "gs_permission"
    __table_args__ = (UniqueConstraint("spreadsheet", "email"), {"sqlite_autoincrement": True})
    id: int | None = Field(default=None, primary_key=True)
    spreadsheet: int = Field(sa_column=Column(Integer, ForeignKey("gs_spreadsheet.pk", ondelete="CASCADE"),
                                              nullable=False))
    email: str
    role: str
