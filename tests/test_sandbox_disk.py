"""Disk bounds in both confined modes: a call that writes past its budget is stopped while it
runs and its additions are removed (new files deleted, grown files cut back, links never
followed); no file grows past the budget; an episode has a total, net of what calls free."""

from __future__ import annotations

from pathlib import Path

import pytest

from loca.core.world import World
from mock_servers.core.errors import Code
from mock_servers.sandbox import (
    CONFIG_CALL_DISK,
    CONFIG_EPISODE_DISK,
    SCRIPT_FLAGS,
    DiskLimitExceeded,
    Limits,
    SandboxError,
    Stage,
    open_execution,
)
from mock_servers.sandbox.disk import LEDGER, DiskLimits, usage
from mock_servers.sandbox.launch import make_mount_points
from tests.sandboxing import MODES, config_for, new_world, open_folder, require, run_python

pytestmark = pytest.mark.sandbox  # runs code in the sandbox

MiB = 1 << 20


@pytest.fixture(params=MODES)
def mode(request) -> str:
    require(request.param)
    return request.param


@pytest.fixture
def world():
    for folder in open_folder():
        yield new_world(folder)


def test_a_call_past_its_budget_is_stopped_while_it_runs_and_rolled_back(world: World, mode: str) -> None:
    ws = world.workspace
    (ws / "keep.txt").write_text("keep")
    (ws / "grow.txt").write_text("g" * 100)
    (ws / "locked.txt").write_text("l" * 10)
    (ws / "locked.txt").chmod(0o444)
    (ws / "old").mkdir()
    victim = world.root / "victim.txt"
    victim.write_text("outside")
    code = ("import os, time\n"
            "open('grow.txt', 'a').write('G' * 1000)\n"
            "if os.stat('locked.txt').st_uid == os.getuid():\n"
            "    os.chmod('locked.txt', 0o644)\n"  # else (root's file) CAP_DAC_OVERRIDE writes it
            "open('locked.txt', 'a').write('L' * 1000)\n"
            "os.makedirs('new/deeper')\nos.symlink('../victim.txt', 'new/link')\n"
            "os.chmod('new/deeper', 0)\n"  # a folder its owner cannot list, for a while
            "for i in range(40):\n"
            "    with open(f'filler{i}.bin', 'wb') as out:\n        out.write(b'x' * (1 << 19))\n"
            "time.sleep(600)\n")
    config = {**config_for(mode), CONFIG_CALL_DISK: 2}
    with pytest.raises(DiskLimitExceeded) as failure, \
            open_execution(world, config, Limits(timeout_s=120)) as ex:
        ex.run([Stage([*ex.python(*SCRIPT_FLAGS), ex.write_script("fill.py", code)])])
    assert ex.deadline < ex.started + 120  # halted by the disk guard, long before the timeout
    assert failure.value.code == Code.RESOURCE_EXHAUSTED
    assert failure.value.message.startswith("sandbox: the call wrote more than 2 MiB to the workspace")
    assert "the files it created were deleted" in failure.value.message
    assert sorted(p.name for p in ws.iterdir()) == ["grow.txt", "keep.txt", "locked.txt", "old"]
    assert (ws / "grow.txt").read_text() == "g" * 100 and (ws / "keep.txt").read_text() == "keep"
    assert (ws / "locked.txt").read_text() == "l" * 10
    assert victim.read_text() == "outside"
    assert sorted(p.name for p in world.scratch.iterdir()) == [".sandbox.lock", LEDGER]


def test_no_file_grows_past_the_budget(world: World, mode: str) -> None:
    code = ("import signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            "try:\n    open('big.bin', 'wb').write(b'x' * (3 << 20))\nexcept OSError as exc:\n"
            "    print('refused', exc.errno)\n")
    run = run_python(world, mode, code, config={CONFIG_CALL_DISK: 1})
    assert run.stdout == "refused 27\n"  # EFBIG
    assert (world.workspace / "big.bin").stat().st_size == MiB


def test_the_mount_points_of_an_interpreter_under_tmp_are_the_sandbox_s(tmp_path: Path) -> None:
    """bubblewrap mounts a virtualenv that lives under /tmp inside the private /tmp: its folders
    exist before a call's disk baseline, so a call that fills its budget exactly is not over it."""
    make_mount_points(tmp_path, "/tmp/clone/.venv/bin/python")
    make_mount_points(tmp_path, "/opt/venv/bin/python")
    assert [str(p.relative_to(tmp_path)) for p in sorted(tmp_path.rglob("*"))] == ["clone", "clone/.venv"]


def _write(name: str, size: int) -> str:
    return f"open({name!r}, 'wb').write(b'x' * {size})\nprint('ok')\n"


def test_an_episode_has_a_total_net_of_what_its_calls_free(world: World, mode: str) -> None:
    config = {CONFIG_CALL_DISK: 2, CONFIG_EPISODE_DISK: 3}
    assert run_python(world, mode, _write("a.bin", 3 * MiB // 2), config=config).stdout == "ok\n"
    assert run_python(world, mode, _write("b.bin", MiB), config=config).stdout == "ok\n"
    with pytest.raises(DiskLimitExceeded, match=r"more than 0.5 MiB .* 2 MiB per call, 3 MiB per "
                                                r"episode, 0.5 MiB of it left before this call"):
        run_python(world, mode, "for name in 'cd':\n    open(name + '.bin', 'wb').write(b'x' * 300_000)\n",
                   config=config)
    assert sorted(p.name for p in world.workspace.iterdir()) == ["a.bin", "b.bin"]
    run_python(world, mode, "import os\nos.remove('a.bin')\n", config=config)
    assert run_python(world, mode, _write("c.bin", 3 * MiB // 2), config=config).stdout == "ok\n"
    assert usage(world.workspace) == 5 * MiB // 2


def test_disk_settings_are_checked() -> None:
    assert DiskLimits.from_config({}) == DiskLimits(256, 1024)
    for bad in (-1, 1.5, True, "big"):
        with pytest.raises(SandboxError, match="sandbox_call_disk_mib must be a whole number of MiB"):
            DiskLimits.from_config({CONFIG_CALL_DISK: bad})
