"""The code-execution sandbox's mechanics in both confined modes: the environment is minimal,
output is capped keeping head and tail, timeouts kill everything the call started, limits hold;
the choice of mode and its refusal. The attacks are in test_sandbox_attacks.py."""

from __future__ import annotations

import itertools
import json
import logging
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from loca.core.world import World
from mock_servers.core.errors import Code
from mock_servers.sandbox import (
    SandboxError,
    SandboxUnavailable,
    describe,
    safe_filename,
    sandbox_mode,
)
from mock_servers.sandbox import mode as mode_module
from mock_servers.sandbox.capture import Capture
from mock_servers.sandbox.confine import Options, stage, stages
from mock_servers.sandbox.launch import LAUNCHER_FLAGS, launcher_source
from mock_servers.sandbox.mode import ENV_ALLOW_UNCONFINED
from tests import sandboxing
from tests.sandboxing import MODES, new_world, open_folder, require, run_python, survivors

pytestmark = pytest.mark.sandbox  # runs code in the sandbox

ENV_KEYS = {"PATH", "LANG", "HOME", "TMPDIR", "TZ", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "MPLBACKEND",
            "WORKSPACE"}


@pytest.fixture(params=MODES)
def mode(request) -> str:
    require(request.param)
    return request.param


@pytest.fixture
def folder():
    yield from open_folder()


@pytest.fixture
def world(folder: Path) -> World:
    return new_world(folder, tz="Europe/Berlin")


# ---- environment, files, output -------------------------------------------------------------

def test_environment_is_minimal_and_secrets_stay_out(world, mode, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    run = run_python(world, mode, "import json, os, sys, time\n"
                     "print(json.dumps(dict(os.environ)))\n"
                     "print(os.getcwd(), sys.flags.no_user_site, sys.flags.safe_path, sys.path[0] != '/tmp',\n"
                     "      time.strftime('%Z', time.localtime(0)))")
    assert run.code == 0, run.stderr
    env_line, info = run.stdout.splitlines()
    assert "sk-test-secret" not in run.stdout and "proxy" not in run.stdout
    env = json.loads(env_line)
    assert ENV_KEYS <= set(env) <= ENV_KEYS | {"PWD"}  # bubblewrap's --chdir sets PWD
    assert env["HOME"] == env["TMPDIR"] == "/tmp"
    assert env["WORKSPACE"] == "/workspace" and env["TZ"] == "Europe/Berlin"
    assert env["LANG"] == "C.UTF-8" and env["MPLBACKEND"] == "Agg"
    assert info == "/workspace 1 True True CET"


def test_script_lives_in_private_scratch_and_is_removed(world, mode) -> None:
    run = run_python(world, mode, "print(__file__)\nopen('made.txt', 'w').write('ok')",
                     name="report.py")
    assert run.stdout == "/tmp/report.py\n"
    assert (world.workspace / "made.txt").read_text() == "ok"
    assert sorted(p.name for p in world.scratch.iterdir()) == [".sandbox.lock", "sandbox-disk.json"]
    assert sorted(p.name for p in world.workspace.iterdir()) == ["made.txt"]


def test_a_world_at_a_relative_path(world, mode, monkeypatch) -> None:
    monkeypatch.chdir(world.root.parent)
    relative = World.load(world.root.name)
    assert not relative.scratch.is_absolute()
    run = run_python(relative, mode, "print(__file__)\nopen('made.txt', 'w')")
    assert (run.code, run.stdout) == (0, "/tmp/case.py\n"), run.stderr
    assert (world.workspace / "made.txt").exists()


def test_nonzero_exit_and_traceback_are_a_normal_outcome(world, mode) -> None:
    run = run_python(world, mode, "import sys\nprint('before')\nsys.exit(3)")
    assert (run.code, run.stdout) == (3, "before\n")
    run = run_python(world, mode, "1/0", name="boom.py")
    assert run.code == 1 and 'File "/tmp/boom.py", line 1' in run.stderr
    assert "ZeroDivisionError" in run.stderr


def test_output_over_the_cap_keeps_head_and_tail(world, mode) -> None:
    run = run_python(world, mode, "import sys\nprint('A' * 30000 + 'Z' * 30000)\n"
                     "sys.stderr.write('e' * 3000 + 'E' * 3000)")
    assert run.stdout == "A" * 10000 + "\n…[40001 characters omitted]…\n" + "Z" * 9999 + "\n"
    assert run.stderr == "e" * 2500 + "\n…[1000 characters omitted]…\n" + "E" * 2500


@pytest.mark.slow
def test_endless_output_is_drained_and_capped(world, mode) -> None:
    run = run_python(world, mode, "while True:\n    print('y' * 999)", timeout=2)
    assert run.code is None and run.elapsed < 5
    head, _, rest = run.stdout.partition("\n…[")
    assert head == ("y" * 999 + "\n") * 10 and int(rest.split(" ", 1)[0]) > 1_000_000


def test_stdin_is_empty(world, mode) -> None:
    run = run_python(world, mode, "try:\n    input()\nexcept EOFError:\n    print('eof')")
    assert run.stdout == "eof\n"


def test_undecodable_output_is_replaced(world, mode) -> None:
    run = run_python(world, mode, "import sys\nsys.stdout.buffer.write(b'\\xff\\xfeok \\xe2\\x82')")
    assert run.code == 0 and run.stdout == "\ufffd\ufffdok \ufffd"


def test_capture_counts_characters_across_chunks() -> None:
    capture = Capture(6)
    for chunk in ("héllo wörld".encode()[i:i + 1] for i in range(13)):
        capture.feed(chunk)
    assert capture.text() == "hél\n…[5 characters omitted]…\nrld" and capture.total == 11
    small = Capture(100)
    small.feed("€".encode()[:2])
    small.feed("€".encode()[2:])
    assert small.text() == "€"


# ---- timeouts and process groups ------------------------------------------------------------

def _spawn_sleepers(marker: str, count: int = 2) -> str:
    return ("import subprocess, sys\n"
            f"for _ in range({count}):\n"
            f"    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '{marker}'])\n")


@pytest.mark.slow
def test_infinite_loop_is_killed_with_its_whole_group(world, mode) -> None:
    marker = f"sleeper-{uuid.uuid4().hex}"
    code = _spawn_sleepers(marker) + "print('looping', flush=True)\nwhile True:\n    pass\n"
    run = run_python(world, mode, code, timeout=2)
    assert run.code is None and run.stdout == "looping\n"
    assert 1.9 < run.elapsed < 5
    assert survivors(marker) == []


def test_a_child_ignoring_sigterm_is_killed(world, mode) -> None:
    name = f"stubborn_{uuid.uuid4().hex[:12]}.py"
    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.01)\n"
    run = run_python(world, mode, code, timeout=1, name=name)
    assert run.code is None and run.elapsed < 5
    assert survivors(name) == []


