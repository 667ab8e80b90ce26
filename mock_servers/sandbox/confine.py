"""The launcher every sandboxed command starts through, in every mode. Standard library only, and
only modules that load fast (no json, typing or signal: they would add milliseconds to every
pipeline): it runs as `python -I -S -c <this source> OPTIONS... -- STAGES...`, the options
written by `Options.arguments`, the stages of a pipeline by `stage` (each: its argv and the
three descriptors, inherited from the caller, that become its stdin, stdout and stderr).

It becomes a child subreaper and forks once per stage. Each child takes its descriptors and
closes the other stages', then applies, in this order: default signal dispositions, the
resource limits, no_new_privs, the Landlock ruleset and the seccomp filter (when asked), then
the identity (from root: an unprivileged uid whose only capability is CAP_DAC_OVERRIDE, so that
folders private to root stay reachable where the rules allow), and execs its command; when a
step fails the command never runs (exit status 125). The parent waits for every stage, then
kills every process left below it (SIGKILL, repeated until none is left: orphans come back to
it as the subreaper, whatever `setsid` or double fork they did), and exits with the last
stage's status (128 + N after signal N). SIGTERM, SIGINT, SIGHUP and the death of its own
parent end every stage and every descendant at once.

Landlock: the readable folders may be read, listed and executed, the writable ones fully used,
the devices read and written; nothing else of the file system can be opened. TCP bind and
connect are refused (ABI 4+); signals and abstract Unix sockets stay inside the domain (ABI
6+). The seccomp filter refuses socket(2) of any family (UDP, raw, netlink and Unix sockets are
beyond Landlock), io_uring (which would bypass it) and every call through a foreign system-call
ABI (i386, x32)."""

from __future__ import annotations

import _signal  # the C module behind `signal`, without its enum wrappers (3 ms less per start)
import ctypes
import fcntl
import os
import resource
import struct
import sys

EXIT_NOT_STARTED = 125
PR_SET_PDEATHSIG = 1
PR_SET_SECCOMP = 22
PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_RAISE = 2
CAP_DAC_OVERRIDE = 1
# Capabilities stay as set across uid changes, and access(2) checks with them (locked on).
SECBITS_NO_SETUID_FIXUP = 0b1100
CAPABILITY_VERSION_3 = 0x20080522
SECCOMP_MODE_FILTER = 2
# Landlock (linux/landlock.h): system calls 444-446 on x86_64 and aarch64 alike.
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_TRUNCATE, FS_IOCTL_DEV = 1 << 14, 1 << 15
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
READ_RIGHTS = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
DEVICE_RIGHTS = FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV
NET_TCP = 0b11  # bind and connect
SCOPE_ALL = 0b11  # abstract Unix sockets and signals
# Per machine: the audit arch of its system-call ABI, and the calls refused (socket, io_uring_setup).
SECCOMP_ARCH = {"x86_64": (0xC000003E, (41, 425)), "aarch64": (0xC00000B7, (198, 425))}
_EACCES = 13
_ENDING = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class Options:
    """What the launcher applies (`arguments` and `parse` are each other's inverse)."""

    def __init__(self) -> None:
        self.limits: dict[str, int] = {}  # resource name (RLIMIT_AS...) -> soft and hard limit
        self.ids: tuple[int, int] | None = None  # (uid, gid) to become, from root
        self.landlock = False
        self.read: list[str] = []  # host paths, for Landlock
        self.write: list[str] = []
        self.devices: list[str] = []

    def arguments(self) -> list[str]:
        args = [f"--limit={name}={value}" for name, value in self.limits.items()]
        if self.ids is not None:
            args.append(f"--ids={self.ids[0]}:{self.ids[1]}")
        if self.landlock:
            args.append("--landlock")
            for flag in ("read", "write", "devices"):
                args += [f"--{flag}={path}" for path in getattr(self, flag)]
        return [*args, "--"]

    @classmethod
    def parse(cls, argv: list[str]) -> tuple[Options, list[str]]:
        """The options and the stages of the launcher's argv."""
        options = cls()
        end = argv.index("--")
        for arg in argv[:end]:
            flag, _, value = arg.partition("=")
            if flag == "--limit":
                name, _, number = value.partition("=")
                options.limits[name] = int(number)
            elif flag == "--ids":
                uid, _, gid = value.partition(":")
                options.ids = int(uid), int(gid)
            elif flag == "--landlock":
                options.landlock = True
            elif flag in ("--read", "--write", "--devices"):
                getattr(options, flag[2:]).append(value)
            else:
                raise ValueError(f"unknown launcher option {arg}")
        return options, argv[end + 1:]


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def _prctl(option: int, value: int = 0, extra: int = 0) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(value), ctypes.c_ulong(extra), ctypes.c_ulong(0),
                       ctypes.c_ulong(0)), f"prctl {option}")


