"""The Cloud Logging filter language, the part this server supports, parsed into SQL over
`log_entry`: `logName="x"` (short or full resource name), `severity` with `= != > >= < <=` by
rank, `timestamp` comparisons with RFC 3339 instants, `textPayload:"sub"` (or `=`),
`jsonPayload.<key>[.<key>...]` with `=`, `!=` or `:`, combined with AND (or juxtaposition), OR,
NOT and parentheses. Anything else is INVALID_ARGUMENT: nothing is silently ignored."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

from mock_servers.core.errors import invalid

SEVERITIES = {"DEFAULT": 0, "DEBUG": 100, "INFO": 200, "NOTICE": 300, "WARNING": 400, "ERROR": 500,
              "CRITICAL": 600, "ALERT": 700, "EMERGENCY": 800}
MAX_FILTER = 20_000
MAX_DEPTH = 50
_TOKEN = re.compile(r'\s+|(?P<op>>=|<=|!=|=|>|<|:)|(?P<paren>[()])|"(?P<str>(?:[^"\\]|\\.)*)"'
                    r"|(?P<word>[A-Za-z0-9_.\-+/@%*]+)")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
_COMPARE = {"=": "=", "!=": "<>", ">": ">", ">=": ">=", "<": "<", "<=": "<="}


def stamp(moment: datetime) -> str:
    """A log timestamp as stored and shown: RFC 3339 UTC with microseconds."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def short_log_name(name: str, project: str) -> str:
    """`projects/<p>/logs/<name>` (URL-encoded or not) or a bare name, as the bare name."""
    text = unquote(name.strip())
    prefix = f"projects/{project}/logs/"
    if text.startswith("projects/"):
        if not text.startswith(prefix) or len(text) == len(prefix):
            raise invalid(f"log name '{name[:200]}' is not in project {project} (projects/{project}/logs/NAME)")
        text = text[len(prefix):]
    if not re.fullmatch(r"[A-Za-z0-9_\-./]{1,512}", text):
        raise invalid(f"log name '{name[:200]}' may use letters, digits, '_', '-', '.' and '/' (1-512)")
    return text


@dataclass
class _Tokens:
    items: list[tuple[str, str]]
    at: int = 0

    def peek(self) -> tuple[str, str] | None:
        return self.items[self.at] if self.at < len(self.items) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise invalid("log filter ends too early")
        self.at += 1
        return token


def _tokens(text: str) -> _Tokens:
    out, at = [], 0
    while at < len(text):
        found = _TOKEN.match(text, at)
        if found is None:
            raise invalid(f"log filter: unexpected character '{text[at]}' at position {at + 1}")
        at = found.end()
        kind = found.lastgroup
        if kind == "str":
            out.append(("value", re.sub(r"\\(.)", r"\1", found.group("str"))))
        elif kind is not None:
            out.append((kind, found.group(kind)))
    return _Tokens(out)


@dataclass
class Compiled:
    where: str
    params: list[Any] = field(default_factory=list)


class _Parser:
    def __init__(self, text: str, project: str) -> None:
        self.tokens = _tokens(text)
        self.project = project
        self.params: list[Any] = []
        self.depth = 0

    def expression(self) -> str:
        parts = [self.conjunction()]
        while self.tokens.peek() == ("word", "OR"):
            self.tokens.take()
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"

    def conjunction(self) -> str:
        parts = [self.unary()]
        while (token := self.tokens.peek()) is not None and token not in (("word", "OR"), ("paren", ")")):
            if token == ("word", "AND"):
                self.tokens.take()
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"

    def unary(self) -> str:
        kind, text = self.tokens.take()
        if (kind, text) in (("word", "NOT"), ("paren", "(")):
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise invalid(f"log filter nests NOT and parentheses more than {MAX_DEPTH} deep")
            if text == "NOT":
                return f"NOT {self.unary()}"
            inner = self.expression()
            if self.tokens.take() != ("paren", ")"):
                raise invalid("log filter: a '(' is not closed")
            return f"({inner})"
        if kind != "word":
            raise invalid(f"log filter: expected a field name, found '{text}'")
        op_kind, op = self.tokens.take()
        if op_kind != "op":
            raise invalid(f"log filter: expected an operator after '{text}', found '{op}'")
        value_kind, value = self.tokens.take()
        if value_kind not in ("value", "word"):
            raise invalid(f"log filter: expected a value after '{text}{op}'")
        return self.comparison(text, op, value)

    def _bind(self, value: Any) -> str:
        self.params.append(value)
        return "?"

    def comparison(self, name: str, op: str, value: str) -> str:
        if name == "logName" and op in ("=", "!="):
            return f"log_name {_COMPARE[op]} {self._bind(short_log_name(value, self.project))}"
        if name == "severity" and op in _COMPARE:
            rank = SEVERITIES.get(value.upper())
            if rank is None:
                raise invalid(f"log filter: unknown severity '{value}'; use {', '.join(SEVERITIES)}")
            return f"rank {_COMPARE[op]} {self._bind(rank)}"
        if name == "timestamp" and op in _COMPARE:
            try:
                moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                raise invalid(f"log filter: '{value}' is not an RFC 3339 timestamp") from None
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            return f"timestamp {_COMPARE[op]} {self._bind(stamp(moment))}"
        if name == "textPayload" and op in (":", "="):
            if op == "=":
                return f"text_payload = {self._bind(value)}"
            return f"instr(lower(text_payload), {self._bind(value.lower())}) > 0"
        if name.startswith("jsonPayload.") and op in ("=", "!=", ":"):
            keys = name.split(".")[1:]
            if not all(_KEY.fullmatch(k) for k in keys):
                raise invalid(f"log filter: '{name}' is not a jsonPayload field path")
            path = self._bind("$" + "".join(f'."{k}"' for k in keys))
            column = f"CAST(json_extract(json_payload, {path}) AS TEXT)"
            if op == ":":
                return f"instr(lower({column}), {self._bind(value.lower())}) > 0"
            return f"{column} {_COMPARE[op]} {self._bind(value)}"
        raise invalid(f"log filter: '{name}{op}' is not supported; use logName=, severity (= != > >= < <=), "
                      "timestamp comparisons, textPayload:, jsonPayload.<key>= or :")


def compile_filter(text: str, project: str) -> Compiled:
    """The SQL condition (with its parameters) of a filter; an empty filter matches everything."""
    if len(text) > MAX_FILTER:
        raise invalid(f"log filter is longer than {MAX_FILTER} characters")
    if not text.strip():
        return Compiled("1")
    parser = _Parser(text, project)
    where = parser.expression()
    if parser.tokens.peek() is not None:
        raise invalid(f"log filter: unexpected '{parser.tokens.peek()[1]}'")  # type: ignore[index]
    return Compiled(where, parser.params)
