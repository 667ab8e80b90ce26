"""Run records: the typed files of a run directory and their one loader. `tests/data/run_v1` is a
run directory as the runner wrote it before records carried a schema version (the oracle on
set_conf_cr_ddl at 8k, seeds 0-1; no trajectories, no worlds)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loca.core.outcome import Check, EpisodeMetrics
from loca.records import SCHEMA_VERSION, Episode, EpisodeRecord, RunFileError, load_run
from loca.records.load import parse_record, read_result, read_summary
from loca.report import load, write_report
from loca.runner import RunConfig, RunError, execute
from loca.view import Catalog

V1 = Path(__file__).parent / "data" / "run_v1"
EPISODE_IDS = ["set_conf_cr_ddl__8k__s0__oracle", "set_conf_cr_ddl__8k__s1__oracle"]


@pytest.fixture
def old_run(tmp_path: Path) -> Path:
    return Path(shutil.copytree(V1, tmp_path / "run"))


def test_a_run_written_before_versions_loads_as_version_1() -> None:
    run = load_run(V1)
    assert run.manifest.schema_version == 1 and run.settings.agent == "oracle"
    assert [e.episode_id for e in run.planned] == EPISODE_IDS
    record = run.records[EPISODE_IDS[0]]
    assert record.schema_version == 1 and record.success and record.terminal_state == "claimed_done"
    assert isinstance(record.metrics, EpisodeMetrics) and record.metrics.turns == 4
    assert record.checks[0] == Check(name="event_set", passed=True,
                                     detail="3 new events, one per listed conference")
    assert record.params == {"num_target": 3, "num_noise": 4, "num_misc_emails": 8}
    assert read_result(V1 / "episodes" / EPISODE_IDS[1] / "result.json") == run.records[EPISODE_IDS[1]]
    summary = read_summary(V1 / "summary.json")
    assert summary.schema_version == 1 and (summary.episodes, summary.passed) == (2, 2)


def test_an_old_run_reports_and_shows_as_the_runner_left_it(tmp_path: Path) -> None:
    written = write_report(load([V1]), tmp_path / "report", plots=False)
    accuracy = (tmp_path / "report" / "tables" / "accuracy.csv").read_text().splitlines()
    assert accuracy[1].startswith("oracle,react,100,")
    assert "| oracle | react | 8K | 2 | 4.0 | 50.1 | 0.2 |" in written.markdown.read_text()
    rows = Catalog([V1]).listing({})["items"]
    assert [(r["episode_id"], r["passed"], r["turns"], r["failed_checks"]) for r in rows] == [
        (EPISODE_IDS[0], "yes", 4, []), (EPISODE_IDS[1], "yes", 4, [])]


def test_an_old_run_resumes_without_running_anything(old_run: Path) -> None:
    def must_not_run(episode, episode_dir, config):  # type: ignore[no-untyped-def]
        raise AssertionError(f"{episode.episode_id} ran again")

    before = (old_run / "episodes.jsonl").read_text()
    config = RunConfig(tasks=["set_conf_cr_ddl"], lengths=[8000], seeds=[0, 1], agent="oracle")
    outcome = execute(config, old_run, must_not_run)
    assert (outcome.resume.done, outcome.resume.new, outcome.resume.retry) == (2, 0, 0)
    assert (old_run / "episodes.jsonl").read_text() == before
    old = read_summary(V1 / "summary.json")
    assert outcome.summary == old.model_copy(update={"schema_version": SCHEMA_VERSION})
    assert json.loads((old_run / "summary.json").read_text())["schema_version"] == SCHEMA_VERSION


def test_a_record_lacking_optional_fields_takes_their_defaults() -> None:
    record = parse_record({"episode_id": "e", "task": "t", "length": "8k", "target_tokens": 8000,
                           "seed": 0, "agent": "noop", "terminal_state": "final_text", "success": False},
                          "here")
    assert (record.schema_version, record.trial, record.attempt, record.graded, record.reward) == (1, 0, 1, False, 0.0)
    assert record.checks == [] and record.metrics is None and record.trajectory is None


def test_a_record_is_written_and_read_back_unchanged() -> None:
    episode = Episode("t", 16000, 3, "openai:m", trial=2)
    record = EpisodeRecord.model_validate({
        **episode.to_dict(), "terminal_state": "llm_error", "success": False, "strategy": "react",
        "checks": [{"name": "values", "passed": False, "detail": "2 of 3", "error": False}],
        "metrics": {"turns": 2, "context_series": [{"turn": 1, "predicted": 900, "fired": ["truncate"]}]},
        "error": {"class": "LLMCallError", "message": "refused", "details": {"kind": "auth"}}})
    line = json.loads(json.dumps(record.to_dict()))
    assert line["schema_version"] == SCHEMA_VERSION and line["episode_id"] == "t__16k__s3__openai-m__t2"
    assert parse_record(line, "here") == record and record.error_kind == "auth"
    assert Episode.from_dict(episode.to_dict()).episode_id == episode.episode_id


@pytest.mark.parametrize("name", ["run.json", "episodes.jsonl"])
def test_files_of_a_newer_version_are_refused_in_one_line(old_run: Path, name: str) -> None:
    path = old_run / name
    if name == "run.json":
        path.write_text(json.dumps({**json.loads(path.read_text()), "schema_version": SCHEMA_VERSION + 1}))
        where = str(path)
    else:
        line = json.loads(path.read_text().splitlines()[0])
        path.write_text(json.dumps({**line, "schema_version": SCHEMA_VERSION + 1}) + "\n")
        where = f"{path}: line 1"
    with pytest.raises(RunFileError) as refused:
        load_run(old_run)
    assert str(refused.value) == (f"{where} was written by a newer loca (schema version {SCHEMA_VERSION + 1}; "
                                  f"this one reads up to {SCHEMA_VERSION}): upgrade loca to read it")


def test_the_runner_will_not_resume_a_run_it_cannot_read(old_run: Path) -> None:
    result = old_run / "episodes" / EPISODE_IDS[0] / "result.json"
    result.write_text(json.dumps({**json.loads(result.read_text()), "schema_version": SCHEMA_VERSION + 1}))
    config = RunConfig(tasks=["set_conf_cr_ddl"], lengths=[8000], seeds=[0, 1], agent="oracle")
    with pytest.raises(RunError, match=r"result.json was written by a newer loca .*; use another --out$"):
        execute(config, old_run, lambda *_: pytest.fail("nothing may run"))
