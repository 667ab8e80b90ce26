"""Table names: a server's catalog maps logical names (1 to 3 parts, already case-folded) to
physical SQLite tables; `resolve` rewrites the Table nodes of a tree to them, never the text,
and `logical` puts the logical names back into a message that mentions a physical one."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from sqlglot import exp

from mock_servers.core.errors import invalid, not_found
from mock_servers.sqlfront.types import LogicalType


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    type: LogicalType


@dataclass(frozen=True)
class TableRef:
    """A logical table: its full name parts, its physical table and its columns in order."""

    parts: tuple[str, ...]
    physical: str
    columns: tuple[ColumnInfo, ...]

    @property
    def display(self) -> str:
        return ".".join(self.parts)

    def column(self, name: str) -> ColumnInfo | None:
        return next((c for c in self.columns if c.name == name), None)


class Catalog(Protocol):
    """What the front end needs from a server's catalog of tables."""

    def qualify(self, parts: tuple[str, ...]) -> tuple[str, ...]:
        """The full name of a 1-3 part name, with the session's defaults filled in."""

    def lookup(self, parts: tuple[str, ...]) -> TableRef | None:
        """The table of a full name, None when there is none."""

    def missing(self, parts: tuple[str, ...]) -> str:
        """The service's message for a table that does not exist."""


def name_parts(table: exp.Table) -> tuple[str, ...]:
    """The parts of a table's name; a name of more than 3 parts (or not a name) is INVALID_ARGUMENT."""
    parts = [p for p in (table.args.get("catalog"), table.args.get("db"), table.this) if p]
    if not parts or not all(isinstance(p, exp.Identifier) for p in parts):
        raise invalid(f"'{table.sql()}' is not a table name of 1 to 3 parts")
    return tuple(p.name for p in parts)


def find(catalog: Catalog, table: exp.Table) -> TableRef:
    """The table a Table node names, else NOT_FOUND in the service's words."""
    full = catalog.qualify(name_parts(table))
    ref = catalog.lookup(full)
    if ref is None:
        raise not_found(catalog.missing(full))
    return ref


def point(table: exp.Table, ref: TableRef, alias: bool = True) -> None:
    """Make `table` name `ref`'s physical table; with `alias`, keep the logical name usable as a
    qualifier (`ORDERS.ID`) when the query gave no alias."""
    if alias and not table.alias:
        table.set("alias", exp.TableAlias(this=exp.to_identifier(ref.parts[-1], quoted=True)))
    table.set("this", exp.to_identifier(ref.physical, quoted=True))
    table.set("db", None)
    table.set("catalog", None)


def _cte_in_scope(table: exp.Table, name: str) -> bool:
    """Whether a WITH around `table` defines `name` (then the name is that CTE, not a table)."""
    node = table.parent
    while node is not None:
        with_ = node.args.get("with_")
        if isinstance(with_, exp.With) and any(cte.alias_or_name == name for cte in with_.expressions):
            return True
        node = node.parent
    return False


def resolve(tree: exp.Expression, catalog: Catalog) -> dict[str, TableRef]:
    """Point every table of `tree` (but references to a CTE in scope) at its physical table;
    the tables found, by physical name. Column qualifiers with database or schema parts keep
    only the table part."""
    found: dict[str, TableRef] = {}
    nodes = list(tree.find_all(exp.Table, exp.Column))  # one walk
    for table in nodes:
        if not isinstance(table, exp.Table):
            continue
        parts = name_parts(table)
        if len(parts) == 1 and _cte_in_scope(table, parts[0]):
            continue
        ref = find(catalog, table)
        found[ref.physical] = ref
        point(table, ref, alias=not isinstance(table.parent, exp.Insert | exp.Schema))
    for column in nodes:
        if isinstance(column, exp.Column) and (column.args.get("db") or column.args.get("catalog")):
            column.set("db", None)
            column.set("catalog", None)
    return found


def logical(message: str, tables: dict[str, TableRef]) -> str:
    """`message` with every physical table name replaced by its logical one."""
    if not tables:
        return message
    pattern = re.compile("|".join(re.escape(p) for p in sorted(tables, key=len, reverse=True)))
    return pattern.sub(lambda m: tables[m.group(0)].display, message)
