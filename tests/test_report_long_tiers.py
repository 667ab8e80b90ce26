"""`loca report` with the long tiers (512K, 1M, 2M) on the length axis."""

from __future__ import annotations

from pathlib import Path

import pytest

from loca.core.lengths import parse_lengths
from loca.report import load, write_report
from loca.report.cells import cells
from loca.report.plots import accuracy_figure, metric_figure
from tests.test_report import _grid, _overlaps, write_run


def test_a_run_of_8k_and_2m_episodes_reports_both_lengths_in_order(tmp_path: Path) -> None:
    outcomes = {**_grid(["a", "b"], [8000], [0]), ("a", 2_000_000, 0): True,
                ("b", 2_000_000, 0): False}
    data = load([write_run(tmp_path / "r", outcomes)])
    assert data.lengths == [8000, 2_000_000]
    tables = {t.name: t for t in write_report(data, tmp_path / "o", plots=False).tables}
    accuracy = tables["accuracy"].markdown().splitlines()
    assert accuracy[2] == "| model | strategy | 8K | 2M | mean |"
    assert accuracy[4].startswith("| oracle | react | 100.0 [100.0, 100.0] | 50.0 [0.0, 100.0] |")
    # the synthetic metrics make a trajectory of 4x the length: 32K and 8,000K tokens
    assert "| oracle | react | 32.0 | 8,000.0 | 4,016.0 |" in tables["trajectory"].markdown()
    states = tables["terminal_states"].markdown()
    assert states.index("| 8K |") < states.index("| 2M |") < states.index("| all |")
    assert "8K-2M (2 lengths)" in (tmp_path / "o" / "report.md").read_text()


@pytest.mark.slow
def test_the_length_axis_from_8k_to_2m_is_log_scaled_in_order_and_readable(tmp_path: Path) -> None:
    lengths = parse_lengths("8k,16k,32k,64k,128k,256k,long")
    assert lengths[-3:] == [512_000, 1_000_000, 2_000_000]
    data = load([write_run(tmp_path / "r", _grid(["a", "b"], lengths, [0]))])
    made = cells(data.of, data.rows, data.lengths)
    for fig in (accuracy_figure(data, made), metric_figure(data, made, "tool_calls", "mean tool calls")):
        ax = fig.axes[0]
        assert ax.get_xscale() == "log"
        assert list(ax.get_xticks()) == lengths
        assert [t.get_text() for t in ax.get_xticklabels()] == [
            "8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M", "2M"]
        assert _overlaps(fig) == []
        assert "8K-2M (9 lengths)" in fig.get_suptitle()
