"""A command line split with POSIX shell word rules into words and the operators we execute
ourselves (`| && || ; > >> < 2> 2>> 2>&1`). Everything else a shell would expand or run
(`$VAR`, `$(...)`, backticks, `&`, subshells, here-documents, process substitution) is rejected."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mock_servers.core.errors import invalid

REDIRECTS = (">", ">>", "<", "2>", "2>>", "2>&1")
_GLOB = "*?["
_NAME_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_{(0123456789@*#?$!-"
_NO_SHELL = "there is no shell: write values literally"
_VARIABLE = re.compile(r"\$(\{[^}]{0,40}\}?|[A-Za-z_][A-Za-z0-9_]{0,40})")


@dataclass(frozen=True)
class Word:
    """A word after quote removal; `pattern` is its glob (quoted parts escaped) when an
    unquoted `*`, `?` or `[` occurs in it."""

    text: str
    pattern: str | None = None


@dataclass(frozen=True)
class Op:
    op: str


@dataclass
class Command:
    words: list[Word] = field(default_factory=list)
    redirects: list[tuple[str, Word | None]] = field(default_factory=list)  # in order of appearance


@dataclass
class Pipeline:
    connector: str  # how it follows the previous pipeline: ";", "&&" or "||"
    commands: list[Command]


class _Lexer:
    """One pass over the line; each word keeps its literal text and, when it globs, a pattern."""

    def __init__(self, line: str) -> None:
        self.s = line
        self.i = 0
        self.tokens: list[Word | Op] = []
        self._reset()

    def _reset(self) -> None:
        self.text: list[str] = []
        self.pattern: list[str] = []
        self.globbed = False
        self.quoted = False
        self.open = False

    def literal(self, chars: str) -> None:
        self.open = True
        self.text.append(chars)
        self.pattern.append("".join(f"[{c}]" if c in _GLOB else c for c in chars))

    def end_word(self) -> None:
        if self.open:
            text = "".join(self.text)
            self.tokens.append(Word(text, "".join(self.pattern) if self.globbed else None))
        self._reset()

    def peek(self) -> str:
        return self.s[self.i + 1] if self.i + 1 < len(self.s) else ""

    def run(self) -> list[Word | Op]:
        while self.i < len(self.s):
            self.step(self.s[self.i])
        self.end_word()
        return self.tokens

    def step(self, c: str) -> None:
        if c in " \t":
            self.end_word()
            self.i += 1
        elif c == "\n":
            self.end_word()
            self.tokens.append(Op(";"))
            self.i += 1
        elif c == "#" and not self.open:
            end = self.s.find("\n", self.i)
            self.i = len(self.s) if end < 0 else end
        elif c == "'":
            end = self.s.find("'", self.i + 1)
            if end < 0:
                raise invalid("unterminated single quote")
            self.quoted = True
            self.literal(self.s[self.i + 1:end])
            self.i = end + 1
        elif c == '"':
            self.double_quoted()
        elif c == "\\":
            nxt = self.peek()
            if nxt != "\n":
                self.literal(nxt or "\\")
            self.quoted = True
            self.i += 2
        elif c in "$`":
            self.dollar_or_backtick(c)
        elif c in "|&;<>()":
            self.operator(c)
        else:
            self.open = True
            self.text.append(c)
            self.pattern.append(c)
            self.globbed = self.globbed or c in _GLOB
            self.i += 1

    def double_quoted(self) -> None:
        self.quoted = True
        self.open = True
        self.i += 1
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == '"':
                self.i += 1
                return
            if c == "\\" and self.peek() in '$`"\\\n':
                if self.peek() != "\n":
                    self.literal(self.peek())
                self.i += 2
            elif c in "$`":
                self.dollar_or_backtick(c)
            else:
                self.literal(c)
                self.i += 1
        raise invalid("unterminated double quote")

    def dollar_or_backtick(self, c: str) -> None:
        nxt = self.peek()
        if c == "`":
            raise invalid("command substitution with backticks is not supported", hint=_NO_SHELL)
        if nxt == "(":
            raise invalid("command substitution $(...) is not supported", hint=_NO_SHELL)
        if nxt == "'":
            raise invalid("$'...' quoting is not supported; use '...' or \"...\"")
        if nxt and nxt in _NAME_START:
            name = _VARIABLE.match(self.s, self.i)
            shown = name.group(0) if name else f"${nxt}"
            raise invalid(f"variable expansion ({shown}) is not supported", hint=_NO_SHELL)
        self.literal("$")
        self.i += 1

    def operator(self, c: str) -> None:
        stderr = c == ">" and self.open and not self.quoted and "".join(self.text) == "2"
        if stderr:
            self._reset()
        else:
            self.end_word()
        two, three = self.s[self.i:self.i + 2], self.s[self.i:self.i + 3]
        if c in "()":
            raise invalid("subshells and grouping with ( ) are not supported")
        if two in ("<(", ">("):
            raise invalid("process substitution is not supported")
        if two == "<<":
            raise invalid("here-documents are not supported; write the text to a file first")
        if stderr and three == ">&1":
            op = ">&1"
        elif two in ("&&", "||", ">>"):
            op = two
        elif two in (">&", "<&", "&>", "|&", ">|", "<>"):
            raise invalid(f"redirection '{two}' is not supported; use {' '.join(REDIRECTS)}")
        elif c == "&":
            raise invalid("background jobs (&) are not supported; commands run one after another")
        else:
            op = c
        self.i += len(op)
        self.tokens.append(Op(f"2{op}" if stderr else op))


def tokenize(line: str) -> list[Word | Op]:
    return _Lexer(line).run()


def parse(line: str) -> list[Pipeline]:
    """The pipelines of a command line with the connectors between them."""
    pipelines: list[Pipeline] = []
    connector = ";"
    commands: list[Command] = []
    current = Command()
    tokens = tokenize(line)
    k = 0
    while k < len(tokens):
        token = tokens[k]
        if isinstance(token, Word):
            current.words.append(token)
        elif token.op in REDIRECTS:
            target = None
            if token.op != "2>&1":
                nxt = tokens[k + 1] if k + 1 < len(tokens) else None
                if not isinstance(nxt, Word):
                    raise invalid(f"redirection '{token.op}' needs a file name after it")
                target, k = nxt, k + 1
            current.redirects.append((token.op, target))
        else:
            commands.append(_finished(current, token.op))
            current = Command()
            if token.op != "|":
                pipelines.append(Pipeline(connector, commands))
                connector, commands = token.op, []
        k += 1
    if current.words or current.redirects:
        commands.append(_finished(current, "the end"))
        pipelines.append(Pipeline(connector, commands))
    elif commands or connector in ("&&", "||"):
        raise invalid(f"a command is missing after '{'|' if commands else connector}'")
    if not pipelines:
        raise invalid("the command is empty")
    return pipelines


def _finished(command: Command, before: str) -> Command:
    if not command.words:
        where = before if before == "the end" else f"'{before}'"
        raise invalid(f"a redirection needs a command before {where}" if command.redirects
                      else f"a command is missing before {where}")
    return command
