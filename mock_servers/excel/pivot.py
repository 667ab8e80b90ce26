"""Static pivot summaries: group records by row (and column) fields and aggregate values."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from mock_servers.core.errors import invalid
from mock_servers.excel.areas import MAX_COL
from mock_servers.excel.limits import check_cells

AggFunc = Literal["sum", "mean", "count", "min", "max"]
BLANK = "(blank)"


class Uncalculated:
    """A formula cell whose file holds no calculated value: the pivot cannot use it."""

    def __repr__(self) -> str:
        return "UNCALCULATED"


UNCALCULATED = Uncalculated()


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _numbers(values: list[Any]) -> list[float]:
    return [v for v in values if _is_number(v)]


def _count(values: list[Any]) -> int:
    return sum(1 for v in values if v is not None)


def _over_numbers(fn: Callable[[list[float]], Any]) -> Callable[[list[Any]], Any]:
    def aggregate(values: list[Any]) -> Any:
        numbers = _numbers(values)
        return fn(numbers) if numbers else None
    return aggregate


AGGREGATES: dict[str, Callable[[list[Any]], Any]] = {
    "sum": _over_numbers(sum),
    "mean": _over_numbers(lambda xs: sum(xs) / len(xs)),
    "count": _count,
    "min": _over_numbers(min),
    "max": _over_numbers(max),
}


def _order(value: Any) -> tuple[int, float, str]:
    """Numbers first (by value), then text and dates (by their text), blanks last."""
    if value is None:
        return (2, 0.0, "")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, value.isoformat() if hasattr(value, "isoformat") else str(value))


def _key_order(key: tuple[Any, ...]) -> tuple[tuple[int, float, str], ...]:
    return tuple(_order(v) for v in key)


def _header_index(header: Sequence[Any], fields: list[str], role: str) -> list[int]:
    names = ["" if h is None else str(h) for h in header]
    missing = [f for f in fields if f not in names]
    if missing:
        raise invalid(f"{role} field(s) {', '.join(missing)} not in the header row; "
                      f"columns: {', '.join(n for n in names if n)}")
    return [names.index(f) for f in fields]


def _label(key: tuple[Any, ...]) -> Any:
    return BLANK if key == (None,) else key[0] if len(key) == 1 else " / ".join(
        BLANK if v is None else str(v) for v in key)


def _check_cells(records: Sequence[Sequence[Any]], header: Sequence[Any], used: list[int], numeric: list[int],
                 agg: AggFunc) -> None:
    """INVALID_ARGUMENT for a used cell the pivot cannot compute with: a formula without a
    calculated value, or anything but a number or a blank under a numeric aggregate."""
    for n, record in enumerate(records, start=2):
        for i in used:
            if record[i] is UNCALCULATED:
                raise invalid(f"'{header[i]}' in row {n} of data_range is a formula with no calculated value "
                              "(computed when a spreadsheet program opens the file); the pivot cannot use it")
        for i in numeric:
            if record[i] is not None and not _is_number(record[i]):
                raise invalid(f"{agg} takes numbers, but '{header[i]}' in row {n} of data_range holds "
                              f"{record[i]!r}", hint="use agg_func count, or aggregate a numeric column")


def pivot(table: Sequence[Sequence[Any]], rows: list[str], values: list[str],
          columns: list[str], agg: AggFunc) -> list[list[Any]]:
    """`table` is a header row followed by records (a formula cell with no calculated value is
    UNCALCULATED). Returns the summary as rows of cells: one header row (row fields, then
    `agg(value)` per column group), then one row per group."""
    if len(table) < 2:
        raise invalid("data_range needs a header row and at least one data row")
    header, records = table[0], table[1:]
    row_at = _header_index(header, rows, "rows")
    col_at = _header_index(header, columns, "columns")
    val_at = _header_index(header, values, "values")
    _check_cells(records, header, row_at + col_at + val_at, [] if agg == "count" else val_at, agg)
    cells: dict[tuple[tuple[Any, ...], tuple[Any, ...]], list[list[Any]]] = {}
    for record in records:
        row_key = tuple(record[i] for i in row_at)
        col_key = tuple(record[i] for i in col_at)
        bucket = cells.setdefault((row_key, col_key), [[] for _ in values])
        for slot, i in enumerate(val_at):
            bucket[slot].append(record[i])
    row_keys = sorted({k for k, _ in cells}, key=_key_order)
    col_keys = sorted({k for _, k in cells}, key=_key_order)
    width = len(rows) + len(values) * len(col_keys)
    if width > MAX_COL:
        raise invalid(f"the pivot would be {width} columns wide; a sheet has {MAX_COL}",
                      hint="group by fewer column values")
    check_cells(len(row_keys) + 1, width, "the pivot")
    titles = [f"{agg}({v})" if not columns else f"{agg}({v}) | {_label(ck)}"
              for ck in col_keys for v in values]
    out: list[list[Any]] = [[*rows, *titles]]
    for rk in row_keys:
        line: list[Any] = [BLANK if v is None else v for v in rk]
        for ck in col_keys:
            found = cells.get((rk, ck))
            line += [AGGREGATES[agg](found[slot]) if found else None for slot in range(len(values))]
        out.append(line)
    return out
