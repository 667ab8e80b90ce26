"""How a sandboxed child starts: its resource limits, identity and environment, what it may see
(the system and the interpreter read-only, the workspace and a private scratch read-write,
nothing else of the host) and the argv that applies all of it in each mode: bubblewrap's mount
plan (strong), a Landlock domain (landlock) or nothing (unconfined), then the launcher
(`confine`) that sets limits and identity and leaves no process behind."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from mock_servers.core.errors import Code, ToolFailure
from mock_servers.core.files import DISPLAY_ROOT
from mock_servers.sandbox import confine

Mode = Literal["strong", "landlock", "unconfined"]
GiB = 1 << 30
MiB = 1 << 20
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
INSIDE_TMP = "/tmp"
ENV_UID = "LOCA_SANDBOX_UID"  # the unprivileged uid (and gid) children run as when the gym is root
DEFAULT_UID = 65534
# How scripts run: no user site (-s), neither the script's nor the working folder importable
# (-P: a script named json.py cannot shadow the standard library), unbuffered (-u: a timeout
# still shows what was printed). The environment is built from scratch, so the only PYTHON*
# variables are ours: no byte-code files, a fixed hash seed (set order repeats across runs).
SCRIPT_FLAGS = ("-s", "-P", "-u")
LAUNCHER_FLAGS = ("-I", "-S")  # the launcher needs nothing but the standard library
_TOP_LEVEL = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_EDITABLE_HOOKS = "lib/python3*/site-packages/__editable__*.pth"  # editable installs' start-up hooks
_ETC = ("/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
        "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/mime.types", "/etc/magic")
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
# What the launcher needs inside bubblewrap when the gym is root: changing uid, keeping
# CAP_DAC_OVERRIDE for the command, emptying the bounding set.
_ROOT_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_DAC_OVERRIDE")


class SandboxError(ToolFailure):
    """The sandbox itself could not run the command (not the command failing)."""

    def __init__(self, message: str, code: Code = Code.FAILED_PRECONDITION) -> None:
        super().__init__(code, f"sandbox: {message}")


@dataclass(frozen=True)
class Limits:
    """Per-execution limits. CPU seconds follow the timeout (timeout + 1)."""

    timeout_s: float
    memory_bytes: int = 2 * GiB
    file_bytes: int = 256 * MiB
    open_files: int = 256
    processes: int = 256
    stdout_chars: int = 20_000
    stderr_chars: int = 5_000

    @property
    def cpu_s(self) -> int:
        return math.ceil(self.timeout_s) + 1

    def rlimits(self, file_bytes: int, other_processes: int) -> dict[str, int]:
        """The resource limits (soft = hard) of one child: files no larger than `file_bytes`,
        processes beyond the `other_processes` its user already runs."""
        return {"RLIMIT_AS": self.memory_bytes, "RLIMIT_CPU": self.cpu_s,
                "RLIMIT_FSIZE": min(self.file_bytes, file_bytes), "RLIMIT_NOFILE": self.open_files,
                "RLIMIT_NPROC": self.processes + other_processes}

    def describe(self) -> str:
        return (f"timeout {self.timeout_s:g} s; memory {self.memory_bytes // MiB} MiB; CPU "
                f"{self.cpu_s} s; file size {self.file_bytes // MiB} MiB; open files "
                f"{self.open_files}; processes {self.processes}; output kept: stdout "
                f"{self.stdout_chars}, stderr {self.stderr_chars} characters (head and tail)")


def host_tool(name: str) -> str:
    path = shutil.which(name, path=SYSTEM_PATH)
    if path is None:
        raise SandboxError(f"'{name}' is not installed (Debian package bubblewrap)")
    return path


def child_ids() -> tuple[int, int] | None:
    """(uid, gid) children become when the gym runs as root; None otherwise."""
    if os.geteuid() != 0:
        return None
    uid = int(os.environ.get(ENV_UID, DEFAULT_UID))
    if uid == 0:
        raise SandboxError(f"{ENV_UID} must name an unprivileged uid, not 0")
    return uid, uid


def _tasks_of(uid: int) -> int:
    """Tasks (threads included) the user runs now: RLIMIT_NPROC counts them all."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry.name}/task"))
            except OSError:
                continue
    return count


def interpreter_roots(interpreter: str) -> list[Path]:
    """The install folders an interpreter needs (a virtualenv and its base Python) that the
    system folders do not already cover."""
    roots: list[Path] = []
    for exe in (Path(os.path.abspath(interpreter)), Path(interpreter).resolve()):
        root = exe.parent.parent
        covered = root == Path("/") or str(root) in _TOP_LEVEL or Path("/usr") in (root, *root.parents)
        if not covered and root not in roots:
            roots.append(root)
    return roots


def make_mount_points(tmp: Path, interpreter: str) -> None:
    """Create in the private scratch `tmp` the folders bubblewrap mounts the interpreter on when
    it lives under /tmp (a virtualenv in a clone under /tmp): they are the sandbox's, so they
    exist before an execution's disk baseline instead of counting as what its call wrote."""
    for root in interpreter_roots(interpreter):
        if Path(INSIDE_TMP) in root.parents:
            (tmp / root.relative_to(INSIDE_TMP)).mkdir(mode=0o755, parents=True, exist_ok=True)


