"""The report's tables, shaped like the paper's: rows model x strategy, columns the lengths
present (8K .. 256K) and their mean (all lengths pooled)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from loca.core.lengths import label
from loca.report.cells import MISSING, Cell
from loca.report.load import Dataset, Row
from loca.report.stats import RESAMPLES, paired_bootstrap
from loca.report.table import Table, Value

Cells = dict[tuple[Row, int | None], Cell]
INCOMPLETE, WILSON = "*", "†"


def heading(length: int | None, pooled: str = "mean") -> str:
    """A length's column heading (8K); `pooled` names the all-lengths column."""
    return pooled if length is None else label(length).upper()


def _wide(name: str, title: str, data: Dataset, cells: Cells, value: Callable[[Cell], Value]) -> Table:
    lengths: list[int | None] = [*data.lengths, None]
    table = Table(name, title, data.label_columns, [heading(n) for n in lengths])
    for row in data.rows:
        table.add(data.labels(row),
                  [value(c) if (c := cells.get((row, n))) else Value(None) for n in lengths])
    return table


def _scaled(metric: str, scale: float = 1.0, digits: int = 1) -> Callable[[Cell], Value]:
    def value(cell: Cell) -> Value:
        mean = cell.means[metric]
        return Value(None if mean is None else mean / scale, digits=digits)
    return value


def accuracy_table(data: Dataset, cells: Cells) -> Table:
    def value(cell: Cell) -> Value:
        a = cell.accuracy
        mark = (INCOMPLETE if cell.incomplete else "") + (WILSON if a.method == "wilson" else "")
        return Value(100 * a.value, 100 * a.lo, 100 * a.hi, mark=mark)

    table = _wide("accuracy", "Accuracy (%) with 95% CI", data, cells, value)
    table.notes.append(f"Successes over planned episodes; 95% CI by cluster bootstrap over tasks (a task's "
                       f"seeds and trials together, {RESAMPLES} resamples, fixed seed); {WILSON} Wilson "
                       f"interval where the cell holds one task; {INCOMPLETE} incomplete: some planned "
                       f"episodes have not finished and count 0.")
    return table


def tool_calls_table(data: Dataset, cells: Cells) -> Table:
    """Mean top-level tool calls, and nested (programmatic) ones in a second column per
    length where any episode made some."""
    nested = any(c.means["tool_calls_nested"] for c in cells.values())
    if not nested:
        return _wide("tool_calls", "Mean tool calls", data, cells, _scaled("tool_calls"))
    lengths: list[int | None] = [*data.lengths, None]
    table = Table("tool_calls", "Mean tool calls (top-level, nested)", data.label_columns,
                  [f"{heading(n)}{part}" for n in lengths for part in ("", " nested")])
    for row in data.rows:
        values = []
        for n in lengths:
            cell = cells.get((row, n))
            values += [_scaled(m)(cell) if cell else Value(None) for m in ("tool_calls", "tool_calls_nested")]
        table.add(data.labels(row), values)
    return table


def terminal_states_table(data: Dataset, cells: Cells) -> Table:
    states = sorted({s for c in cells.values() for s in c.states} - {MISSING})
    states += [MISSING] if any(c.states[MISSING] for c in cells.values()) else []
    table = Table("terminal_states", "Terminal states (episodes)", [*data.label_columns, "length"],
                  [*states, "planned"])
    for row in data.rows:
        for n in [*data.lengths, None]:
            if cell := cells.get((row, n)):
                table.add([*data.labels(row), heading(n, "all")],
                          [*(Value(cell.states[s], digits=0) for s in states), Value(cell.planned, digits=0)])
    return table


def cost_table(data: Dataset, cells: Cells) -> Table:
    columns = {"episodes": lambda c: Value(c.measured, digits=0), "turns": _scaled("turns"),
               "input K": _scaled("input_tokens", 1000), "output K": _scaled("output_tokens", 1000),
               "cost USD": lambda c: Value(c.total_cost, digits=4),
               "cost USD / episode": _scaled("cost_usd", digits=4),
               "model s": _scaled("llm_s", digits=2), "tool s": _scaled("tool_s", digits=2)}
    table = Table("cost_latency", "Cost and latency (means per episode with metrics; cost also in total)",
                  [*data.label_columns, "length"], list(columns))
    for row in data.rows:
        for n in [*data.lengths, None]:
            if cell := cells.get((row, n)):
                table.add([*data.labels(row), heading(n, "all")], [f(cell) for f in columns.values()])
    table.notes.append("Cost is shown only where every call of every episode has a price; model and "
                       "tool seconds are the episode's summed call latencies.")
    return table


