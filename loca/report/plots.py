"""The report's plots (matplotlib, headless), each as PNG and SVG with no date in either file's
metadata and fixed SVG ids, so that the same runs give the same bytes."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from cycler import cycler
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from loca.report.cells import MISSING, number
from loca.report.load import Dataset
from loca.report.tables import Cells, heading

_STYLE: dict[Any, Any] = {"svg.hashsalt": "loca-report", "svg.fonttype": "path", "font.size": 9,
          "axes.prop_cycle": cycler(color=[
              "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"])}
_METADATA = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None}}


def _save(fig: Figure, out: Path, name: str) -> list[Path]:
    paths = []
    with rc_context(_STYLE):
        for fmt in ("png", "svg"):
            path = out / f"{name}.{fmt}"
            fig.savefig(path, format=fmt, dpi=120, metadata=_METADATA[fmt], bbox_inches="tight")
            paths.append(path)
    return paths


def _length_axis(ax: Axes, lengths: Sequence[int]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(lengths), [heading(n) for n in lengths])
    ax.minorticks_off()
    ax.set_xlabel("environment description length (tokens)")
    ax.grid(True, alpha=0.3)


def _legend(ax: Axes) -> None:
    """A legend, when something was drawn."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)


def _figure(width: float = 6.4, height: float = 4.0) -> Figure:
    with rc_context(_STYLE):
        return Figure(figsize=(width, height))


def accuracy_plot(data: Dataset, cells: Cells, out: Path) -> list[Path]:
    """Accuracy vs length, a line per model x strategy with its 95% CI band."""
    fig = _figure()
    with rc_context(_STYLE):
        ax = fig.add_subplot()
        for row in data.rows:
            lengths = [n for n in data.lengths if (row, n) in cells]
            acc = [cells[row, n].accuracy for n in lengths]
            line, = ax.plot(lengths, [100 * a.value for a in acc], marker="o", label=row.label)
            ax.fill_between(lengths, [100 * a.lo for a in acc], [100 * a.hi for a in acc],
                            color=line.get_color(), alpha=0.15, linewidth=0)
        _length_axis(ax, data.lengths)
        ax.set_ylim(-2, 102)
        ax.set_ylabel("accuracy (%), 95% CI")
        _legend(ax)
    return _save(fig, out, "accuracy")


def metric_plot(data: Dataset, cells: Cells, out: Path, name: str, metric: str, ylabel: str,
                scale: float = 1.0) -> list[Path]:
    """A mean episode metric vs length, a line per model x strategy."""
    fig = _figure()
    with rc_context(_STYLE):
        ax = fig.add_subplot()
        for row in data.rows:
            points = [(n, m / scale) for n in data.lengths
                      if (c := cells.get((row, n))) and (m := c.means[metric]) is not None]
            if points:
                ax.plot(*zip(*points), marker="o", label=row.label)
        _length_axis(ax, data.lengths)
        ax.set_ylabel(ylabel)
        _legend(ax)
    return _save(fig, out, name)


def _turn_stats(series: list[list[dict[str, Any]]]) -> tuple[list[int], np.ndarray, list[int]]:
    """Turns, their (25th, 50th, 75th) percentiles of the request size, and the turns at which
    a strategy fired in some episode."""
    by_turn: dict[int, list[float]] = defaultdict(list)
    fired: set[int] = set()
    for episode in series:
        for point in episode:
            turn, size = number(point.get("turn")), number(point.get("predicted"))
            if turn is None or size is None:
                continue
            by_turn[int(turn)].append(size)
            if point.get("fired"):
                fired.add(int(turn))
    turns = sorted(by_turn)
    quartiles = np.array([np.percentile(by_turn[t], [25, 50, 75]) for t in turns]).reshape(-1, 3)
    return turns, quartiles, sorted(fired)


