"""Cell formatting for `format_range`: font, fill, border, number format and alignment."""

from __future__ import annotations

import re
from collections.abc import Iterable
from copy import copy
from dataclasses import dataclass, field
from typing import Any, Literal

from openpyxl.cell.cell import Cell, MergedCell
from openpyxl.styles import Border, PatternFill, Side
from openpyxl.styles.cell_style import StyleArray

from mock_servers.core.errors import invalid
from mock_servers.excel.limits import MAX_NUMBER_FORMAT, check_text

BorderStyle = Literal["thin", "medium", "thick", "dashed", "dotted", "double", "hair",
                      "dashDot", "dashDotDot", "mediumDashed", "mediumDashDot",
                      "mediumDashDotDot", "slantDashDot"]
HorizontalAlignment = Literal["left", "center", "right", "justify"]
_HEX = re.compile(r"[0-9A-F]{6}([0-9A-F]{2})?")


def argb(text: str, param: str) -> str:
    """`#1F4E78`, `1f4e78` or `FF1F4E78` as ARGB hex; anything else is INVALID_ARGUMENT."""
    raw = text.strip().lstrip("#").upper()
    if not _HEX.fullmatch(raw):
        raise invalid(f"{param} '{text}' is not a hex colour such as FF0000 or #1F4E78")
    return raw if len(raw) == 8 else "FF" + raw


def _updated(style: Any, changes: dict[str, Any]) -> Any:
    new = copy(style)
    for name, value in changes.items():
        setattr(new, name, value)
    return new


@dataclass(frozen=True)
class Formatting:
    """The changes one `format_range` call makes to every cell of its range."""

    font: dict[str, Any] = field(default_factory=dict)
    alignment: dict[str, Any] = field(default_factory=dict)
    fill: PatternFill | None = None
    border: Border | None = None
    number_format: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.font or self.alignment or self.fill or self.border
                    or self.number_format is not None)

    def apply_all(self, cells: Iterable[Cell | MergedCell]) -> None:
        """Format each cell; cells that shared a style share the result, computed once (a
        style change is costly in openpyxl)."""
        done: dict[tuple[int, ...], StyleArray] = {}
        for cell in cells:
            key = tuple(cell._style or ())  # None: never styled
            if key in done:
                cell._style = copy(done[key])
            else:
                self.apply(cell)
                done[key] = copy(cell._style)

    def apply(self, cell: Cell | MergedCell) -> None:
        if self.font:
            cell.font = _updated(cell.font, self.font)
        if self.alignment:
            cell.alignment = _updated(cell.alignment, self.alignment)
        if self.fill is not None:
            cell.fill = self.fill
        if self.border is not None:
            cell.border = self.border
        if self.number_format is not None:
            cell.number_format = self.number_format


def formatting(*, bold: bool | None, italic: bool | None, underline: bool | None,
               font_size: int | None, font_color: str | None, bg_color: str | None,
               border_style: str | None, border_color: str | None, number_format: str | None,
               alignment: str | None, wrap_text: bool | None) -> Formatting:
    """Collect the options that were given; a border colour alone draws thin borders."""
    font: dict[str, Any] = {name: value for name, value in (("bold", bold), ("italic", italic),
                                            ("size", font_size)) if value is not None}
    if underline is not None:
        font["underline"] = "single" if underline else None
    if font_color is not None:
        font["color"] = argb(font_color, "font_color")
    align = {name: value for name, value in (("horizontal", alignment), ("wrap_text", wrap_text))
             if value is not None}
    fill = None
    if bg_color is not None:
        colour = argb(bg_color, "bg_color")
        fill = PatternFill(fill_type="solid", start_color=colour, end_color=colour)
    border = None
    if border_style is not None or border_color is not None:
        side = Side(style=border_style or "thin",
                    color=argb(border_color, "border_color") if border_color else None)
        border = Border(left=side, right=side, top=side, bottom=side)
    if number_format is not None:
        check_text(number_format, "number_format", MAX_NUMBER_FORMAT)
        if not number_format.strip():
            raise invalid("number_format is empty")
    return Formatting(font, align, fill, border, number_format)
