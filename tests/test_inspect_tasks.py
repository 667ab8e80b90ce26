"""The inspect integration, offline: inspect's mockllm provider replays the gym's scripted agents
through whole evals (setup, solver, scorer). The oracle scores 1 and the no-op agent 0 on a
Canvas, a WooCommerce and a BigQuery task, under inspect's ReAct agent and under the gym's own
loop. Skipped without inspect_ai (the `inspect` extra) unless LOCA_REQUIRE_INSPECT=1."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

if os.environ.get("LOCA_REQUIRE_INSPECT") != "1":
    pytest.importorskip("inspect_ai", reason="inspect_ai is not installed (pip install 'loca-gym[inspect]')")

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ContentReasoning,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

from envs.core.registry import get_task, tasks
from loca.integrations.inspect import episodes, loca_task
from loca.integrations.inspect.client import InspectClient, from_inspect, to_inspect
from loca.integrations.inspect.registry import REGISTERED
from loca.integrations.inspect.scripted import ScriptReplay, scripted_model
from loca.integrations.inspect.tools import tool_params
from mock_servers import load_toolbox
from mock_servers.listing import listings
from scaffolds.clients import Sampling
from scaffolds.clients.base import GenerateRequest, LLMCallError
from scaffolds.loop import ENDED_TEXT
from scaffolds.messages import ReasoningPart, ToolCallPart, assistant_message, tool_message, user_message
from scaffolds.oracles import agents
from tests.fake_llm import completion, tool_call

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = ["canvas_arrange_exam", "woocommerce_stock_alert", "ab_testing"]  # Canvas, WooCommerce, BigQuery


@pytest.fixture(scope="module", autouse=True)
def world_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A world cache of this module's own: each world is built once, then every sample gets a
    copy of it, as `loca run` resets one."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOCA_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        patch.setenv("LOCA_WORLD_CACHE_MB", "256")
        yield


def run(task: str, model: Any, log_dir: Path, epochs: int = 1, **task_args: Any) -> EvalLog:
    [log] = inspect_eval(loca_task(task, "8k", "0", **task_args), model=model, epochs=epochs, max_samples=1,
                         log_dir=str(log_dir), display="none")
    assert log.status == "success", log.error
    assert not episodes._LIVE  # every sample's world was closed after scoring
    return log


def score(sample: EvalSample) -> tuple[Any, dict[str, Any]]:
    assert sample.scores is not None and sample.error is None, sample.error
    found = sample.scores["loca_checker"]
    return found.value, found.metadata or {}


def test_every_task_is_registered_under_the_entry_point() -> None:
    assert sorted(REGISTERED) == [f"loca/{name}" for name in tasks()]
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["inspect_ai"]
    assert declared == {"loca": "loca.integrations.inspect.registry"}


def test_inspect_eval_runs_a_task_by_name(tmp_path: Path, fake_llm: Any) -> None:
    """`inspect eval loca/<task> -T ... --model ...` in a fresh process, the entry point installed
    as pyproject declares it, against an OpenAI-compatible server that claims done at once: the
    model is offered exactly the task's tools, and the sample is graded 0."""
    dist = tmp_path / "site" / "loca_gym_probe-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: loca-gym-probe\nVersion: 0\n")
    (dist / "entry_points.txt").write_text("[inspect_ai]\nloca = loca.integrations.inspect.registry\n")
    fake_llm.push(completion(None, tool_call("claim_done_claim_done", {})))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(ROOT)]),
           "FAKE_BASE_URL": fake_llm.base_url, "FAKE_API_KEY": "unused"}
    command = [str(Path(sys.executable).with_name("inspect")), "eval", "loca/ab_testing", "-T", "length=8k",
               "-T", "seeds=0", "--model", "openai-api/fake/model", "--log-dir", str(tmp_path / "logs"),
               "--display", "none"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    offered = sorted(tool["function"]["name"] for tool in fake_llm.requests[0]["tools"])
    assert offered == sorted(f"{key}_{tool}" for key, tool in get_task("ab_testing").spec.tools)
    [log_file] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(log_file))
    [sample] = log.samples or []
    assert log.eval.task == "loca/ab_testing" and score(sample)[0] == 0 and score(sample)[1]["graded"]


