"""What the SQL corpora of the SQL services share: loading a corpus, the seeded world they run
on, the expectation of an error case, the mutated statements of the fuzz (corpus statements
with one token dropped, duplicated, replaced or swapped, reproducibly), and what a corpus
covers (the functions its statements call, the types they cast to), which the tools'
descriptions must list."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import sqlglot
import yaml
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from generators.common import create_world
from loca.core.world import World, WorldMeta
from mock_servers.core.db import Database

MakeWorld = Callable[..., tuple[World, Database]]


def load_corpus(name: str) -> list[dict[str, Any]]:
    """The cases of `tests/sql_corpus/<name>.yaml`."""
    corpus: list[dict[str, Any]] = yaml.safe_load(
        (Path(__file__).parent / "sql_corpus" / f"{name}.yaml").read_text(encoding="utf-8"))
    return corpus


def seeded_world(root: Path, seeded: Callable[[MakeWorld], World]) -> World:
    """The world `seeded` fills, at `root/world`."""

    def make(servers: list[str], **meta: Any) -> tuple[World, Database]:
        world_meta = WorldMeta(task="test", seed=0, params={}, now="2025-01-15T09:00:00Z", tz="UTC",
                               generator_version="test", **meta)
        return create_world(root / "world", world_meta, servers)

    return seeded(make)


def expect_error(case: dict[str, Any], text: str, is_error: bool) -> bool:
    """For a case that expects an error (its code, a message in it, a word absent from it):
    check it and say True; False for a case that expects a result."""
    if "error" not in case:
        assert not is_error, text
        return False
    assert is_error and text.startswith(f"Error [{case['error']}]"), text
    assert case.get("message", "") in text, text
    assert not case.get("absent") or case["absent"] not in text, text
    return True

_EXTRA = ["(", ")", ",", ";", "NULL", "'x'", "1.5", "SELECT", "*", "AS", "JOIN", "OVER", "WITH"]


def mutations(sqls: Sequence[str], token: re.Pattern[str], extra: Sequence[str], count: int,
              seed: int = 7) -> Iterator[str]:
    """`count` statements, each a random corpus statement (split by `token`) with one change;
    `extra` adds dialect tokens to the common ones."""
    rng = random.Random(seed)
    statements = [s for s in (token.findall(sql) for sql in sqls) if s]
    vocabulary = [*_EXTRA, *extra]
    for _ in range(count):
        tokens = list(rng.choice(statements))
        i, j = rng.randrange(len(tokens)), rng.randrange(len(tokens))
        match rng.randrange(4):
            case 0:
                del tokens[i]
            case 1:
                tokens.insert(i, rng.choice(tokens + vocabulary))
            case 2:
                tokens[i] = rng.choice(vocabulary)
            case _:
                tokens[i], tokens[j] = tokens[j], tokens[i]
        yield " ".join(tokens)


_NOT_FUNCTIONS = frozenset({"EXISTS", "INSERT", "AND", "OR", "NOT", "IN", "VALUES"})
_WEEKDAYS = frozenset({"SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY"})


def _works(case: dict[str, Any]) -> bool:
    """Whether a case shows what a tool runs: a result, or a documented error of running it."""
    return case.get("error") != "UNIMPLEMENTED"


def called_functions(cases: Sequence[dict[str, Any]], dialect: str) -> set[str]:
    """The functions (as the statements spell them) that the working cases call: names the
    dialect's parser knows, written before a parenthesis (not after a dot: a table's name)."""
    known = set(Dialect.get_or_raise(dialect).parser_class.FUNCTIONS) | \
        set(Dialect.get_or_raise(dialect).parser_class.FUNCTION_PARSERS)
    found = set()
    for case in filter(_works, cases):
        try:
            tokens = sqlglot.tokenize(case["sql"], read=dialect)
        except SqlglotError:
            continue  # a case of a syntax error
        for i, token in enumerate(tokens[:-2]):
            name = token.text.upper()
            if tokens[i + 1].token_type != TokenType.L_PAREN or name not in known or name in _NOT_FUNCTIONS:
                continue
            if (i and tokens[i - 1].token_type == TokenType.DOT) or tokens[i + 2].text.upper() in _WEEKDAYS:
                continue  # a table's name; BigQuery's WEEK(MONDAY), a date part
            found.add(name)
    return found


def cast_types(cases: Sequence[dict[str, Any]], dialect: str, name: Callable[[exp.DataType], str]) -> set[str]:
    """The types the working cases cast to (CAST, TRY_CAST / SAFE_CAST, `::`, typed literals),
    each as `name` spells it."""
    found = set()
    for case in filter(_works, cases):
        try:
            trees = sqlglot.parse(case["sql"], read=dialect)
        except SqlglotError:
            continue
        for tree in trees:
            if tree is not None:
                found.update(name(node.to) for node in tree.find_all(exp.Cast, exp.TryCast))
    return found