def test_background_children_do_not_outlive_a_finished_run(world, mode) -> None:
    marker = f"orphan-{uuid.uuid4().hex}"
    run = run_python(world, mode, _spawn_sleepers(marker) + "print('done')")
    assert (run.code, run.stdout) == (0, "done\n") and run.elapsed < 5
    assert survivors(marker) == []


@pytest.mark.slow
def test_fork_bomb_is_contained(world, mode) -> None:
    name = f"bomb_{uuid.uuid4().hex[:12]}.py"
    code = ("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n")
    run = run_python(world, mode, code, timeout=3, name=name)
    assert run.code is None and run.elapsed < 8
    started = time.monotonic()
    subprocess.run(["true"], check=True)  # the host still forks at once
    assert time.monotonic() - started < 1
    assert survivors(name) == []


def test_process_count_is_capped(world, mode) -> None:
    code = ("import os, time\nkids = 0\n"
            "for _ in range(100):\n"
            "    try:\n        pid = os.fork()\n    except OSError:\n        break\n"
            "    if pid == 0:\n        time.sleep(5)\n        os._exit(0)\n"
            "    kids += 1\nprint(kids)\n")
    run = run_python(world, mode, code, processes=20)
    assert run.code == 0 and int(run.stdout) < 20


def test_four_gib_allocation_fails_cleanly(world, mode) -> None:
    run = run_python(world, mode, "block = bytearray(4 * 2**30)")
    assert run.code == 1 and run.stderr.rstrip().endswith("MemoryError")


def test_file_size_is_capped(world, mode) -> None:
    code = ("import signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            "try:\n    open('big.bin', 'wb').write(b'x' * 2_000_000)\nexcept OSError as exc:\n"
            "    print('refused', exc.errno)\n")
    run = run_python(world, mode, code, file_bytes=1_000_000)
    assert run.stdout == "refused 27\n"  # EFBIG


# ---- concurrency, modes, names --------------------------------------------------------------

