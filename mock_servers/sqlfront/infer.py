"""The logical type of an expression, from the declared types of the columns it reads: what
shows a result column (an exact decimal at its scale, a boolean as a boolean, a date as a
date), and what makes comparisons of computed decimals exact (`exact_comparisons`). Typing
follows the scope's dialect where the two differ: in BigQuery a literal with a point is a
FLOAT64, INT64 / INT64 and AVG of INT64 are FLOAT64, NUMERIC keeps 9 places."""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from mock_servers.sqlfront import types
from mock_servers.sqlfront.dialect import BIGQUERY, SNOWFLAKE
from mock_servers.sqlfront.types import LogicalType

TYPE = "sqlfront_type"  # the meta key of a `typed` value
BIGQUERY_SCALE = 9  # NUMERIC's places


class Scope(dict[str, LogicalType]):
    """The types of the column and alias names a statement reads, and the dialect that types
    its expressions."""

    def __init__(self, names: Mapping[str, LogicalType] | None = None, dialect: str = SNOWFLAKE) -> None:
        super().__init__(names or {})
        self.dialect = dialect

    @property
    def bigquery(self) -> bool:
        return self.dialect == BIGQUERY


def typed(node: exp.Expression, kind: LogicalType) -> exp.Paren:
    """`node` as a value of `kind`: run as it is (in parentheses), typed by `type_of`."""
    wrapped = exp.Paren(this=node)
    wrapped.meta[TYPE] = kind
    return wrapped
_BOOLEAN = (exp.Predicate, exp.And, exp.Or, exp.Not, exp.Exists, exp.RegexpLike, exp.Contains,
            exp.StartsWith, exp.EndsWith, exp.LogicalAnd, exp.LogicalOr, exp.Boolean)
_INTEGER = (exp.Count, exp.CountIf, exp.RowNumber, exp.Rank, exp.DenseRank, exp.Ntile, exp.Length,
            exp.StrPosition, exp.Sign)
_SAME = (exp.Sum, exp.Min, exp.Max, exp.Abs, exp.AnyValue, exp.Lag, exp.Lead, exp.FirstValue,
         exp.LastValue, exp.NthValue, exp.Paren, exp.Neg, exp.Window, exp.Alias, exp.Greatest,
         exp.Least, exp.Nullif)
_DATES = {"SF_DATEADD": 2, "SF_DATE_TRUNC": 1}


def _merge(a: LogicalType | None, b: LogicalType | None, scale: int, scope: Scope) -> LogicalType | None:
    if a is None or b is None:
        return None
    if "float" in (a.kind, b.kind):
        return types.FLOAT
    if a.kind in ("int", "decimal") and b.kind in ("int", "decimal"):
        return types.decimal(min(scale, BIGQUERY_SCALE) if scope.bigquery and scale else scale)
    return None


def _arithmetic(node: exp.Binary, scope: Scope) -> LogicalType | None:
    a, b = type_of(node.this, scope), type_of(node.expression, scope)
    sa, sb = (a.scale if a else 0), (b.scale if b else 0)
    if isinstance(node, exp.Add | exp.Sub | exp.Mod):
        return _merge(a, b, max(sa, sb), scope)
    if isinstance(node, exp.Mul):
        return _merge(a, b, sa + sb, scope)
    if isinstance(node, exp.Div) and scope.bigquery:  # INT64 / INT64 is a FLOAT64; NUMERIC stays one
        both_int = a is not None and b is not None and a.kind == b.kind == "int"
        return types.FLOAT if both_int else _merge(a, b, BIGQUERY_SCALE, scope)
    if isinstance(node, exp.Div):
        return _merge(a, b, max(sa, min(sa + 6, types.MAX_SCALE)), scope)
    return None


def _anonymous(node: exp.Anonymous, scope: Scope) -> LogicalType | None:
    name = node.name.upper()
    if name in _DATES:
        inner = type_of(node.expressions[_DATES[name]], scope)
        return inner if inner and inner.kind in ("date", "timestamp") else None
    if name in ("SF_DATEDIFF", "SF_DATE_PART"):
        return types.INT
    if name == "SF_LAST_DAY":
        return types.DATE
    if name in ("SF_ROUND", "TRUNC"):
        return _rounded(type_of(node.expressions[0], scope), node.expressions[1] if len(node.expressions) > 1 else None,
                        scope)
    if name in ("SF_MEDIAN", "STDDEV", "VARIANCE", "SF_STDDEV_POP", "SF_VAR_POP"):
        return types.FLOAT
    return None


def literal_type(node: exp.Literal, bigquery: bool = False) -> LogicalType:
    """A number literal's type (BigQuery's with a point or exponent is a FLOAT64)."""
    if node.is_string:
        return types.TEXT
    text = node.this.lower()
    if "e" in text or (bigquery and "." in text):
        return types.FLOAT
    return types.decimal(len(text.partition(".")[2]))