@pytest.mark.parametrize("task", FAMILIES)
def test_oracle_scores_one_and_noop_zero_under_react(task: str, tmp_path: Path) -> None:
    [oracle] = run(task, scripted_model(task, "oracle"), tmp_path).samples or []
    value, metadata = score(oracle)
    assert value == 1 and metadata["graded"] and metadata["terminal_state"] == "claimed_done"
    assert [c["name"] for c in metadata["checks"]] == list(get_task(task).checks.names)
    assert oracle.metadata["world"]["world_cache"] in {"hit", "built"}
    [noop] = run(task, scripted_model(task, "noop"), tmp_path).samples or []
    value, metadata = score(noop)
    assert value == 0 and metadata["graded"]
    failed = {c["name"] for c in metadata["checks"] if not c["passed"]}
    assert agents(task).must_fail("noop") in failed
    assert noop.metadata["world"]["world_cache"] == "hit"  # the oracle's world, copied afresh
    assert noop.metadata["world"]["world_hash"] == oracle.metadata["world"]["world_hash"]


def test_the_tools_are_the_task_allow_list(tmp_path: Path) -> None:
    task = "woocommerce_stock_alert"
    [sample] = run(task, scripted_model(task, "noop"), tmp_path).samples or []
    spec = get_task(task).spec
    assert sample.metadata["world"]["tool_count"] == len(spec.tools)
    called = {e.function for e in sample.events if e.event == "tool"}
    assert called == {"claim_done_claim_done"}


def test_samples_do_not_share_their_world(tmp_path: Path) -> None:
    """Two epochs of one world: the oracle, then the no-op agent. Had the second epoch been
    given the oracle's finished world, the no-op agent would pass."""
    task = "canvas_arrange_exam"
    replays = iter([ScriptReplay(agents(task).script("oracle")), ScriptReplay(agents(task).script("noop"))])
    current: list[ScriptReplay] = []

    def play(input: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice,
             config: GenerateConfig) -> ModelOutput:
        if not any(isinstance(m, ChatMessageAssistant) for m in input):
            current[:] = [next(replays)]
        return current[0](input, tools, choice, config)

    model = get_model("mockllm/model", custom_outputs=play, memoize=False)
    samples = sorted(run(task, model, tmp_path, epochs=2).samples or [], key=lambda s: s.epoch)
    assert [score(s)[0] for s in samples] == [1, 0]


def test_the_gym_loop_runs_under_inspect_models(tmp_path: Path) -> None:
    """`solver=loca`: the gym's loop (here with compaction) sends its requests through the
    inspect model; its conversation and record land in the sample."""
    task = "woocommerce_stock_alert"
    [oracle] = run(task, scripted_model(task, "oracle"), tmp_path, solver="loca", strategy="compaction").samples or []
    value, metadata = score(oracle)
    assert value == 1 and metadata["terminal_state"] == "claimed_done"
    assert oracle.metadata["loca"]["strategy"] == "compaction"
    assert oracle.metadata["loca"]["metrics"]["tool_calls"] > 0
    assert any(isinstance(m, ChatMessageTool) for m in oracle.messages)
    [noop] = run(task, scripted_model(task, "noop"), tmp_path, solver="loca").samples or []
    assert score(noop)[0] == 0


def test_an_episode_the_agent_never_ends_is_not_graded(tmp_path: Path) -> None:
    """Cut by the turn limit before claiming done: 0, with the world's checks as a diagnostic."""
    task = "ab_testing"
    [sample] = run(task, scripted_model(task, "oracle"), tmp_path, max_turns=1).samples or []
    value, metadata = score(sample)
    assert value == 0 and not metadata["graded"] and metadata["terminal_state"] is None
    assert [c["name"] for c in metadata["checks"]] == list(get_task(task).checks.names)


def test_a_call_after_the_end_is_not_executed() -> None:
    async def play() -> list[tuple[str, bool]]:
        world = episodes.SampleWorld(task="ab_testing", length=8000, seed=0)
        live = await episodes.open_episode("probe", world)
        try:
            return [await live.call(live.terminal_tool, {}), await live.call("filesystem_list_directory", {})]
        finally:
            await episodes.close_episode("probe")

    claimed, after = asyncio.run(play())
    assert not claimed[1] and after == (ENDED_TEXT, True)
    assert not episodes._LIVE


