"""The text pypdf's plain `extract_text` gives for a page, computed without pypdf's content
parser when the page's content stream holds only simple text runs as reportlab writes them:
`BT`, `Tf`, `TL`, `Td`, `Tj` (a literal string of printable ASCII), `T*`, `ET`, an identity
`cm`, and path, colour and line operators (which text extraction ignores). Those runs follow
pypdf 7's plain extraction (`pypdf._text_extraction`) step by step; with them the text matrix
only ever translates, so the matrices reduce to the current point. Any other content gives
None, and the caller asks pypdf. The tests compare both on every PDF of generated worlds."""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import Any

from pypdf import PageObject
from pypdf import _text_extraction as pypdf_text
from pypdf._page import _get_font_resources, _get_page_resources
from pypdf.generic import IndirectObject, StreamObject
from pypdf.generic._font import Font

MAX_STREAM_BYTES = 1 << 20  # well inside pypdf's parsing budget (2,000,000 tokens)
MAX_KEPT_FONTS = 256  # fonts kept across pages, by their dictionary
SPACE_WIDTH = 200.0  # pypdf's default `space_width`, for a font whose space has no width
_END = rb"(?=[ \t\r\n\f]|\Z)"
_TOKEN = re.compile(
    rb"[ \t\r\n\f]*(?:"
    rb"\(((?:[\x20-\x27\x2a-\x5b\x5d-\x7e]|\\[()\\])*)\)" + _END +  # 1: a literal string
    rb"|/([A-Za-z0-9]+)" + _END +  # 2: a name
    rb"|([-+.0-9]+)" + _END +  # 3: a number
    rb"|([A-Za-z]+\*?)" + _END +  # 4: an operator
    rb"|([^ \t\r\n\f]))")  # 5: anything else
_ESCAPE = re.compile(rb"\\(.)")
_IGNORED = frozenset(b"w J j M d i ri gs m l c v y h re S s f F f* B B* b b* n W W* "
                     b"g G rg RG k K cs CS sc SC scn SCN sh".split())
"""Operators pypdf's plain extraction does not handle (they draw, clip or colour)."""
_IDENTITY = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
_SIGNATURES: dict[bytes, tuple[type, ...]] = {
    b"BT": (), b"ET": (), b"T*": (), b"Tf": (str, float), b"TL": (float,), b"Td": (float, float),
    b"Tj": (bytes,), b"cm": (float,) * 6}
"""The operand types of the operators followed (numbers are read as pypdf's handlers use
them, through float())."""


class _Unsupported(Exception):
    """The page holds something this path does not follow."""


def page_text(page: PageObject) -> str | None:
    """The text `page.extract_text()` gives, or None where this path does not apply."""
    try:
        operations = _operations(page)
        return _Extraction(_fonts(page)).run(operations)
    except Exception:  # _Unsupported, or a malformed page: pypdf decides what it gives
        return None


def _operations(page: PageObject) -> list[tuple[bytes, list[Any]]]:
    contents = page.get("/Contents")
    stream = None if contents is None else contents.get_object()
    if not isinstance(stream, StreamObject):
        raise _Unsupported
    data = stream.get_data()
    if len(data) > MAX_STREAM_BYTES:
        raise _Unsupported
    operations: list[tuple[bytes, list[Any]]] = []
    operands: list[Any] = []
    for string, name, number, operator, other in _TOKEN.findall(data):
        if other:
            raise _Unsupported
        if operator:
            if operator not in _IGNORED:
                if tuple(map(type, operands)) != _SIGNATURES.get(operator):
                    raise _Unsupported
                operations.append((operator, operands))
            operands = []
        elif name:
            operands.append("/" + name.decode())
        elif number:
            operands.append(float(number))  # a ValueError where pypdf reads a malformed number as 0
        else:  # a string; an empty one matches none of the groups
            operands.append(_ESCAPE.sub(rb"\1", string))
    return operations


def _fonts(page: PageObject) -> dict[str, _Glyphs]:
    """The page's fonts as pypdf's extraction builds them (kept across pages when a font's
    dictionary holds no reference)."""
    resources = _get_page_resources(page)
    if not resources:
        raise _Unsupported
    fonts = {}
    for name, resource in _get_font_resources(resources).items():
        definition = resource.get_object()
        key = _key(definition)
        glyphs = _GLYPHS.get(key) if key is not None else None
        if glyphs is None:
            glyphs = _Glyphs(definition)
            if key is not None and len(_GLYPHS) < MAX_KEPT_FONTS:
                _GLYPHS[key] = glyphs
        fonts[name] = glyphs
    return fonts


def _key(value: Any) -> Hashable | None:
    """A font dictionary as a hashable value, or None when it refers to other objects."""
    if isinstance(value, IndirectObject):
        return None
    if isinstance(value, (dict, list)):
        pairs = value.items() if isinstance(value, dict) else enumerate(value)
        items = tuple((name, _key(item)) for name, item in pairs)
        return None if any(item is None for _, item in items) else (type(value).__name__, items)
    return type(value).__name__, value