def _rounded(inner: LogicalType | None, digits: exp.Expression | None, scope: Scope) -> LogicalType | None:
    """The type of ROUND, TRUNC, CEIL or FLOOR of a value of type `inner` to `digits` places."""
    if inner is not None and (inner.kind == "float" or (scope.bigquery and inner.kind == "int")):
        return types.FLOAT  # BigQuery rounds an INT64 as a FLOAT64
    if scope.bigquery and inner is not None and inner.kind == "decimal":
        return inner
    if digits is None:
        return types.INT
    if isinstance(digits, exp.Literal) and digits.is_int:
        return types.decimal(int(digits.name))
    return types.INT if isinstance(digits, exp.Neg) else None


def _function(node: exp.Expression, scope: Scope) -> LogicalType | None:
    if isinstance(node, exp.Avg):
        inner = type_of(node.this, scope)
        if scope.bigquery and inner is not None and inner.kind == "int":
            return types.FLOAT
        return _merge(inner, inner, max(inner.scale if inner else 0, 6), scope)
    if isinstance(node, exp.Round | exp.Trunc | exp.Ceil | exp.Floor):
        return _rounded(type_of(node.this, scope), node.args.get("decimals"), scope)
    if isinstance(node, exp.Coalesce | exp.If | exp.Case):
        branches = [node.this, *node.expressions] if isinstance(node, exp.Coalesce) else \
            [node.args.get("true"), node.args.get("false")] if isinstance(node, exp.If) else \
            [*(i.args.get("true") for i in node.args.get("ifs") or []), node.args.get("default")]
        found = [t for b in branches if b is not None and (t := type_of(b, scope)) is not None]
        return max(found, key=lambda t: t.scale) if found else None
    if isinstance(node, exp.Cast | exp.TryCast):
        return types.from_datatype(node.to)
    if isinstance(node, exp.Anonymous):
        return _anonymous(node, scope)
    return None


def type_of(node: exp.Expression, scope: Scope) -> LogicalType | None:
    """The type of `node`, None when it cannot be told (the value then shows as it is)."""
    if isinstance(node, exp.Column):
        return scope.get(node.name)
    if isinstance(node, exp.Paren) and TYPE in node.meta:
        kind: LogicalType = node.meta[TYPE]
        return kind
    if isinstance(node, exp.Literal):
        return literal_type(node, scope.bigquery)
    if isinstance(node, _BOOLEAN):
        return types.BOOL
    if isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Div | exp.Mod):
        return _arithmetic(node, scope)
    if isinstance(node, _INTEGER):
        return types.INT
    if isinstance(node, _SAME):
        return type_of(node.this, scope)
    if isinstance(node, exp.DPipe | exp.Concat | exp.Upper | exp.Lower | exp.Trim | exp.Substring):
        return types.TEXT
    return _function(node, scope)


def aliases(tree: exp.Expression, scope: Scope) -> Scope:
    """`scope` plus the type of every aliased expression in `tree` (CTEs, subqueries), inner
    ones first, so an outer query that reads an inner alias knows its type."""
    found = Scope(scope, scope.dialect)
    selects = list(tree.find_all(exp.Select))
    for select in reversed(selects):
        for projection in select.expressions:
            if isinstance(projection, exp.Alias):
                kind = type_of(projection.this, found)
                if kind is not None:
                    found.setdefault(projection.alias, kind)
    return found


_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)


def exact_comparisons(tree: exp.Expression, scope: Scope) -> None:
    """Compare computed exact decimals at their scale: `a + b = 0.3` becomes
    `ROUND(a + b, 2) = ROUND(0.3, 2)` when a and b are NUMBER(10,2), so binary rounding of
    the sum cannot make it false. Plain column-to-literal comparisons are left as they are."""
    for node in list(tree.find_all(*_COMPARISONS)):
        sides = (node.this, node.expression)
        if isinstance(node.parent, exp.Update) and node.arg_key == "expressions":
            continue  # an assignment of UPDATE SET, not a comparison
        if all(isinstance(s, exp.Column | exp.Literal) for s in sides):
            continue
        kinds = [literal_type(s) if isinstance(s, exp.Literal) and not s.is_string else type_of(s, scope)
                 for s in sides]  # a number literal meets an exact decimal as one (BigQuery's literal coercion)
        if any(k is None or k.kind not in ("decimal", "int") for k in kinds) or \
                all(k.kind == "int" for k in kinds if k is not None):
            continue
        scale = max(k.scale for k in kinds if k is not None)
        for side in sides:
            side.replace(exp.Round(this=side.copy(), decimals=exp.Literal.number(scale)))