def test_one_execution_at_a_time_per_world_and_exactly_once(world, mode) -> None:
    code = ("import time\nstart = time.time()\ntime.sleep(0.4)\n"
            "open('log.txt', 'a').write(f'{start} {time.time()}\\n')\n")
    threads = [threading.Thread(target=run_python, args=(world, mode, code)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    spans = sorted(tuple(map(float, line.split())) for line in
                   (world.workspace / "log.txt").read_text().splitlines())
    assert len(spans) == 3
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


@pytest.fixture
def nothing_confines(monkeypatch):
    """A machine where neither bubblewrap nor Landlock works."""
    monkeypatch.delenv("LOCA_SANDBOX", raising=False)
    monkeypatch.delenv(ENV_ALLOW_UNCONFINED, raising=False)
    monkeypatch.setattr(mode_module, "strong_problem", lambda: "no namespaces here")
    monkeypatch.setattr(mode_module, "landlock_problem", lambda: "no Landlock in this kernel")


def test_without_confinement_code_is_refused_unless_asked_for(nothing_confines, monkeypatch,
                                                               caplog) -> None:
    with pytest.raises(SandboxUnavailable) as failure:
        sandbox_mode()
    assert failure.value.code == Code.FAILED_PRECONDITION
    message = failure.value.message
    assert "no namespaces here" in message and "no Landlock in this kernel" in message
    assert "LOCA_SANDBOX=unconfined" in message and "--allow-unconfined-sandbox" in message
    for forced, problem in (("strong", "no namespaces here"), ("landlock", "no Landlock")):
        with pytest.raises(SandboxUnavailable, match=problem):
            sandbox_mode(forced)
    mode_module._chosen.cache_clear()
    monkeypatch.setenv(ENV_ALLOW_UNCONFINED, "1")
    with caplog.at_level(logging.INFO, logger="loca.sandbox"):
        assert sandbox_mode() == "unconfined"
    assert "UNCONFINED" in caplog.text
    with pytest.raises(SandboxUnavailable):  # allowing unconfined runs forces nothing
        sandbox_mode("landlock")


def test_unconfined_only_on_request(nothing_confines, monkeypatch) -> None:
    assert sandbox_mode("unconfined") == "unconfined"
    monkeypatch.setenv("LOCA_SANDBOX", "unconfined")
    assert sandbox_mode() == "unconfined"
    monkeypatch.setenv("LOCA_SANDBOX", "weak")
    with pytest.raises(SandboxError, match="unknown sandbox mode 'weak'; use auto, strong, "
                                           "landlock, unconfined"):
        sandbox_mode()


def test_the_strongest_available_mode_is_chosen(monkeypatch) -> None:
    monkeypatch.delenv("LOCA_SANDBOX", raising=False)
    monkeypatch.setattr(mode_module, "strong_problem", lambda: None)
    assert sandbox_mode() == "strong"
    monkeypatch.setattr(mode_module, "strong_problem", lambda: "no bubblewrap")
    monkeypatch.setattr(mode_module, "landlock_problem", lambda: None)
    assert sandbox_mode() == "landlock"
    assert sandbox_mode("landlock") == "landlock"


def test_modes_that_run_here_are_found(mode) -> None:
    assert sandbox_mode(mode) == mode
    assert describe(mode).startswith(mode)


def test_unconfined_mode_runs_with_limits_and_clean_up(world) -> None:
    marker = f"orphan-{uuid.uuid4().hex}"
    run = run_python(world, "unconfined", _spawn_sleepers(marker) + "print('done')")
    assert (run.code, run.stdout) == (0, "done\n")
    assert survivors(marker) == []
    run = run_python(world, "unconfined", "block = bytearray(4 * 2**30)")
    assert run.code == 1 and run.stderr.rstrip().endswith("MemoryError")


def test_launcher_options_and_stages_survive_the_command_line() -> None:
    options = Options()
    options.limits, options.ids, options.landlock = {"RLIMIT_AS": 5, "RLIMIT_NPROC": 9}, (7, 8), True
    options.read, options.write, options.devices = ["/usr", "/odd=name -- x"], ["/w"], ["/dev/null"]
    pipeline = [*stage(["prog", "--", "7", "arg"], (5, 6, 2)), *stage(["next"])]
    parsed, rest = Options.parse([*options.arguments(), *pipeline])
    assert vars(parsed) == vars(options)
    assert stages(rest) == [((5, 6, 2), ["prog", "--", "7", "arg"]), ((0, 1, 2), ["next"])]


def test_a_command_that_cannot_be_confined_never_starts(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    done = subprocess.run([sys.executable, *LAUNCHER_FLAGS, "-c", launcher_source(),
                           "--limit=RLIMIT_NOFILE=99999999999", "--", *stage(["touch", str(marker)])],
                          capture_output=True, text=True)
    assert done.returncode == 125 and not marker.exists()
    assert done.stderr.startswith("sandbox: the command was not started: ")


@pytest.mark.parametrize(("given", "expected"), [
    (None, "script.py"), ("", "script.py"), ("analysis.py", "analysis.py"), ("report", "report.py"),
    ("../../etc/passwd", "passwd.py"), ("a b;$(rm -rf).py", "abrm-rf.py"), ("..", "script.py"),
    ("dir\\evil.py", "evil.py"), (".hidden.py", "hidden.py"), ("x" * 100 + ".py", "x" * 61 + ".py"),
])
def test_safe_filename(given, expected) -> None:
    assert safe_filename(given) == expected


@pytest.mark.parametrize("mode", MODES)
def test_a_required_mode_fails_instead_of_skipping(monkeypatch, mode) -> None:
    monkeypatch.setattr(sandboxing, f"{mode}_problem", lambda: "it is missing")
    monkeypatch.setitem(sandboxing.REQUIRED, mode, True)
    with pytest.raises(pytest.fail.Exception, match="it is missing"):
        require(mode)
    monkeypatch.setitem(sandboxing.REQUIRED, mode, False)
    with pytest.raises(pytest.skip.Exception):
        require(mode)
