"""The attack suite, the same in both confined modes (strong: bubblewrap; landlock: Landlock and
seccomp): code cannot read the answer key, the state or any host file, cannot write outside its
workspace and scratch, has no network of any kind, cannot signal the gym, leaves no process
behind and runs unprivileged, from private folders and as root too. The terminal and
programmatic tool calling run the same attacks in their own tests; disk filling is in
test_sandbox_disk.py, fork bombs, memory and secrets in test_sandbox.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from loca.core.world import World
from tests.sandboxing import MODES, new_world, open_folder, require, run_python, survivors

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]  # every attack in every confined mode


@pytest.fixture(params=MODES)
def mode(request) -> str:
    require(request.param)
    return request.param


@pytest.fixture
def world():
    for folder in open_folder():
        yield new_world(folder)


def _probe(reads: list[str], listings: list[str], writes: list[str]) -> str:
    """Code printing READ and LISTED for each path it could read or list, and trying to create
    each of `writes`."""
    return ("import os\n"
            f"for path in {reads!r}:\n"
            "    try:\n        open(path, 'rb').read(64)\n        print('READ', path)\n"
            "    except OSError:\n        pass\n"
            f"for path in {listings!r}:\n"
            "    try:\n        print('LISTED', path, os.listdir(path))\n"
            "    except OSError:\n        pass\n"
            f"for path in {writes!r}:\n"
            "    try:\n        open(path, 'x').write('x')\n"
            "    except OSError:\n        pass\n"
            "print('probed')\n")


def test_the_answer_key_the_state_and_host_files_are_out_of_reach(world: World, mode: str) -> None:
    marker = f"host-{uuid.uuid4().hex}"
    (world.truth_dir / "truth.json").write_text('{"answer": 42}')
    (world.root / "audit.sqlite").write_bytes(b"SQLite format 3\0")
    outside = world.root.parent / f"{marker}.txt"  # the run directory holding the world
    outside.write_text("host data")
    with tempfile.NamedTemporaryFile(prefix=marker, dir="/tmp") as host_tmp:
        checkout = Path(__file__).resolve()
        reads = [str(world.truth_dir / "truth.json"), "../truth/truth.json", str(world.state_path),
                 "../state.sqlite", "../audit.sqlite", "../world.json", str(world.root / "world.json"),
                 str(outside), host_tmp.name, str(checkout), "/etc/shadow", "/proc/1/environ",
                 f"/proc/{os.getpid()}/environ"]
        listings = [str(world.root), "..", str(world.root.parent), "/tmp", tempfile.gettempdir(),
                    str(checkout.parent)]
        writes = [world.truth_dir / "new.txt", world.root / "new.txt", world.root.parent / "new.txt",
                  Path(f"/tmp/{marker}-new"), Path(f"{world.state_path}-x")]
        relative = ["../new.txt", "../truth/new.txt"]  # strong: the sandbox's own root, not the host's
        run = run_python(world, mode, _probe(reads, listings, [*map(str, writes), *relative]))
    assert run.code == 0 and run.stdout.endswith("probed\n"), run.stderr
    assert "READ" not in run.stdout, run.stdout
    assert marker not in run.stdout and "truth" not in run.stdout and checkout.name not in run.stdout
    assert not any(path.exists() for path in writes)
    assert sorted(p.name for p in world.root.parent.iterdir()) == sorted([world.root.name, outside.name])
    assert not (world.truth_dir / "new.txt").exists()


def test_no_network_of_any_kind(world: World, mode: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as tcp, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, \
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as unix:
        udp.bind(("127.0.0.1", 0))
        path = str(world.root.parent / "gym.sock")
        unix.bind(path)
        unix.listen()
        for server in (tcp, udp, unix):
            server.settimeout(0.5)
        code = ("import socket\n"
                f"attempts = {{'tcp': (socket.AF_INET, socket.SOCK_STREAM, ('127.0.0.1', {tcp.getsockname()[1]})),\n"
                f"            'udp': (socket.AF_INET, socket.SOCK_DGRAM, ('127.0.0.1', {udp.getsockname()[1]})),\n"
                f"            'unix': (socket.AF_UNIX, socket.SOCK_STREAM, {path!r}),\n"
                "            'ipv6': (socket.AF_INET6, socket.SOCK_STREAM, ('::1', 9))}\n"
                "for name, (family, kind, address) in attempts.items():\n"
                "    try:\n        s = socket.socket(family, kind)\n        s.settimeout(2)\n"
                "        s.connect(address)\n        s.send(b'hello')\n        print('sent', name)\n"
                "    except OSError as exc:\n        print('no', name, type(exc).__name__)\n")
        run = run_python(world, mode, code)
        for server in (tcp, unix):
            with pytest.raises(TimeoutError):
                server.accept()
        with pytest.raises(TimeoutError):
            udp.recvfrom(64)
    # Nothing arrived; in strong mode a datagram may leave, into the sandbox's own loopback.
    assert {"no tcp", "no unix", "no ipv6"} <= {" ".join(line.split()[:2]) for line in run.stdout.splitlines()}, \
        (run.stdout, run.stderr)


def test_the_gym_cannot_be_signalled(world: World, mode: str) -> None:
    code = ("import os\n"
            f"for pid in ({os.getpid()}, os.getppid()):\n"
            "    try:\n        os.kill(pid, 0)\n        print('CAN SIGNAL', pid)\n"
            "    except OSError as exc:\n        print('no', type(exc).__name__)\n")
    run = run_python(world, mode, code)
    assert run.code == 0 and "CAN SIGNAL" not in run.stdout, run.stdout


def test_nothing_outlives_the_call_whatever_it_detaches(world: World, mode: str) -> None:
    marker = f"detached-{uuid.uuid4().hex}"
    sleeper = f"[sys.executable, '-c', 'import time; time.sleep(600)', '{marker}']"
    code = ("import os, subprocess, sys, time\n"
            f"subprocess.Popen(['setsid', *{sleeper}])\n"
            f"subprocess.Popen({sleeper}, start_new_session=True)\n"
            "if os.fork() == 0:\n"
            "    if os.fork() == 0:\n"
            f"        os.setsid()\n        os.execv(sys.executable, {sleeper})\n"
            "    os._exit(0)\n"
            "time.sleep(0.5)\nprint('left them running')\n")
    run = run_python(world, mode, code)
    assert run.stdout == "left them running\n", run.stderr
    assert survivors(marker) == []


def test_children_run_unprivileged(world: World, mode: str) -> None:
    """As root, an unprivileged uid whose only capability is CAP_DAC_OVERRIDE (confined by the
    mode); as any user, no new privileges."""
    code = ("import ctypes, os, struct\nlibc = ctypes.CDLL(None)\n"
            "data = ctypes.create_string_buffer(24)\n"
            "libc.capget(struct.pack('=Ii', 0x20080522, 0), data)\n"
            "effective, permitted, inheritable = struct.unpack('=3I', data.raw[:12])\n"
            "bounding = [cap for cap in range(41) if libc.prctl(23, cap, 0, 0, 0) == 1]\n"
            "print(os.getuid(), os.getgid(), os.getgroups(), effective, permitted, inheritable,\n"
            "      bounding, libc.prctl(39, 0, 0, 0, 0), sep='|')\n")
    run = run_python(world, mode, code)
    if os.geteuid() == 0:
        assert run.stdout == "65534|65534|[]|2|2|2|[1]|1\n", run.stderr
    else:
        uid, gid, _, effective, *_, no_new_privs = run.stdout.split("|")
        assert (int(uid), int(gid), effective, no_new_privs) == (os.getuid(), os.getgid(), "0", "1\n")


def test_a_private_world_and_a_virtualenv_in_a_private_folder_work(mode: str) -> None:
    """Worlds and interpreters in folders only their owner may enter (`mktemp -d`, root's home)."""
    for folder in open_folder():
        assert folder.stat().st_mode & 0o777 == 0o700
        world = new_world(folder)
        env = folder / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
        code = ("import os, shutil, sys, tempfile\n"
                "print(sys.prefix != sys.base_prefix, os.access('.', os.W_OK),\n"
                "      os.access(tempfile.mkdtemp(), os.W_OK), shutil.which('python') is not None)\n"
                "open('made.txt', 'w').write('ok')\n")
        run = run_python(world, mode, code, config={"sandbox_python": str(env / "bin" / "python")})
        assert (run.code, run.stdout) == (0, "True True True True\n"), run.stderr
        assert (world.workspace / "made.txt").read_text() == "ok"