@pytest.mark.parametrize(("args", "message"), [
    ({"solver": "basic"}, "unknown solver 'basic'"),
    ({"tool_filter": "some"}, "unknown tool_filter 'some'"),
    ({"strategy": "compaction"}, "add solver=loca"),
    ({"seeds": "4-2"}, "bad seed range"),
    ({"length": "huge"}, "bad length"),
])
def test_bad_task_arguments_are_refused(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        loca_task("ab_testing", **args)


def test_samples_are_length_by_seed_worlds() -> None:
    task = loca_task("ab_testing", length="8k,16k", seeds="0-2")
    ids = [sample.id for sample in task.dataset]
    assert ids == ["8k-s0", "8k-s1", "8k-s2", "16k-s0", "16k-s1", "16k-s2"]
    assert task.dataset[4].metadata == {"task": "ab_testing", "length": 16000, "seed": 1}


def test_tool_schemas_reach_inspect_whole() -> None:
    """Every allowed tool's schema of every task survives inspect's schema model, but for the
    array size bounds it has no field for (the gym still enforces them)."""
    dropped = {"minItems", "maxItems"}

    def without(schema: Any) -> Any:
        if isinstance(schema, dict):
            return {k: without(v) for k, v in schema.items() if k not in dropped}
        return [without(v) for v in schema] if isinstance(schema, list) else schema

    for task in tasks().values():
        for key, tool in task.spec.tools:
            schema = listings(load_toolbox(task.spec.servers[key]))[tool].parameters
            converted = tool_params(schema).model_dump(exclude_none=True)
            assert json.dumps(converted, sort_keys=True) == json.dumps(
                without({"type": "object", "properties": {}, **schema}), sort_keys=True), (task.name, tool)


def test_messages_cross_between_the_gym_and_inspect() -> None:
    call = ToolCallPart.parse("c1", "excel_read", '{"path": "a.xlsx"}')
    reply = assistant_message("reading", [call], [ReasoningPart("think", signature="sig")])
    converted = to_inspect(reply)
    assert isinstance(converted, ChatMessageAssistant) and converted.text == "reading"
    assert converted.tool_calls == [ToolCall(id="c1", function="excel_read", arguments={"path": "a.xlsx"})]
    assert isinstance(converted.content, list) and isinstance(converted.content[0], ContentReasoning)
    back = from_inspect(ModelOutput.from_message(converted))
    assert back.tool_calls == (call,) and back.text == "reading"
    assert back.reasoning[0].text == "think" and back.reasoning[0].signature == "sig"
    failed = to_inspect(tool_message("c1", "excel_read", "Error: no such file", is_error=True))
    assert isinstance(failed, ChatMessageTool) and failed.error is not None
    assert failed.error.message == "Error: no such file" and failed.tool_call_id == "c1"


def _generate(*outputs: ModelOutput, sampling: Sampling | None = None) -> Any:
    """One request of the gym's loop through a mockllm model that answers `outputs` in turn:
    the client's result and the generate configs the model was sent."""
    seen: list[GenerateConfig] = []
    replies = iter(outputs)

    def answer(input: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice,
               config: GenerateConfig) -> ModelOutput:
        seen.append(config)
        return next(replies)

    client = InspectClient(get_model("mockllm/model", custom_outputs=answer, memoize=False))
    request = GenerateRequest(messages=[user_message(["hello"], "task")],
                              tools=[{"name": "t", "description": "d", "parameters": {}}],
                              sampling=sampling or Sampling())
    return asyncio.run(client.generate(request)), seen


def _usage(output: ModelOutput) -> ModelOutput:
    output.usage = ModelUsage(input_tokens=100, output_tokens=7, input_tokens_cache_read=20, total_tokens=127)
    return output


def test_the_client_maps_replies_usage_and_sampling() -> None:
    call = ModelOutput.for_tool_call("mockllm/model", "t", {"x": 1}, tool_call_id="c9")
    result, [config] = _generate(_usage(call), sampling=Sampling(temperature=0.3, max_output_tokens=1000, seed=5))
    assert result.finish_reason == "tool_calls" and result.message.tool_calls[0].arguments == {"x": 1}
    assert result.usage.reported and result.usage.input_tokens == 120 and result.usage.cached_input_tokens == 20
    assert (config.temperature, config.max_tokens, config.seed) == (0.3, 1000, 5)
    cut, _ = _generate(_usage(ModelOutput.from_content("mockllm/model", "partial", stop_reason="max_tokens")))
    assert cut.finish_reason == "length" and cut.message.text == "partial"


def test_a_context_overflow_is_a_context_error() -> None:
    """The loop ends such an episode `context_overflow`; any other failure is fatal."""
    with pytest.raises(LLMCallError) as overflow:
        _generate(_usage(ModelOutput.from_content("mockllm/model", "", stop_reason="model_length")))
    assert overflow.value.error_class == "context"
    with pytest.raises(LLMCallError) as failed:
        _generate(_usage(ModelOutput.from_content("mockllm/model", "", error="provider down")))
    assert failed.value.error_class == "fatal" and "provider down" in failed.value.message
