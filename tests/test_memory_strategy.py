"""The memory strategy: the file memory's rules and limits, the tools in the loop (ledger,
metrics, files saved with the episode), the protocol text, and the near-limit warning."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from scaffolds.clients import ScriptedClient
from scaffolds.config import AgentConfig
from scaffolds.context import ContextConfig
from scaffolds.harness import memory as mem
from scaffolds.harness.memory import FileMemory, MemoryFailure
from scaffolds.harness.memory_tools import memory_tools
from scaffolds.ledger import read_trajectory
from scaffolds.loop import AgentLoop
from scaffolds.messages import ToolCallPart, assistant_message
from tests.test_context_strategies import Episode, SummaryClient
from tests.test_scaffold_loop import FakeEnv, assert_paired


def fails(code: str, func: Any, *args: Any) -> str:
    with pytest.raises(MemoryFailure) as info:
        func(*args)
    assert info.value.code == code, info.value.message
    return info.value.message


# ---------------------------------------------------------------- the file memory


def test_commands_and_their_outputs(tmp_path: Path) -> None:
    m = FileMemory(tmp_path / "memories")
    assert m.view("/memories") == "Directory: /memories\n(empty)"
    assert m.create("/memories/notes/progress.md", "a\nb\nc") == \
        "File created successfully at /memories/notes/progress.md"
    assert m.view("/memories/") == "Directory: /memories\n- notes/"
    assert m.view("/memories/notes/progress.md") == "     1: a\n     2: b\n     3: c"
    assert m.view("/memories/notes/progress.md", [2, -1]) == "     2: b\n     3: c"
    assert m.str_replace("/memories/notes/progress.md", "b", "B") == \
        "File /memories/notes/progress.md has been edited"
    assert m.insert("/memories/notes/progress.md", 0, "top") == \
        "Text inserted at line 0 of /memories/notes/progress.md"
    assert (tmp_path / "memories/notes/progress.md").read_text() == "top\na\nB\nc"
    assert m.rename("/memories/notes", "/memories/old") == "Renamed /memories/notes to /memories/old"
    assert m.delete("/memories/old/progress.md") == "Deleted /memories/old/progress.md"
    assert m.view("/memories/old") == "Directory: /memories/old\n(empty)"


def test_commands_refuse_bad_requests(tmp_path: Path) -> None:
    m = FileMemory(tmp_path / "memories")
    m.create("/memories/a.md", "x x")
    m.create("/memories/b.md", "")
    assert "occurs 2 times" in fails("INVALID_ARGUMENT", m.str_replace, "/memories/a.md", "x")
    assert "occurs 0 times" in fails("INVALID_ARGUMENT", m.str_replace, "/memories/a.md", "y")
    fails("INVALID_ARGUMENT", m.insert, "/memories/a.md", 2, "z")
    fails("INVALID_ARGUMENT", m.view, "/memories/a.md", [2, 1])
    fails("ALREADY_EXISTS", m.rename, "/memories/a.md", "/memories/b.md")
    fails("NOT_FOUND", m.view, "/memories/c.md")
    fails("FAILED_PRECONDITION", m.delete, "/memories")
    fails("INVALID_ARGUMENT", m.create, "/memories/run.sh", "echo")
    fails("INVALID_ARGUMENT", m.rename, "/memories/a.md", "/memories/a.exe")
    fails("INVALID_ARGUMENT", m.create, "/memories", "x")
    assert (tmp_path / "memories/a.md").read_text() == "x x"  # nothing changed


@pytest.mark.parametrize("path", ["/etc/passwd", "/memories/../secret.md", "memories/a.md",
                                  "/memories/a/../../b.md", "/memoriesX/a.md", "/memories/.hidden.md",
                                  "/memories/./a.md"])
def test_no_path_leaves_the_memory(tmp_path: Path, path: str) -> None:
    m = FileMemory(tmp_path / "memories")
    fails("PERMISSION_DENIED", m.create, path, "x")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["memories"]


def test_symlinks_are_refused_on_the_way_and_at_the_end(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    m = FileMemory(tmp_path / "memories")
    os.symlink(outside, tmp_path / "memories/link")
    os.symlink(outside / "secret.md", tmp_path / "memories/file.md")
    fails("PERMISSION_DENIED", m.view, "/memories/link/secret.md")
    fails("PERMISSION_DENIED", m.create, "/memories/link/new.md", "x")
    fails("PERMISSION_DENIED", m.view, "/memories/file.md")
    fails("PERMISSION_DENIED", m.str_replace, "/memories/file.md", "secret", "gone")
    fails("PERMISSION_DENIED", m.delete, "/memories/link")
    assert m.view("/memories") == "Directory: /memories\n(empty)"  # links are not listed
    assert (outside / "secret.md").read_text() == "secret" and not (outside / "new.md").exists()


def test_size_and_count_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = FileMemory(tmp_path / "memories")
    m.create("/memories/full.txt", "x" * mem.FILE_BYTES)
    fails("RESOURCE_EXHAUSTED", m.create, "/memories/big.txt", "x" * (mem.FILE_BYTES + 1))
    fails("RESOURCE_EXHAUSTED", m.insert, "/memories/full.txt", 0, "y")
    monkeypatch.setattr(mem, "MAX_FILES", 3)
    m.create("/memories/2.txt")
    m.create("/memories/3.txt")
    m.create("/memories/3.txt", "overwriting is no new file")
    fails("RESOURCE_EXHAUSTED", m.create, "/memories/4.txt")
    monkeypatch.setattr(mem, "MAX_FILES", 200)
    monkeypatch.setattr(mem, "TOTAL_BYTES", mem.FILE_BYTES + 10)
    assert "in all" in fails("RESOURCE_EXHAUSTED", m.create, "/memories/5.txt", "z" * 11)
    assert not (tmp_path / "memories/5.txt").exists()


def test_tools_check_arguments_and_report_errors_as_results(tmp_path: Path) -> None:
    tools = {t.name: t for t in memory_tools(tmp_path / "m", "paper")}
    assert sorted(tools) == ["memory_tool_create", "memory_tool_delete", "memory_tool_insert",
                             "memory_tool_rename", "memory_tool_str_replace", "memory_tool_view"]
    for tool in tools.values():
        props = tool.parameters["properties"]
        assert all(p.get("description") for p in props.values()), tool.name

    def call(name: str, **args: Any) -> Any:
        async def go() -> Any:
            return await tools[name].handler("c1", args, 1)
        return asyncio.run(go())

    bad = call("memory_tool_create", path="/memories/a.md")
    assert bad.is_error and bad.text == ("Error [INVALID_ARGUMENT]: memory_tool_create: missing "
                                         "argument(s) file_text")
    assert call("memory_tool_insert", path="/memories/a.md", insert_line="1",
                insert_text="x").text.endswith("insert_line must be a integer, got str")
    assert "unknown argument(s) mode" in call("memory_tool_view", path="/memories", mode=1).text
    assert "outside /memories" in call("memory_tool_view", path="/tmp").text
    assert not call("memory_tool_view", path="/memories", view_range=None).is_error


# ---------------------------------------------------------------- in the loop


def turn(*calls: tuple[str, dict[str, Any]]) -> Any:
    return assistant_message(None, [ToolCallPart.parse(f"m{i}_{name}", name, json.dumps(args))
                                    for i, (name, args) in enumerate(calls)])


@pytest.mark.asyncio
async def test_memory_calls_in_the_loop(tmp_path: Path) -> None:
    script = [turn(("memory_view", {"path": "/memories"})),
              turn(("memory_create", {"path": "/memories/progress.md", "file_text": "read 1"}),
                   ("read_note", {"id": 1})),
              turn(("memory_str_replace", {"path": "/memories/progress.md", "old_str": "1",
                                           "new_str": "1, 2"}),
                   ("memory_view", {"path": "/memories/../world"})),
              turn(("claim_done", {}))]
    context = ContextConfig.model_validate({"strategies": {"memory": {}}})
    result = await AgentLoop(FakeEnv(), ScriptedClient(sequence=script),
                             AgentConfig(context=context)).run(0, None, tmp_path)
    assert result.terminal_state == "claimed_done"
    assert (tmp_path / "memories/progress.md").read_text() == "read 1, 2"
    trajectory = read_trajectory(Path(result.trajectory_path))
    task = trajectory.messages[1]
    assert task.origin == "task" and "/memories" in task.text  # the protocol suffix
    assert "memory_view, memory_create" in task.text
    tools = trajectory.of_type("tools")[0]["tools"]
    assert [t["name"] for t in tools][-6:] == ["memory_view", "memory_create",
                                               "memory_str_replace", "memory_insert",
                                               "memory_delete", "memory_rename"]
    execs = [e for e in trajectory.of_type("tool_exec") if e["name"].startswith("memory_")]
    assert [e["server"] for e in execs] == ["memory"] * 4
    assert [e["is_error"] for e in execs] == [False, False, False, True]
    m = result.metrics
    assert m.tool_calls == 6 and m.tool_calls_by_name["memory_view"] == 2
    assert m.tool_calls_nested == 0 and m.tool_calls_invalid == 0
    assert result.prompts[-1]["id"] == "memory/protocol@1"
    assert_paired(trajectory.messages)


@pytest.mark.asyncio
async def test_a_harness_name_taken_by_the_env_is_a_setup_error(tmp_path: Path) -> None:
    class Clashing(FakeEnv):
        TOOLS = [*FakeEnv.TOOLS, {"name": "memory_view", "description": "x",
                                  "parameters": {"type": "object", "properties": {}}}]

    context = ContextConfig.model_validate({"strategies": {"memory": {}}})
    result = await AgentLoop(Clashing(), ScriptedClient(sequence=[]),
                             AgentConfig(context=context)).run(0, None, tmp_path)
    assert result.terminal_state == "env_setup_error"
    assert "memory_view" in (result.error.message if result.error else "")


# ---------------------------------------------------------------- the warning


def warnings(ep: Episode) -> list[Any]:
    return [m for m in ep.ledger.messages if m.origin == "harness.warning"]


def test_warning_fires_once_in_its_band_and_rearms_after_clearing(tmp_path: Path) -> None:
    ep = Episode(tmp_path, {"memory": {"warn_fraction": 0.5},
                            "clear_tool_results": {"trigger": 2000, "keep_last": 1}})
    assert "/memories" in ep.ledger.messages[1].text
    seen = []  # (P, warnings so far, clearings so far) after each turn; ~212 tokens a turn
    for _ in range(16):
        ep.play()
        seen.append((ep.prepare().predicted, len(warnings(ep)),
                     len(ep.decisions("clear_tool_results"))))
    first = next(i for i, (_, w, _) in enumerate(seen) if w)
    assert seen[first - 1][0] < 1000 <= seen[first][0] < 2000  # entered the band: warned
    cleared = next(i for i, (_, _, c) in enumerate(seen) if c)
    assert all(w == 1 for _, w, _ in seen[first:cleared])  # once, however long in the band
    again = next(i for i, (_, w, _) in enumerate(seen) if w == 2)
    assert again > cleared and seen[again][0] >= 1000  # re-armed by the clearing
    warning = warnings(ep)[0]
    assert warning.role == "user" and warning.turn == first + 1
    assert warning.text.startswith("You are nearing the context window limit")
    event = ep.decisions("memory")[0]
    assert event["decision"] == "warn" and event["trigger"] == 2000
    assert f"{event['used']}/2000" in warning.text


def test_truncation_dropping_the_warning_rearms_it(tmp_path: Path) -> None:
    short = "too short"  # every summary fails: compaction never fires, truncation takes over
    ep = Episode(tmp_path, {"memory": {"warn_fraction": 0.5},
                            "compaction": {"trigger": 1800, "summary_max_tokens": 500}},
                 client=SummaryClient(*[short] * 40), window=3400)
    warning = ep.pipeline.warning
    assert warning is not None
    band = int(warning.low)
    while not warnings(ep):
        ep.play()
        ep.prepare()
    (shown,) = warnings(ep)
    renderer = ep.pipeline.renderer
    assert warning.due(renderer, band) is None  # in force: not armed
    while shown.mid in renderer.entries:
        ep.play()
        ep.prepare()
    assert ep.decisions("truncate")
    assert {d["decision"] for d in ep.decisions("compaction")} == {"failed"}
    assert warning.due(renderer, band) is not None  # re-armed


def test_memory_results_are_never_cleared(tmp_path: Path) -> None:
    ep = Episode(tmp_path, {"memory": {}, "clear_tool_results": {"trigger": 1500, "keep_last": 0}})
    ep.play(name="memory_view")
    for _ in range(6):
        ep.play()
    prepared = ep.prepare()
    cleared = ep.decisions("clear_tool_results")[0]["changes"]["clear"]
    memory_mid = next(m.mid for m in ep.ledger.messages if m.name == "memory_view" and
                      m.role == "tool")
    assert cleared and memory_mid not in cleared
    shown = {m.mid: m.content for m in prepared.messages}
    assert shown[memory_mid].startswith("note 1")
    off = Episode(tmp_path / "off", {"memory": {"clear_results": True, "warning": "off"},
                                     "clear_tool_results": {"trigger": 1500, "keep_last": 0}})
    off.play(name="memory_view")
    for _ in range(6):
        off.play()
    off.prepare()
    assert memory_mid in off.decisions("clear_tool_results")[0]["changes"]["clear"]
    assert warnings(off) == []


def test_warning_auto_is_off_without_a_reset_strategy(tmp_path: Path) -> None:
    ep = Episode(tmp_path, {"memory": {"warn_fraction": 0.1}}, window=3000)
    for _ in range(5):
        ep.play()
        ep.prepare()
    assert warnings(ep) == [] and ep.pipeline.warning is None