class _Glyphs:
    """A font as pypdf's extraction uses it: per byte, the text it shows and its width."""

    def __init__(self, definition: Any) -> None:
        font = Font.from_font_resource(definition)
        if font.character_widths.get(font.space_char, 0) == 0:
            font.space_width = SPACE_WIDTH
        if not isinstance(font.encoding, dict):
            raise _Unsupported
        self.half_space = font.space_width / 2
        self.table = [("".join(font.character_map.get(char, char) for char in font.encoding.get(byte, chr(byte))),
                       font.space_width if chr(byte) == font.space_char else font.get_text_width(chr(byte)))
                      for byte in range(256)]


_GLYPHS: dict[Hashable, _Glyphs] = {}


class _Extraction:
    """pypdf's `TextExtraction` state for the supported operators: the text matrix is a
    translation (x, y), the current transformation matrix the identity, so pypdf's matrix
    products and scales reduce to the point itself and factors of 1.0."""

    def __init__(self, fonts: dict[str, _Glyphs]) -> None:
        self.fonts = fonts
        self.font: _Glyphs | None = None
        self.font_size, self.half_space, self.leading = 12.0, 500.0, 0.0
        self.previous_font_space: float | None = None
        self.x = self.y = self.prev_x = self.prev_y = 0.0
        self.widths, self.height = 0.0, 0.0  # of the text shown since the last move
        self.span: tuple[float, float] | None = None  # baselines kept on the current line
        self.text = self.output = ""

    def run(self, operations: list[tuple[bytes, list[Any]]]) -> str:
        for operator, operands in operations:
            if operator == b"Tj":
                self.show(operands[0])
            elif operator == b"Td":
                self.x += operands[0]
                self.y += operands[1]
                self.moved()
            elif operator == b"T*":
                self.y -= self.leading
                self.moved()
            elif operator in (b"BT", b"ET"):
                if operator == b"BT":
                    self.x = self.y = 0.0
                self.output += self.text
                self.text = ""
            elif operator == b"Tf":
                self.set_font(*operands)
            elif operator == b"TL":
                self.leading = operands[0]
            elif operands != _IDENTITY:  # cm
                raise _Unsupported
            else:
                self.output += self.text
                self.text = ""
        return self.output + self.text

    def set_font(self, name: str, size: float) -> None:
        if name not in self.fonts:
            raise _Unsupported
        if self.text != "":
            self.previous_font_space = self.font_size * self.half_space
            self.output += self.text
        self.text = ""
        self.font = self.fonts[name]
        self.half_space = self.font.half_space
        self.font_size = size

    def show(self, raw: bytes) -> None:
        """`Tj`: pypdf's `get_text_operands` and `get_display_str` for a byte string in a
        font with an encoding table."""
        if self.font is None or (pypdf_text.CUSTOM_RTL_MIN and pypdf_text.CUSTOM_RTL_MAX):
            raise _Unsupported
        self.previous_font_space = None
        parts, widths = [], 0.0
        for byte in raw:
            part, width = self.font.table[byte]
            parts.append(part)
            widths += width
        shown = "".join(parts)
        if not shown.isascii():  # right-to-left text is reordered
            raise _Unsupported
        self.text += shown
        self.widths += widths * self.font_size
        self.height = self.font_size
        self.check(0.0)

    def moved(self) -> None:
        """`Td` and `T*`: the text shown since the last move is measured from there."""
        widths, self.widths = self.widths / 1000, 0.0
        self.check(widths)

    def check(self, str_widths: float) -> None:
        """pypdf's `crlf_space_check`: a line break when the baseline moved off the line, a
        space when the point moved right past the text shown, or to another baseline."""
        space = self.font_size * self.half_space
        if self.previous_font_space is not None:
            space = min(space, self.previous_font_space)
        dx, dy = self.x - self.prev_x, self.y - self.prev_y
        y = self.y
        if self.span is None:
            distance = abs(dy)
        else:
            lower, upper = self.span
            distance = 0.0 if lower <= y <= upper else min(abs(y - lower), abs(y - upper))
        last = (self.text or self.output)[-1:]
        threshold = 0.8 * min(self.height, self.font_size)
        if distance > threshold:
            if last not in ("", "\n"):
                self.output += self.text + "\n"
                self.text = ""
            self.span = (y, y)
        else:
            if (abs(dy) > threshold or dx >= space / 1000 + str_widths) and last not in ("", " "):
                self.text += " "
            if last in ("", "\n") or self.span is None:
                self.span = (y, y)
            else:
                self.span = (min(self.span[0], y), max(self.span[1], y))
        self.prev_x, self.prev_y = self.x, self.y
