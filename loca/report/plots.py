"""The report's plots (matplotlib, headless). Each is built as a `Figure` (what the tests read)
and saved as PNG and SVG with no date in either file's metadata and fixed SVG ids, so that the
same runs give the same bytes.

Every figure is titled with what it covers (tasks, lengths, seeds, N). Series that coincide stay
visible: each row has its own colour, marker and line style, and the points of a length sit side
by side (a small offset on the log2 axis) rather than on top of each other. Length tick labels
that would overlap are left out after layout."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from cycler import cycler
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from loca.core.outcome import ContextPoint
from loca.report.caption import caption
from loca.report.cells import MISSING
from loca.report.checks import ALL_CHECKS, TASK_SCORE, CheckRates
from loca.report.load import Dataset, Row
from loca.report.tables import Cells, heading

_STYLE: dict[Any, Any] = {"svg.hashsalt": "loca-report", "svg.fonttype": "path", "font.size": 9,
          "axes.prop_cycle": cycler(color=[
              "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"])}
_METADATA = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None}}
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_LINESTYLES = ("-", "--", "-.", ":")
DODGE_OCTAVES = 0.3
"""The widest spread of one length's points across series, in octaves of the length axis (the
closest tiers, 96K and 128K, are 0.415 apart)."""
DODGE_TURNS = 0.3
"""The same, in turns, for the request size per turn."""
TICK_GAP_PX = 3
"""The least room between two shown tick labels."""


def series_style(k: int) -> dict[str, Any]:
    """Colour, marker and line style of the k-th series: no two of the first 32 alike, and lines
    drawn over each other differ in their dashes. Markers are hollow, so that shapes drawn over
    each other stay apart."""
    return {"color": f"C{k % 8}", "marker": _MARKERS[k % len(_MARKERS)],
            "linestyle": _LINESTYLES[(k + k // len(_MARKERS)) % len(_LINESTYLES)], "markersize": 6,
            "markerfacecolor": "none", "markeredgewidth": 1.3}


def _offset(k: int, count: int, spread: float) -> float:
    """Where the k-th of `count` series sits within `spread`, centred on 0."""
    return 0.0 if count < 2 else (k - (count - 1) / 2) * spread / (count - 1)


def dodged(lengths: Sequence[int], k: int, count: int) -> list[float]:
    """`lengths` moved for the k-th of `count` series, so that equal values sit side by side."""
    return [n * 2 ** _offset(k, count, DODGE_OCTAVES) for n in lengths]


def _figure(width: float = 6.4, height: float = 4.0) -> Figure:
    with rc_context(_STYLE):
        return Figure(figsize=(width, height))


def _titled(fig: Figure, data: Dataset, title: str) -> None:
    fig.suptitle(f"{title}\n{caption(data)}", fontsize=9)


def _length_axis(ax: Axes, lengths: Sequence[int]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(lengths), [heading(n) for n in lengths])
    ax.minorticks_off()
    ax.set_xlabel("environment description length (tokens)")
    ax.grid(True, alpha=0.3)


def _declutter(fig: Figure) -> None:
    """Blank the length tick labels that would overlap the one shown before them."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # places the tick labels where the layout put them
    renderer = canvas.get_renderer()
    for ax in fig.axes:
        if ax.get_xscale() != "log":
            continue
        ticks, labels = ax.get_xticks(), ax.get_xticklabels()
        shown_right: float | None = None
        texts = []
        for label in labels:
            box = label.get_window_extent(renderer)
            keep = shown_right is None or box.x0 >= shown_right + TICK_GAP_PX
            texts.append(label.get_text() if keep else "")
            shown_right = box.x1 if keep else shown_right
        ax.set_xticks(ticks, texts)


def _finish(fig: Figure) -> Figure:
    with rc_context(_STYLE):
        fig.tight_layout()
        _declutter(fig)
    return fig


