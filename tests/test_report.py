"""`loca report`: estimators, merging, tables, plots, determinism and exit codes, on synthetic run
directories written in the runner's format, and once on a real run."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from envs.core.registry import Task
from loca.cli import main
from loca.core.lengths import label
from loca.report import ReportError, load, write_report
from loca.report.stats import accuracy, cluster_bootstrap, paired_bootstrap, pass_at_k, pass_hat_k, wilson


def _metrics(tokens: int, fired: bool = False) -> dict[str, Any]:
    return {"trajectory_tokens": tokens, "tool_calls": 3, "tool_output_tokens": tokens // 2,
            "peak_request_tokens": tokens - 100, "turns": 2, "input_tokens": 2 * tokens, "output_tokens": 50,
            "cost_usd": None, "llm_latency": {"sum_s": 0.5}, "tool_latency": {"sum_s": 0.25},
            "strategy_firings": {"truncate": 1} if fired else {},
            "tokens_freed": {"truncate": 400} if fired else {},
            "context_series": [{"turn": 1, "predicted": tokens // 2, "fired": []},
                               {"turn": 2, "predicted": tokens - 100, "fired": ["truncate"] if fired else []}]}


Checks = Callable[[str, int, bool], list[tuple[str, bool]]]


def default_checks(task: str, length: int, success: bool) -> list[tuple[str, bool]]:
    return [("values", success), ("no_side_effects", True)]


def write_run(root: Path, outcomes: dict[tuple[str, int, int], bool | None], *, strategy: str = "react",
              agent: str = "oracle", task_version: int = 0, prompt: str = "aa", max_turns: int = 300,
              sampling: dict[str, Any] | None = None, checks: Checks = default_checks) -> Path:
    """A run directory as the runner writes it; an outcome of None is a planned episode that has
    not finished. `checks` gives each finished episode's verdict as (name, passed) pairs."""
    config = {"tasks": sorted({t for t, _, _ in outcomes}), "agent": agent, "strategy": strategy,
              "max_turns": max_turns, "lengths": [], "seeds": [], **({"sampling": sampling} if sampling else {})}
    root.mkdir(parents=True)
    (root / "run.json").write_text(json.dumps({"config": config, "config_hash": "x"}))
    manifest, records = [], []
    for (task, length, seed), success in outcomes.items():
        eid = f"{task}__{label(length)}__s{seed}__{agent}"
        manifest.append({"episode_id": eid, "task": task, "length": label(length), "target_tokens": length,
                         "seed": seed, "agent": agent})
        if success is None:
            continue
        trajectory = root / "episodes" / eid / "trajectory.jsonl"
        trajectory.parent.mkdir(parents=True)
        header = {"format": "loca.trajectory/1", "prompts": [{"id": "system/react@1", "sha256": prompt}],
                  "env": {"task": task, "task_version": task_version}}
        trajectory.write_text(json.dumps({"seq": 0, "type": "header", "payload": header}) + "\n")
        records.append({**manifest[-1], "strategy": strategy, "success": success,
                        "terminal_state": "claimed_done" if success else "max_turns",
                        "metrics": _metrics(4 * length, fired=length > 8000),
                        "checks": [{"name": n, "passed": p} for n, p in checks(task, length, success)],
                        "trajectory": str(trajectory.relative_to(root))})
    (root / "manifest.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    (root / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return root


# --- estimators ---------------------------------------------------------------------------------

def test_all_successes_give_a_degenerate_interval() -> None:
    a = accuracy({"t1": (3, 3), "t2": (5, 5)}, "k")
    assert (a.value, a.lo, a.hi, a.method) == (1.0, 1.0, 1.0, "bootstrap")


def test_two_opposite_tasks_span_zero_to_one() -> None:
    """Resampling two tasks gives 0, 1/2 or 1 with chances 1/4, 1/2, 1/4: the 95% interval is [0, 1]."""
    lo, hi = cluster_bootstrap(np.array([2.0, 0.0]), np.array([2.0, 2.0]), "k")
    assert (lo, hi) == (0.0, 1.0)


def test_the_bootstrap_resamples_whole_tasks_not_episodes() -> None:
    """Ten tasks of ten episodes, five all passing, five all failing: over tasks the interval is
    about 0.5 ± 0.31; resampling episodes would give about ± 0.1."""
    by_task = {f"t{i}": (10 if i < 5 else 0, 10) for i in range(10)}
    a = accuracy(by_task, "k")
    assert a.value == 0.5 and a.lo < 0.3 and a.hi > 0.7
    assert accuracy(by_task, "k") == a  # a fixed seed: the same interval every time


def test_wilson_is_used_for_one_task_and_matches_the_formula() -> None:
    lo, hi = wilson(5, 10)
    assert math.isclose(lo, 0.2366, abs_tol=1e-4) and math.isclose(hi, 0.7634, abs_tol=1e-4)
    assert wilson(0, 10)[0] == 0.0 and math.isclose(wilson(0, 10)[1], 0.2775, abs_tol=1e-4)
    a = accuracy({"only": (5, 10)}, "k")
    assert a.method == "wilson" and (a.lo, a.hi) == wilson(5, 10)


def test_pass_at_k_and_pass_hat_k() -> None:
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4) and pass_hat_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2)
    assert pass_hat_k(5, 2, 2) == pytest.approx(1 / 10)  # C(2,2)/C(5,2)
    assert pass_at_k(4, 0, 3) == 0.0 and pass_hat_k(4, 4, 3) == 1.0 and pass_at_k(4, 2, 3) == 1.0


