"""The agent loop end to end with scripted agents and a small fake env."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from envs.core.errors import EnvSetupError, ToolInfraError
from loca.core.script import ToolReply, ToolRequest
from loca.core.tokens import count_tokens, schema_tokens
from scaffolds.clients import ScriptedClient
from scaffolds.config import AgentConfig, Limits
from scaffolds.ledger import read_trajectory
from scaffolds.loop import AgentLoop
from scaffolds.messages import ToolCallPart, assistant_message
from scaffolds.metrics import episode_metrics

NOTES = {1: "alpha is 3", 2: "beta is 4", 3: "gamma is 5"}
EXPECTED = "12"
NO_ARGS = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class FakeVerdict:
    """`evaluate()` returns an object, as the real envs do; steps carry its dict."""

    got: str | None

    def to_dict(self) -> dict[str, Any]:
        passed = self.got == EXPECTED
        return {"passed": passed, "checks": [{"name": "answer", "passed": passed,
                                              "expected": EXPECTED, "got": self.got}]}


class FakeEnv:
    """Read notes, write their sum with `write_answer`, then `claim_done`."""

    TOOLS = [
        {"name": "list_notes", "description": "List note ids.", "parameters": NO_ARGS},
        {"name": "read_note", "description": "Read one note.",
         "parameters": {"type": "object", "properties": {"id": {"type": "integer"}},
                        "required": ["id"]}},
        {"name": "write_answer", "description": "Store the answer.",
         "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                        "required": ["text"]}},
        {"name": "claim_done", "description": "Finish the task.", "parameters": NO_ARGS},
    ]

    def __init__(self, *, reset_error: Exception | None = None, infra_tool: str | None = None,
                 slow_tool: str | None = None, padding: int = 0) -> None:
        self.reset_error = reset_error
        self.infra_tool = infra_tool
        self.slow_tool = slow_tool
        self.padding = padding
        self.actions: list[dict[str, Any]] = []
        self.answer: str | None = None
        self.terminated = False
        self.closed = 0
        self.evaluations = 0

    async def areset(self, seed: int | None = None,
                     options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        if self.reset_error is not None:
            raise self.reset_error
        return ("Add up the numbers in the notes and store the sum with write_answer.",
                {"tools": self.TOOLS, "terminal_tool": "claim_done", "task": "fake",
                 "seed": seed, "target_tokens": 8000, "env_description_tokens": 42,
                 "world_dir": Path("/tmp/fake-world")})

    async def astep(self, action: dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.terminated:
            raise RuntimeError("step after termination")
        self.actions.append(action)
        name, args = action["name"], action["arguments"]
        if name == self.infra_tool:
            raise ToolInfraError(f"{name} server crashed")
        if name == self.slow_tool:
            await asyncio.sleep(30)
        if name in ("claim_done", "__final__"):
            self.terminated = True
            verdict = self.evaluate().to_dict()
            return "graded", float(verdict["passed"]), True, False, {"is_error": False,
                                                                    "verdict": verdict}
        if name == "list_notes":
            return json.dumps(sorted(NOTES)), 0.0, False, False, {"is_error": False}
        if name == "read_note":
            note = NOTES.get(args.get("id"))
            if note is None:
                return f"no note {args.get('id')}", 0.0, False, False, {"is_error": True}
            return note + " " + "pad " * self.padding, 0.0, False, False, {"is_error": False}
        if name == "write_answer":
            self.answer = args["text"]
            return "saved", 0.0, False, False, {"is_error": False}
        return f"unknown tool {name}", 0.0, False, False, {"is_error": True}

    def evaluate(self) -> FakeVerdict:
        self.evaluations += 1
        return FakeVerdict(self.answer)

    async def aclose(self) -> None:
        self.closed += 1

    @property
    def called(self) -> list[str]:
        return [a["name"] for a in self.actions]


def solve(instruction: str, tools: list[dict[str, Any]]) -> Generator[Any, list[ToolReply], None]:
    """The oracle of FakeEnv, written as a script."""
    assert "notes" in instruction and any(t["name"] == "claim_done" for t in tools)
    (listing,) = yield ToolRequest("list_notes")
    ids = json.loads(listing.text)
    replies = yield [ToolRequest("read_note", {"id": i}) for i in ids]
    total = sum(int(r.text.split()[2]) for r in replies)
    yield ToolRequest("write_answer", {"text": str(total)})
    yield ToolRequest("claim_done")


async def run(env: FakeEnv, script: Any, tmp_path: Path, **config: Any):
    loop = AgentLoop(env, ScriptedClient.from_script(script), AgentConfig(**config))
    return await loop.run(seed=0, options={"length": "8k"}, episode_dir=tmp_path)


def assert_paired(messages: list[Any]) -> None:
    """Every tool call has exactly one result, right after its assistant message."""
    pending: list[str] = []
    for message in messages:
        if message.role == "tool":
            assert message.call_id == pending.pop(0)
        else:
            assert not pending, f"unanswered calls {pending}"
            pending = [c.call_id for c in message.tool_calls]
    assert not pending


@pytest.mark.asyncio
async def test_oracle_script_claims_done_and_passes(tmp_path: Path) -> None:
    env = FakeEnv()
    result = await run(env, solve, tmp_path)
    assert result.terminal_state == "claimed_done"
    assert result.graded and result.success and result.reward == 1.0
    assert result.verdict is not None and result.verdict["checks"][0]["got"] == "12"
    assert result.diagnostic is None and result.error is None
    assert env.called == ["list_notes", "read_note", "read_note", "read_note", "write_answer",
                          "claim_done"]
    assert env.closed == 1
    m = result.metrics
    assert (m.turns, m.tool_calls, m.tool_calls_invalid) == (4, 6, 0)
    assert m.tool_calls_by_name == {"list_notes": 1, "read_note": 3, "write_answer": 1,
                                    "claim_done": 1}
    assert m.llm_calls == {"main": 4}
    assert result.env["world_dir"] == "/tmp/fake-world"
    assert json.loads(json.dumps(result.to_dict()))["terminal_state"] == "claimed_done"


@pytest.mark.asyncio
async def test_failing_script_is_graded_zero(tmp_path: Path) -> None:
    def wrong(instruction: str, tools: list[dict[str, Any]]):
        yield ToolRequest("write_answer", {"text": "11"})
        yield ToolRequest("claim_done")

    result = await run(FakeEnv(), wrong, tmp_path)
    assert result.terminal_state == "claimed_done"
    assert result.graded and not result.success and result.reward == 0.0


@pytest.mark.asyncio
async def test_trajectory_reads_back_into_the_same_messages(tmp_path: Path) -> None:
    result = await run(FakeEnv(), solve, tmp_path)
    trajectory = read_trajectory(Path(result.trajectory_path))
    assert not trajectory.truncated
    assert trajectory.header["config_hash"] == result.config_hash
    assert [p["id"] for p in trajectory.header["prompts"]][0] == "system/react@1"
    messages = trajectory.messages
    assert [m.mid for m in messages] == list(range(len(messages)))
    assert [m.role for m in messages[:3]] == ["system", "user", "assistant"]
    assert messages[1].origin == "task" and "notes" in messages[1].text
    assert_paired(messages)
    reads = [m for m in messages if m.role == "tool" and m.name == "read_note"]
    assert [m.content for m in reads] == [f"{NOTES[i]} " for i in (1, 2, 3)]
    assert all(m.tokens == count_tokens(m.content) for m in reads)
    assert trajectory.of_type("terminal")[-1]["state"] == "claimed_done"
    # the file is the source of the metrics: recomputing them gives the same numbers
    assert episode_metrics(trajectory.events) == result.metrics


@pytest.mark.asyncio
async def test_truncated_last_line_is_tolerated(tmp_path: Path) -> None:
    result = await run(FakeEnv(), solve, tmp_path)
    path = Path(result.trajectory_path)
    complete = read_trajectory(path)
    with path.open("a", encoding="utf-8") as f:
        f.write('{"seq": 999, "type": "mess')
    cut = read_trajectory(path)
    assert cut.truncated and cut.messages == complete.messages


@pytest.mark.asyncio
async def test_parallel_calls_grade_after_the_batch_and_keep_emitted_order(
        tmp_path: Path) -> None:
    def rushed(instruction: str, tools: list[dict[str, Any]]):
        yield [ToolRequest("claim_done"), ToolRequest("write_answer", {"text": EXPECTED}),
               ToolRequest("list_notes")]

    result = await run(FakeEnv(), rushed, tmp_path)
    assert result.terminal_state == "claimed_done" and result.success
    messages = read_trajectory(Path(result.trajectory_path)).messages
    assert [m.name for m in messages if m.role == "tool"] == ["claim_done", "write_answer",
                                                             "list_notes"]
    assert [m.call_id for m in messages[-3:]] == ["call_1_0", "call_1_1", "call_1_2"]
    assert_paired(messages)


@pytest.mark.asyncio
async def test_invalid_arguments_and_unknown_tools_are_error_results(tmp_path: Path) -> None:
    seen: list[list[ToolReply]] = []

    def clumsy(instruction: str, tools: list[dict[str, Any]]):
        seen.append((yield ToolRequest("read_note", '{"id": 1')))
        seen.append((yield ToolRequest("read_notes", {"id": 1})))
        seen.append((yield ToolRequest("read_note", '[1]')))
        yield from solve(instruction, tools)

    env = FakeEnv()
    result = await run(env, clumsy, tmp_path)
    assert result.terminal_state == "claimed_done" and result.success
    assert all(r[0].is_error for r in seen)
    assert "not a valid JSON object" in seen[0][0].text
    assert "no tool named 'read_notes'" in seen[1][0].text
    assert "read_note" in seen[1][0].text.split("Closest tool names:")[1]
    assert "must be a JSON object" in seen[2][0].text
    assert "read_notes" not in env.called
    assert result.metrics.tool_calls_invalid == 3
    assert result.metrics.tool_calls == 6


@pytest.mark.asyncio
async def test_text_reply_ends_final_text_and_is_graded(tmp_path: Path) -> None:
    def talk(instruction: str, tools: list[dict[str, Any]]):
        yield ToolRequest("write_answer", {"text": EXPECTED})
        yield "The sum is 12."

    env = FakeEnv()
    result = await run(env, talk, tmp_path)
    assert result.terminal_state == "final_text"
    assert result.graded and result.success
    assert env.actions[-1] == {"id": "final_2", "name": "__final__",
                               "arguments": {"text": "The sum is 12."}}
    # no strategy: the trajectory is exactly the last request plus the last reply
    trajectory = read_trajectory(Path(result.trajectory_path))
    last_request = trajectory.of_type("llm_request")[-1]
    assert result.metrics.trajectory_tokens == (last_request["predicted_tokens"]
                                                + trajectory.messages[-1].tokens)


@pytest.mark.asyncio
async def test_ungraded_final_text_gets_a_diagnostic(tmp_path: Path) -> None:
    def talk(instruction: str, tools: list[dict[str, Any]]):
        yield ToolRequest("write_answer", {"text": EXPECTED})
        yield "done"

    env = FakeEnv()
    result = await run(env, talk, tmp_path, grade_final_text=False)
    assert result.terminal_state == "final_text"
    assert not result.graded and not result.success and result.reward == 0.0
    assert result.diagnostic is not None and result.diagnostic["passed"] is True
    assert "__final__" not in env.called


@pytest.mark.asyncio
async def test_nudge_mode_continues_after_a_text_reply(tmp_path: Path) -> None:
    def hesitant(instruction: str, tools: list[dict[str, Any]]):
        replies = yield "Let me think."
        assert replies == []
        yield from solve(instruction, tools)

    result = await run(FakeEnv(), hesitant, tmp_path, on_text_reply="nudge")
    assert result.terminal_state == "claimed_done" and result.success
    assert result.metrics.nudges == 1
    messages = read_trajectory(Path(result.trajectory_path)).messages
    nudge = next(m for m in messages if m.origin == "harness.nudge")
    assert nudge.role == "user" and "claim_done" in nudge.text
    assert "nudge/text_reply@1" in [p["id"] for p in result.prompts]


@pytest.mark.asyncio
async def test_nudges_run_out_and_the_episode_ends(tmp_path: Path) -> None:
    def chatty(instruction: str, tools: list[dict[str, Any]]):
        while True:
            yield "still thinking"

    env = FakeEnv()
    result = await run(env, chatty, tmp_path, on_text_reply="nudge", max_nudges=2)
    assert result.terminal_state == "final_text" and not result.success
    assert result.metrics.nudges == 2 and result.metrics.turns == 3
    assert env.called == ["__final__"]


@pytest.mark.asyncio
async def test_max_turns_ends_with_a_diagnostic_verdict(tmp_path: Path) -> None:
    def forever(instruction: str, tools: list[dict[str, Any]]):
        while True:
            yield ToolRequest("list_notes")

    env = FakeEnv()
    result = await run(env, forever, tmp_path, limits=Limits(max_turns=5))
    assert result.terminal_state == "max_turns"
    assert not result.graded and not result.success
    assert result.diagnostic == {"passed": False, "checks": [
        {"name": "answer", "passed": False, "expected": EXPECTED, "got": None}]}
    assert result.metrics.turns == 5 and result.metrics.tool_calls == 5


@pytest.mark.asyncio
async def test_max_tool_calls_pairs_the_skipped_calls(tmp_path: Path) -> None:
    def greedy(instruction: str, tools: list[dict[str, Any]]):
        yield [ToolRequest("read_note", {"id": i}) for i in (1, 2, 3, 1, 2)]

    env = FakeEnv()
    result = await run(env, greedy, tmp_path, limits=Limits(max_tool_calls=3))
    assert result.terminal_state == "max_tool_calls"
    assert env.called == ["read_note"] * 3
    m = result.metrics
    assert (m.tool_calls, m.tool_calls_skipped) == (3, 2)
    messages = read_trajectory(Path(result.trajectory_path)).messages
    assert_paired(messages)
    skipped = [m for m in messages if m.role == "tool"][3:]
    assert [m.is_error for m in skipped] == [True, True]
    assert all("limit of 3 tool calls" in m.content for m in skipped)


@pytest.mark.asyncio
async def test_terminal_tool_is_exempt_from_the_tool_call_limit(tmp_path: Path) -> None:
    def exact(instruction: str, tools: list[dict[str, Any]]):
        yield ToolRequest("write_answer", {"text": EXPECTED})
        yield ToolRequest("claim_done")

    result = await run(FakeEnv(), exact, tmp_path, limits=Limits(max_tool_calls=1))
    assert result.terminal_state == "claimed_done" and result.success
    assert result.metrics.tool_calls == 2


@pytest.mark.asyncio
async def test_time_limit_cancels_the_call_in_flight(tmp_path: Path) -> None:
    def slow(instruction: str, tools: list[dict[str, Any]]):
        yield [ToolRequest("list_notes"), ToolRequest("read_note", {"id": 1}),
               ToolRequest("list_notes")]

    env = FakeEnv(slow_tool="read_note")
    result = await run(env, slow, tmp_path, limits=Limits(max_wall_time_s=0.2))
    assert result.terminal_state == "time_limit"
    assert result.diagnostic is not None and env.closed == 1
    trajectory = read_trajectory(Path(result.trajectory_path))
    assert trajectory.of_type("limit")[-1]["in_flight"]["name"] == "read_note"
    assert_paired(trajectory.messages)
    assert [m.content for m in trajectory.messages if m.role == "tool"][1:] == [
        "Not completed: the episode's time limit was reached."] * 2


@pytest.mark.asyncio
async def test_tool_infra_error_ends_the_episode(tmp_path: Path) -> None:
    env = FakeEnv(infra_tool="read_note")
    result = await run(env, solve, tmp_path)
    assert result.terminal_state == "tool_infra_error" and not result.success
    assert result.error is not None and result.error.class_ == "ToolInfraError"
    assert result.diagnostic is None and env.evaluations == 0
    assert_paired(read_trajectory(Path(result.trajectory_path)).messages)


@pytest.mark.asyncio
async def test_tool_timeout_is_a_tool_infra_error(tmp_path: Path) -> None:
    env = FakeEnv(slow_tool="read_note")
    result = await run(env, solve, tmp_path, limits=Limits(tool_timeout_s=0.05))
    assert result.terminal_state == "tool_infra_error"
    assert result.error is not None and "did not answer within 0.05 s" in result.error.message
    messages = read_trajectory(Path(result.trajectory_path)).messages
    assert_paired(messages)
    assert messages[-1].is_error and "Tool infrastructure failure" in (messages[-1].content or "")


@pytest.mark.asyncio
async def test_reset_failure_is_env_setup_error(tmp_path: Path) -> None:
    env = FakeEnv(reset_error=EnvSetupError("generator exploded"))
    result = await run(env, solve, tmp_path)
    assert result.terminal_state == "env_setup_error"
    assert result.error is not None and "generator exploded" in result.error.message
    assert env.closed == 1
    trajectory = read_trajectory(Path(result.trajectory_path))
    assert "generator exploded" in trajectory.header["setup_error"]
    assert trajectory.messages == []


@pytest.mark.asyncio
async def test_script_bug_is_a_harness_error_with_traceback(tmp_path: Path) -> None:
    def broken(instruction: str, tools: list[dict[str, Any]]):
        yield 42

    result = await run(FakeEnv(), broken, tmp_path)
    assert result.terminal_state == "harness_error"
    assert result.error is not None and "TypeError" in (result.error.traceback or "")


@pytest.mark.asyncio
async def test_script_that_returns_replies_with_plain_text(tmp_path: Path) -> None:
    def quitter(instruction: str, tools: list[dict[str, Any]]):
        yield ToolRequest("list_notes")

    env = FakeEnv()
    result = await run(env, quitter, tmp_path)
    assert result.terminal_state == "final_text"
    assert env.actions[-1]["arguments"] == {"text": "Done."}


@pytest.mark.asyncio
async def test_sequence_mode_and_provider_call_ids(tmp_path: Path) -> None:
    replies = [
        assistant_message(tool_calls=[ToolCallPart.parse("dup", "write_answer",
                                                         json.dumps({"text": EXPECTED}))]),
        assistant_message(tool_calls=[ToolCallPart.parse("dup", "claim_done", "")]),
    ]
    env = FakeEnv()
    loop = AgentLoop(env, ScriptedClient(sequence=replies), AgentConfig())
    result = await loop.run(seed=1, options=None, episode_dir=tmp_path)
    assert result.terminal_state == "claimed_done" and result.success
    assert [a["id"] for a in env.actions] == ["dup", "call_2_0"]
    messages = read_trajectory(Path(result.trajectory_path)).messages
    second = messages[-2].tool_calls[0]
    assert (second.call_id, second.provider_call_id, second.arguments) == ("call_2_0", "dup", {})
    assert_paired(messages)


@pytest.mark.asyncio
async def test_exhausted_sequence_is_an_llm_error(tmp_path: Path) -> None:
    loop = AgentLoop(FakeEnv(), ScriptedClient(sequence=[]), AgentConfig())
    result = await loop.run(seed=0, options=None, episode_dir=tmp_path)
    assert result.terminal_state == "llm_error"
    assert result.diagnostic is None


@pytest.mark.asyncio
async def test_token_metrics_come_from_the_ledger(tmp_path: Path) -> None:
    env = FakeEnv(padding=50)
    result = await run(env, solve, tmp_path, system_prompt="system/none@1")
    trajectory = read_trajectory(Path(result.trajectory_path))
    messages = trajectory.messages
    assert messages[0].origin == "task"
    m = result.metrics
    outputs = [m_.content for m_ in messages if m_.role == "tool"]
    assert m.tool_output_tokens == sum(count_tokens(o) for o in outputs)
    assert m.trajectory_tokens == schema_tokens(FakeEnv.TOOLS) + sum(x.tokens for x in messages)
    requests = trajectory.of_type("llm_request")
    assert m.peak_request_tokens == requests[-1]["predicted_tokens"]
    # synthesised usage: input is the predicted request size, output the reply's tokens
    assert m.input_tokens == sum(r["predicted_tokens"] for r in requests)
    assert m.output_tokens == sum(x.tokens for x in messages if x.role == "assistant")
    assert not m.usage_reported


@pytest.mark.asyncio
async def test_long_scripted_episode(tmp_path: Path) -> None:
    def marathon(instruction: str, tools: list[dict[str, Any]]):
        for _ in range(100):
            yield [ToolRequest("read_note", {"id": i}) for i in (1, 2, 3)]
        yield ToolRequest("write_answer", {"text": EXPECTED})
        yield ToolRequest("claim_done")

    result = await run(FakeEnv(padding=600), marathon, tmp_path,
                       limits=Limits(max_tool_calls=400))
    assert result.terminal_state == "claimed_done" and result.success
    assert result.metrics.tool_calls == 302 and result.metrics.turns == 102


def test_config_rejects_unknown_keys_and_prompts() -> None:
    with pytest.raises(ValidationError):
        AgentConfig(max_turn=3)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        AgentConfig(system_prompt="system/react@9")
    with pytest.raises(ValidationError):
        AgentConfig(system_prompt="nudge/text_reply@1")
    assert AgentConfig().config_hash() == AgentConfig(system_prompt="system/react@1").config_hash()
    assert AgentConfig().config_hash() != AgentConfig(max_nudges=3).config_hash()
