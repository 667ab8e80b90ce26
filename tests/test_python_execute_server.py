"""The python_execute server: output sections, timeouts, argument errors, the script name,
workspace access and determinism, in both confined sandbox modes; the refusal and the disk
limit as error results."""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import sys
import threading
import time
from pathlib import Path

import pytest
from fastmcp import Client

from loca.core.world import World
from mock_servers import SERVERS, load_toolbox
from mock_servers.python_execute import toolbox
from mock_servers.sandbox import mode as mode_module
from tests.harness import ServerHarness
from tests.sandboxing import MODES, config_for, new_world, open_folder, require
from tests.schemas import violations

pytestmark = pytest.mark.sandbox  # runs code in the sandbox

INFO = re.compile(r"=== EXECUTION INFO ===\nReturn code: (.+)\nExecution time: \d+\.\d\d seconds\n"
                  r"Timeout limit: (\d+) seconds$")


@pytest.fixture(params=MODES)
def mode(request) -> str:
    require(request.param)
    return request.param


@pytest.fixture
def world():
    for folder in open_folder():
        yield new_world(folder)


@pytest.fixture
def py(world: World, mode: str) -> ServerHarness:
    return ServerHarness(toolbox, world, config_for(mode))


def body(text: str) -> str:
    """The output without its EXECUTION INFO section (which holds the timing)."""
    return text[:text.index("=== EXECUTION INFO ===")]


def test_registered_with_a_clean_schema(world: World) -> None:
    assert SERVERS["python_execute"] == "mock_servers.python_execute"
    assert load_toolbox("python_execute") is toolbox
    runtime = ServerHarness(toolbox, world).runtime
    assert set(runtime.tools) == {"python_execute"}
    tool = runtime.tools["python_execute"]
    assert tool.tags == {"write", "python_execute", "core"}
    assert len(tool.description or "") <= 1024
    params = tool.parameters
    assert params["required"] == ["code"] and params["additionalProperties"] is False
    assert params["properties"]["timeout"] == {
        "type": "integer", "minimum": 1, "maximum": 120, "default": 30,
        "description": "wall-clock limit in seconds (default 30, max 120)"}
    assert params["properties"]["filename"]["type"] == "string"
    assert not violations(params)
    assert all(p.get("description") for p in params["properties"].values())


def test_stdout_stderr_and_info_sections(py: ServerHarness) -> None:
    text = py.ok_text("python_execute", code="import sys\nprint('hello')\nprint('warn', file=sys.stderr)")
    assert body(text) == "=== STDOUT ===\nhello\n=== STDERR ===\nwarn\n"
    assert INFO.search(text).groups() == ("0", "30")


def test_no_output(py: ServerHarness) -> None:
    text = py.ok_text("python_execute", code="x = 1", timeout=5)
    assert body(text) == "No console output produced.\n"
    assert INFO.search(text).groups() == ("0", "5")


def test_exception_is_a_normal_result_with_the_traceback(py: ServerHarness) -> None:
    text = py.ok_text("python_execute", code="def f():\n    return 1 / 0\nf()", filename="calc.py")
    assert body(text).startswith("=== STDERR ===\nTraceback (most recent call last):\n"
                                 '  File "/tmp/calc.py", line 3, in <module>')
    assert "ZeroDivisionError: division by zero" in text
    assert INFO.search(text).group(1) == "1"
    assert INFO.search(py.ok_text("python_execute", code="raise SystemExit(7)")).group(1) == "7"


def test_timeout_reports_partial_output(py: ServerHarness) -> None:
    text = py.ok_text("python_execute", code="import time\nprint('step 1')\ntime.sleep(30)", timeout=1)
    assert text.startswith("=== EXECUTION TIMEOUT ===\nThe script did not finish within 1 seconds")
    assert "=== STDOUT ===\nstep 1\n=== EXECUTION INFO ===" in text
    assert INFO.search(text).groups() == ("none (stopped at the timeout)", "1")


def test_filename_is_reduced_to_a_safe_basename(py: ServerHarness, world: World) -> None:
    text = py.ok_text("python_execute", code="print(__file__)", filename="../../x; rm -rf $(pwd).py")
    assert body(text) == "=== STDOUT ===\n/tmp/xrm-rfpwd.py\n"
    assert list(world.workspace.iterdir()) == []
    assert sorted(p.name for p in world.scratch.iterdir()) == [".sandbox.lock", "sandbox-disk.json"]


def test_reads_and_writes_the_workspace(py: ServerHarness, world: World) -> None:
    (world.workspace / "data").mkdir()
    (world.workspace / "data" / "scores.csv").write_text("name,score\nann,3\nbob,5\n")
    code = ("import csv, os\nrows = list(csv.DictReader(open('data/scores.csv')))\n"
            "total = sum(int(r['score']) for r in rows)\n"
            "open(os.path.join(os.environ['WORKSPACE'], 'total.txt'), 'w').write(str(total))\n"
            "print(total)")
    assert body(py.ok_text("python_execute", code=code)) == "=== STDOUT ===\n8\n"
    assert (world.workspace / "total.txt").read_text() == "8"


def test_each_call_runs_exactly_once(py: ServerHarness, world: World) -> None:
    for _ in range(3):
        py.ok_text("python_execute", code="open('runs.log', 'a').write('run\\n')")
    assert (world.workspace / "runs.log").read_text() == "run\n" * 3


def test_output_is_capped_keeping_head_and_tail(py: ServerHarness) -> None:
    text = py.ok_text("python_execute", code="for i in range(10000):\n    print(f'line {i:05d}')")
    assert text.startswith("=== STDOUT ===\nline 00000\n")
    assert "\n…[90000 characters omitted]…\n" in text  # 110,000 characters, 20,000 kept
    assert "line 09999\n=== EXECUTION INFO ===" in text