def test_paired_bootstrap_of_a_difference() -> None:
    same = paired_bootstrap(np.ones(6), np.zeros(6), "k")
    assert (same.value, same.lo, same.hi) == (1.0, 1.0, 1.0)
    half = paired_bootstrap(np.array([1.0, 0.0]), np.array([0.0, 0.0]), "k")
    assert (half.value, half.lo, half.hi) == (0.5, 0.0, 1.0)


# --- loading and merging ------------------------------------------------------------------------

def _grid(tasks: list[str], lengths: list[int], seeds: list[int], success: bool = True
          ) -> dict[tuple[str, int, int], bool | None]:
    return {(t, n, s): success for t in tasks for n in lengths for s in seeds}


def test_missing_episodes_count_zero_and_flag_the_cell(tmp_path: Path) -> None:
    outcomes = _grid(["a", "b"], [8000], [0, 1])
    outcomes["b", 8000, 1] = None
    written = write_report(load([write_run(tmp_path / "r", outcomes)]), tmp_path / "out", plots=False)
    acc = (tmp_path / "out" / "tables" / "accuracy.csv").read_text().splitlines()
    assert acc[0] == "model,strategy,8K,8K lo,8K hi,8K flag,mean,mean lo,mean hi,mean flag"
    assert acc[1].startswith("oracle,react,75,") and acc[1].endswith(",*")
    states = next(t for t in written.tables if t.name == "terminal_states").markdown()
    assert "| claimed_done | missing | planned |" in states and "| 3 | 1 | 4 |" in states


