"""Runs: records, summary, resume after a kill without losing or duplicating work, growth of a
run's plan, retries of errored episodes, the circuit breaker, the worlds kept."""

from __future__ import annotations

import json

import pytest

from envs.core.registry import Task
from loca.episode import run_episode
from loca.runner import Breaker, EpisodeRecord, RunConfig, RunSummary, SettingsError, execute, explain, plan
from mock_servers.sandbox import recorded_mode
from scaffolds.oracles import agents

pytest_plugins = ["tests.fake_llm"]


@pytest.fixture
def config_for(any_task: Task):  # type: ignore[no-untyped-def]
    def make(agent: str, **extra) -> RunConfig:  # type: ignore[no-untyped-def]
        return RunConfig(tasks=[any_task.name], lengths=[8000], seeds=[0, 1], agent=agent, **extra)
    return make


def _lines(out) -> list[dict]:
    return [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]


def test_oracle_run_writes_records_and_summary(tmp_path, config_for, any_task):
    out = tmp_path / "run"
    summary = execute(config_for("oracle", keep_worlds="all"), out, run_episode).summary
    assert summary.episodes == 2 and summary.passed == 2 and summary.accuracy == 1.0
    assert summary.by_length["8k"].model_dump() == {"episodes": 2, "finished": 2, "passed": 2, "accuracy": 1.0}
    assert summary.by_task_length[any_task.name]["8k"] == summary.by_length["8k"]
    assert summary.by_terminal_state == {"claimed_done": 2} and summary.not_passed == {}
    records = _lines(out)
    assert [r["seed"] for r in records] == [0, 1]
    for r in records:
        assert r["terminal_state"] == "claimed_done" and r["success"] and r["reward"] == 1.0
        assert r["attempt"] == 1 and r["trial"] == 0
        assert abs(r["env_description_tokens"] - 8000) <= 400
        assert [c["name"] for c in r["checks"]] == list(any_task.checks.names)
        assert (out / r["world_dir"] / "world.json").is_file()
        assert (out / r["trajectory"]).is_file()
        assert r["sandbox"] == recorded_mode() is not None
    assert RunSummary.model_validate_json((out / "summary.json").read_text()) == summary
    assert json.loads((out / "run.json").read_text())["sandbox"] == [recorded_mode()]


@pytest.mark.parametrize(("keep", "kept"), [("all", [True, True]), ("failed", [False, True]),
                                            ("none", [False, False])])
def test_keep_worlds_decides_which_final_worlds_stay(tmp_path, any_task, keep, kept):
    """The trajectory and the record always stay; the world as asked (the oracle passes, the
    no-op agent does not)."""
    out = tmp_path / "run"
    for agent in ("oracle", "noop"):
        execute(RunConfig(tasks=[any_task.name], lengths=[8000], seeds=[0], agent=agent, keep_worlds=keep),
                out / agent, run_episode)
    records = [_lines(out / agent)[0] for agent in ("oracle", "noop")]
    assert [(out / a / "episodes" / r["episode_id"] / "world").exists() for a, r in
            zip(("oracle", "noop"), records, strict=True)] == kept
    assert [r["world_dir"] is not None for r in records] == kept
    assert all((out / a / r["trajectory"]).is_file() for a, r in zip(("oracle", "noop"), records, strict=True))


def test_an_unconfined_resume_is_recorded_in_the_run_and_its_episodes(tmp_path, config_for, monkeypatch):
    out = tmp_path / "run"
    config = config_for("noop")
    first = recorded_mode()
    execute(config, out, run_episode)
    victim = out / "episodes" / plan(config)[1].episode_id
    (victim / "result.json").unlink()
    monkeypatch.setenv("LOCA_SANDBOX", "unconfined")
    execute(config, out, run_episode)
    assert json.loads((out / "run.json").read_text())["sandbox"] == [first, "unconfined"]
    assert [r["sandbox"] for r in _lines(out)] == [first, first, "unconfined"]