def _syscall(number: int, *args: object) -> int:
    return int(_libc.syscall(ctypes.c_long(number), *args))


def landlock_abi() -> int:
    """The Landlock ABI version of the running kernel; 0 where Landlock is absent or disabled."""
    return max(_syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                        ctypes.c_uint32(CREATE_RULESET_VERSION)), 0)


def _handled_fs(abi: int) -> int:
    """Every file-system right the ABI knows (13 in ABI 1; REFER 2; TRUNCATE 3; IOCTL_DEV 5)."""
    return (1 << {1: 13, 2: 14, 3: 15, 4: 15}.get(abi, 16)) - 1


def restrict(options: Options) -> None:
    """Put the calling process in a new Landlock domain that allows only `options`' paths."""
    abi = landlock_abi()
    if abi < 1:
        raise OSError("Landlock is not enabled in this kernel")
    fs = _handled_fs(abi)
    attr = struct.pack("=QQQ", fs, NET_TCP if abi >= 4 else 0, SCOPE_ALL if abi >= 6 else 0)
    attr = attr[:8 if abi < 4 else 16 if abi < 6 else 24]
    ruleset = _check(_syscall(SYS_CREATE_RULESET, ctypes.c_char_p(attr), ctypes.c_size_t(len(attr)),
                              ctypes.c_uint32(0)), "landlock_create_ruleset")
    try:
        grants = [(p, READ_RIGHTS) for p in options.read] + [(p, fs) for p in options.write] \
            + [(p, DEVICE_RIGHTS) for p in options.devices]
        for path, rights in grants:
            _allow(ruleset, path, rights & fs)
        _check(_syscall(SYS_RESTRICT_SELF, ctypes.c_long(ruleset), ctypes.c_uint32(0)),
               "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _allow(ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return  # a system folder this machine does not have
    try:
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS
        rule = struct.pack("=Qi", rights, fd)  # struct landlock_path_beneath_attr (packed)
        _check(_syscall(SYS_ADD_RULE, ctypes.c_long(ruleset), ctypes.c_int(RULE_PATH_BENEATH),
                        ctypes.c_char_p(rule), ctypes.c_uint32(0)), f"landlock_add_rule {path}")
    finally:
        os.close(fd)


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]  # struct sock_fprog


def refuse_sockets() -> None:
    """Install the seccomp filter: socket(2) and io_uring_setup(2) fail with EACCES, and so
    does any call through a foreign ABI."""
    machine = os.uname().machine
    if machine not in SECCOMP_ARCH:
        raise OSError(f"no seccomp filter for {machine}")
    arch, refused = SECCOMP_ARCH[machine]
    load, equal, at_least, give = 0x20, 0x15, 0x35, 0x06  # BPF ld [k], jeq, jge, ret
    deny, allow = 0x00050000 | _EACCES, 0x7FFF0000
    program = [(load, 0, 0, 4), (equal, 1, 0, arch), (give, 0, 0, deny), (load, 0, 0, 0),
               (at_least, len(refused) + 1, 0, 0x40000000)]  # x32 calls carry this bit
    program += [(equal, len(refused) - i, 0, nr) for i, nr in enumerate(refused)]
    program += [(give, 0, 0, allow), (give, 0, 0, deny)]
    code = b"".join(struct.pack("=HBBI", *op) for op in program)
    _check(_libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER),
                       ctypes.byref(_Program(len(program), code)), ctypes.c_ulong(0),
                       ctypes.c_ulong(0)), "seccomp")


