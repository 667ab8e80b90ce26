"""Formula text to a tree. Tokens keep their place in the text, so references can be
rewritten in place (`rewrite`). Precedence, loosest first: comparison, `&`, `+ -`, `* /`, `^`,
unary minus, postfix `%`."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from mock_servers.core.formulas.a1 import REF, Ref, ref_from
from mock_servers.core.formulas.values import ERROR_CODES, FormulaError

T = TypeVar("T")
MAX_FORMULA_CHARS = 8192
MAX_DEPTH = 100  # nesting of parentheses, function calls and signs
MAX_TREE_DEPTH = 200  # operations inside operations (`1+1+...` nests to the left)


class FormulaSyntaxError(ValueError):
    """The text is not a formula (Sheets shows #ERROR!)."""


@dataclass(frozen=True)
class Token:
    kind: str  # num str bool err ref func name op ( ) ,
    text: str
    start: int
    ref: Ref | None = None


@dataclass(frozen=True)
class Func:
    name: str
    args: tuple[Node, ...]


@dataclass(frozen=True)
class Op:
    op: str  # a binary operator, or "neg" / "pct" with one operand
    args: tuple[Node, ...]


@dataclass(frozen=True)
class Name:
    text: str  # an unknown identifier (#NAME?)


Node = float | str | bool | FormulaError | Ref | Func | Op | Name | None

_ERRORS = "|".join(re.escape(code) for code in ERROR_CODES)
_LEX = re.compile(rf"""
    (?P<ws>\s+)
  | (?P<str>"(?:[^"]|"")*")
  | (?P<err>{_ERRORS})
  | (?P<ref>{REF.pattern})
  | (?P<func>[A-Za-z_][A-Za-z0-9_.]*(?=\s*\())
  | (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<op><=|>=|<>|[-+*/^&=<>%(),])
""", re.X)


def tokens(text: str) -> list[Token]:
    """The tokens of a formula's text after its `=`."""
    found: list[Token] = []
    pos = 0
    while pos < len(text):
        match = _LEX.match(text, pos)
        if match is None:
            raise FormulaSyntaxError(f"unexpected {text[pos]!r} at position {pos + 1}")
        kind = match.lastgroup or ""
        value = match.group()
        if kind == "ref":
            try:
                ref = ref_from(match.group("prefix"), match.group("body"))
            except ValueError as exc:
                raise FormulaSyntaxError(str(exc)) from None
            found.append(Token("ref", value, pos, ref))
        elif kind == "name" and value.upper() in ("TRUE", "FALSE"):
            found.append(Token("bool", value.upper(), pos))
        elif kind in ("op",) and value in "(),":
            found.append(Token(value, value, pos))
        elif kind != "ws":
            found.append(Token(kind, value, pos))
        pos = match.end()
    return found


_BINARY = {"=": 1, "<>": 1, "<": 1, ">": 1, "<=": 1, ">=": 1, "&": 2, "+": 3, "-": 3,
           "*": 4, "/": 4, "^": 5}


class _Parser:
    def __init__(self, items: list[Token]) -> None:
        self.items = items
        self.pos = 0
        self.depth = 0

    def peek(self) -> Token | None:
        return self.items[self.pos] if self.pos < len(self.items) else None

    def take(self) -> Token:
        token = self.peek()
        if token is None:
            raise FormulaSyntaxError("the formula ends too early")
        self.pos += 1
        return token

    def expression(self, floor: int = 0) -> Node:
        left = self.unary()
        while (token := self.peek()) is not None and token.kind == "op":
            power = _BINARY.get(token.text)
            if power is None or power <= floor:
                break
            self.pos += 1
            left = Op(token.text, (left, self.expression(power)))
        return left

    def unary(self) -> Node:
        token = self.peek()
        if token is not None and token.kind == "op" and token.text in "+-":
            self.pos += 1
            operand = self.nested(self.unary)
            return Op("neg", (operand,)) if token.text == "-" else operand
        node = self.primary()
        while (token := self.peek()) is not None and token.kind == "op" and token.text == "%":
            self.pos += 1
            node = Op("pct", (node,))
        return node

    def primary(self) -> Node:
        token = self.take()
        if token.kind == "num":
            return float(token.text)
        if token.kind == "str":
            return token.text[1:-1].replace('""', '"')
        if token.kind == "bool":
            return token.text == "TRUE"
        if token.kind == "err":
            return ERROR_CODES[token.text.upper()]
        if token.kind == "ref":
            assert token.ref is not None
            return token.ref
        if token.kind == "name":
            return Name(token.text)
        if token.kind == "(":
            node = self.nested(lambda: self.expression())
            self.expect(")")
            return node
        if token.kind == "func":
            self.expect("(")
            return Func(token.text.upper(), self.nested(self.arguments))
        raise FormulaSyntaxError(f"unexpected {token.text!r} at position {token.start + 1}")

    def nested(self, inner: Callable[[], T]) -> T:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise FormulaSyntaxError(f"nested more than {MAX_DEPTH} levels deep")
        try:
            return inner()
        finally:
            self.depth -= 1

    def arguments(self) -> tuple[Node, ...]:
        args: list[Node] = []
        if (token := self.peek()) is not None and token.kind == ")":
            self.pos += 1
            return ()
        while True:
            token = self.peek()
            args.append(None if token is not None and token.kind in (",", ")") else self.expression())
            closing = self.take()
            if closing.kind == ")":
                return tuple(args)
            if closing.kind != ",":
                raise FormulaSyntaxError(f"expected ',' or ')' at position {closing.start + 1}")

    def expect(self, kind: str) -> None:
        token = self.take()
        if token.kind != kind:
            raise FormulaSyntaxError(f"expected {kind!r} at position {token.start + 1}")


@lru_cache(maxsize=4096)
def parse(formula: str) -> Node:
    """The tree of `formula` (with or without its leading `=`); FormulaSyntaxError if invalid."""
    body = formula[1:] if formula.startswith("=") else formula
    if len(body) > MAX_FORMULA_CHARS:
        raise FormulaSyntaxError(f"longer than {MAX_FORMULA_CHARS} characters")
    parser = _Parser(tokens(body))
    if not parser.items:
        raise FormulaSyntaxError("the formula is empty")
    node = parser.expression()
    if parser.peek() is not None:
        extra = parser.take()
        raise FormulaSyntaxError(f"unexpected {extra.text!r} at position {extra.start + 1}")
    if _depth(node) > MAX_TREE_DEPTH:
        raise FormulaSyntaxError(f"more than {MAX_TREE_DEPTH} operations nested in one another")
    return node


def _depth(node: Node) -> int:
    deepest, stack = 0, [(node, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(item, (Func, Op)):
            stack.extend((arg, level + 1) for arg in item.args)
    return deepest


def references(node: Node) -> list[Ref]:
    """Every reference in the tree."""
    found: list[Ref] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Ref):
            found.append(item)
        elif isinstance(item, (Func, Op)):
            stack.extend(item.args)
    return found
