"""The SQLite dialect statements are generated in. Identifiers are quoted with backticks:
SQLite reads an unknown double-quoted identifier as a string literal, which would turn a
misspelt column into a constant instead of an error."""

from __future__ import annotations

from functools import lru_cache

from sqlglot import exp
from sqlglot.dialects.sqlite import SQLite


class Target(SQLite):
    class Tokenizer(SQLite.Tokenizer):
        IDENTIFIERS = ["`", '"']


@lru_cache(maxsize=4096)
def ident(name: str) -> str:
    """`name` as a quoted SQLite identifier (the same few names are quoted again and again)."""
    return exp.to_identifier(name, quoted=True).sql(dialect=Target)