def become(uid: int, gid: int) -> None:
    """From root to `uid`/`gid` with no groups, keeping CAP_DAC_OVERRIDE alone (ambient, so
    that it survives exec; access(2) honours it too) and dropping every other capability from
    every set, the bounding one included."""
    _prctl(PR_SET_SECUREBITS, SECBITS_NO_SETUID_FIXUP)
    for cap in range(64):
        if cap != CAP_DAC_OVERRIDE:
            try:
                _prctl(PR_CAPBSET_DROP, cap)
            except OSError:  # past the kernel's last capability
                break
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    bit = 1 << CAP_DAC_OVERRIDE
    header = struct.pack("=Ii", CAPABILITY_VERSION_3, 0)
    data = struct.pack("=6I", bit, bit, bit, 0, 0, 0)  # effective, permitted, inheritable (x2)
    _check(_libc.capset(ctypes.c_char_p(header), ctypes.c_char_p(data)), "capset")
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_DAC_OVERRIDE)


Descriptors = tuple[int, int, int]  # stdin, stdout, stderr


def stage(argv: list[str], fds: Descriptors = (0, 1, 2)) -> list[str]:
    """The launcher's arguments for one stage of a pipeline."""
    return [str(len(argv)), *map(str, fds), *argv]


def stages(args: list[str]) -> list[tuple[Descriptors, list[str]]]:
    """The stages written by `stage`, in order."""
    found: list[tuple[Descriptors, list[str]]] = []
    while args:
        count, stdin, stdout, stderr = map(int, args[:4])
        found.append(((stdin, stdout, stderr), args[4:4 + count]))
        args = args[4 + count:]
    return found


def _plumb(own: Descriptors, every: set[int]) -> None:
    """Make `own` the stdin, stdout and stderr, and close the other stages' descriptors."""
    spare = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3) for fd in own]  # never over one in use
    for target, fd in enumerate(spare):
        os.dup2(fd, target)
    for fd in every | set(spare):
        if fd > 2:
            os.close(fd)


def _confine_and_exec(options: Options, command: list[str]) -> None:
    # Python starts with SIGPIPE and SIGXFSZ ignored, which exec would keep.
    for sig in (_signal.SIGPIPE, _signal.SIGXFSZ, *_ENDING):
        _signal.signal(sig, _signal.SIG_DFL)
    for name, value in options.limits.items():
        resource.setrlimit(getattr(resource, name), (value, value))
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    if options.landlock:
        restrict(options)
        refuse_sockets()
    if options.ids is not None:
        become(*options.ids)
    _prctl(PR_SET_PDEATHSIG, _signal.SIGKILL)  # after the identity change, which clears it
    os.execvp(command[0], command)


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as handle:
        return [int(word) for word in handle.read().split()]


def end_descendants() -> None:
    """Kill every process below this one and reap it, until none is left."""
    me = os.getpid()
    while kids := _children(me):
        for pid in kids:
            try:
                os.kill(pid, _signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in kids:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _on_signal(signum: int, _frame: object) -> None:
    end_descendants()
    os._exit(128 + signum)


def main(argv: list[str]) -> int:
    options, rest = Options.parse(argv)
    pipeline = stages(rest)
    me = os.getpid()
    if not os.path.exists(f"/proc/{me}/task/{me}/children"):  # how descendants are found
        os.write(2, b"sandbox: /proc/PID/task/TID/children is missing (a kernel without "
                    b"CONFIG_PROC_CHILDREN): processes left behind could not be ended\n")
        return EXIT_NOT_STARTED
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    for sig in _ENDING:
        _signal.signal(sig, _on_signal)
    _prctl(PR_SET_PDEATHSIG, _signal.SIGTERM)
    every = {fd for fds, _ in pipeline for fd in fds}
    running = []
    for fds, command in pipeline:
        pid = os.fork()
        if pid == 0:
            try:
                _plumb(fds, every)
                _confine_and_exec(options, command)
            except BaseException as exc:
                os.write(2, f"sandbox: the command was not started: {exc}\n".encode())
            os._exit(EXIT_NOT_STARTED)
        running.append(pid)
    last = running[-1]
    os.closerange(0, resource.getrlimit(resource.RLIMIT_NOFILE)[0])  # pipes end with the stages'
    status = 0
    while running:
        done, code = os.waitpid(-1, 0)
        if done in running:
            running.remove(done)
            status = code if done == last else status
    end_descendants()
    return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
