"""Context configuration: budget terms, each validation rule of see docs/concepts/context.md, presets, files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from loca.cli import app
from loca.runner import RunConfig
from scaffolds.budget import DEFAULT_BUDGET, DEFAULTS_TEXT, Budget
from scaffolds.clients import Sampling
from scaffolds.config import AgentConfig
from scaffolds.context import ContextConfig, choose, load_file

CONTEXT_PAGE = Path(__file__).resolve().parents[1] / "docs" / "concepts" / "context.md"


def agent(strategies: dict[str, Any] | None = None, max_output_tokens: int = 32768,
          **context: Any) -> AgentConfig:
    return AgentConfig(sampling=Sampling(max_output_tokens=max_output_tokens),
                       context=ContextConfig.model_validate(
                           {**context, "strategies": strategies or {}}))


def refused(match: str, **kwargs: Any) -> None:
    with pytest.raises(ValidationError, match=match):
        agent(**kwargs)


def test_budget_terms_and_triggers() -> None:
    budget = ContextConfig().budget(32768)
    assert (budget.window, budget.reserve, budget.margin) == (128_000, 32768, 2560)
    assert budget.input_budget == 128_000 - 32768 - 2560
    assert budget.tokens(0.5) == budget.input_budget // 2  # fractions are of B, not of W
    assert budget.tokens(1000) == 1000
    assert budget.over(1001, 1000) and not budget.over(1000, 1000)
    small = ContextConfig(max_context_tokens=8000, output_reserve=1000).budget(32768)
    assert (small.reserve, small.margin) == (1000, 512)
    assert ContextConfig(margin=0).budget(100).input_budget == 128_000 - 100


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"max_context_tokens": 1000, "max_output_tokens": 1000}, "must be below the context window"),
    ({"max_context_tokens": 2000, "max_output_tokens": 1000, "margin": 1000}, "not positive"),
    ({"strategies": {"clear_tool_results": {"trigger": 1.5}}}, r"must lie in \(0, 1\)"),
    ({"strategies": {"clear_tool_results": {"trigger": 0.0}}}, r"must lie in \(0, 1\)"),
    ({"strategies": {"compaction": {"trigger": 200_000}}}, "a token trigger must lie in"),
    ({"strategies": {"clear_thinking": {"trigger": 0}}}, "a token trigger must lie in"),
    ({"strategies": {"clear_tool_results": {"trigger": 0.8}, "compaction": {"trigger": 0.7}}},
     "below clear_tool_results.trigger"),
    ({"strategies": {"clear_thinking": {"trigger": 0.9}, "compaction": {"trigger": 0.85}}},
     "below clear_thinking.trigger"),
    ({"strategies": {"clear_tool_results": {"clear_fraction": 0.5, "keep_last": 2}}},
     "exactly one of clear_fraction and keep_last"),
    ({"strategies": {"clear_tool_results": {"clear_fraction": None}}},
     "exactly one of clear_fraction and keep_last"),
    ({"strategies": {"clear_tool_results": {"keep_last": -1}}}, "greater than or equal to 0"),
    ({"strategies": {"clear_tool_results": {"protect_recent": -1}}}, "greater than or equal"),
    ({"strategies": {"clear_thinking": {"keep_last_turns": -2}}}, "greater than or equal"),
    ({"strategies": {"truncate": {"min_recent_turns": -1}}}, "greater than or equal"),
    ({"strategies": {"compaction": {"keep_recent_turns": -1}}}, "greater than or equal"),
    ({"strategies": {"clear_tool_results": {"placeholder": "  "}}}, "placeholder is empty"),
    ({"strategies": {"clear_thinking": {"placeholder": ""}}}, "placeholder is empty"),
    ({"strategies": {"awareness": {"budget_shown": 200_000}}}, r"must be in \(0, W=128000\]"),
    ({"strategies": {"awareness": {"budget_shown": "trigger"}}}, "needs clear_tool_results"),
    ({"strategies": {"compaction": {"summary_max_tokens": 30_000}}}, "above 0.25 B"),
    ({"strategies": {"compaction": {"prompt": "system/react@1"}}}, "not a compaction prompt"),
    ({"strategies": {"compaction": {"preamble": "compaction/preamble@9"}}}, "unknown prompt"),
    ({"strategies": {"compaction": {"colour": "red"}}}, "Extra inputs are not permitted"),
    ({"strategies": {"memory": {"colour": "red"}}}, "Extra inputs are not permitted"),
    ({"strategies": {"memory": {"warning": "on"}}}, "warning: on needs a reset strategy"),
    ({"strategies": {"memory": {"warning": "on"}, "clear_thinking": {}}},
     "warning: on needs a reset strategy"),
    ({"strategies": {"memory": {"warn_fraction": 1.0}, "compaction": {}}}, "less than 1"),
    ({"strategies": {"memory": {"warn_fraction": 0}, "compaction": {}}}, "greater than 0"),
    ({"strategies": {"memory": {"warning": "sometimes"}}}, "'auto', 'on' or 'off'"),
    ({"strategies": {"memory": {"protocol": "ptc/description@1"}}}, "not a memory prompt"),
    ({"strategies": {"memory": {"naming": "fancy"}}}, "'plain' or 'paper'"),
    ({"strategies": {"ptc": {"default_timeout_s": 121}}}, "less than or equal to 120"),
    ({"strategies": {"ptc": {"max_timeout_s": 30}}}, "default_timeout_s=60 is above"),
    ({"strategies": {"ptc": {"max_nested_calls": 0}}}, "greater than or equal to 1"),
    ({"strategies": {"ptc": {"direct_tools": "some"}}}, "'all' or 'none'"),
    ({"strategies": {"ptc": {"sandbox": "off"}}}, "'auto', 'strong' or 'landlock'"),
    ({"strategies": {"ptc": {"description": "memory/protocol@1"}}}, "not a ptc prompt"),
    ({"window": 5}, "Extra inputs are not permitted"),
])
def test_each_validation_rule_refuses(kwargs: dict[str, Any], match: str) -> None:
    refused(match, **kwargs)


def test_equal_triggers_are_fine_and_fractions_compare_as_tokens() -> None:
    agent({"clear_tool_results": {"trigger": 0.8}, "compaction": {"trigger": 0.8}})
    budget = ContextConfig().budget(32768)
    agent({"clear_tool_results": {"trigger": 0.5},
           "compaction": {"trigger": budget.tokens(0.5) + 1}})


def test_keep_last_alone_switches_off_the_default_fraction() -> None:
    config = agent({"clear_tool_results": {"keep_last": 3}}).context.strategies
    assert config.clear_tool_results is not None
    assert (config.clear_tool_results.keep_last, config.clear_tool_results.clear_fraction) == (3, None)


def test_thinking_clearing_rules_that_depend_on_the_client() -> None:
    context = agent({"clear_thinking": {"keep_last_turns": 0}}).context
    context.check_model("all")
    with pytest.raises(ValueError, match="nothing to clear"):
        context.check_model("none")
    with pytest.raises(ValueError, match="keep_last_turns: 0"):
        context.check_model("current_turn")
    agent({"clear_thinking": {"keep_last_turns": 1}}).context.check_model("current_turn")


def test_awareness_in_the_system_prompt_needs_one() -> None:
    with pytest.raises(ValidationError, match="needs a system prompt"):
        AgentConfig(system_prompt="system/none@1", context=ContextConfig.model_validate(
            {"strategies": {"awareness": {"placement": "system"}}}))


def test_warnings() -> None:
    assert any("hard truncation is disabled" in w for w in
               agent({"truncate": {"enabled": False}}).warnings())
    assert agent({"truncate": {"enabled": False}, "compaction": {}}).warnings() == []
    close = agent({"clear_tool_results": {"trigger": 0.80}, "compaction": {"trigger": 0.82}})
    assert any("within 5 %" in w for w in close.warnings())
    assert agent({"clear_tool_results": {}, "compaction": {}}).warnings() == []
    (reserve,) = agent(max_context_tokens=64_000).warnings()
    assert reserve.startswith("the output reserve takes more of the window than the input may: "
                              "B = 29,952 (window W 64,000 - output reserve R 32,768 - margin M "
                              "1,280)")
    assert agent(max_context_tokens=64_000, output_reserve=8000).warnings() == []


def test_the_budget_defaults_are_stated_where_a_user_reads_them() -> None:
    """`loca run --help` and the context strategies page state the defaults the configuration applies."""
    assert ContextConfig().budget(Sampling().max_output_tokens) == DEFAULT_BUDGET
    result = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "2000"})
    assert DEFAULTS_TEXT in result.output
    page = CONTEXT_PAGE.read_text(encoding="utf-8")
    for term, value in (("W, the context window", DEFAULT_BUDGET.window),
                        ("R, kept for the reply", DEFAULT_BUDGET.reserve),
                        ("M, a safety margin", DEFAULT_BUDGET.margin),
                        ("B, the input budget", DEFAULT_BUDGET.input_budget)):
        (row,) = [line for line in page.splitlines() if line.startswith(f"| {term} |")]
        assert f"{value:,}" in row


def test_strategy_names() -> None:
    assert choose(None).context.label == "react"
    assert choose("react").context.enabled() == ()
    both = choose("compaction+clear_tool_results")
    assert both.context.enabled() == ("clear_tool_results", "compaction") and both.agent is None
    every = choose("awareness+compaction+clear_tool_results+clear_thinking").context
    assert every.enabled() == ("clear_thinking", "clear_tool_results", "compaction", "awareness")
    for spec, match in [("clear_tool_results+clear_tool_results", "twice"),
                        ("memory+ptc+ptc", "names ptc twice"),
                        ("react+compaction", "combines with none"),
                        ("clear_tool_results+", "empty name"),
                        ("summarise", "unknown strategy 'summarise'")]:
        with pytest.raises(ValueError, match=match):
            choose(spec)


def test_paper_preset() -> None:
    paper = choose("paper+clear_thinking+clear_tool_results+compaction+awareness")
    s = paper.context.strategies
    assert paper.agent == {"system_prompt": "system/none@1", "temperature": 1.0, "top_p": 1.0}
    assert paper.context.max_context_tokens == 128_000
    assert paper.context.enabled()[:2] == ("clear_tool_results", "clear_thinking")
    assert s.clear_tool_results and s.compaction and s.clear_thinking and s.awareness
    assert {s.clear_tool_results.trigger, s.compaction.trigger, s.clear_thinking.trigger} == {0.75}
    assert (s.clear_tool_results.unit, s.clear_tool_results.clear_fraction,
            s.clear_tool_results.style) == ("turn", 0.5, "remove")
    assert (s.clear_thinking.keep_last_turns, s.compaction.temperature) == (1, 0.7)
    assert (s.awareness.keep_notes, s.awareness.budget_shown) == ("all", "window")
    assert choose("paper").context.enabled() == ()
    harness = choose("paper+memory+ptc+clear_tool_results").context
    assert harness.label == "clear_tool_results+memory+ptc"
    memory, ptc = harness.strategies.memory, harness.strategies.ptc
    assert memory and ptc and (memory.warn_fraction, memory.naming, ptc.naming) == \
        (0.5, "paper", "paper")
    assert harness.strategies.memory_warning()
    plain = choose("memory+ptc").context.strategies
    assert plain.memory and plain.memory.warn_fraction == 0.8 and not plain.memory_warning()


def test_config_files(tmp_path: Path) -> None:
    yaml_file = tmp_path / "s.yaml"
    yaml_file.write_text("strategy: clear_tool_results+compaction\ncontext:\n"
                         "  max_context_tokens: 64000\n  strategies:\n"
                         "    clear_tool_results: {trigger: 0.5, keep_last: 2}\n"
                         "    truncate: {min_recent_turns: 2}\n")
    choice = choose(None, load_file(yaml_file))
    s = choice.context.strategies
    assert choice.name == "clear_tool_results+compaction"
    assert s.clear_tool_results and s.clear_tool_results.keep_last == 2 and s.compaction
    assert (choice.context.max_context_tokens, s.truncate.min_recent_turns) == (64000, 2)
    json_file = tmp_path / "s.json"
    json_file.write_text(json.dumps({"context": {"strategies": {"compaction": {"attempts": 3}}}}))
    from_json = choose(None, load_file(json_file))
    assert from_json.name == "compaction" and from_json.context.strategies.compaction
    assert from_json.context.strategies.compaction.attempts == 3
    with pytest.raises(ValueError, match="does not enable"):
        choose("clear_tool_results", load_file(json_file))
    bad = tmp_path / "bad.yaml"
    for text, match in [("strategies: {}\n", "expected a mapping"), ("[1, 2]\n", "expected"),
                        ("context: {strategies: {compaction: {trigger: 2.0}}}\n", None),
                        ("a: [\n", "not valid YAML")]:
        bad.write_text(text)
        if match is None:
            with pytest.raises(ValidationError):
                RunConfig(tasks=["t"], lengths=[8000], seeds=[0], agent="oracle",
                          context=choose(None, load_file(bad)).context)
        else:
            with pytest.raises(ValueError, match=match):
                load_file(bad)


def test_run_config_validates_context_for_the_agent() -> None:
    compaction = choose("compaction").context
    RunConfig(tasks=["t"], lengths=[8000], seeds=[0], agent="oracle", context=compaction)
    explicit = ContextConfig.model_validate({"strategies": {"compaction": {"summarizer": "model"}}})
    with pytest.raises(ValidationError, match="summarizer: model needs a model"):
        RunConfig(tasks=["t"], lengths=[8000], seeds=[0], agent="oracle", context=explicit)
    RunConfig(tasks=["t"], lengths=[8000], seeds=[0], agent="openai:m", context=explicit)
    base = RunConfig(tasks=["t"], lengths=[8000], seeds=[0], agent="oracle")
    other = RunConfig(tasks=["t"], lengths=[8000], seeds=[0], agent="oracle", context=compaction,
                      strategy="compaction")
    assert base.digest() != other.digest()


def test_budget_rejects_bool_triggers() -> None:
    with pytest.raises(ValueError, match="is not a trigger"):
        Budget(1000, 100, 10).check_trigger("x.trigger", True)


def documented_strategy_file(folder: Path) -> Path:
    """The context strategies page's example strategy file (`small.yaml`), written into `folder`."""
    page = CONTEXT_PAGE.read_text(encoding="utf-8")
    block = page.split("```yaml\n# loca run --strategy-config", 1)[1].split("```", 1)[0]
    example = folder / "small.yaml"
    example.write_text(block.split("\n", 1)[1])
    return example


