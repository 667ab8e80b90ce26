"""`loca export`: one training record per episode, with the messages as the model was shown
them (strategies applied), loadable with Hugging Face `datasets`; bad input refused (exit 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from loca.cli import app
from loca.export import MESSAGE_KEYS
from scaffolds.ledger import read_trajectory

TASK = "set_conf_cr_ddl"
PLACEHOLDER = "[Tool result cleared to save context. Call the tool again if you need it.]"
CLEARING = """strategy: clear_tool_results
context:
  max_context_tokens: 32000
  output_reserve: 4000
  strategies:
    clear_tool_results: {trigger: 0.3, keep_last: 0, clear_at_least: 0}
"""
runner = CliRunner()


def _loca(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, [str(a) for a in args], terminal_width=200)
    return result.exit_code, result.output


def _run(out: Path, agent: str, seeds: str, *extra: str) -> Path:
    code, output = _loca("run", "--tasks", TASK, "--lengths", "8k", "--seeds", seeds, "--agent", agent,
                         "--out", out, *extra)
    assert code == 0, output
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    (root / "clearing.yaml").write_text(CLEARING)
    return {"oracle": _run(root / "oracle", "oracle", "0-1"),
            "noop": _run(root / "noop", "noop", "0"),
            "cleared": _run(root / "cleared", "oracle", "0", "--strategy-config", root / "clearing.yaml")}


def _export(out: Path, *args: object) -> list[dict]:
    code, output = _loca("export", *args, "--out", out)
    assert code == 0, output
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def _records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]


def test_a_record_per_episode_with_the_conversation_in_chat_format(runs: dict[str, Path], tmp_path: Path) -> None:
    exported = _export(tmp_path / "out.jsonl", runs["oracle"])
    originals = _records(runs["oracle"])
    assert [r["episode_id"] for r in exported] == [r["episode_id"] for r in originals]
    for record, original in zip(exported, originals, strict=True):
        assert (record["task"], record["length"], record["target_tokens"], record["seed"]) == \
            (TASK, "8k", 8000, original["seed"])
        assert (record["agent"], record["model"], record["strategy"]) == ("oracle", None, "react")
        assert record["passed"] is True and record["terminal_state"] == "claimed_done"
        assert [c["name"] for c in record["checks"]] == [c["name"] for c in original["checks"]]
        assert json.loads(record["metrics"]) == original["metrics"]
        ledger = read_trajectory(runs["oracle"] / original["trajectory"])
        messages = record["messages"]
        assert all(tuple(m) == MESSAGE_KEYS for m in messages)
        assert [m["role"] for m in messages] == [m.role for m in ledger.messages]  # nothing removed at 8k
        assert messages[0]["content"] == ledger.messages[0].text and messages[1]["role"] == "user"
        calls = [c for m in messages if m["role"] == "assistant" for c in m["tool_calls"] or []]
        results = [m for m in messages if m["role"] == "tool"]
        assert [c["id"] for c in calls] == [m["tool_call_id"] for m in results]
        assert [m["content"] for m in results] == [m.content for m in ledger.messages if m.role == "tool"]
        assert calls[-1]["function"]["name"] == "claim_done_claim_done"
        assert all(json.loads(c["function"]["arguments"]) is not None and c["type"] == "function" for c in calls)
        tools = json.loads(record["tools"])
        assert tools == [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                                           "parameters": t["parameters"]}}
                         for t in ledger.of_type("tools")[0]["tools"]]


def test_a_cleared_result_is_exported_as_the_model_saw_it(runs: dict[str, Path], tmp_path: Path) -> None:
    [record] = _export(tmp_path / "out.jsonl", runs["cleared"])
    ledger = read_trajectory(runs["cleared"] / _records(runs["cleared"])[0]["trajectory"])
    cleared = {mid for s in ledger.of_type("strategy") for mid in s["changes"].get("clear", [])}
    assert record["strategy"] == "clear_tool_results" and len(cleared) == 1  # the other is smaller than the placeholder
    shown = {m["tool_call_id"]: m["content"] for m in record["messages"] if m["role"] == "tool"}
    for message in ledger.messages:
        if message.role == "tool":
            assert shown[message.call_id] == (PLACEHOLDER if message.mid in cleared else message.content)
    largest = max((m for m in ledger.messages if m.mid in cleared), key=lambda m: len(m.content or ""))
    assert len(largest.content or "") > 10_000
    assert largest.content not in json.dumps(record)


def test_a_ledger_whose_view_cannot_be_reproduced_is_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "cleared"
    shutil.copytree(runs["cleared"], run)
    path = run / _records(run)[0]["trajectory"]
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(line for line in lines if '"type": "strategy"' not in line), encoding="utf-8")
    code, output = _loca("export", run, "--out", tmp_path / "out.jsonl")
    assert code == 2 and "the rendered view differs from the one the request recorded" in " ".join(output.split())
    assert not (tmp_path / "out.jsonl").exists()


def test_filters(runs: dict[str, Path], tmp_path: Path) -> None:
    both = (runs["oracle"], runs["noop"])
    assert [r["agent"] for r in _export(tmp_path / "a.jsonl", *both)] == ["oracle", "oracle", "noop"]
    assert [r["agent"] for r in _export(tmp_path / "b.jsonl", *both, "--only", "success")] == ["oracle"] * 2
    failures = _export(tmp_path / "c.jsonl", *both, "--only", "failure", "--terminal-state", "claimed_done")
    assert [(r["agent"], r["passed"]) for r in failures] == [("noop", False)]
    assert not [c for c in failures[0]["checks"] if c["name"] == "event_set" and c["passed"]]
    code, output = _loca("export", *both, "--terminal-state", "max_turns", "--out", tmp_path / "d.jsonl")
    assert code == 2 and "no episode of the runs matches the filters" in output
    assert not (tmp_path / "d.jsonl").exists()


def test_parquet_and_jsonl_load_with_datasets_as_the_same_rows(runs: dict[str, Path], tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    args = (runs["oracle"], runs["cleared"], runs["noop"])
    rows = _export(tmp_path / "out.jsonl", *args)
    code, output = _loca("export", *args, "--format", "parquet", "--out", tmp_path / "out.parquet")
    assert code == 0, output
    for kind, name in (("json", "out.jsonl"), ("parquet", "out.parquet")):
        loaded = datasets.load_dataset(kind, data_files=str(tmp_path / name), split="train",
                                       cache_dir=str(tmp_path / f"cache-{kind}"))
        assert loaded.to_list() == rows, kind
    assert any(m["content"] == PLACEHOLDER for m in loaded[2]["messages"])  # the cleared run


def test_the_same_runs_give_the_same_bytes(runs: dict[str, Path], tmp_path: Path) -> None:
    for fmt in ("jsonl", "parquet"):
        first, second = tmp_path / f"1.{fmt}", tmp_path / f"2.{fmt}"
        for out in (first, second):
            code, output = _loca("export", runs["oracle"], runs["cleared"], "--format", fmt, "--out", out)
            assert code == 0, output
        assert first.read_bytes() == second.read_bytes()


def test_an_episode_without_a_ledger_is_left_out_and_said_so(runs: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "oracle"
    shutil.copytree(runs["oracle"], run)
    records = _records(run)
    records[1] = {k: v for k, v in records[1].items() if k != "trajectory"} | {"terminal_state": "env_setup_error"}
    (run / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    code, output = _loca("export", run, "--out", tmp_path / "out.jsonl")
    assert code == 0 and "left out 1 episodes that ended before the agent loop ran" in output
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 1


@pytest.mark.parametrize("case", ["not a run", "missing", "out is a directory", "format", "only", "state"])
def test_bad_input_is_refused_readably(case: str, runs: dict[str, Path], tmp_path: Path) -> None:
    run, out, extra = runs["oracle"], tmp_path / "out.jsonl", []
    if case == "not a run":
        run = tmp_path
    elif case == "missing":
        run = tmp_path / "nowhere"
    elif case == "out is a directory":
        out = tmp_path
    else:
        extra = {"format": ["--format", "csv"], "only": ["--only", "passed"],
                 "state": ["--terminal-state", "finished"]}[case]
    code, output = _loca("export", run, "--out", out, *extra)
    assert code == 2, output
    assert "loca: error:" in output and "Traceback" not in output
    assert not out.is_file()