def context_plot(data: Dataset, out: Path) -> list[Path]:
    """Request size per turn (median and interquartile band over episodes), one panel per length;
    triangles mark turns at which a strategy fired."""
    lengths = data.lengths
    cols = min(4, len(lengths))
    rows_n = -(-len(lengths) // cols)
    fig = _figure(3.2 * cols, 2.6 * rows_n + 0.6)
    with rc_context(_STYLE):
        axes = fig.subplots(rows_n, cols, squeeze=False)
        for i, n in enumerate(lengths):
            ax = axes[i // cols][i % cols]
            for k, row in enumerate(data.rows):
                color = f"C{k % 8}"
                series = [[p for p in m.get("context_series") or [] if isinstance(p, dict)]
                          for e in data.of(row, n) if (m := e.metrics) and isinstance(m.get("context_series"), list)]
                turns, q, fired = _turn_stats(series)
                if not turns:
                    continue
                ax.plot(turns, q[:, 1] / 1000, color=color, label=row.label if i == 0 else None)
                ax.fill_between(turns, q[:, 0] / 1000, q[:, 2] / 1000, color=color, alpha=0.15, linewidth=0)
                at = [turns.index(t) for t in fired]
                ax.plot([turns[j] for j in at], q[at, 1] / 1000, linestyle="none", marker="v", color=color)
            ax.set_title(heading(n))
            ax.set_xlabel("turn")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_ylabel("request (K tokens)")
            ax.grid(True, alpha=0.3)
        for j in range(len(lengths), rows_n * cols):
            axes[j // cols][j % cols].set_visible(False)
        if fig.axes[0].get_legend_handles_labels()[0]:
            fig.legend(loc="lower center", ncol=min(3, len(data.rows)), fontsize=8, bbox_to_anchor=(0.5, 1.0))
        fig.tight_layout()
    return _save(fig, out, "context_per_turn")


def terminal_states_plot(data: Dataset, cells: Cells, out: Path) -> list[Path]:
    """Share of planned episodes per terminal state, a bar per model x strategy (all lengths)."""
    mine = [cells[row, None] for row in data.rows]
    states = sorted({s for c in mine for s in c.states} - {MISSING})
    states += [MISSING] if any(c.states[MISSING] for c in mine) else []
    fig = _figure(6.4, 1.2 + 0.4 * len(mine))
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
        ax.legend(fontsize=8, ncol=min(4, len(states)), loc="upper center", bbox_to_anchor=(0.5, -0.25))
    return _save(fig, out, "terminal_states")


def cost_plot(data: Dataset, cells: Cells, out: Path) -> list[Path]:
    """Accuracy against mean cost per episode, a point per model x strategy x length."""
    fig = _figure()
    with rc_context(_STYLE):
        ax = fig.add_subplot()
        for row in data.rows:
            points = [(c.means["cost_usd"], 100 * c.accuracy.value) for n in data.lengths
                      if (c := cells.get((row, n))) and c.means["cost_usd"] is not None]
            if points:
                ax.plot(*zip(*points), marker="o", linestyle=":", label=row.label)
        ax.set_xlabel("mean cost per episode (USD)")
        ax.set_ylabel("accuracy (%)")
        ax.grid(True, alpha=0.3)
        _legend(ax)
    return _save(fig, out, "cost_vs_accuracy")


def all_plots(data: Dataset, cells: Cells, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)

    def metric(name: str, m: str, ylabel: str, scale: float) -> list[Path]:
        return metric_plot(data, cells, out, name, m, ylabel, scale)

    paths = [*accuracy_plot(data, cells, out),
             *metric("trajectory", "trajectory_tokens", "mean trajectory length (K tokens)", 1000),
             *metric("tool_calls", "tool_calls", "mean tool calls", 1),
             *metric("tool_output", "tool_output_tokens", "mean tool-output tokens (K)", 1000),
             *metric("peak_request", "peak_request_tokens", "mean peak request (K tokens)", 1000),
             *context_plot(data, out), *terminal_states_plot(data, cells, out)]
    if any(c.means["cost_usd"] is not None for c in cells.values()):
        paths += cost_plot(data, cells, out)
    return paths
