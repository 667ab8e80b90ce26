"""A1 references: `B2`, `$B$2`, `B2:C9`, `A2:C` (open below), `B:B`, `2:5`, each with an
optional sheet prefix (`Sheet1!`, `'Q1 Data'!`). Rows and columns are 0-based inside; an open
side is None."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

MAX_COLUMNS = 18278  # ZZZ
MAX_ROWS = 10_000_000

_PREFIX = r"(?:'(?:[^']|'')+'|[A-Za-z_][A-Za-z0-9_.]*)!"
_CELL = r"\$?[A-Za-z]{1,3}\$?[0-9]+"
_COL = r"\$?[A-Za-z]{1,3}"
_ROW = r"\$?[0-9]+"
BODY = rf"(?:{_CELL}:{_CELL}|{_CELL}:{_COL}|{_COL}:{_COL}|{_ROW}:{_ROW}|{_CELL})"
REF = re.compile(rf"(?<![A-Za-z0-9_.])(?P<prefix>{_PREFIX})?(?P<body>{BODY})(?![A-Za-z0-9_(!.$:])")
_WHOLE = re.compile(rf"\s*(?P<prefix>{_PREFIX})?(?P<body>{BODY})\s*")
_SHEET_ONLY = re.compile(r"\s*(?P<name>'(?:[^']|'')+'|[A-Za-z_][A-Za-z0-9_. ]*)\s*")
_END = re.compile(r"(\$?)([A-Za-z]{1,3})?(\$?)([0-9]+)?")


@dataclass(frozen=True)
class End:
    """One corner of a reference: column and row (None: open), each maybe absolute ($)."""

    col: int | None
    row: int | None
    col_abs: bool = False
    row_abs: bool = False


@dataclass(frozen=True)
class Ref:
    sheet: str | None
    start: End
    end: End

    @property
    def bounds(self) -> tuple[int, int, int | None, int | None]:
        """(first row, first col, last row or None, last col or None), inclusive, 0-based."""
        r1 = self.start.row if self.start.row is not None else 0
        c1 = self.start.col if self.start.col is not None else 0
        return r1, c1, self.end.row, self.end.col

    def with_sheet(self, sheet: str | None) -> Ref:
        return replace(self, sheet=sheet)


@lru_cache(maxsize=4096)
def column_index(letters: str) -> int:
    index = 0
    for char in letters.upper():
        index = index * 26 + ord(char) - 64
    return index - 1


def column_letters(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def quote_sheet(title: str) -> str:
    """The title as a reference prefix needs it (quoted unless a plain name)."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", title) and not REF.fullmatch(title):
        return title
    return "'" + title.replace("'", "''") + "'"


def unquote_sheet(prefix: str) -> str:
    name = prefix[:-1] if prefix.endswith("!") else prefix
    name = name.strip()
    if name.startswith("'") and name.endswith("'") and len(name) >= 2:
        return name[1:-1].replace("''", "'")
    return name


def _end(text: str) -> End:
    found = _END.fullmatch(text)
    assert found is not None
    col_abs, letters, row_abs, digits = found.groups()
    col = column_index(letters) if letters else None
    row = int(digits) - 1 if digits else None
    if (col is not None and col >= MAX_COLUMNS) or (row is not None and not 0 <= row < MAX_ROWS):
        raise ValueError(f"'{text}' is outside the largest grid ({MAX_ROWS} rows, column ZZZ)")
    return End(col, row, bool(col_abs), bool(row_abs))


def ref_from(prefix: str | None, body: str) -> Ref:
    """The reference of a matched prefix and body; corners put in order."""
    first, _, second = body.partition(":")
    start = _end(first)
    end = _end(second) if second else start
    if start.col is not None and end.col is not None and end.col < start.col:
        start, end = (replace(start, col=end.col, col_abs=end.col_abs),
                      replace(end, col=start.col, col_abs=start.col_abs))
    if start.row is not None and end.row is not None and end.row < start.row:
        start, end = (replace(start, row=end.row, row_abs=end.row_abs),
                      replace(end, row=start.row, row_abs=start.row_abs))
    return Ref(unquote_sheet(prefix) if prefix else None, start, end)


def parse_ref(text: str, sheet_only: bool = True) -> Ref:
    """A range as a tool argument gives it; ValueError when it is not A1 notation. With
    `sheet_only`, a bare sheet name (`Sheet1`, `'Q1 Data'`) means the whole sheet."""
    found = _WHOLE.fullmatch(text)
    if found:
        return ref_from(found.group("prefix"), found.group("body"))
    prefix, bang, body = text.rpartition("!")
    if bang and prefix.strip() and _WHOLE.fullmatch(body):
        return ref_from(None, body.strip()).with_sheet(unquote_sheet(prefix))
    whole = _SHEET_ONLY.fullmatch(text) if sheet_only else None
    if whole and not re.fullmatch(r"\s*[A-Za-z]{1,3}[0-9]*\s*", text):
        return Ref(unquote_sheet(whole.group("name")), End(None, None), End(None, None))
    raise ValueError(f"'{text}' is not an A1 range (examples: B2:C9, Sheet1!A1:D, 'Q1 Data'!A:A, 2:5)")


def render_end(end: End) -> str:
    col = "" if end.col is None else ("$" if end.col_abs else "") + column_letters(end.col)
    row = "" if end.row is None else ("$" if end.row_abs else "") + str(end.row + 1)
    return col + row


def render_ref(ref: Ref) -> str:
    """The reference in A1 notation (a whole sheet as its quoted title)."""
    single = ref.end == ref.start and None not in (ref.start.row, ref.start.col)
    body = render_end(ref.start) + ("" if single else ":" + render_end(ref.end))
    if ref.sheet is None:
        return body
    return quote_sheet(ref.sheet) + ("" if body == ":" else "!" + body)


def render_box(sheet: str, r1: int, c1: int, r2: int, c2: int) -> str:
    """`'Title'!B2:C9` of a closed rectangle (0-based, inclusive)."""
    start, end = f"{column_letters(c1)}{r1 + 1}", f"{column_letters(c2)}{r2 + 1}"
    return f"{quote_sheet(sheet)}!{start}" + ("" if (r1, c1) == (r2, c2) else f":{end}")
