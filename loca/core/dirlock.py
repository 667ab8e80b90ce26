"""One writer per output directory (a run, a dataset of worlds): an advisory lock on its `.lock`
file, released when the holder's process ends however it ends."""

from __future__ import annotations

import fcntl
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_FILE = ".lock"


@contextmanager
def hold(root: Path, kind: str, error: type[ValueError] = ValueError) -> Iterator[None]:
    """Hold directory `root` (a `kind`, for messages), creating it; a second writer fails at once
    with `error`, naming the first."""
    if root.exists() and not root.is_dir():
        raise error(f"--out {root} is a file, not a {kind}")
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            raise error(f"{root} is in use by {holder}; wait for it or use another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)
