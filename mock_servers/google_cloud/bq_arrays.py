"""BigQuery arrays where SQLite has none: `UNNEST` of an array literal (`[1, 3, 2]`), of
GENERATE_ARRAY(start, end[, step]) or of GENERATE_DATE_ARRAY(start, end[, INTERVAL n unit]),
as a table in FROM or JOIN (`AS x`, `WITH OFFSET [AS o]`) or after IN, becomes rows of a
subquery (a recursive one for the generated arrays). An array's elements may not read the
row's columns (SQLite has no lateral join), and an array anywhere else is UNIMPLEMENTED."""

from __future__ import annotations

from functools import reduce

from sqlglot import exp

from mock_servers.core.errors import Code, ToolFailure, invalid

VALUE = "f0_"  # the name BigQuery gives an unnamed value column
OFFSET = "offset"


def _unsupported(what: str) -> ToolFailure:
    return ToolFailure(Code.UNIMPLEMENTED, f"{what} is not supported",
                       hint="UNNEST takes an array literal, GENERATE_ARRAY or GENERATE_DATE_ARRAY of constants")


def _constant(node: exp.Expression) -> exp.Expression:
    if node.find(exp.Column, exp.Select) is not None:
        raise _unsupported("UNNEST of an array that reads columns or queries")
    return node


def _literal_rows(array: exp.Array, value: str, offset: str | None) -> exp.Query:
    elements = [_constant(e) for e in array.expressions]
    if any(isinstance(e, exp.Array | exp.Struct | exp.Tuple) for e in elements):
        raise _unsupported("UNNEST of an array of arrays or structs")
    if not elements:
        columns = [exp.alias_(exp.Null(), value), *([exp.alias_(exp.Literal.number(0), offset)] if offset else [])]
        return exp.select(*columns).where(exp.false())
    selects: list[exp.Query] = [exp.select(exp.alias_(e.copy(), value),
                          *([exp.alias_(exp.Literal.number(i), offset)] if offset else []))
               for i, e in enumerate(elements)]
    return reduce(lambda a, b: exp.union(a, b, distinct=False), selects[1:], selects[0])


def _amount(node: exp.Expression) -> float | None:
    """The number a literal (or a negated one) is, None for anything else."""
    if isinstance(node, exp.Neg):
        inner = _amount(node.this)
        return None if inner is None else -inner
    if not isinstance(node, exp.Literal):
        return None
    try:
        return float(node.this)  # an interval's amount is written as text
    except ValueError:
        return None


def _series(node: exp.GenerateSeries | exp.GenerateDateArray, value: str, offset: str | None) -> exp.Query:
    """The rows of GENERATE_ARRAY / GENERATE_DATE_ARRAY: element i is start + i x step, for
    each i whose element is not past end (a recursive query over i)."""
    start, end = _constant(node.args["start"]), _constant(node.args["end"])
    if isinstance(node, exp.GenerateDateArray):  # text literals read as dates
        start, end = (exp.Cast(this=e, to=exp.DataType.build("DATE")) if isinstance(e, exp.Literal) and e.is_string
                      else e for e in (start, end))
    step = _constant(node.args.get("step") or exp.Literal.number(1))
    amount = step.this if isinstance(step, exp.Interval) else step
    number = _amount(amount)
    if number is None:
        raise _unsupported(f"{node.sql_name()} with a step that is not a number")
    if number == 0:
        raise invalid("Sequence step cannot be 0.")

    def element(index: exp.Expression) -> exp.Expression:
        times = exp.Mul(this=exp.paren(amount.copy()), expression=exp.paren(index))
        if isinstance(node, exp.GenerateDateArray):
            unit = step.args.get("unit") if isinstance(step, exp.Interval) else None
            return exp.Anonymous(this="SF_DATEADD", expressions=[
                exp.Literal.string(unit.name if unit is not None else "DAY"), times, start.copy()])
        return exp.Add(this=start.copy(), expression=times)

    def within(index: exp.Expression) -> exp.Expression:
        compare = exp.LTE if number > 0 else exp.GTE
        return compare(this=element(index), expression=end.copy())

    counter = exp.column("_i")
    series = exp.union(exp.select(exp.alias_(exp.Literal.number(0), "_i")).where(within(exp.Literal.number(0))),
                       exp.select(exp.Add(this=counter.copy(), expression=exp.Literal.number(1))).from_("_series")
                       .where(within(exp.Add(this=counter.copy(), expression=exp.Literal.number(1)))),
                       distinct=False)
    cte = exp.CTE(this=series, alias=exp.TableAlias(this=exp.to_identifier("_series"),
                                                    columns=[exp.to_identifier("_i")]))
    query = exp.select(exp.alias_(element(counter.copy()), value),
                       *([exp.alias_(counter.copy(), offset)] if offset else [])).from_("_series")
    query.set("with_", exp.With(expressions=[cte], recursive=True))
    return query


def _rows(unnest: exp.Unnest) -> exp.Query:
    """The rows an UNNEST gives, its value column named as its alias says (else f0_)."""
    if len(unnest.expressions) != 1:
        raise _unsupported("UNNEST of several arrays")
    alias = unnest.args.get("alias")
    columns = alias.columns if isinstance(alias, exp.TableAlias) else []
    value = columns[0].name if columns else (alias.name if isinstance(alias, exp.TableAlias) and alias.name else VALUE)
    found = unnest.args.get("offset")
    offset = (found.name if isinstance(found, exp.Identifier) else OFFSET) if found else None
    source = unnest.expressions[0]
    if isinstance(source, exp.Array):
        return _literal_rows(source, value, offset)
    if isinstance(source, exp.GenerateSeries | exp.GenerateDateArray):
        return _series(source, value, offset)
    raise _unsupported(f"UNNEST of {source.sql('bigquery')[:60]}")


_ARRAYS = frozenset({exp.Unnest, exp.Array, exp.GenerateSeries, exp.GenerateDateArray})


def lower(tree: exp.Expression) -> exp.Expression:
    """`tree` with every UNNEST made rows of a subquery; an array anywhere else is UNIMPLEMENTED."""
    found = [node for node in tree.walk() if type(node) in _ARRAYS]  # one walk, usually finding nothing
    if not found:
        return tree
    for unnest in [node for node in found if isinstance(node, exp.Unnest)]:
        rows = _rows(unnest)
        if isinstance(unnest.parent, exp.In):
            unnest.parent.set("unnest", None)
            unnest.parent.set("query", exp.Subquery(this=rows))
            continue
        alias = unnest.args.get("alias")
        name = alias.columns[0].name if isinstance(alias, exp.TableAlias) and alias.columns else \
            alias.name if isinstance(alias, exp.TableAlias) and alias.name else "_unnest"
        unnest.replace(exp.Subquery(this=rows, alias=exp.TableAlias(this=exp.to_identifier(name))))
    array = tree.find(exp.Array, exp.GenerateSeries, exp.GenerateDateArray)
    if array is not None:
        raise _unsupported("an array value outside UNNEST")
    return tree
