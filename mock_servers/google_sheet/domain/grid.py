"""Grid data: each cell of a rectangle as {userEnteredValue, effectiveValue, formattedValue}."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.google_sheet.domain.book import Sheet
from mock_servers.google_sheet.domain.cells import Box
from mock_servers.google_sheet.domain.values import effective_value, formatted, user_entered_value


def grid_rows(session: Session, sheet: Sheet, box: Box) -> list[dict[str, Any]]:
    """`rowData` of the rectangle: one {"values": [...]} per row up to the last non-empty one,
    each up to its last non-empty cell; empty cells are {}."""
    found = sql.run(session, "SELECT row, col, input, formula, value, value_type FROM gs_cell WHERE sheet = ? "
                    "AND row BETWEEN ? AND ? AND col BETWEEN ? AND ? ORDER BY row, col",
                    (sheet.pk, box.r1, box.r2, box.c1, box.c2))
    rows: list[dict[str, Any]] = []
    for row, col, entry, formula, value, kind in found:
        while len(rows) <= row - box.r1:
            rows.append({"values": []})
        line = rows[row - box.r1]["values"]
        line.extend({} for _ in range(col - box.c1 - len(line)))
        line.append({"userEnteredValue": user_entered_value(entry, formula, value, kind),
                     "effectiveValue": effective_value(value, kind),
                     "formattedValue": formatted(value, kind)})
    return rows
