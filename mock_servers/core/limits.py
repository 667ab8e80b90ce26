"""What every tool argument must be before any tool sees it: storable text (the characters of
XML 1.0, valid UTF-8), integers SQLite can hold, finite numbers, bounded size and nesting. One
walk over the raw arguments, for every server; a refusal names the offending field."""

from __future__ import annotations

import math
import re
from typing import Any

from mock_servers.core.errors import invalid

MIN_INT, MAX_INT = -(2**63), 2**63 - 1  # SQLite's integer range
MAX_DEPTH = 32  # nesting of lists and objects, counting the parameter itself
MAX_VALUES = 100_000  # values (strings, numbers, list items, object members) in one call
MAX_TOTAL_CHARS = 2_000_000  # characters of every string of one call together
MAX_NAME_CHARS = 256  # a parameter's name

# Characters no document format we write can hold: C0 controls but tab, newline and carriage
# return; unpaired surrogates (not UTF-8 encodable); the non-characters U+FFFE and U+FFFF.
UNSTORABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# What even a parameter declared to take raw control characters cannot carry.
UNENCODABLE = re.compile("[\ud800-\udfff]")
_NAMES = {"\x00": "a NUL character", "\ufffe": "the non-character U+FFFE",
          "\uffff": "the non-character U+FFFF"}


def _describe_char(char: str) -> str:
    code = ord(char)
    if char in _NAMES:
        return _NAMES[char]
    if 0xD800 <= code <= 0xDFFF:
        return f"an unpaired surrogate U+{code:04X}"
    return f"the control character U+{code:04X}"


class _Refused(Exception):
    """A refusal on its way out of the walk; each level puts its part of the field's name in
    front, so a valid call builds no names at all."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def under(self, part: str) -> _Refused:
        self.path = part + ("" if not self.path or self.path.startswith("[") else ".") + self.path
        return self


class _Walk:
    __slots__ = ("chars", "values")

    def __init__(self) -> None:
        self.values = 0
        self.chars = 0

    def text(self, value: str, limit: int, pattern: re.Pattern[str]) -> None:
        if len(value) > limit:
            raise _Refused(f"{len(value)} characters; at most {limit}")
        self.chars += len(value)
        if self.chars > MAX_TOTAL_CHARS:
            raise _Refused(f"the arguments hold more than {MAX_TOTAL_CHARS} characters in all")
        found = pattern.search(value)
        if found:
            raise _Refused(f"contains {_describe_char(found.group())} at position {found.start()}, "
                           "which cannot be stored")

    def value(self, value: Any, depth: int, limit: int, pattern: re.Pattern[str]) -> None:
        self.values += 1
        if self.values > MAX_VALUES:
            raise _Refused(f"the arguments hold more than {MAX_VALUES} values in all")
        if isinstance(value, str):
            self.text(value, limit, pattern)
        elif isinstance(value, bool) or value is None:
            return
        elif isinstance(value, int):
            if not MIN_INT <= value <= MAX_INT:
                raise _Refused(f"integer out of range (allowed {MIN_INT}..{MAX_INT})")
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise _Refused("not a finite number")
        elif isinstance(value, (list, tuple, dict)):
            if depth >= MAX_DEPTH:
                raise _Refused(f"nested more than {MAX_DEPTH} levels deep")
            self.container(value, depth + 1, limit, pattern)

    def container(self, value: list[Any] | tuple[Any, ...] | dict[Any, Any], depth: int,
                  limit: int, pattern: re.Pattern[str]) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise _Refused("object keys must be strings")
                try:
                    self.text(key, limit, pattern)
                except _Refused as exc:
                    raise _Refused(f"a key: {exc.message}") from None
                try:
                    self.value(item, depth, limit, pattern)
                except _Refused as exc:
                    raise exc.under(_name(key)) from None
        else:
            for index, item in enumerate(value):
                try:
                    self.value(item, depth, limit, pattern)
                except _Refused as exc:
                    raise exc.under(f"[{index}]") from None


def _name(key: str) -> str:
    return key if len(key) <= 40 and key.isidentifier() else f"[{key[:40]!r}]"


def check_arguments(arguments: dict[str, Any], limits: dict[str, int], default_limit: int,
                    raw: frozenset[str] = frozenset()) -> None:
    """Refuse (INVALID_ARGUMENT, naming the field, e.g. `cells[3].value`) arguments that cannot
    be stored or are out of bounds. `limits`: the longest string each parameter may be (its
    declared maximum), `default_limit` for the others and everything nested; `raw`: parameters
    that may carry control characters (still valid UTF-8)."""
    walk = _Walk()
    for name, value in arguments.items():
        if not isinstance(name, str):
            raise invalid("parameter names must be strings")
        try:
            walk.text(name, MAX_NAME_CHARS, UNSTORABLE)
        except _Refused as exc:
            raise invalid(f"a parameter name: {exc.message}") from None
        pattern = UNENCODABLE if name in raw else UNSTORABLE
        try:
            walk.value(value, 1, limits.get(name, default_limit), pattern)
        except _Refused as exc:
            exc.under(_name(name))
            raise invalid(f"parameter '{exc.path}': {exc.message}") from None
