"""One SQL statement parsed into a tree, and its kind. Refused outright: more than one
statement, ATTACH / DETACH / PRAGMA / VACUUM, and any statement we do not know."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from threading import Lock

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.parsers.bigquery import BigQueryParser

from mock_servers.core.errors import invalid

logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its warnings are about the agent's SQL, answered as errors

# BigQuery's parser looks at every join of a query with FROM for a table named after an earlier one
# (`FROM t, t.items`) to read as UNNEST, copying and normalising each joined table to tell (half
# the parse of a 3-way join). Only a join without ON is ever read so: statements are parsed without
# the check, and parsed again with it (the switch is the class's, hence the lock) when they have one.
BigQueryParser.SUPPORTS_IMPLICIT_UNNEST = False
_IMPLICIT_UNNEST = Lock()

ONE_STATEMENT = "send one statement per call"
REFUSED = frozenset({"ATTACH", "DETACH", "PRAGMA", "VACUUM", "REINDEX", "ANALYZE", "LOAD", "INSTALL"})
_KINDS: tuple[tuple[type[exp.Expression], str], ...] = (
    (exp.Select, "SELECT"), (exp.SetOperation, "SELECT"), (exp.Insert, "INSERT"),
    (exp.Update, "UPDATE"), (exp.Delete, "DELETE"), (exp.Merge, "MERGE"), (exp.Create, "CREATE"),
    (exp.Drop, "DROP"), (exp.Alter, "ALTER"), (exp.TruncateTable, "TRUNCATE"),
    (exp.Comment, "COMMENT"), (exp.Use, "USE"), (exp.Show, "SHOW"), (exp.Describe, "DESCRIBE"),
)
_KNOWN = frozenset({"SELECT", "WITH", "INSERT", "UPDATE", "DELETE", "MERGE", "CREATE", "DROP", "ALTER",
                    "TRUNCATE", "COMMENT", "USE", "SHOW", "DESCRIBE", "DESC"})
READS = frozenset({"SELECT", "SHOW", "DESCRIBE"})


@dataclass
class Statement:
    """A parsed statement: its tree (identifiers folded by the dialect's case rules) and kind."""

    tree: exp.Expression
    kind: str


def _first_word(sql: str, dialect: str) -> str:
    try:
        tokens = sqlglot.tokenize(sql, read=dialect)
    except TokenError as exc:
        raise invalid(f"SQL syntax error: {exc}") from None
    if not tokens:
        raise invalid("the query is empty")
    return tokens[0].text.upper()


def _syntax_error(exc: ParseError) -> str:
    found = exc.errors[0] if exc.errors else {}
    where = f" at line {found.get('line')}, column {found.get('col')}" if found.get("line") else ""
    near = (found.get("highlight") or "").strip()
    near_text = f" near '{near}'" if near else ""
    return f"SQL syntax error{where}{near_text}: {found.get('description') or exc}"


def _refused(sql: str, dialect: str) -> None:
    word = _first_word(sql, dialect)
    if word in REFUSED:
        raise invalid(f"{word} statements are not allowed")


def _parsed(sql: str, dialect: str) -> list[exp.Expr | None]:
    """`sqlglot.parse` of `sql`, BigQuery's implicit UNNEST looked for only where it can apply."""
    trees = sqlglot.parse(sql, read=dialect)
    if dialect == "bigquery" and any(not j.args.get("on") for t in trees if t for j in t.find_all(exp.Join)):
        with _IMPLICIT_UNNEST:
            BigQueryParser.SUPPORTS_IMPLICIT_UNNEST = True
            try:
                trees = sqlglot.parse(sql, read=dialect)
            finally:
                BigQueryParser.SUPPORTS_IMPLICIT_UNNEST = False
    return trees


def parse(sql: str, dialect: str, fold: bool = True) -> Statement:
    """The one statement in `sql`, in `dialect`; `fold` applies the dialect's identifier case
    rules (Snowflake: unquoted names upper-case, quoted ones kept)."""
    try:
        trees = [t for t in _parsed(sql, dialect) if t is not None]
    except ParseError as exc:
        _refused(sql, dialect)
        raise invalid(_syntax_error(exc)) from None
    except TokenError as exc:
        raise invalid(f"SQL syntax error: {exc}") from None
    except (TypeError, ValueError, AttributeError, IndexError):  # the parser trips on some malformed input
        raise invalid("SQL syntax error: the statement could not be parsed") from None
    if not trees:
        raise invalid("the query is empty")
    if len(trees) > 1:
        raise invalid(f"{len(trees)} statements given; {ONE_STATEMENT}")
    tree: exp.Expression = trees[0]  # type: ignore[assignment]
    kind = next((name for cls, name in _KINDS if isinstance(tree, cls)), None)
    if kind is None:
        _refused(sql, dialect)
        word = _first_word(sql, dialect)
        if isinstance(tree, exp.Command) and word in _KNOWN:
            raise invalid(f"SQL syntax error: this {word} statement could not be parsed")
        raise invalid(f"{word} statements are not supported")
    if fold:
        tree = normalize_identifiers(tree, dialect=dialect)
    return Statement(tree, kind)