def test_secrets_in_the_server_environment_stay_out(py: ServerHarness, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    text = py.ok_text("python_execute", code="import os\nprint(sorted(os.environ.items()))")
    assert "sk-test-secret" not in text and "OPENAI" not in text


def test_same_call_same_output(py: ServerHarness) -> None:
    code = "import random\nrandom.seed(4)\nprint(random.random(), {f'item{i}' for i in range(20)})"
    first, second = (py.ok_text("python_execute", code=code) for _ in range(2))
    assert body(first) == body(second)


@pytest.mark.parametrize(("args", "message"), [
    ({}, "missing required parameter 'code'"),
    ({"code": ""}, "parameter 'code'"),
    ({"code": "print(1)", "timeout": 0}, "allowed 1..120"),
    ({"code": "print(1)", "timeout": 121}, "allowed 1..120"),
    ({"code": "print(1)", "timeout": "soon"}, "parameter 'timeout'"),
    ({"code": "print(1)", "timeout": True}, "parameter 'timeout'"),
    ({"code": "print(1)", "cwd": "/"}, "unknown parameter 'cwd'"),
    ({"code": "print('\ud800')"}, "unpaired surrogate"),
])
def test_argument_errors(world: World, args: dict, message: str) -> None:
    text, is_error = ServerHarness(toolbox, world).call("python_execute", **args)
    assert is_error and text.startswith("Error [INVALID_ARGUMENT]: python_execute: "), text
    assert message in text


def test_a_mode_that_cannot_be_had_is_an_error_result(world: World, monkeypatch) -> None:
    monkeypatch.delenv("LOCA_SANDBOX", raising=False)
    monkeypatch.delenv("LOCA_ALLOW_UNCONFINED_SANDBOX", raising=False)
    monkeypatch.setattr(mode_module, "strong_problem", lambda: "namespaces are refused")
    monkeypatch.setattr(mode_module, "landlock_problem", lambda: "no Landlock here")
    for config, message in (({"sandbox": "strong"}, "namespaces are refused"),
                            ({"sandbox": "landlock"}, "no Landlock here"),
                            ({}, "no confinement for code is available here")):
        text, is_error = ServerHarness(toolbox, world, config).call("python_execute", code="print(1)")
        assert is_error and text.startswith("Error [FAILED_PRECONDITION]: python_execute: sandbox: ")
        assert message in text


@pytest.mark.slow
def test_the_gym_packages_are_importable(py: ServerHarness, world: World) -> None:
    text = py.ok_text("python_execute", code=(
        "import numpy, openpyxl\nwb = openpyxl.Workbook()\nwb.save('book.xlsx')\n"
        "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.savefig('plot.png')\nprint('ok')"))
    assert body(text).startswith("=== STDOUT ===\nok\n")
    assert (world.workspace / "book.xlsx").stat().st_size > 1000
    assert (world.workspace / "plot.png").stat().st_size > 1000


def test_writing_past_the_disk_budget_is_an_error_result(world: World, mode: str) -> None:
    (world.workspace / "data.csv").write_text("a,b\n")
    py = ServerHarness(toolbox, world, {**config_for(mode), "sandbox_call_disk_mib": 1})
    text, is_error = py.call("python_execute",
                             code="for i in range(8):\n    open(f'part{i}.bin', 'wb').write(b'x' * 500_000)")
    assert is_error and text.startswith("Error [RESOURCE_EXHAUSTED]: python_execute: sandbox: the call "
                                        "wrote more than 1 MiB to the workspace and /tmp"), text
    assert [p.name for p in world.workspace.iterdir()] == ["data.csv"]


def test_an_interpreter_path_through_another_folder_works(world: World, mode: str,
                                                         tmp_path: Path) -> None:
    """`python` started as `some/dir/../.venv/bin/python` (a script run from a subfolder):
    the sandbox gets the interpreter's own path, not one through a folder it does not mount
    (here a folder of the host's /tmp, which the sandbox replaces with its own)."""
    config = config_for(mode)
    chosen = Path(os.path.abspath(config.get("sandbox_python") or sys.executable))
    up = "/".join([".."] * len(tmp_path.parts[1:]))
    detour = f"{tmp_path}/{up}{chosen}"
    assert os.path.exists(detour)
    text = ServerHarness(toolbox, world, {**config, "sandbox_python": str(detour)}).ok_text(
        "python_execute", code="print('ok')")
    assert body(text) == "=== STDOUT ===\nok\n"


def test_no_database_lock_is_held_while_code_runs(py: ServerHarness, world: World) -> None:
    worker = threading.Thread(target=py.ok_text, args=("python_execute",),
                              kwargs={"code": "import time\ntime.sleep(1.5)"})
    worker.start()
    time.sleep(0.7)
    conn = sqlite3.connect(world.state_path, timeout=0.1)
    conn.execute("BEGIN IMMEDIATE")  # other tools may write while code runs
    conn.rollback()
    conn.close()
    assert worker.is_alive()
    worker.join()


def test_through_an_mcp_client(world: World) -> None:
    runtime = ServerHarness(toolbox, world).runtime

    async def scenario() -> tuple[str, bool]:
        async with Client(runtime.app) as client:
            result = await client.call_tool("python_execute", {"code": "print(6 * 7)"})
            bad = await client.call_tool("python_execute", {"code": "x", "timeout": 500},
                                         raise_on_error=False)
            return result.content[0].text, bad.is_error

    text, bad = asyncio.run(scenario())
    assert body(text) == "=== STDOUT ===\n42\n" and bad
