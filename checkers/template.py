"""Whether a message body is a workspace template filled in as the instruction asks: the
template's text, word for word and in order, with each placeholder's value exactly where the
template puts it, and nothing else. What a rendering may change is left free: the case of the
template's own words (and of e-mail addresses), whitespace, punctuation and markup between words
(Markdown, HTML)."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

_WORD = re.compile(r"\w+")
_HIDDEN = re.compile(r"<(head|style|script)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")


def html_text(markup: str) -> str:
    """The text an HTML body shows: head, style and script left out, tags as spaces, entities
    decoded."""
    return html.unescape(_TAG.sub(" ", _HIDDEN.sub(" ", markup)))


@dataclass(frozen=True)
class _Token:
    pattern: str
    shown: str
    slot: bool


_ADDRESS = re.compile(r"[^\s@]+@[^\s@]+\.[^\s@]+")


def _value(value: str) -> str:
    """A filled value, exactly (its inner whitespace free; an e-mail address in any case), not
    part of a longer word."""
    body = r"\s+".join(re.escape(part) for part in value.split())
    if _ADDRESS.fullmatch(value):
        body = f"(?i:{body})"
    return (r"(?<!\w)" if re.match(r"\w", value) else "") + body + (r"(?!\w)" if re.search(r"\w$", value) else "")


@dataclass(frozen=True)
class Filled:
    """A template's body with its placeholders (matched by `placeholder`) given `values`."""

    template: str
    placeholder: str
    values: Mapping[str, str]

    @cached_property
    def tokens(self) -> list[_Token]:
        tokens: list[_Token] = []
        at = 0
        for found in re.finditer(self.placeholder, self.template):
            tokens += self._words(self.template[at:found.start()])
            if found.group(0) not in self.values:
                raise KeyError(f"the answer fills no value for the placeholder {found.group(0)}")
            value = str(self.values[found.group(0)])
            tokens.append(_Token(_value(value), value, True))
            at = found.end()
        return tokens + self._words(self.template[at:])

    @staticmethod
    def _words(text: str) -> list[_Token]:
        return [_Token(f"(?i:{re.escape(w)})", w, False) for w in _WORD.findall(text)]

    def _pattern(self, tokens: list[_Token], whole: bool) -> re.Pattern[str]:
        parts = [r"\A\W*"]
        for i, token in enumerate(tokens):
            if i:
                parts.append(r"\W*" if token.slot or tokens[i - 1].slot else r"\W+")
            parts.append(token.pattern)
        parts.append(r"\W*\Z" if whole else "")
        return re.compile("".join(parts))

    def matches(self, text: str) -> bool:
        return self._pattern(self.tokens, True).match(text) is not None

    def mismatch(self, text: str) -> str:
        """Where `text` first departs from the filled template (for a failure's detail)."""
        good = 0
        for k in range(1, len(self.tokens) + 1):
            if self._pattern(self.tokens[:k], False).match(text) is None:
                break
            good = k
        if good == len(self.tokens):
            return "text after the template's end"
        token = self.tokens[good]
        after = " ".join(t.shown for t in self.tokens[max(0, good - 3):good])
        what = f"the value {token.shown!r}" if token.slot else f"the template's word {token.shown!r}"
        return f"expected {what}" + (f" after {after!r}" if after else " first")