def firings_table(data: Dataset, cells: Cells) -> Table | None:
    fired = sorted({name for c in cells.values() for name in c.firings})
    if not fired:
        return None
    lengths: list[int | None] = [*data.lengths, None]
    table = Table("strategy_firings", "Strategy firings and tokens freed (K) per episode",
                  [*data.label_columns, "fired", "measure"], [heading(n) for n in lengths])
    for row in data.rows:
        for name in fired:
            if not any(name in c.firings for (r, _), c in cells.items() if r == row):
                continue
            for measure, of, scale in (("firings", "firings", 1.0), ("tokens freed K", "freed", 1000.0)):
                values = []
                for n in lengths:
                    cell = cells.get((row, n))
                    values.append(Value(getattr(cell, of).get(name, 0.0) / scale if cell and cell.measured
                                        else None))
                table.add([*data.labels(row), name, measure], values)
    return table


def pass_k_tables(data: Dataset, cells: Cells, ks: Sequence[int]) -> list[Table]:
    """pass@k and pass^k (%) for each k, when some instance was tried more than once."""
    if max((c.trials for c in cells.values()), default=0) < 2:
        return []
    tables = []
    for k in ks:
        for i, (name, title) in enumerate(((f"pass_at_{k}", f"pass@{k} (%)"), (f"pass_hat_{k}", f"pass^{k} (%)"))):
            def value(cell: Cell, k: int = k, i: int = i) -> Value:
                pair = cell.pass_k.get(k)
                return Value(None if pair is None else 100 * pair[i])
            table = _wide(name, title, data, cells, value)
            table.notes.append(f"Averaged over instances; – where an instance has fewer than {k} trials.")
            tables.append(table)
    return tables


def compare_table(data: Dataset, a: str, b: str) -> Table:
    """Paired bootstrap of accuracy(a) - accuracy(b) over the instances both strategies planned,
    per model that ran both; an instance scores its share of successful trials."""
    models = [c for c in data.label_columns if c != "strategy"]
    table = Table(f"compare_{a}_vs_{b}", f"{a} vs {b}: accuracy difference (percentage points)",
                  [*models, "length"], ["instances", f"{a} %", f"{b} %", "Δ pp [95% CI]"])
    for model, settings in dict.fromkeys((r.model, r.settings) for r in data.rows):
        rows = {r.strategy: r for r in data.rows if (r.model, r.settings) == (model, settings)}
        if a not in rows or b not in rows:
            continue
        for n in [*data.lengths, None]:
            scores = [_scores(data, rows[s], n) for s in (a, b)]
            shared = sorted(set(scores[0]) & set(scores[1]))
            if not shared:
                continue
            key = "|".join(x for x in (model, settings, a, b, str(n)) if x)
            diff = paired_bootstrap(np.array([scores[0][i] for i in shared]),
                                    np.array([scores[1][i] for i in shared]), key)
            table.add([*data.labels(rows[a])[:-1], heading(n)],
                      [Value(diff.instances, digits=0), Value(100 * diff.a), Value(100 * diff.b),
                       Value(100 * diff.value, 100 * diff.lo, 100 * diff.hi)])
    table.notes.append(f"Instances (task, length, seed) resampled with replacement, {RESAMPLES} times, "
                       f"each keeping both scores.")
    return table


def _scores(data: Dataset, row: Row, length: int | None) -> dict[tuple[str, int, int], float]:
    trials: dict[tuple[str, int, int], list[bool]] = {}
    for e in data.of(row, length):
        trials.setdefault(e.instance, []).append(e.success)
    return {i: sum(t) / len(t) for i, t in trials.items()}


def all_tables(data: Dataset, cells: Cells, ks: Sequence[int], compare: tuple[str, str] | None) -> list[Table]:
    tables = [accuracy_table(data, cells),
              _wide("trajectory", "Mean trajectory length (K tokens)", data, cells,
                    _scaled("trajectory_tokens", 1000)),
              tool_calls_table(data, cells),
              _wide("tool_output", "Mean tool-output tokens (K)", data, cells, _scaled("tool_output_tokens", 1000)),
              _wide("peak_request", "Mean peak request (K tokens)", data, cells, _scaled("peak_request_tokens", 1000)),
              terminal_states_table(data, cells)]
    fired = firings_table(data, cells)
    tables += [fired] if fired else []
    tables += [cost_table(data, cells), *pass_k_tables(data, cells, ks)]
    if compare:
        tables.append(compare_table(data, *compare))
    return tables