def test_the_documented_strategy_file_is_valid(tmp_path: Path) -> None:
    choice = choose(None, load_file(documented_strategy_file(tmp_path)))
    assert choice.name == "clear_tool_results+compaction"
    config = RunConfig(tasks=["t"], lengths=[8000], seeds=[0], agent="oracle",
                       context=choice.context).agent_config()
    assert config.warnings() == []
    assert config.context.budget(config.sampling.max_output_tokens).input_budget == 54_720


def _llm_run(agent: str, **extra: Any) -> RunConfig:
    return RunConfig(tasks=["canvas_arrange_exam"], lengths=[8000], seeds=[0], agent=agent, **extra)


@pytest.mark.parametrize(("agent", "extra", "match"), [
    ("openai:gpt-4o", {"context": ContextConfig(max_context_tokens=200_000)},
     r"max_context_tokens=200000 is above gpt-4o's context window \(128000\)"),
    ("openai:gpt-4o", {"context": ContextConfig.model_validate(
        {"strategies": {"compaction": {"summary_max_tokens": 20_000}}})},
     r"summary_max_tokens=20000 is above gpt-4o's output limit \(16384\)"),
    ("openai:gpt-4o", {"sampling": Sampling(reasoning_effort="high")},
     "sampling.reasoning_effort: gpt-4o is not a reasoning model"),
    ("profile:deepseek-chat", {"sampling": Sampling(reasoning_effort="low")},
     "deepseek-chat is not a reasoning model"),
    ("profile:no-such-model", {}, "no-such-model"),
])
def test_rules_that_need_the_model_profile_refuse(agent: str, extra: dict[str, Any],
                                                  match: str) -> None:
    with pytest.raises(ValidationError, match=match):
        _llm_run(agent, **extra)


def test_profile_rules_pass_where_the_model_allows_or_strict_is_off() -> None:
    assert _llm_run("openai:gpt-5", sampling=Sampling(reasoning_effort="high")).strict
    loose = _llm_run("openai:gpt-4o", sampling=Sampling(reasoning_effort="high"), strict=False)
    assert loose.digest() == loose.model_copy(update={"strict": True}).digest()  # not a result
    _llm_run("openai:some-local-model", context=ContextConfig(max_context_tokens=1_000_000))
    _llm_run("oracle", context=ContextConfig(max_context_tokens=1_000_000))
