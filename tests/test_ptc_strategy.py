"""Programmatic tool calling: code runs in the sandbox and calls env tools live, exactly once and
in order, through the same path as a model's call (counted, recorded with the parent id)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mock_servers.sandbox import disk
from scaffolds.clients import ScriptedClient
from scaffolds.config import AgentConfig, Limits
from scaffolds.context import ContextConfig
from scaffolds.ledger import Trajectory, read_trajectory
from scaffolds.loop import AgentLoop
from scaffolds.messages import ToolCallPart, assistant_message
from scaffolds.result import EpisodeResult
from tests.sandboxing import MODES, config_for, new_world, open_folder, require, survivors
from tests.test_scaffold_loop import FakeEnv, assert_paired

pytestmark = pytest.mark.sandbox  # runs code in the sandbox

NO_ARGS = {"type": "object", "properties": {}}


class CountingEnv(FakeEnv):
    """FakeEnv on a real world folder, with `bump` (a side effect counted by the env)."""

    TOOLS = [*FakeEnv.TOOLS, {"name": "bump", "description": "Add one to the counter.",
                              "parameters": NO_ARGS}]

    def __init__(self, world_dir: Path, **options: Any) -> None:
        super().__init__(**options)
        self.world_dir = world_dir
        self.count = 0

    async def areset(self, seed: int | None = None,
                     options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        instruction, info = await super().areset(seed, options)
        return instruction, {**info, "tools": self.TOOLS, "world_dir": self.world_dir}

    async def astep(self, action: dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if action["name"] == "bump":
            self.actions.append(action)
            self.count += 1
            return json.dumps({"count": self.count}), 0.0, False, False, {"is_error": False}
        return await super().astep(action)


@pytest.fixture(scope="module")
def world_dir() -> Iterator[Path]:
    for folder in open_folder():
        yield new_world(folder).root


@pytest.fixture(params=MODES)
def sandbox(request: pytest.FixtureRequest) -> dict[str, Any]:
    require(request.param)
    config = config_for(request.param)
    return {"sandbox": config["sandbox"], "sandbox_python": config.get("sandbox_python")}


def code_turn(code: str, call_id: str = "run", **extra: Any) -> Any:
    arguments = json.dumps({"code": code, **extra})
    return assistant_message(None, [ToolCallPart.parse(call_id, "code_execution", arguments)])


def done_turn() -> Any:
    return assistant_message(None, [ToolCallPart.parse("done", "claim_done", "{}")])


async def play(env: CountingEnv, tmp_path: Path, ptc: dict[str, Any], *turns: Any,
               **limits: Any) -> tuple[EpisodeResult, Trajectory]:
    context = ContextConfig.model_validate({"strategies": {"ptc": ptc}})
    config = AgentConfig(context=context, limits=Limits(**limits))
    result = await AgentLoop(env, ScriptedClient(sequence=list(turns)), config).run(
        0, None, tmp_path)
    trajectory = read_trajectory(Path(result.trajectory_path))
    assert_paired([m for m in trajectory.messages if m.parent_call_id is None])
    return result, trajectory


def report(trajectory: Trajectory, call_id: str = "run") -> dict[str, Any]:
    (message,) = [m for m in trajectory.messages if m.role == "tool" and m.call_id == call_id]
    return json.loads(message.content or "")


def nested(trajectory: Trajectory) -> list[dict[str, Any]]:
    return [e for e in trajectory.of_type("tool_exec") if e.get("parent_call_id")]


@pytest.mark.asyncio
async def test_k_calls_from_code_move_the_counter_by_exactly_k(
        world_dir: Path, sandbox: dict[str, Any], tmp_path: Path) -> None:
    env = CountingEnv(world_dir)
    code = ("seen = [tools.bump()['count'] for _ in range(7)]\n"
            "print('last', seen[-1])\n"
            "result = {'seen': seen, 'notes': tools.list_notes(), "
            "'text': tools.call('read_note', id=2)}")
    result, trajectory = await play(env, tmp_path, sandbox, code_turn(code), done_turn())
    assert env.count == 7
    out = report(trajectory)
    assert out["success"] and not out["timed_out"] and out["error"] is None
    assert out["stdout"] == "last 7\n"
    assert out["result"] == {"seen": [1, 2, 3, 4, 5, 6, 7], "notes": [1, 2, 3],
                             "text": "beta is 4 "}
    assert [c["name"] for c in out["nested_calls"]] == ["bump"] * 7 + ["list_notes", "read_note"]
    events = nested(trajectory)
    assert [e["call_id"] for e in events] == [f"run.{i}" for i in range(1, 10)]
    assert {e["parent_call_id"] for e in events} == {"run"}
    assert events[-1]["arguments"] == {"id": 2} and events[-1]["output_tokens"] > 0
    assert [a.get("parent_id") for a in env.actions[:9]] == ["run"] * 9
    inner = [m for m in trajectory.messages if m.parent_call_id == "run"]
    assert len(inner) == 9 and inner[0].content == '{"count": 1}'
    m = result.metrics
    assert (m.tool_calls, m.tool_calls_nested) == (2, 9)
    assert m.tool_output_tokens_nested == sum(e["output_tokens"] for e in events)
    assert result.terminal_state == "claimed_done"


@pytest.mark.asyncio
async def test_errors_raise_inside_the_code_and_the_allow_list_holds(
        world_dir: Path, sandbox: dict[str, Any], tmp_path: Path) -> None:
    env = CountingEnv(world_dir)
    code = ("try:\n    tools.read_note(id=9)\nexcept ToolCallError as e:\n"
            "    print('caught', e.text)\n"
            "try:\n    tools.claim_done()\nexcept ToolCallError as e:\n    print(e.code)\n"
            "try:\n    tools.code_execution(code='1')\nexcept ToolCallError as e:\n"
            "    print(e.code)\n"
            "print(sorted(tools.list()))\n"
            "tools.read_note(id=8)\n")
    result, trajectory = await play(env, tmp_path, sandbox, code_turn(code), done_turn())
    out = report(trajectory)
    assert out["stdout"].splitlines() == [
        "caught no note 9", "NOT_FOUND", "NOT_FOUND",
        "['bump', 'list_notes', 'read_note', 'write_answer']"]
    assert not out["success"] and out["error"]["type"] == "ToolCallError"
    assert 'line 14, in <module>' in out["error"]["traceback"]
    assert [(c["name"], c["is_error"]) for c in out["nested_calls"]] == [
        ("read_note", True), ("claim_done", True), ("code_execution", True), ("read_note", True)]
    assert env.called == ["read_note", "read_note", "claim_done"]  # claim_done: the model's
    assert [e["status"] for e in nested(trajectory)] == ["executed", "invalid", "invalid",
                                                         "executed"]
    assert result.metrics.tool_calls_nested == 2 and result.metrics.tool_calls_invalid == 2


@pytest.mark.asyncio
async def test_the_nested_call_cap_and_the_episode_limit(world_dir: Path, tmp_path: Path) -> None:
    env = CountingEnv(world_dir)
    code = ("for _ in range(5):\n    try:\n        tools.bump()\n"
            "    except ToolCallError as e:\n        print(e.code)\n")
    _, trajectory = await play(env, tmp_path, {"max_nested_calls": 3}, code_turn(code),
                               done_turn())
    assert env.count == 3
    assert report(trajectory)["stdout"].split() == ["RESOURCE_EXHAUSTED"] * 2
    assert [e["status"] for e in nested(trajectory)] == ["executed"] * 3 + ["skipped"] * 2

    env = CountingEnv(world_dir)
    result, trajectory = await play(env, tmp_path / "limit", {}, code_turn(code), done_turn(),
                                    max_tool_calls=3)
    assert env.count == 2  # code_execution itself is the first of the 3 calls
    assert report(trajectory)["stdout"].split() == ["ERROR"] * 3  # the limit's own text
    assert [e["status"] for e in nested(trajectory)] == ["executed"] * 2 + ["skipped"] * 3
    assert result.terminal_state == "max_tool_calls"


@pytest.mark.slow
@pytest.mark.asyncio
async def test_timeout_kills_the_code_and_reports_the_calls_so_far(
        world_dir: Path, sandbox: dict[str, Any], tmp_path: Path) -> None:
    env = CountingEnv(world_dir)
    code = ("import subprocess, sys, time\ntools.bump()\nprint('bumped', flush=True)\n"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)  # ptc-stray'])\n"
            "time.sleep(60)\n")
    result, trajectory = await play(env, tmp_path, sandbox, code_turn(code, timeout_s=2),
                                    done_turn())
    out = report(trajectory)
    assert out["timed_out"] and not out["success"] and out["error"]["type"] == "Timeout"
    assert out["stdout"] == "bumped\n" and out["nested_calls"] == [
        {"seq": 1, "name": "bump", "is_error": False}]
    assert 2 <= out["duration_s"] < 6
    assert env.count == 1 and survivors("ptc-stray") == []
    assert result.terminal_state == "claimed_done"


@pytest.mark.asyncio
async def test_no_network_inside(world_dir: Path, sandbox: dict[str, Any], tmp_path: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    accepted: list[Any] = []
    thread = threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True)
    thread.start()
    code = ("import socket\ntry:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
            "    print('connected')\nexcept OSError as e:\n    print('refused', type(e).__name__)\n")
    _, trajectory = await play(CountingEnv(world_dir), tmp_path, sandbox, code_turn(code), done_turn())
    server.close()
    assert report(trajectory)["stdout"].startswith("refused") and accepted == []


@pytest.mark.asyncio
async def test_the_answer_key_is_out_of_reach(world_dir: Path, sandbox: dict[str, Any],
                                             tmp_path: Path) -> None:
    (world_dir / "truth" / "truth.json").write_text('{"secret": "answer-key"}')
    code = ("import os\nfor path in ('../truth/truth.json', os.path.join(os.environ['WORKSPACE'], "
            "'..', 'truth', 'truth.json')):\n"
            "    try:\n        print(open(path).read())\n    except OSError as e:\n"
            "        print('refused', type(e).__name__)\n"
            "result = tools.list_notes()\n")
    _, trajectory = await play(CountingEnv(world_dir), tmp_path, sandbox, code_turn(code), done_turn())
    out = report(trajectory)
    assert out["success"] and "answer-key" not in out["stdout"], out
    assert out["stdout"].count("refused") == 2


@pytest.mark.asyncio
async def test_writing_past_the_disk_budget_stops_the_code(world_dir: Path, sandbox: dict[str, Any],
                                                           tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(disk, "DEFAULT_CALL_MIB", 1)
    code = ("import time\ntools.bump()\n"
            "for i in range(8):\n    open(f'part{i}.bin', 'wb').write(b'x' * 500_000)\n"
            "time.sleep(60)\n")
    env = CountingEnv(world_dir)
    _, trajectory = await play(env, tmp_path, sandbox, code_turn(code, timeout_s=60), done_turn())
    (answer,) = [m for m in trajectory.messages if m.call_id == "run" and m.role == "tool"]
    assert answer.is_error and (answer.content or "").startswith(
        "Error [RESOURCE_EXHAUSTED]: code_execution: sandbox: the call wrote more than 1 MiB"), answer.content
    assert not list((world_dir / "workspace").glob("part*.bin")) and env.count == 1


@pytest.mark.asyncio
async def test_results_errors_and_exits_are_reported(world_dir: Path, tmp_path: Path) -> None:
    env = CountingEnv(world_dir)
    turns = [code_turn("result = object()", "repr"), code_turn("def f(:\n", "syntax"),
             code_turn("import os\nprint('bye', flush=True)\nos._exit(3)", "exit"),
             code_turn("import sys\nsys.exit(0)", "exit0"),
             code_turn("print('x')", "bad", timeout_s=500), done_turn()]
    _, trajectory = await play(env, tmp_path, {}, *turns)
    assert report(trajectory, "repr")["result"].startswith("<object object at")
    syntax = report(trajectory, "syntax")["error"]
    assert syntax["type"] == "SyntaxError" and "<code>" in syntax["traceback"]
    exited = report(trajectory, "exit")
    assert exited["error"]["type"] == "ProcessExit" and "exit status 3" in exited["error"]["message"]
    assert exited["stdout"] == "bye\n"
    assert report(trajectory, "exit0")["success"]
    (bad,) = [m for m in trajectory.messages if m.call_id == "bad" and m.role == "tool"]
    assert bad.is_error and bad.content == ("Error [INVALID_ARGUMENT]: code_execution: timeout_s "
                                            "must be an integer from 1 to 120, got 500")


@pytest.mark.asyncio
async def test_direct_tools_none_and_paper_names(world_dir: Path, tmp_path: Path) -> None:
    env = CountingEnv(world_dir)
    name = "programmatic_tool_calling_code_execution"
    call = ToolCallPart.parse("run", name, json.dumps({"code": "print(tools.bump())"}))
    direct = ToolCallPart.parse("direct", "bump", "{}")
    _, trajectory = await play(env, tmp_path, {"direct_tools": "none", "naming": "paper"},
                               assistant_message(None, [call, direct]), done_turn())
    tools = trajectory.of_type("tools")[0]["tools"]
    assert [t["name"] for t in tools] == ["claim_done", name]
    assert "- bump(): Add one to the counter." in tools[1]["description"]
    assert report(trajectory)["stdout"] == "{'count': 1}\n"
    (refused,) = [m for m in trajectory.messages if m.call_id == "direct" and m.role == "tool"]
    assert refused.is_error and "there is no tool named 'bump'" in (refused.content or "")
    assert env.count == 1


@pytest.mark.asyncio
async def test_a_nested_infrastructure_failure_ends_the_episode(world_dir: Path,
                                                                 tmp_path: Path) -> None:
    env = CountingEnv(world_dir, infra_tool="read_note")
    code = "tools.bump()\ntools.read_note(id=1)\nprint('not reached')\n"
    result, trajectory = await play(env, tmp_path, {}, code_turn(code), done_turn())
    assert result.terminal_state == "tool_infra_error"
    assert "read_note server crashed" in (result.error.message if result.error else "")
    (answer,) = [m for m in trajectory.messages if m.call_id == "run" and m.role == "tool"]
    assert answer.is_error and "Tool infrastructure failure" in (answer.content or "")
    assert env.count == 1


@pytest.mark.asyncio
async def test_without_a_world_the_call_is_an_error_result(tmp_path: Path) -> None:
    context = ContextConfig.model_validate({"strategies": {"ptc": {}}})
    result = await AgentLoop(FakeEnv(), ScriptedClient(sequence=[code_turn("print(1)"),
                                                                  done_turn()]),
                             AgentConfig(context=context)).run(0, None, tmp_path)
    trajectory = read_trajectory(Path(result.trajectory_path))
    (answer,) = [m for m in trajectory.messages if m.call_id == "run" and m.role == "tool"]
    assert answer.is_error and (answer.content or "").startswith(
        "Error [FAILED_PRECONDITION]: code_execution: no world to run code in: /tmp/fake-world")
    assert result.terminal_state == "claimed_done"