def _parents(path: Path, made: set[Path]) -> list[str]:
    """bwrap arguments creating the missing ancestors of a mount point, searchable by all."""
    args: list[str] = []
    for folder in reversed(path.parents):
        if folder != Path("/") and folder not in made:
            made.add(folder)
            args += ["--perms", "0755", "--dir", str(folder)]
    return args


def bwrap_prefix(workspace: Path, tmp: Path, interpreter: str, root: bool) -> list[str]:
    """bubblewrap up to the command: own network, pid, ipc and uts namespaces; read-only system
    and interpreter; the workspace at /workspace and the private scratch at /tmp. As root, the
    launcher inside keeps the capabilities it needs to drop root."""
    args = [host_tool("bwrap"), "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--hostname", "sandbox", "--die-with-parent",
            "--ro-bind", "/usr", "/usr"]
    for top in _TOP_LEVEL:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    args += ["--perms", "0755", "--dir", "/etc"]
    for item in _ETC:
        args += ["--ro-bind-try", item, item]
    args += ["--proc", "/proc", "--dev", "/dev", "--bind", str(workspace), DISPLAY_ROOT,
             "--bind", str(tmp), INSIDE_TMP, "--chdir", DISPLAY_ROOT, *_interpreter_binds(interpreter)]
    for cap in _ROOT_CAPS if root else ():
        args += ["--cap-add", cap]
    return [*args, "--"]


@cache
def _interpreter_binds(interpreter: str) -> tuple[str, ...]:
    """Read-only binds of the interpreter's install folders, bound last so that one under /tmp
    stays visible; editable installs' start-up hooks are masked (they point at host sources)."""
    args: list[str] = []
    made: set[Path] = set()
    for root in interpreter_roots(interpreter):
        args += [*_parents(root, made), "--ro-bind", str(root), str(root)]
        for hook in sorted(root.glob(_EDITABLE_HOOKS)):
            args += ["--ro-bind", "/dev/null", str(hook)]
    return tuple(args)


def readable(interpreter: str) -> list[str]:
    """What a Landlock child may read: the system folders, a few files of /etc, the
    interpreter's install folders (the same set bubblewrap mounts)."""
    return ["/usr", *_TOP_LEVEL, *_ETC, *map(str, interpreter_roots(interpreter))]


@cache
def launcher_source() -> str:
    return Path(confine.__file__).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Launcher:
    """Starts sandboxed children for one execution (one workspace, one private scratch)."""

    mode: Mode
    workspace: Path  # host paths
    tmp: Path
    interpreter: str
    limits: Limits
    tz: str
    file_bytes: int  # no file may grow past this (the execution's disk budget)

    @property
    def inside_workspace(self) -> str:
        return DISPLAY_ROOT if self.mode == "strong" else str(self.workspace)

    @property
    def inside_tmp(self) -> str:
        return INSIDE_TMP if self.mode == "strong" else str(self.tmp)

    def env(self) -> dict[str, str]:
        """The child's whole environment: nothing is inherited."""
        folder = str(Path(self.interpreter).parent)
        search = SYSTEM_PATH if folder in SYSTEM_PATH.split(":") else f"{folder}:{SYSTEM_PATH}"
        return {"PATH": search, "LANG": "C.UTF-8",
                "HOME": self.inside_tmp, "TMPDIR": self.inside_tmp, "TZ": self.tz,
                "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg",
                "WORKSPACE": self.inside_workspace}

    def prefix(self) -> tuple[list[str], dict[str, Any]]:
        """Everything before the command's argv, and the extra Popen arguments."""
        ids = child_ids()
        options = confine.Options()
        options.ids = ids
        # A child's processes count with those its user already runs, except in bubblewrap's
        # own user namespace (strong mode without root).
        shared = self.mode != "strong" or ids is not None
        uid = ids[0] if ids is not None else os.getuid()
        options.limits = self.limits.rlimits(self.file_bytes, _tasks_of(uid) if shared else 0)
        if self.mode == "landlock":
            options.landlock = True
            options.read = readable(self.interpreter)
            options.write = [str(self.workspace), str(self.tmp)]
            options.devices = list(_DEVICES)
        launcher = [self.interpreter, *LAUNCHER_FLAGS, "-c", launcher_source(), *options.arguments()]
        if self.mode == "strong":
            return [*bwrap_prefix(self.workspace, self.tmp, self.interpreter, ids is not None),
                    *launcher], {}
        return launcher, {"cwd": self.workspace}


def spawn(prefix: tuple[list[str], dict[str, Any]], env: dict[str, str],
          pipeline: list[tuple[confine.Descriptors, list[str]]], stderr: int) -> subprocess.Popen[bytes]:
    """Start the launcher of one pipeline, leading its own process group (never through a
    shell); each stage's descriptors are passed down to it, the launcher's own complaints go
    to `stderr`."""
    head, extra = prefix
    stages = [arg for fds, argv in pipeline for arg in confine.stage(argv, fds)]
    passed = sorted({fd for fds, _ in pipeline for fd in fds})
    return subprocess.Popen([*head, *stages], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=stderr, env=env, start_new_session=True, close_fds=True,
                            pass_fds=passed, **extra)