def _legend(ax: Axes, **kwargs: Any) -> None:
    """A legend, when something was drawn."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**{"fontsize": 8, **kwargs})


def accuracy_figure(data: Dataset, cells: Cells) -> Figure:
    """Accuracy vs length, a line per row with its 95% CI band."""
    fig = _figure()
    with rc_context(_STYLE):
        ax = fig.add_subplot()
        for k, row in enumerate(data.rows):
            lengths = [n for n in data.lengths if (row, n) in cells]
            acc = [cells[row, n].accuracy for n in lengths]
            x = dodged(lengths, k, len(data.rows))
            style = series_style(k)
            ax.plot(x, [100 * a.value for a in acc], label=row.label, **style)
            ax.fill_between(x, [100 * a.lo for a in acc], [100 * a.hi for a in acc],
                            color=style["color"], alpha=0.12, linewidth=0)
        _length_axis(ax, data.lengths)
        ax.set_ylim(-2, 102)
        ax.set_ylabel("accuracy (%), 95% CI")
        _legend(ax)
        _titled(fig, data, "Accuracy vs length")
    return _finish(fig)


def metric_figure(data: Dataset, cells: Cells, metric: str, ylabel: str, scale: float = 1.0) -> Figure:
    """A mean episode metric vs length, a line per row."""
    fig = _figure()
    with rc_context(_STYLE):
        ax = fig.add_subplot()
        for k, row in enumerate(data.rows):
            points = [(n, m / scale) for n in data.lengths
                      if (c := cells.get((row, n))) and (m := c.means[metric]) is not None]
            if points:
                lengths, values = zip(*points)
                ax.plot(dodged(lengths, k, len(data.rows)), values, label=row.label, **series_style(k))
        _length_axis(ax, data.lengths)
        ax.set_ylabel(ylabel)
        _legend(ax)
        _titled(fig, data, ylabel[0].upper() + ylabel[1:])
    return _finish(fig)


def _turn_stats(series: list[list[ContextPoint]]) -> tuple[list[int], np.ndarray, list[int]]:
    """Turns, their (25th, 50th, 75th) percentiles of the request size, and the turns at which
    a strategy fired in some episode."""
    by_turn: dict[int, list[float]] = defaultdict(list)
    fired: set[int] = set()
    for episode in series:
        for point in episode:
            by_turn[point.turn].append(point.predicted)
            if point.fired:
                fired.add(point.turn)
    turns = sorted(by_turn)
    quartiles = np.array([np.percentile(by_turn[t], [25, 50, 75]) for t in turns]).reshape(-1, 3)
    return turns, quartiles, sorted(fired)


def context_figure(data: Dataset) -> Figure:
    """Request size per turn (median and interquartile band over episodes), one panel per length;
    triangles mark turns at which a strategy fired."""
    lengths = data.lengths
    cols = min(4, len(lengths))
    rows_n = -(-len(lengths) // cols)
    fig = _figure(3.2 * cols, 2.6 * rows_n + 1.0)
    with rc_context(_STYLE):
        axes = fig.subplots(rows_n, cols, squeeze=False)
        for i, n in enumerate(lengths):
            ax = axes[i // cols][i % cols]
            for k, row in enumerate(data.rows):
                style = series_style(k)
                series = [m.context_series for e in data.of(row, n) if (m := e.metrics)]
                turns, q, fired = _turn_stats(series)
                if not turns:
                    continue
                x = np.array(turns) + _offset(k, len(data.rows), DODGE_TURNS)
                ax.plot(x, q[:, 1] / 1000, color=style["color"], linestyle=style["linestyle"],
                        label=row.label if i == 0 else None)
                ax.fill_between(x, q[:, 0] / 1000, q[:, 2] / 1000, color=style["color"], alpha=0.15, linewidth=0)
                at = [turns.index(t) for t in fired]
                ax.plot(x[at], q[at, 1] / 1000, linestyle="none", marker="v", color=style["color"])
            ax.set_title(heading(n))
            ax.set_xlabel("turn")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_ylabel("request (K tokens)")
            ax.grid(True, alpha=0.3)
        for j in range(len(lengths), rows_n * cols):
            axes[j // cols][j % cols].set_visible(False)
        if fig.axes[0].get_legend_handles_labels()[0]:
            fig.legend(loc="lower center", ncol=min(3, len(data.rows)), fontsize=8, bbox_to_anchor=(0.5, -0.02))
        _titled(fig, data, "Request size per turn (median, interquartile band; ▼ a strategy fired)")
        fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


def terminal_states_figure(data: Dataset, cells: Cells) -> Figure:
    """Share of planned episodes per terminal state, a bar per row (all lengths)."""
    mine = [cells[row, None] for row in data.rows]
    states = sorted({s for c in mine for s in c.states} - {MISSING})
    states += [MISSING] if any(c.states[MISSING] for c in mine) else []
    fig = _figure(6.4, 1.8 + 0.4 * len(mine))
    with rc_context(_STYLE):
        ax = fig.add_subplot()
        left = np.zeros(len(mine))
        labels = [row.label for row in data.rows]
        for state in states:
            share = np.array([100 * c.states[state] / c.planned for c in mine])
            ax.barh(labels, share, left=left, label=state)
            left += share
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("planned episodes (%)")
        ax.legend(fontsize=8, ncol=min(4, len(states)), loc="upper center", bbox_to_anchor=(0.5, -0.3))
        _titled(fig, data, "Terminal states")
    return _finish(fig)


def cost_figure(data: Dataset, cells: Cells) -> Figure:
    """Accuracy against mean cost per episode, a point per row x length."""
    fig = _figure()
    with rc_context(_STYLE):
        ax = fig.add_subplot()
        for k, row in enumerate(data.rows):
            points = [(c.means["cost_usd"], 100 * c.accuracy.value) for n in data.lengths
                      if (c := cells.get((row, n))) and c.means["cost_usd"] is not None]
            if points:
                ax.plot(*zip(*points), label=row.label, **{**series_style(k), "linestyle": ":"})
        ax.set_xlabel("mean cost per episode (USD)")
        ax.set_ylabel("accuracy (%)")
        ax.grid(True, alpha=0.3)
        _legend(ax)
        _titled(fig, data, "Cost vs accuracy")
    return _finish(fig)


_REFERENCE = {TASK_SCORE: {"color": "black", "linestyle": "--", "linewidth": 2.0, "marker": "."},
              ALL_CHECKS: {"color": "0.55", "linestyle": "-", "linewidth": 2.5, "marker": "."}}


def checks_figure(data: Dataset, rates: list[CheckRates], row: Row) -> Figure:
    """One row's check pass rates vs length: a panel per task and one over all tasks, a line per
    check beside the strict task score and the share of checks passed."""
    panels: dict[str, list[CheckRates]] = defaultdict(list)
    for line in rates:
        if line.row == row:
            panels[line.task].append(line)
    cols = min(4, len(panels))
    rows_n = -(-len(panels) // cols)
    fig = _figure(3.4 * cols, 2.8 * rows_n + 0.8)
    with rc_context(_STYLE):
        axes = fig.subplots(rows_n, cols, squeeze=False)
        for i, (task, lines) in enumerate(panels.items()):
            ax = axes[i // cols][i % cols]
            checks = [line for line in lines if line.check not in _REFERENCE]
            for line in lines:
                points = [(n, 100 * r) for n in data.lengths if (r := line.rates[n]) is not None]
                if not points:
                    continue
                lengths, values = zip(*points)
                if line.check in _REFERENCE:
                    ax.plot(lengths, values, label=line.check, **_REFERENCE[line.check])
                    continue
                k = checks.index(line)
                ax.plot(dodged(lengths, k, len(checks)), values, label=line.check, **series_style(k))
            _length_axis(ax, data.lengths)
            ax.set_xlabel("")
            ax.set_ylim(-4, 104)
            ax.set_title(task, fontsize=9)
            ax.set_ylabel("passed (%)")
            _legend(ax, loc="best", fontsize=6)
        for j in range(len(panels), rows_n * cols):
            axes[j // cols][j % cols].set_visible(False)
        _titled(fig, data, f"Check pass rates by length: {row.label}")
    return _finish(fig)


def _save(fig: Figure, out: Path, name: str) -> list[Path]:
    paths = []
    with rc_context(_STYLE):
        for fmt in ("png", "svg"):
            path = out / f"{name}.{fmt}"
            fig.savefig(path, format=fmt, dpi=120, metadata=_METADATA[fmt], bbox_inches="tight")
            paths.append(path)
    return paths


def all_figures(data: Dataset, cells: Cells, rates: list[CheckRates]) -> dict[str, Figure]:
    """Every figure of the report by file stem."""
    figures = {"accuracy": accuracy_figure(data, cells)}
    for name, metric, ylabel, scale in (
            ("trajectory", "trajectory_tokens", "mean trajectory length (K tokens)", 1000),
            ("tool_calls", "tool_calls", "mean tool calls", 1),
            ("tool_output", "tool_output_tokens", "mean tool-output tokens (K)", 1000),
            ("peak_request", "peak_request_tokens", "mean peak request (K tokens)", 1000)):
        figures[name] = metric_figure(data, cells, metric, ylabel, scale)
    figures["context_per_turn"] = context_figure(data)
    figures["terminal_states"] = terminal_states_figure(data, cells)
    if any(c.means["cost_usd"] is not None for c in cells.values()):
        figures["cost_vs_accuracy"] = cost_figure(data, cells)
    for i, row in enumerate(data.rows, 1):
        if any(line.row == row and line.check not in _REFERENCE for line in rates):
            figures[f"checks_{i}"] = checks_figure(data, rates, row)
    return figures


def all_plots(data: Dataset, cells: Cells, rates: list[CheckRates], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    return [path for name, fig in all_figures(data, cells, rates).items() for path in _save(fig, out, name)]
