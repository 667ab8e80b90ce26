"""The text pypdf's plain `extract_text` gives for a page, computed without pypdf's content
parser when the page's content stream holds only simple text runs as reportlab writes them:
`BT`, `Tf`, `TL`, `Td`, `Tj` (a literal string of printable ASCII), `T*`, `ET`, an identity
`cm`, and path, colour and line operators (which text extraction ignores). Those runs follow
pypdf 7's plain extraction (`pypdf._text_extraction`) step by step; with them the text matrix
only ever translates, so the matrices reduce to the current point. Any other content gives
None, and the caller asks pypdf. The tests compare both on every PDF of generated worlds."""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from functools import reduce
from operator import add
from typing import Any

from pypdf import PageObject
from pypdf import _text_extraction as pypdf_text
from pypdf._page import _get_font_resources, _get_page_resources
from pypdf.generic import DictionaryObject, IndirectObject, NameObject, StreamObject
from pypdf.generic._font import Font

from mock_servers.pdf_tools.one_page import OnePage

MAX_STREAM_BYTES = 1 << 20  # well inside pypdf's parsing budget (2,000,000 tokens)
MAX_KEPT_FONTS = 256  # fonts kept across pages, by their dictionary
SPACE_WIDTH = 200.0  # pypdf's default `space_width`, for a font whose space has no width
_END = rb"(?=[ \t\r\n\f]|\Z)"
_STRING = rb"\(((?:[\x20-\x27\x2a-\x5b\x5d-\x7e]|\\[()\\])*)\)"
_NUMBER = rb"([-+.0-9]+)"
_SPACE = rb"[ \t\r\n\f]+"
_RUN = _SPACE.join([rb"BT", _NUMBER, _NUMBER, rb"Td", _STRING, rb"Tj", rb"T\*", rb"ET"])  # one text run
_TOKEN = re.compile(
    rb"[ \t\r\n\f]*(?:"
    + _RUN + _END
    + rb"|" + _STRING + _END  # a literal string
    + rb"|/([A-Za-z0-9]+)" + _END  # a name
    + rb"|" + _NUMBER + _END
    + rb"|([A-Za-z]+\*?)" + _END  # an operator
    + rb"|([^ \t\r\n\f]))")  # anything else
"""A content stream's tokens, and (first) a whole text run `BT x y Td (...) Tj T* ET`."""
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
        contents = page.get("/Contents")
        stream = None if contents is None else contents.get_object()
        resources = _get_page_resources(page)
        if not isinstance(stream, StreamObject) or not resources:
            return None
        fonts = {name: font.get_object() for name, font in _get_font_resources(resources).items()}
        return stream_text(stream.get_data(), fonts)
    except Exception:  # a malformed page: pypdf decides what it gives
        return None


def one_page_text(page: OnePage) -> str | None:
    """`stream_text` of the page of a one-page PDF, with its font dictionaries as pypdf reads
    them from the file."""
    fonts = {f"/F{n}": DictionaryObject({NameObject("/BaseFont"): NameObject(f"/{font}"),
                                         NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
                                         NameObject("/Name"): NameObject(f"/F{n}"),
                                         NameObject("/Subtype"): NameObject("/Type1"),
                                         NameObject("/Type"): NameObject("/Font")})
             for n, font in enumerate(page.fonts, start=1)}
    return stream_text(page.stream, fonts)


def stream_text(data: bytes, fonts: Mapping[str, Any]) -> str | None:
    """The text pypdf extracts from the content stream `data` of a page with these fonts (the
    page's /Font resources: dictionaries by name), or None where this path does not apply."""
    try:
        return _Extraction(_glyphs(fonts)).run(_operations(data))
    except Exception:  # _Unsupported, or something malformed: pypdf decides what it gives
        return None


def _operations(data: bytes) -> list[tuple[bytes, list[Any]]]:
    if len(data) > MAX_STREAM_BYTES:
        raise _Unsupported
    operations: list[tuple[bytes, list[Any]]] = []
    operands: list[Any] = []
    for run_x, run_y, run_string, string, name, number, operator, other in _TOKEN.findall(data):
        if other or (run_x and operands):
            raise _Unsupported
        if run_x:
            operations.append((b"run", [float(run_x), float(run_y), _ESCAPE.sub(rb"\1", run_string)]))
        elif operator:
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


def _glyphs(definitions: Mapping[str, Any]) -> dict[str, _Glyphs]:
    """The fonts as pypdf's extraction builds them (kept across pages when a font's
    dictionary holds no reference)."""
    fonts = {}
    for name, definition in definitions.items():
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
        self.shows = tuple("".join(font.character_map.get(char, char) for char in font.encoding.get(byte, chr(byte)))
                           for byte in range(256))
        self.widths = tuple(font.space_width if chr(byte) == font.space_char else font.get_text_width(chr(byte))
                            for byte in range(256))


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
            if operator == b"run":  # BT x y Td (...) Tj T* ET
                self.begin()
                self.move(operands[0], operands[1])
                self.show(operands[2])
                self.next_line()
                self.flush()
            elif operator == b"Tj":
                self.show(operands[0])
            elif operator == b"Td":
                self.move(operands[0], operands[1])
            elif operator == b"T*":
                self.next_line()
            elif operator == b"BT":
                self.begin()
            elif operator == b"ET":
                self.flush()
            elif operator == b"Tf":
                self.set_font(*operands)
            elif operator == b"TL":
                self.leading = operands[0]
            elif operands != _IDENTITY:  # cm
                raise _Unsupported
            else:
                self.flush()
        return self.output + self.text

    def begin(self) -> None:
        self.x = self.y = 0.0
        self.flush()

    def flush(self) -> None:
        self.output += self.text
        self.text = ""

    def move(self, tx: float, ty: float) -> None:
        self.x += tx
        self.y += ty
        self.moved()

    def next_line(self) -> None:
        self.y -= self.leading
        self.moved()

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
        shown = "".join(map(self.font.shows.__getitem__, raw))
        if not shown.isascii():  # right-to-left text is reordered
            raise _Unsupported
        self.text += shown
        widths = reduce(add, map(self.font.widths.__getitem__, raw), 0.0)  # added in order, as pypdf does
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
        y, span = self.y, self.span
        dy = y - self.prev_y
        if span is None:
            distance = abs(dy)
        else:
            distance = 0.0 if span[0] <= y <= span[1] else min(abs(y - span[0]), abs(y - span[1]))
        last = (self.text or self.output)[-1:]
        threshold = 0.8 * min(self.height, self.font_size)
        if distance > threshold:
            if last not in ("", "\n"):
                self.output += self.text + "\n"
                self.text = ""
            self.span = (y, y)
        else:
            if last not in ("", " ") and (abs(dy) > threshold or self.x - self.prev_x >= self.space() + str_widths):
                self.text += " "
            self.span = (y, y) if last in ("", "\n") or span is None else (min(span[0], y), max(span[1], y))
        self.prev_x, self.prev_y = self.x, y

    def space(self) -> float:
        """The width of a word gap, in text space units."""
        space = self.font_size * self.half_space
        if self.previous_font_space is not None:
            space = min(space, self.previous_font_space)
        return space / 1000
