"""The code-execution sandbox in both modes: timeouts kill whole process groups, fork bombs and
memory hogs are contained, strong mode has no network and sees nothing of the host but the
workspace, the environment is minimal, output is capped keeping head and tail."""

from __future__ import annotations

import itertools
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from loca.core.world import World
from mock_servers.core.errors import Code
from mock_servers.sandbox import (
    SCRIPT_FLAGS,
    Limits,
    SandboxError,
    SandboxUnavailable,
    Stage,
    open_execution,
    safe_filename,
    sandbox_mode,
)
from mock_servers.sandbox import mode as mode_module
from mock_servers.sandbox.capture import Capture
from mock_servers.sandbox.launch import DEFAULT_UID, interpreter_roots
from tests import sandboxing
from tests.sandboxing import MODES, config_for, new_world, open_folder, require, survivors

ENV_KEYS = {"PATH", "LANG", "HOME", "TMPDIR", "TZ", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "MPLBACKEND",
            "WORKSPACE"}


@dataclass
class Run:
    code: int | None
    stdout: str
    stderr: str
    elapsed: float


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


def run_python(world: World, mode: str, code: str, timeout: float = 20, name: str = "case.py",
               **limits: int) -> Run:
    with open_execution(world, config_for(mode), Limits(timeout_s=timeout, **limits)) as ex:
        script = ex.write_script(name, code)
        returncode = ex.run([Stage([*ex.python(*SCRIPT_FLAGS), script])])
        return Run(returncode, ex.stdout(), ex.stderr(), ex.elapsed)


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
    assert sorted(p.name for p in world.scratch.iterdir()) == [".sandbox.lock"]
    assert sorted(p.name for p in world.workspace.iterdir()) == ["made.txt"]


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
    if mode == "weak":  # in strong mode SIGTERM ends bubblewrap, which takes the child along
        assert run.elapsed > 2.9  # 1 s timeout + 2 s grace, then SIGKILL
    assert survivors(name) == []


def test_background_children_do_not_outlive_a_finished_run(world, mode) -> None:
    marker = f"orphan-{uuid.uuid4().hex}"
    run = run_python(world, mode, _spawn_sleepers(marker) + "print('done')")
    assert (run.code, run.stdout) == (0, "done\n") and run.elapsed < 5
    assert survivors(marker) == []


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


# ---- isolation ------------------------------------------------------------------------------

def test_strong_mode_has_no_network(world) -> None:
    require("strong")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        socket.create_connection(("127.0.0.1", port), timeout=2).close()  # reachable outside
        code = ("import socket\ntry:\n"
                f"    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    print('connected')\n"
                "except OSError as exc:\n    print('blocked', type(exc).__name__)\n")
        run = run_python(world, "strong", code)
    assert run.stdout.startswith("blocked"), run.stdout


def test_strong_mode_sees_only_the_workspace(world) -> None:
    require("strong")
    (world.truth_dir / "answer.txt").write_text("secret answer")
    outside = Path(world.root.parent, "host-file.txt")
    outside.write_text("host data")
    probes = [str(world.truth_dir / "answer.txt"), str(world.state_path), str(world.root),
              str(outside), "/etc/shadow", "/proc/1/environ"]
    code = ("import os\n"
            f"for path in {probes!r}:\n"
            "    try:\n        os.listdir(path) if os.path.isdir(path) else open(path).read()\n"
            "        print('READ', path)\n"
            "    except OSError as exc:\n        print('no', type(exc).__name__)\n"
            f"for path in {[str(outside), str(world.truth_dir / 'new.txt')]!r}:\n"
            "    try:\n        open(path, 'w').write('x')\n        print('WROTE', path)\n"
            "    except OSError as exc:\n        print('no', type(exc).__name__)\n"
            f"interpreter = {[str(r) for r in interpreter_roots(sys.executable)]!r}\n"
            "for top in ('/root', '/work', '/home', '/var', '/opt', '/srv', '/mnt'):\n"
            "    for folder, dirs, files in os.walk(top):\n"
            "        dirs[:] = [d for d in dirs if os.path.join(folder, d) not in interpreter]\n"
            "        for name in files:\n            print('FOUND', os.path.join(folder, name))\n"
            "print(sorted(os.listdir('/')))\n")
    run = run_python(world, "strong", code)
    assert not any(word in run.stdout for word in ("READ", "WROTE", "FOUND")), run.stdout
    assert outside.read_text() == "host data" and not (world.truth_dir / "new.txt").exists()
    top = eval(run.stdout.splitlines()[-1])
    assert {"workspace", "tmp", "usr"} <= set(top) and not {"home", "var", "opt"} & set(top)