def test_resume_after_a_kill_runs_each_episode_exactly_once(tmp_path, config_for):
    out = tmp_path / "run"
    config = config_for("noop")
    first = execute(config, out, run_episode).summary
    episodes = plan(config)
    # simulate a kill: the second episode never wrote its result, and the log line was cut
    victim = out / "episodes" / episodes[1].episode_id
    (victim / "result.json").unlink()
    text = (out / "episodes.jsonl").read_text().splitlines()
    (out / "episodes.jsonl").write_text(text[0] + "\n" + text[1][: len(text[1]) // 2])
    again = execute(config, out, run_episode)
    records = _lines(out)
    assert sorted(r["episode_id"] for r in records) == sorted(e.episode_id for e in episodes)
    assert again.summary == first and first.passed == 0 and first.episodes == 2
    assert (again.resume.done, again.resume.retry, again.resume.new) == (1, 0, 1)


def test_a_run_directory_belongs_to_one_agent_and_its_settings(tmp_path, any_task):
    out = tmp_path / "run"
    execute(RunConfig(tasks=[any_task.name], lengths=[8000], seeds=[0], agent="noop"), out, run_episode)
    manifest = (out / "manifest.jsonl").read_text()
    with pytest.raises(SettingsError) as refused:
        execute(RunConfig(tasks=[any_task.name], lengths=[8000], seeds=[0, 1], agent="oracle", max_turns=50),
                out, run_episode)
    assert refused.value.differences == ["agent: noop → oracle", "max_turns: 300 → 50"]
    assert (out / "manifest.jsonl").read_text() == manifest  # nothing planned, nothing run


def test_a_run_grows_by_the_episodes_a_larger_plan_adds(tmp_path, any_task, monkeypatch):
    """Seeds 0-1, then 0-3 and a second length in the same directory: the new episodes run,
    the old ones are kept, and the summary covers every planned episode, each once."""
    ran: list[str] = []

    def episode_fn(episode, episode_dir, config):  # type: ignore[no-untyped-def]
        ran.append(episode.episode_id)
        return EpisodeRecord.model_validate({**episode.to_dict(), "terminal_state": "claimed_done",
                                             "success": episode.seed % 2 == 0})

    out = tmp_path / "run"
    small = RunConfig(tasks=[any_task.name], lengths=[8000], seeds=[0, 1], agent="noop")
    execute(small, out, episode_fn)
    grown = execute(small.model_copy(update={"seeds": [0, 1, 2, 3], "lengths": [8000, 16000]}), out, episode_fn)
    assert (grown.resume.done, grown.resume.new) == (2, 6) and len(ran) == len(set(ran)) == 8
    cells = grown.summary.by_task_length[any_task.name]
    assert {k: (t.episodes, t.finished, t.passed) for k, t in cells.items()} == {"8k": (4, 4, 2), "16k": (4, 4, 2)}
    ids = [json.loads(line)["episode_id"] for line in (out / "manifest.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 8 and sorted(r["episode_id"] for r in _lines(out)) == sorted(ids)
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["config"]["seeds"] == [0, 1, 2, 3] and run_json["config"]["lengths"] == [8000, 16000]
    smaller = execute(small, out, episode_fn)  # a smaller plan runs nothing; the summary still covers all
    assert smaller.summary.episodes == 8 and len(ran) == 8


def test_trials_are_distinct_episodes_and_a_run_grows_by_trials(tmp_path, any_task):
    def episode_fn(episode, episode_dir, config):  # type: ignore[no-untyped-def]
        return EpisodeRecord.model_validate({**episode.to_dict(), "terminal_state": "claimed_done", "success": True})

    out = tmp_path / "run"
    one = RunConfig(tasks=[any_task.name], lengths=[8000], seeds=[0], agent="noop")
    execute(one, out, episode_fn)
    three = execute(one.model_copy(update={"trials": 3}), out, episode_fn)
    assert (three.resume.done, three.resume.new, three.summary.episodes) == (1, 2, 3)
    assert sorted(r["episode_id"] for r in _lines(out)) == sorted(
        f"{any_task.name}__8k__s0__noop{suffix}" for suffix in ("", "__t1", "__t2"))


def _errored(kind: str | None, state: str = "llm_error"):  # type: ignore[no-untyped-def]
    """An episode function whose episodes all end in `state`, their model calls having run into
    `kind`."""
    def episode_fn(episode, episode_dir, config):  # type: ignore[no-untyped-def]
        details = {"error_class": "transient", "kind": kind} if kind else None
        return EpisodeRecord.model_validate({
            **episode.to_dict(), "terminal_state": state, "success": False,
            "error": {"class": "LLMCallError", "message": "no answer", "details": details}})
    return episode_fn


def test_a_rerun_retries_the_episodes_that_errored(tmp_path, config_for):
    """`llm_error` and `harness_error` episodes run again on a rerun (a new attempt, the old
    line kept in episodes.jsonl); agent-class endings stay; `retry_errors=False` keeps them."""
    out = tmp_path / "run"
    config = config_for("noop")
    execute(config, out, _errored("server_error"))
    kept = execute(config, out, run_episode, retry_errors=False)
    assert (kept.resume.done, kept.resume.retry) == (2, 0) and kept.summary.not_passed == {"llm_error": 2}
    again = execute(config, out, run_episode)
    assert (again.resume.done, again.resume.retry, again.resume.new) == (0, 2, 0)
    assert again.summary.by_terminal_state == {"claimed_done": 2}
    assert [(r["terminal_state"], r["attempt"]) for r in _lines(out)] == [
        ("llm_error", 1), ("llm_error", 1), ("claimed_done", 2), ("claimed_done", 2)]
    assert execute(config, out, run_episode).resume.done == 2  # agent-class endings are final


def test_the_breaker_stops_a_run_whose_provider_fails_the_same_way(tmp_path, any_task):
    out = tmp_path / "run"
    config = RunConfig(tasks=[any_task.name], lengths=[8000], seeds=list(range(6)), agent="noop")
    outcome = execute(config, out, _errored("connection_refused"))
    assert outcome.stopped is not None and outcome.stopped.kind == "connection_refused"
    assert outcome.summary.finished == 3 and outcome.summary.by_error_kind == {"connection_refused": 3}
    rerun = execute(config, out, _errored("connection_refused"), breaker=Breaker(0))
    assert rerun.stopped is None and (rerun.resume.retry, rerun.resume.new) == (3, 3)
    assert rerun.summary.finished == 6


def test_a_truncating_provider_stops_the_run_at_once_and_a_rerun_retries_it(tmp_path, any_task):
    """Every episode on a server that cuts the prompt would be played on part of it: the first
    `provider_truncated` episode stops the run, with the fix in the explanation."""
    out = tmp_path / "run"
    config = RunConfig(tasks=[any_task.name], lengths=[8000], seeds=list(range(4)), agent="noop")
    outcome = execute(config, out, _errored(None, "provider_truncated"))
    assert outcome.stopped is not None and outcome.stopped.kind == "provider_truncated"
    assert outcome.summary.finished == 1
    assert explain(outcome.stopped, "noop", None).startswith("stopped: provider_truncated: no answer")
    rerun = execute(config, out, run_episode)
    assert rerun.stopped is None and (rerun.resume.retry, rerun.resume.new) == (1, 3)
    assert rerun.summary.by_terminal_state == {"claimed_done": 4}


@pytest.mark.parametrize("kinds", [
    ["connection_refused", "auth", "connection_refused", "auth"],  # not the same way
    ["rate_limited"] * 4,  # a failure that waiting mends
    [None] * 4,  # a client that could not be made
])
def test_the_breaker_holds_for_mixed_or_passing_failures(kinds):
    breaker = Breaker(3)
    for seed, kind in enumerate(kinds):
        record = EpisodeRecord.model_validate(_errored(kind)(plan(RunConfig(
            tasks=["t"], lengths=[8000], seeds=[seed], agent="noop"))[0], None, None))
        assert breaker.observe(record) is None


def test_old_run_directories_resume_without_running_or_logging_anything_again(tmp_path, config_for):
    """A run written before trials, attempts and the settings digest existed."""
    out = tmp_path / "run"
    config = config_for("noop")
    execute(config, out, run_episode)
    run_json = json.loads((out / "run.json").read_text())
    run_json["config_hash"] = "0123456789abcdef"
    (out / "run.json").write_text(json.dumps(run_json))
    for name in ("manifest.jsonl", "episodes.jsonl"):
        lines = [{k: v for k, v in json.loads(line).items() if k not in ("trial", "attempt")}
                 for line in (out / name).read_text().splitlines()]
        (out / name).write_text("".join(json.dumps(line) + "\n" for line in lines))
    for episode in plan(config):
        path = out / "episodes" / episode.episode_id / "result.json"
        path.write_text(json.dumps({k: v for k, v in json.loads(path.read_text()).items()
                                    if k not in ("trial", "attempt")}))
    before = (out / "episodes.jsonl").read_text()
    again = execute(config, out, run_episode)
    assert again.resume.done == 2 and (out / "episodes.jsonl").read_text() == before


def test_openai_agent_end_to_end_against_a_fake_server(tmp_path, fake_llm, monkeypatch, any_task):
    from envs.core.env import LocaEnv
    from tests.fake_llm import completion, tool_call

    probe = LocaEnv(any_task.name)
    try:
        _, info = probe.reset(seed=3)
    finally:
        probe.close()
    read_tool = next(t["name"] for t in info["tools"] if info["read_only"][t["name"]]
                     and not t["parameters"]["required"])
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    fake_llm.push(
        completion(None, tool_call(read_tool, {})),
        completion("Two calls in one turn.", tool_call(read_tool, {}), tool_call("no_such_tool", {})),
        completion(None, tool_call("claim_done_claim_done", {})),
    )
    config = RunConfig(tasks=[any_task.name], lengths=[8000], seeds=[3], agent="openai:fake-model",
                       base_url=fake_llm.base_url)
    summary = execute(config, tmp_path / "run", run_episode).summary
    [record] = _lines(tmp_path / "run")
    assert record["terminal_state"] == "claimed_done" and not record["success"]
    assert agents(any_task.name).must_fail("noop") in [c["name"] for c in record["checks"] if not c["passed"]]
    assert record["metrics"]["tool_calls"] == 3 and summary.passed == 0  # the unknown name is not run
    # the model saw the real tool results, in order, with the tool schemas
    second = fake_llm.requests[1]
    assert second["model"] == "fake-model"
    assert any(t["function"]["name"] == read_tool for t in second["tools"])
    tool_turn = [m for m in second["messages"] if m["role"] == "tool"]
    assert tool_turn and not tool_turn[0]["content"].startswith("[Tool execution error")
    third = fake_llm.requests[2]
    assert [m["role"] for m in third["messages"]][-2:] == ["tool", "tool"]
    assert "no tool named 'no_such_tool'" in third["messages"][-1]["content"]


def test_anthropic_agent_end_to_end_against_a_fake_server(tmp_path, fake_anthropic, monkeypatch,
                                                          any_task):
    from tests.fake_anthropic import measured_usage, message, text, tool_use

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    fake_anthropic.push(
        message(text("Two calls in one turn."), tool_use("no_such_tool"), tool_use("other_tool")),
        message(tool_use("claim_done_claim_done")),
    )
    config = RunConfig(tasks=[any_task.name], lengths=[8000], seeds=[3],
                       agent="anthropic:claude-sonnet-4-5", base_url=fake_anthropic.base_url)
    execute(config, tmp_path / "run", run_episode)
    [record] = _lines(tmp_path / "run")
    assert record["terminal_state"] == "claimed_done" and not record["success"]
    assert record["metrics"]["tool_calls_invalid"] == 2
    assert record["metrics"]["usage_reported"] and record["metrics"]["input_tokens"] == sum(
        measured_usage(body)["input_tokens"] for body in fake_anthropic.requests)
    assert record["metrics"]["cost_usd"] is None  # another endpoint than the profile's: no price
    first, second = fake_anthropic.requests
    assert first["model"] == "claude-sonnet-4-5" and first["max_tokens"] == 32768
    assert any(t["name"] == "claim_done_claim_done" for t in first["tools"])
    results = second["messages"][-1]["content"]
    assert [b["type"] for b in results] == ["tool_result", "tool_result"]
    assert "no tool named 'no_such_tool'" in results[0]["content"]


@pytest.mark.parametrize("agent", ["anthropic:claude-sonnet-4-5", "profile:claude-sonnet-4-5"])
def test_every_llm_agent_is_shown_the_strategies_view(tmp_path, fake_anthropic, monkeypatch,
                                                      any_task, agent):
    """Only scripted agents run context-blind: a model, whatever its provider, gets the view the
    strategies render (here the awareness note, which the ledger's messages never hold)."""
    from scaffolds.context import ContextConfig
    from tests.fake_anthropic import message, tool_use

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    fake_anthropic.push(message(tool_use("no_such_tool")), message(tool_use("claim_done_claim_done")))
    config = RunConfig(tasks=[any_task.name], lengths=[8000], seeds=[3], agent=agent,
                       base_url=fake_anthropic.base_url, strategy="awareness",
                       context=ContextConfig.model_validate({"strategies": {"awareness": {}}}))
    assert not config.scripted
    execute(config, tmp_path / "run", run_episode)
    second = fake_anthropic.requests[1]
    texts = [block.get("text", "") for m in second["messages"] if isinstance(m["content"], list)
             for block in m["content"]]
    assert any("<system_warning>Token usage:" in t for t in texts)


def test_a_bad_episode_is_recorded_and_the_run_goes_on(tmp_path, config_for, monkeypatch):
    """An exception anywhere in an episode ends it as a recorded `harness_error`; the other
    episodes run, and a resume runs none of them again."""
    from scaffolds.loop import AgentLoop

    calls: list[int] = []
    real_run = AgentLoop.run

    async def flaky_run(self, seed, options, episode_dir):  # type: ignore[no-untyped-def]
        calls.append(seed)
        if seed == 0:
            raise RuntimeError("boom in the loop")
        return await real_run(self, seed, options, episode_dir)

    monkeypatch.setattr(AgentLoop, "run", flaky_run)
    out = tmp_path / "run"
    summary = execute(config_for("noop"), out, run_episode).summary
    bad, good = _lines(out)
    assert bad["terminal_state"] == "harness_error" and not bad["success"]
    assert bad["error"]["class"] == "RuntimeError" and "boom in the loop" in bad["error"]["traceback"]
    assert good["terminal_state"] == "claimed_done"
    assert summary.episodes == summary.finished == 2
    assert summary.by_terminal_state == {"claimed_done": 1, "harness_error": 1}
    kept = execute(config_for("noop"), out, run_episode, retry_errors=False)
    assert kept.summary == summary and calls == [0, 1]


def test_an_episode_function_that_raises_or_returns_junk_is_recorded(tmp_path, config_for):
    def episode_fn(episode, episode_dir, config):  # type: ignore[no-untyped-def]
        if episode.seed == 0:
            raise ValueError("episode function failed")
        return {**episode.to_dict(), "terminal_state": "claimed_done", "success": True}  # not a record

    summary = execute(config_for("noop"), tmp_path / "run", episode_fn).summary
    records = _lines(tmp_path / "run")
    assert [r["terminal_state"] for r in records] == ["harness_error", "harness_error"]
    assert "episode function failed" in records[0]["error"]["message"]
    assert records[1]["error"]["class"] == "TypeError" and summary.passed == 0


def test_a_client_that_cannot_be_made_is_an_llm_error(tmp_path, config_for, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    execute(config_for("openai:fake-model", base_url="http://127.0.0.1:9/v1"), tmp_path / "run",
            run_episode)
    records = _lines(tmp_path / "run")
    assert [r["terminal_state"] for r in records] == ["llm_error", "llm_error"]
    assert "OPENAI_API_KEY" in records[0]["error"]["message"]


def test_a_usage_block_with_words_for_numbers_does_not_stop_the_run(tmp_path, fake_llm,
                                                                     monkeypatch, config_for):
    from tests.fake_llm import completion

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    fake_llm.push(completion("Done.", usage={"prompt_tokens": 100, "completion_tokens": "many"}),
                  completion("Done."))
    summary = execute(config_for("openai:fake-model", base_url=fake_llm.base_url),
                      tmp_path / "run", run_episode).summary
    first, second = _lines(tmp_path / "run")
    assert first["terminal_state"] == second["terminal_state"] == "final_text"
    assert not first["metrics"]["usage_reported"] and second["metrics"]["usage_reported"]
    assert summary.finished == 2


def test_timeouts_are_recorded_but_do_not_change_the_run(tmp_path, config_for):
    from scaffolds.clients import Timeouts

    quick = config_for("noop", timeouts=Timeouts(connect_s=2, response_s=5))
    assert quick.digest() == config_for("noop").digest()
    execute(quick, tmp_path / "run", run_episode)
    run_json = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run_json["config"]["timeouts"]["connect_s"] == 2
    execute(config_for("noop"), tmp_path / "run", run_episode)  # resumes under other timeouts
