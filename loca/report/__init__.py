"""`loca report`: statistics, tables and plots from run directories (spec §6).

`load` reads and merges runs, `stats` holds the estimators, `cells` the per row x length
figures, `tables`/`table` the tables and their Markdown, CSV and LaTeX forms, `plots` the
figures. `write_report` puts them under one folder: `report.md`, `tables/<name>.csv`,
`tables.tex` and `plots/<name>.{png,svg}`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from loca.core.world import write_text_atomic
from loca.report.caption import caption
from loca.report.cells import cells as make_cells
from loca.report.checks import check_rates, checks_table
from loca.report.load import Dataset, ReportError, load
from loca.report.table import Table
from loca.report.tables import all_tables

__all__ = ["Dataset", "ReportError", "Written", "load", "write_report"]


@dataclass(frozen=True)
class Written:
    markdown: Path
    tables: list[Table]
    files: list[Path]


def _ks(data: Dataset, ks: Sequence[int]) -> list[int]:
    """The k of pass@k: as asked, else 1 and the most trials of an instance."""
    return sorted(set(ks)) if ks else sorted({1, data.trials()})


def _runs_section(data: Dataset) -> str:
    lines = ["| run | model | strategy | code sandbox | planned | finished |", "|---|---|---|---|--:|--:|"]
    for run in data.runs:
        stored, settings = run.stored, run.stored.settings
        sandbox = ", ".join(stored.sandbox) or "not recorded"
        lines.append(f"| `{run.root}` | {settings.agent} | {settings.strategy} | "
                     f"{f'**{sandbox.upper()}**' if stored.unconfined else sandbox} | "
                     f"{len(stored.planned)} | {len(stored.records)} |")
    versions = {kind: sorted({f"{name} {v}" for run in data.runs for name, v in run.versions[kind].items()})
                for kind in ("task", "prompt")}
    tasks = ", ".join(versions["task"]) or "none recorded"
    unconfined = "".join(f"\n**Unconfined:** `{run.root}` ran code without confinement (explicitly "
                         "allowed): that code could read the answer key and the state, so its scores "
                         "cannot be trusted.\n" for run in data.runs if run.stored.unconfined)
    return ("## Runs\n\n" + "\n".join(lines) + f"\n\nTask versions: {tasks}; "
            f"{len(versions['prompt'])} prompt texts, the same in every run.\n" + unconfined)


def write_report(data: Dataset, out: Path, ks: Sequence[int] = (),
                 compare: tuple[str, str] | None = None, plots: bool = True) -> Written:
    """Compute every cell, write the tables (and the plots) under `out`, return what was written."""
    if compare:
        strategies = {row.strategy for row in data.rows}
        unknown = [s for s in compare if s not in strategies]
        if unknown:
            raise ReportError(f"--compare: no strategy {', '.join(unknown)} in these runs "
                              f"(they hold {', '.join(sorted(strategies))})")
    if any(k < 1 for k in ks):
        raise ReportError("--trials-k: k must be at least 1")
    ks = _ks(data, ks)
    cells = make_cells(data.of, data.rows, data.lengths, ks)
    rates = check_rates(data)
    tables = all_tables(data, cells, ks, compare)
    tables.insert(1, checks_table(data, rates))  # the rubric-level view beside the strict score
    (out / "tables").mkdir(parents=True, exist_ok=True)
    files = []
    for table in tables:
        write_text_atomic(out / "tables" / f"{table.name}.csv", table.csv())
        files.append(out / "tables" / f"{table.name}.csv")
    write_text_atomic(out / "tables.tex", "\n".join(t.latex() for t in tables))
    drawn = []
    if plots:
        from loca.report.plots import all_plots  # matplotlib is imported only to draw

        drawn = all_plots(data, cells, rates, out / "plots")
    images = "".join(f"![{p.stem}](plots/{p.name})\n" for p in drawn if p.suffix == ".png")
    markdown = ("# Report\n\n" + caption(data, max_tasks=len(data.episodes)) + ".\n\n" + _runs_section(data)
                + "\n## Tables\n\n" +
                "\n".join(t.markdown() for t in tables) + (f"\n## Plots\n\n{images}" if images else ""))
    write_text_atomic(out / "report.md", markdown)
    return Written(out / "report.md", tables, [*files, out / "tables.tex", *drawn, out / "report.md"])
