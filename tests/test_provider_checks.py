"""Provider sanity checks through the fake OpenAI-compatible server: a server that read far less
of the prompt than it was sent ends the episode `provider_truncated` before any call runs; a 400
about tool choice names the server flags that fix it; a response without usage is recorded as
such and the gym's own counts stand in."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from scaffolds.clients import OpenAICompatClient
from scaffolds.ledger import read_trajectory
from scaffolds.provider_checks import TRUNCATION_RATIO
from scaffolds.result import AGENT_STATES, PROVIDER_STATES
from tests.fake_llm import FakeLLM, MakeClient, completion, http_error, tool_call
from tests.test_scaffold_loop import EXPECTED, FakeEnv, assert_paired
from tests.test_scaffold_openai import run_loop

VLLM_TOOL_CHOICE = ('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser '
                    'to be set')


class LongTaskEnv(FakeEnv):
    """FakeEnv whose instruction alone is a few thousand tokens."""

    async def areset(self, seed: int | None = None,
                     options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        instruction, info = await super().areset(seed, options)
        return instruction + " Background: " + "the notes are kept in order. " * 600, info


def solution() -> list[Any]:
    return [completion(None, tool_call("write_answer", {"text": EXPECTED})),
            completion(None, tool_call("claim_done"))]


async def play(client: OpenAICompatClient, tmp_path: Path, env: FakeEnv) -> Any:
    result = await run_loop(client, tmp_path, env)
    trajectory = read_trajectory(Path(result.trajectory_path))
    assert_paired(trajectory.messages)
    return result, trajectory


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [True, False])
async def test_a_truncated_prompt_ends_the_episode_before_any_call_runs(
        fake_llm: FakeLLM, make_client: MakeClient, tmp_path: Path, stream: bool,
        caplog: pytest.LogCaptureFixture) -> None:
    """Ollama with its default context answers a 4K-token prompt having read 2,048 of it."""
    fake_llm.push(completion(None, tool_call("list_notes"),
                             usage={"prompt_tokens": 2048, "completion_tokens": 12}),
                  *solution())
    env = LongTaskEnv()
    with caplog.at_level(logging.WARNING, logger="scaffolds.loop"):
        result, trajectory = await play(make_client(stream=stream), tmp_path, env)
    assert result.terminal_state == "provider_truncated" and not result.graded
    assert env.actions == [] and len(fake_llm.requests) == 1 and fake_llm.pending == 2
    (check,) = trajectory.of_type("provider_check")
    predicted = trajectory.of_type("llm_request")[0]["predicted_tokens"]
    assert check == {"outcome": "truncated", "predicted": predicted, "reported": 2048}
    assert TRUNCATION_RATIO * predicted > 2048
    assert [e["status"] for e in trajectory.of_type("tool_exec")] == ["skipped"]
    assert result.error is not None and result.error.class_ == "ProviderTruncated"
    assert result.error.details == check
    message = result.error.message
    assert f"counted 2,048 prompt tokens for a request the gym counts at {predicted:,}" in message
    assert "OLLAMA_CONTEXT_LENGTH=128000" in message and "num_ctx" in message
    assert [t["state"] for t in trajectory.of_type("terminal")] == ["provider_truncated"]
    assert any("provider_truncated (fake, seed 0)" in r.getMessage() for r in caplog.records)


def test_provider_truncated_is_a_provider_state_not_the_agent_s() -> None:
    assert "provider_truncated" in PROVIDER_STATES and not PROVIDER_STATES & AGENT_STATES


@pytest.mark.asyncio
async def test_a_provider_that_read_the_whole_prompt_passes(
        fake_llm: FakeLLM, make_client: MakeClient, tmp_path: Path) -> None:
    fake_llm.push(*solution())  # usage measured from each request, as a provider counts it
    result, trajectory = await play(make_client(), tmp_path, LongTaskEnv())
    assert result.terminal_state == "claimed_done" and result.success
    (check,) = trajectory.of_type("provider_check")
    assert check["outcome"] == "ok" and check["reported"] >= check["predicted"]


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [True, False])
async def test_missing_usage_is_recorded_and_the_gym_s_counts_stand_in(
        fake_llm: FakeLLM, make_client: MakeClient, tmp_path: Path, stream: bool) -> None:
    fake_llm.push(*(completion(c.text, *c.tool_calls, usage=None) for c in solution()))
    result, trajectory = await play(make_client(stream=stream), tmp_path, FakeEnv())
    assert result.terminal_state == "claimed_done" and result.success
    assert [c["outcome"] for c in trajectory.of_type("provider_check")] == ["usage_missing"]
    usages = [r["usage"] for r in trajectory.of_type("llm_response")]
    requests = trajectory.of_type("llm_request")
    replies = [m for m in trajectory.messages if m.role == "assistant"]
    assert [u["reported"] for u in usages] == [False, False]
    assert [u["input_tokens"] for u in usages] == [r["predicted_tokens"] for r in requests]
    assert [u["output_tokens"] for u in usages] == [m.tokens for m in replies]
    m = result.metrics
    assert not m.usage_reported and m.cost_usd is None
    assert (m.input_tokens, m.output_tokens) == (sum(u["input_tokens"] for u in usages),
                                                 sum(u["output_tokens"] for u in usages))


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [True, False])
async def test_a_tool_choice_refusal_names_the_server_flags(
        fake_llm: FakeLLM, make_client: MakeClient, tmp_path: Path, stream: bool) -> None:
    """vLLM started without tool calling answers 400 to any request with tools."""
    fake_llm.push(http_error(400, VLLM_TOOL_CHOICE), *solution())
    env = FakeEnv()
    result, _ = await play(make_client(stream=stream), tmp_path, env)
    assert result.terminal_state == "llm_error" and env.actions == []
    assert len(fake_llm.requests) == 1  # a refusal, not a passing fault: never resent
    assert result.error is not None and result.error.details["status"] == 400
    message = result.error.message
    assert VLLM_TOOL_CHOICE in message
    assert "`--enable-auto-tool-choice --tool-call-parser <parser>`" in message
    assert "hermes for Qwen" in message


@pytest.mark.asyncio
async def test_other_400s_carry_no_tool_choice_hint(fake_llm: FakeLLM, make_client: MakeClient,
                                                    tmp_path: Path) -> None:
    fake_llm.push(http_error(400, "temperature must be at most 2"))
    result, _ = await play(make_client(), tmp_path, FakeEnv())
    assert result.terminal_state == "llm_error" and result.error is not None
    assert "temperature must be at most 2" in result.error.message
    assert "tool-call-parser" not in result.error.message