def test_incompatible_runs_are_refused(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", _grid(["a"], [8000], [0]))
    b = write_run(tmp_path / "b", _grid(["a"], [8000], [0]), task_version=1)
    c = write_run(tmp_path / "c", _grid(["a"], [8000], [0]), prompt="bb")
    with pytest.raises(ReportError, match="task a: 0 in .*1 in"):
        load([a, b])
    with pytest.raises(ReportError, match="prompt system/react@1"):
        load([a, c])
    load([a, write_run(tmp_path / "d", _grid(["other"], [8000], [0]), task_version=3)])  # other task: fine


def test_compatible_runs_merge_into_rows_and_trials(tmp_path: Path) -> None:
    short = write_run(tmp_path / "short", _grid(["a", "b"], [8000], [0]))
    long = write_run(tmp_path / "long", _grid(["a", "b"], [16000], [0], success=False))
    clear = write_run(tmp_path / "clear", _grid(["a", "b"], [8000], [0]), strategy="clear_tool_results")
    data = load([short, long, clear])
    assert [r.label for r in data.rows] == ["oracle · react", "oracle · clear_tool_results"]
    assert data.lengths == [8000, 16000] and data.trials() == 1
    again = write_run(tmp_path / "again", {**_grid(["a"], [8000], [0], success=False),
                                           **_grid(["b"], [8000], [0])})
    merged = load([short, again, short])  # a directory named twice counts once
    assert merged.trials() == 2 and len(merged.episodes) == 4
    names = [t.name for t in write_report(merged, tmp_path / "out", plots=False).tables]
    assert "pass_at_2" in names and "pass_hat_2" in names
    pass_hat = (tmp_path / "out" / "tables" / "pass_hat_2.csv").read_text().splitlines()[1]
    assert pass_hat == "oracle,react,50,50"  # a: 1 of 2 trials (pass^2 0), b: 2 of 2 (1)


def test_a_record_that_is_not_the_runner_s_is_refused_in_one_line(tmp_path: Path) -> None:
    """Records are typed: a field of the wrong type is named, with the file and the line."""
    run = write_run(tmp_path / "r", _grid(["a"], [8000], [0]))
    log = run / "episodes.jsonl"
    record = json.loads(log.read_text())
    record["metrics"].update(trajectory_tokens="lots")
    log.write_text(json.dumps(record) + "\n")
    with pytest.raises(ReportError) as refused:
        load([run])
    assert str(refused.value) == (f"{log}: line 1 is not an episode record (metrics.trajectory_tokens: "
                                  "Input should be a valid integer, unable to parse string as an integer)")


def test_damaged_run_files(tmp_path: Path) -> None:
    """A last line cut off by a kill is left out (that episode counts as missing); anything else
    that is not the runner's format is a readable refusal."""
    run = write_run(tmp_path / "r", _grid(["a"], [8000], [0, 1]))
    log = run / "episodes.jsonl"
    log.write_text(log.read_text()[:-40])
    data = load([run])
    assert [e.record is None for e in data.episodes] == [False, True]
    log.write_text('{"cut\n' + log.read_text())
    with pytest.raises(ReportError, match="line 1 is not JSON"):
        load([run])
    (run / "manifest.jsonl").write_text('{"episode_id": "x"}\n')
    with pytest.raises(ReportError, match="line 1 is not a planned episode"):
        load([run])
    (run / "run.json").write_text("[1]")
    with pytest.raises(ReportError, match="no run configuration"):
        load([run])


def test_other_settings_under_one_strategy_name_are_separate_rows(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", _grid(["a"], [8000], [0]))
    b = write_run(tmp_path / "b", _grid(["a"], [8000], [0]), max_turns=10)
    strategies = [r.strategy for r in load([a, b]).rows]
    assert len(set(strategies)) == 2 and all(s.startswith("react [") for s in strategies)
    run_json = json.loads((b / "run.json").read_text())
    run_json["config"].update(max_turns=300, added_later=None)  # an unset setting tells nothing apart
    (b / "run.json").write_text(json.dumps(run_json))
    assert [r.strategy for r in load([a, b]).rows] == ["react"]


def test_a_plan_may_name_each_episode_s_strategy(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", _grid(["a", "b"], [8000], [0, 1]))
    manifest = [json.loads(line) for line in (run / "manifest.jsonl").read_text().splitlines()]
    for entry in manifest[::2]:
        entry["strategy"] = "compaction"
    (run / "manifest.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    data = load([run])
    assert [(r.label, len(data.of(r))) for r in data.rows] == [("oracle · compaction", 2), ("oracle · react", 2)]


# --- tables, plots, determinism -----------------------------------------------------------------

TINY_ACCURACY = """\
### Accuracy (%) with 95% CI

| model | strategy | 8K | 16K | mean |
|---|---|--:|--:|--:|
| oracle | react | 100.0 [100.0, 100.0] | 50.0 [0.0, 100.0] | 75.0 [50.0, 100.0] |

Successes over planned episodes; 95% CI by cluster bootstrap over tasks (a task's seeds and trials \
together, 10000 resamples, fixed seed); † Wilson interval where the cell holds one task; * incomplete: \
some planned episodes have not finished and count 0.
"""
TINY_TRAJECTORY = """\
### Mean trajectory length (K tokens)

| model | strategy | 8K | 16K | mean |
|---|---|--:|--:|--:|
| oracle | react | 32.0 | 64.0 | 48.0 |
"""


def test_markdown_tables_of_a_tiny_run(tmp_path: Path) -> None:
    outcomes = {**_grid(["a", "b"], [8000], [0]), ("a", 16000, 0): True, ("b", 16000, 0): False}
    tables = {t.name: t for t in write_report(load([write_run(tmp_path / "r", outcomes)]), tmp_path / "o",
                                                plots=False).tables}
    assert tables["accuracy"].markdown() == TINY_ACCURACY
    assert tables["trajectory"].markdown() == TINY_TRAJECTORY
    firings = tables["strategy_firings"].markdown()
    assert "| oracle | react | truncate | tokens freed K | 0.0 | 0.4 | 0.2 |" in firings
    tex = (tmp_path / "o" / "tables.tex").read_text()
    assert r"\toprule" in tex and r"\bottomrule" in tex and r"claimed\_done" in tex


@pytest.mark.slow
def test_plots_are_valid_png_and_svg_without_dates(tmp_path: Path) -> None:
    written = write_report(load([write_run(tmp_path / "r", _grid(["a", "b"], [8000, 32000], [0, 1]))]),
                           tmp_path / "o")
    plots = {p.name for p in written.files if p.parent.name == "plots"}
    for stem in ("accuracy", "trajectory", "tool_calls", "tool_output", "context_per_turn", "terminal_states"):
        assert {f"{stem}.png", f"{stem}.svg"} <= plots
        png = (tmp_path / "o" / "plots" / f"{stem}.png").read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and b"IEND" in png[-12:]
        svg = (tmp_path / "o" / "plots" / f"{stem}.svg").read_text()
        assert ET.fromstring(svg).tag.endswith("svg") and "dc:date" not in svg
    assert "cost_vs_accuracy.png" not in plots  # no episode has a cost


@pytest.mark.slow
def test_nested_calls_and_costs_appear_when_recorded(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", _grid(["a", "b"], [8000], [0]))
    log = run / "episodes.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    for r in records:
        r["metrics"].update(tool_calls_nested=4, cost_usd=0.25)
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    written = write_report(load([run]), tmp_path / "o")
    tables = {t.name: t for t in written.tables}
    assert tables["tool_calls"].columns == ["8K", "8K nested", "mean", "mean nested"]
    assert tables["tool_calls"].rows[0][1][1].value == 4
    cost = tables["cost_latency"].csv().splitlines()
    assert cost[0].split(",")[7:9] == ["cost USD", "cost USD / episode"]
    assert cost[1].split(",")[7:9] == ["0.5", "0.25"]
    assert (tmp_path / "o" / "plots" / "cost_vs_accuracy.svg").is_file()


@pytest.mark.slow
def test_the_same_runs_give_the_same_bytes(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", _grid(["a", "b", "c"], [8000, 16000], [0, 1]))
    outs = [tmp_path / "one", tmp_path / "two"]
    for out in outs:
        write_report(load([run]), out)
    files = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
    assert len(files) > 20
    for name in files:
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name


@pytest.mark.slow
def test_runs_made_without_confinement_are_marked(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    confined = write_run(tmp_path / "confined", _grid(["a"], [8000], [0]))
    loose = write_run(tmp_path / "loose", _grid(["a"], [8000], [1]))
    run_json = json.loads((confined / "run.json").read_text())
    (confined / "run.json").write_text(json.dumps({**run_json, "sandbox": ["landlock"]}))
    log = loose / "episodes.jsonl"
    log.write_text("".join(json.dumps({**json.loads(line), "sandbox": "unconfined"}) + "\n"
                           for line in log.read_text().splitlines()))
    data = load([confined, loose])
    assert [(run.stored.sandbox, run.stored.unconfined) for run in data.runs] == [(["landlock"], False),
                                                                    (["unconfined"], True)]
    markdown = write_report(data, tmp_path / "o", plots=False).markdown.read_text()
    assert f"| `{confined}` | oracle | react | landlock | 1 | 1 |" in markdown
    assert f"| `{loose}` | oracle | react | **UNCONFINED** | 1 | 1 |" in markdown
    assert f"**Unconfined:** `{loose}` ran code without confinement" in markdown
    assert f"`{confined}` ran code without" not in markdown
    assert _loca(["report", str(confined), str(loose), "--out", str(tmp_path / "p")]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert f"warning: {loose} ran code without confinement" in err and str(confined) not in err


# --- command line -------------------------------------------------------------------------------

def _loca(args: list[str]) -> int:
    with pytest.raises(SystemExit) as exit_:
        main(args)
    return int(exit_.value.code or 0)


@pytest.mark.slow
def test_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_run(tmp_path / "a", _grid(["a", "b"], [8000], [0]))
    clear = write_run(tmp_path / "clear", _grid(["a", "b"], [8000], [0]), strategy="clear_tool_results")
    newer = write_run(tmp_path / "newer", _grid(["a"], [8000], [0]), task_version=1)
    assert _loca(["report", str(a)]) == 0 and (a / "report" / "report.md").is_file()
    assert "| oracle | react | 100.0 [100.0, 100.0] | 100.0 [100.0, 100.0] |" in capsys.readouterr().out
    assert _loca(["report", str(a), str(clear), "--out", str(tmp_path / "o"),
                  "--compare", "clear_tool_results", "react"]) == 0
    assert (tmp_path / "o" / "tables" / "compare_clear_tool_results_vs_react.csv").is_file()
    capsys.readouterr()
    assert _loca(["report", str(a), str(newer), "--out", str(tmp_path / "x")]) == 2
    assert "not comparable" in capsys.readouterr().err
    assert _loca(["report", str(tmp_path / "nowhere")]) == 2
    assert _loca(["report", str(a), str(clear)]) == 2  # several runs need --out
    assert _loca(["report", str(a), "--compare", "memory", "react"]) == 2
    assert _loca(["report", str(a), "--trials-k", "0"]) == 2


def test_a_real_run_reports(any_task: Task, tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert _loca(["run", "--tasks", any_task.name, "--lengths", "8k", "--seeds", "0",
                  "--strategy", "clear_tool_results", "--out", str(run)]) == 0
    written = write_report(load([run]), tmp_path / "o", plots=False)
    acc = (tmp_path / "o" / "tables" / "accuracy.csv").read_text().splitlines()
    assert acc[1].startswith("oracle,clear_tool_results,100,")
    assert f"{any_task.name} 0" in written.markdown.read_text()


# --- what a person reads at a glance ------------------------------------------------------------

TIERS = [8000, 16000, 32000, 64000, 96000, 128000, 256000]


def _rubric(task: str, length: int, success: bool) -> list[tuple[str, bool]]:
    """Task a loses `order` from 16K on; task b loses `rows` at 16K; both keep `no_side_effects`."""
    if task == "a":
        return [("values", True), ("order", length < 16000), ("no_side_effects", True)]
    return [("rows", length != 16000), ("no_side_effects", True)]


def _csv_rows(path: Path) -> dict[tuple[str, ...], list[str]]:
    lines = [line.split(",") for line in path.read_text().splitlines()]
    width = lines[0].index("8K")
    return {tuple(line[:width]): line[width:] for line in lines[1:]}


def test_each_check_s_pass_rate_by_length_per_task_and_overall(tmp_path: Path) -> None:
    outcomes = {(t, n, s): (t == "a" and n < 16000) or (t == "b" and n != 16000)
                for t in ("a", "b") for n in (8000, 16000) for s in (0, 1)}
    outcomes["b", 8000, 1] = None  # not finished: no verdict, counted apart
    written = write_report(load([write_run(tmp_path / "r", outcomes, checks=_rubric)]), tmp_path / "o",
                           plots=False)
    assert [t.name for t in written.tables][:2] == ["accuracy", "checks"]
    rows = _csv_rows(tmp_path / "o" / "tables" / "checks.csv")
    assert rows["oracle", "react", "a", "order"] == ["100", "0", "50", "4"]
    assert rows["oracle", "react", "a", "values"] == ["100", "100", "100", "4"]
    assert rows["oracle", "react", "a", "task score"] == ["100", "0", "50", "4"]
    assert rows["oracle", "react", "b", "rows"] == ["100", "0", "33.333333", "3"]
    assert rows["oracle", "react", "b", "task score"] == ["50", "0", "25", "4"]  # over planned episodes
    all_checks = rows["oracle", "react", "a", "all checks"]
    assert all_checks[1] == "66.666667"  # values and no_side_effects of three
    # overall: the shared check pooled over both tasks; a check of one task stays in its task
    assert rows["oracle", "react", "all tasks", "no_side_effects"] == ["100", "100", "100", "7"]
    assert ("oracle", "react", "all tasks", "order") not in rows
    assert rows["oracle", "react", "all tasks", "task score"] == ["75", "0", "37.5", "8"]


def _figure_lines(ax: Any) -> dict[str, Any]:
    return {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}


def test_checks_figure_shows_each_task_s_checks_beside_the_strict_score(tmp_path: Path) -> None:
    from loca.report.checks import check_rates
    from loca.report.plots import checks_figure

    data = load([write_run(tmp_path / "r", _grid(["a", "b"], TIERS, [0]), checks=_rubric)])
    fig = checks_figure(data, check_rates(data), data.rows[0])
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["a", "b", "all tasks"]
    a = _figure_lines(panels[0])
    assert list(a) == ["task score", "all checks", "values", "order", "no_side_effects"]
    assert list(a["order"].get_ydata()) == [100] + [0] * 6
    # values and no_side_effects coincide (100% everywhere): side by side, each its own marker
    assert list(a["values"].get_ydata()) == list(a["no_side_effects"].get_ydata())
    assert all(x < y for x, y in zip(a["values"].get_xdata(), a["no_side_effects"].get_xdata()))
    assert a["values"].get_marker() != a["no_side_effects"].get_marker()
    assert list(_figure_lines(panels[2])) == ["task score", "all checks", "no_side_effects"]
    assert "Check pass rates by length: oracle · react" in fig.get_suptitle()


def test_coinciding_rows_stay_visible_and_figures_name_what_they_cover(tmp_path: Path) -> None:
    from loca.report.cells import cells
    from loca.report.plots import accuracy_figure, metric_figure

    outcomes = _grid(["a", "b"], TIERS, [0, 1, 2, 4])
    data = load([write_run(tmp_path / "react", outcomes),
                 write_run(tmp_path / "clear", outcomes, strategy="clear_tool_results")])
    made = cells(data.of, data.rows, data.lengths)
    for fig in (accuracy_figure(data, made), metric_figure(data, made, "tool_calls", "mean tool calls")):
        react, clear = _figure_lines(fig.axes[0]).values()
        assert list(react.get_ydata()) == list(clear.get_ydata())  # the same figures...
        assert all(x != y for x, y in zip(react.get_xdata(), clear.get_xdata()))  # ...side by side
        assert (react.get_marker(), react.get_linestyle()) != (clear.get_marker(), clear.get_linestyle())
        title = fig.get_suptitle()
        assert "a, b · 8K-256K (7 lengths) · seeds 0-2, 4 · N = 56 planned episodes per row" in title


def _overlaps(fig: Any) -> list[tuple[str, str]]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    out = []
    for ax in fig.axes:
        shown = [(t.get_text(), t.get_window_extent(canvas.get_renderer()))
                 for t in ax.get_xticklabels() if t.get_text() and t.get_visible()]
        out += [(a, b) for (a, box_a), (b, box_b) in pairwise(shown) if box_a.x1 > box_b.x0]
    return out


@pytest.mark.slow
def test_length_tick_labels_never_collide(tmp_path: Path) -> None:
    from loca.report.cells import cells
    from loca.report.checks import check_rates
    from loca.report.plots import accuracy_figure, checks_figure

    lengths = [8000, 16000, 24000, 32000, 48000, 64000, 96000, 128000, 192000, 256000]
    data = load([write_run(tmp_path / "r", _grid(["a", "b", "c", "d", "e"], lengths, [0]), checks=_rubric)])
    panels = checks_figure(data, check_rates(data), data.rows[0])  # six small panels
    wide = accuracy_figure(data, cells(data.of, data.rows, data.lengths))
    assert _overlaps(panels) == [] and _overlaps(wide) == []
    shown = [t.get_text() for t in panels.axes[0].get_xticklabels()]
    assert shown[0] == "8K" and shown[-1] == "256K" and "" in shown  # some left out in a small panel
    assert "" not in [t.get_text() for t in wide.axes[0].get_xticklabels()]  # all fit a wide one


def test_rows_are_grouped_by_the_model_s_reasoning_setting(tmp_path: Path) -> None:
    outcomes = _grid(["a", "b"], [8000], [0])
    high = write_run(tmp_path / "high", outcomes, sampling={"reasoning_effort": "high"})
    off = write_run(tmp_path / "off", _grid(["a", "b"], [8000], [0], success=False))
    thinking = write_run(tmp_path / "thinking", outcomes, sampling={"reasoning_budget_tokens": 8192})
    data = load([high, off, thinking])
    assert [r.label for r in data.rows] == ["oracle · effort high · react", "oracle · default · react",
                                            "oracle · thinking 8192 · react"]
    written = write_report(data, tmp_path / "o", plots=False)
    accuracy = next(t for t in written.tables if t.name == "accuracy")
    assert accuracy.labels == ["model", "settings", "strategy"]
    assert [(labels, values[0].value) for labels, values in accuracy.rows] == [
        (["oracle", "effort high", "react"], 100.0), (["oracle", "default", "react"], 0.0),
        (["oracle", "thinking 8192", "react"], 100.0)]
    assert load([off]).label_columns == ["model", "strategy"]  # no run sets one: no column


def test_the_report_opens_with_what_it_covers(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", _grid(["a", "b"], [8000, 16000], [0, 1]))
    markdown = write_report(load([run]), tmp_path / "o", plots=False).markdown.read_text()
    assert markdown.startswith("# Report\n\na, b · 8K-16K (2 lengths) · seeds 0-1 · "
                               "N = 8 planned episodes per row.\n")