def test_children_of_a_root_gym_run_unprivileged(world, mode) -> None:
    if os.geteuid() != 0:
        pytest.skip("the gym does not run as root here")
    code = ("import os\nprint(os.getuid(), os.getgid(), os.getgroups())\n"
            "status = dict(l.split(':\\t') for l in open('/proc/self/status').read().splitlines() if ':\\t' in l)\n"
            "print(status['CapEff'], status['CapBnd'], status['NoNewPrivs'])")
    run = run_python(world, mode, code)
    assert run.stdout == f"{DEFAULT_UID} {DEFAULT_UID} []\n0000000000000000 0000000000000000 1\n", run.stderr


def test_weak_mode_as_root_cannot_write_outside(world) -> None:
    if os.geteuid() != 0:
        pytest.skip("without root the weak mode has only the user's own permissions")
    (world.truth_dir / "answer.txt").write_text("secret")
    code = (f"for path in {[str(world.truth_dir / 'answer.txt'), str(world.state_path)]!r}:\n"
            "    try:\n        open(path, 'a').write('x')\n        print('WROTE')\n"
            "    except OSError as exc:\n        print('no', type(exc).__name__)\n")
    run = run_python(world, "weak", code)
    assert run.stdout == "no PermissionError\nno PermissionError\n"
    assert (world.truth_dir / "answer.txt").read_text() == "secret"


# ---- concurrency, modes, names --------------------------------------------------------------

def test_one_execution_at_a_time_per_world_and_exactly_once(world) -> None:
    code = ("import time\nstart = time.time()\ntime.sleep(0.4)\n"
            "open('log.txt', 'a').write(f'{start} {time.time()}\\n')\n")
    threads = [threading.Thread(target=run_python, args=(world, "weak", code)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    spans = sorted(tuple(map(float, line.split())) for line in
                   (world.workspace / "log.txt").read_text().splitlines())
    assert len(spans) == 3
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def test_mode_selection(monkeypatch, caplog) -> None:
    assert sandbox_mode("weak") == "weak"
    monkeypatch.setenv("LOCA_SANDBOX", "weak")
    assert sandbox_mode() == "weak"
    monkeypatch.setenv("LOCA_SANDBOX", "sometimes")
    with pytest.raises(SandboxError, match="unknown sandbox mode 'sometimes'"):
        sandbox_mode()
    monkeypatch.delenv("LOCA_SANDBOX")
    monkeypatch.setattr(mode_module, "strong_problem", lambda: "no namespaces here")
    with pytest.raises(SandboxUnavailable, match="no namespaces here") as failure:
        sandbox_mode("strong")
    assert failure.value.code == Code.FAILED_PRECONDITION
    mode_module._warn_weak.cache_clear()
    with caplog.at_level(logging.WARNING, logger="loca.sandbox"):
        assert sandbox_mode() == "weak"
    assert "WEAK" in caplog.text and "no namespaces here" in caplog.text


def test_strong_mode_is_chosen_where_bubblewrap_runs(monkeypatch) -> None:
    require("strong")
    monkeypatch.delenv("LOCA_SANDBOX", raising=False)
    assert sandbox_mode() == sandbox_mode("strong") == "strong"


@pytest.mark.parametrize(("given", "expected"), [
    (None, "script.py"), ("", "script.py"), ("analysis.py", "analysis.py"), ("report", "report.py"),
    ("../../etc/passwd", "passwd.py"), ("a b;$(rm -rf).py", "abrm-rf.py"), ("..", "script.py"),
    ("dir\\evil.py", "evil.py"), (".hidden.py", "hidden.py"), ("x" * 100 + ".py", "x" * 61 + ".py"),
])
def test_safe_filename(given, expected) -> None:
    assert safe_filename(given) == expected


def test_required_strong_mode_fails_instead_of_skipping(monkeypatch) -> None:
    monkeypatch.setattr(sandboxing, "strong_problem", lambda: "bubblewrap is missing")
    monkeypatch.setattr(sandboxing, "REQUIRE_STRONG", True)
    with pytest.raises(pytest.fail.Exception, match="bubblewrap is missing"):
        require("strong")
    monkeypatch.setattr(sandboxing, "REQUIRE_STRONG", False)
    with pytest.raises(pytest.skip.Exception):
        require("strong")
    require("weak")
