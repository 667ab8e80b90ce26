"""Tools over spreadsheets and their sheets: create, list, copy, rename, delete, insert rows
and columns, share."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mock_servers.core.errors import invalid
from mock_servers.core.times import iso_z
from mock_servers.core.toolkit import Call
from mock_servers.core.types import Int
from mock_servers.google_sheet import domain
from mock_servers.google_sheet.domain import structure
from mock_servers.google_sheet.server.base import SheetTitle, SpreadsheetId, changed, target, toolbox

Title = Annotated[str, Field(min_length=1, max_length=100, description="Title of the new sheet")]
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


@toolbox.tool(rw="write", core=True, idempotent=False)
def create_spreadsheet(call: Call, title: Annotated[str, Field(min_length=1, max_length=200,
                                                               description="Spreadsheet title")]) -> dict[str, Any]:
    """Create a spreadsheet with one empty sheet, Sheet1 (1000 rows x 26 columns). Several
    spreadsheets may share a title, as in Drive. Returns its id (44 characters)."""
    if not title.strip():
        raise invalid("title cannot be blank")
    meta = call.world.meta
    now = iso_z(call.now)
    book = domain.add_spreadsheet(call.session, task=meta.task, seed=meta.seed, title=title, created=now,
                                  time_zone=meta.tz, folder=call.config.get("folder"))
    first = domain.add_sheet(call.session, book, "Sheet1")
    return {"spreadsheetId": book.id, "title": book.title, "folder": book.folder,
            "sheets": [{"sheetId": first.sheet_id, "title": first.title}]}


@toolbox.tool(rw="write")
def create_sheet(call: Call, spreadsheet_id: SpreadsheetId, title: Title) -> dict[str, Any]:
    """Add an empty sheet (1000 rows x 26 columns) at the end of a spreadsheet. A title
    already used in the spreadsheet (compared without case) is ALREADY_EXISTS."""
    book = domain.find(call.session, spreadsheet_id)
    found = domain.add_sheet(call.session, book, title)
    changed(call, book)
    return {"spreadsheetId": book.id, "sheetId": found.sheet_id, "title": found.title, "index": found.position}


@toolbox.tool(rw="write")
def copy_sheet(call: Call,
               src_spreadsheet: Annotated[str, Field(min_length=1, max_length=100,
                                                     description="Source spreadsheet id")],
               src_sheet: Annotated[str, Field(min_length=1, max_length=100, description="Title of the sheet to copy")],
               dst_spreadsheet: Annotated[str, Field(min_length=1, max_length=100,
                                                     description="Destination spreadsheet id (may be the source)")],
               dst_sheet: Annotated[str, Field(min_length=1, max_length=100, description="Title of the copy")]
               ) -> dict[str, Any]:
    """Copy a sheet (its grid, values and formulas) into a spreadsheet under a new title; a
    title already used there is ALREADY_EXISTS. Returns the new sheet's id and title."""
    _src_book, source = target(call, src_spreadsheet, src_sheet)
    book = domain.find(call.session, dst_spreadsheet)
    new = structure.copy(call.session, source, book, dst_sheet)
    changed(call, book)
    return {"spreadsheetId": book.id, "sheetId": new.sheet_id, "title": new.title}


@toolbox.tool(rw="write", idempotent=True)
def rename_sheet(call: Call,
                 spreadsheet: Annotated[str, Field(min_length=1, max_length=100, description="Spreadsheet id")],
                 sheet: SheetTitle,
                 new_name: Annotated[str, Field(min_length=1, max_length=100, description="New sheet title")]
                 ) -> dict[str, Any]:
    """Rename a sheet; formulas referring to it by its old title are rewritten to the new
    one. A title used by another sheet (compared without case) is ALREADY_EXISTS."""
    book, found = target(call, spreadsheet, sheet)
    new = structure.rename(call.session, found, new_name)
    changed(call, book)
    return {"spreadsheetId": book.id, "sheetId": new.sheet_id, "title": new.title}


@toolbox.tool(rw="write", destructive=True, idempotent=False)
def delete_sheet(call: Call, spreadsheet_id: SpreadsheetId, sheet: SheetTitle) -> dict[str, Any]:
    """Delete a sheet and its cells; formulas elsewhere that read it become #REF!. The last
    sheet of a spreadsheet cannot be deleted (FAILED_PRECONDITION)."""
    book, found = target(call, spreadsheet_id, sheet)
    structure.delete(call.session, found)
    changed(call, book)
    return {"deleted": found.title}


@toolbox.tool(rw="write", core=True)
def add_rows(call: Call, spreadsheet_id: SpreadsheetId, sheet: SheetTitle,
             count: Annotated[Int, Field(ge=1, le=100000, description="Rows to insert (1..100000)")],
             start_row: Annotated[Int | None, Field(ge=0, description=(
                 "0-based row index to insert before (0 = above row 1); omit to add at the end"))] = None
             ) -> dict[str, Any]:
    """Insert empty rows; cells at and below start_row move down and formula references
    follow them. Returns the sheet's new rowCount."""
    book, found = target(call, spreadsheet_id, sheet)
    new = structure.insert(call.session, found, "row", start_row, count)
    changed(call, book)
    return {"spreadsheetId": book.id, "sheetId": new.sheet_id, "rowCount": new.row_count}


@toolbox.tool(rw="write")
def add_columns(call: Call, spreadsheet_id: SpreadsheetId, sheet: SheetTitle,
                count: Annotated[Int, Field(ge=1, le=18278, description="Columns to insert (1..18278)")],
                start_column: Annotated[Int | None, Field(ge=0, description=(
                    "0-based column index to insert before (0 = before column A); omit to add at the end"))] = None
                ) -> dict[str, Any]:
    """Insert empty columns; cells at and right of start_column move right and formula
    references follow them. Returns the sheet's new columnCount (at most 18278)."""
    book, found = target(call, spreadsheet_id, sheet)
    new = structure.insert(call.session, found, "col", start_column, count)
    changed(call, book)
    return {"spreadsheetId": book.id, "sheetId": new.sheet_id, "columnCount": new.column_count}


class Recipient(BaseModel):
    model_config = ConfigDict(extra="forbid")
    email_address: str = Field(min_length=1, max_length=254, description="E-mail address to share with")
    role: Literal["reader", "commenter", "writer"] = Field(description="reader, commenter or writer")


@toolbox.tool(rw="write", idempotent=True)
def share_spreadsheet(call: Call, spreadsheet_id: SpreadsheetId,
                      recipients: Annotated[list[Recipient], Field(min_length=1, max_length=100,
                                                                   description="1 to 100 {email_address, role}")],
                      send_notification: Annotated[bool, Field(description=(
                          "Whether Drive would notify them (no mail is sent here)"))] = True) -> dict[str, Any]:
    """Share a spreadsheet: each recipient gets the role (replacing an earlier one). Invalid
    addresses are reported in failures; the call fails only when every recipient does."""
    book = domain.find(call.session, spreadsheet_id)
    successes, failures = [], []
    for person in recipients:
        if not _EMAIL.fullmatch(person.email_address):
            failures.append({"email_address": person.email_address,
                             "error": "INVALID_ARGUMENT: not an e-mail address"})
            continue
        permission = domain.share(call.session, book, person.email_address, person.role)
        successes.append({"email_address": person.email_address, "role": person.role,
                          "permissionId": str(permission)})
    if not successes:
        raise invalid("no recipient has a valid e-mail address: " + ", ".join(f["email_address"] for f in failures))
    domain.touch(call.session, book.pk, call.now)
    return {"successes": successes, "failures": failures}

