"""File memory of the memory strategy (see docs/concepts/context.md): six commands on a per-episode directory.

The model sees virtual paths under `/memories`; they map to real files under `root`, a folder
of the episode outside the world (so no env file or code tool reaches it). Paths are checked
component by component: no `.`/`..`, no hidden names, no symlink anywhere on the way. Files must
have an allowed suffix; one file holds at most `FILE_BYTES`, all files `TOTAL_BYTES` and
`MAX_FILES`. Every failure is a `MemoryFailure`, which the tool layer shows as an error result.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

VIRTUAL_ROOT = "/memories"
SUFFIXES = (".txt", ".md", ".json", ".py", ".yaml", ".yml")
FILE_BYTES = 100 * 1024
TOTAL_BYTES = 2 * 1024 * 1024
MAX_FILES = 200
MAX_NAME = 255
MAX_DEPTH = 16


class MemoryFailure(Exception):
    """A command the memory refuses; `code` is one of the error codes of the tool layer."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _invalid(message: str) -> MemoryFailure:
    return MemoryFailure("INVALID_ARGUMENT", message)


class FileMemory:
    """The memory directory of one episode."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root.resolve()

    # ------------------------------------------------------------ paths

    def resolve(self, path: str) -> tuple[Path, str]:
        """(host path, normalised virtual path) of a virtual path; refuses anything outside."""
        if not isinstance(path, str) or not path:
            raise _invalid("path must be a non-empty string starting with /memories")
        if "\x00" in path or "\\" in path:
            raise _invalid(f"path {path!r} holds a NUL or backslash")
        parts = path.split("/")
        if parts[:2] != ["", "memories"]:
            raise MemoryFailure("PERMISSION_DENIED", f"path {path!r} is outside /memories")
        names = [name for name in parts[2:] if name]
        if len(names) > MAX_DEPTH:
            raise _invalid(f"path {path!r} is nested deeper than {MAX_DEPTH} levels")
        for name in names:
            if name in (".", "..") or name.startswith("."):
                raise MemoryFailure("PERMISSION_DENIED",
                                    f"path {path!r}: '{name}' is not allowed (no '.', '..' or "
                                    "hidden names)")
            if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME:
                raise _invalid(f"path {path!r}: a name is longer than {MAX_NAME} bytes")
        host = self.root.joinpath(*names)
        probe = self.root
        for name in names:
            probe = probe / name
            if probe.is_symlink():
                raise MemoryFailure("PERMISSION_DENIED", f"path {path!r} passes a symlink")
        return host, "/".join((VIRTUAL_ROOT, *names))

    def _file(self, path: str, *, exists: bool = True) -> tuple[Path, str]:
        host, shown = self.resolve(path)
        if host == self.root or host.is_dir():
            raise _invalid(f"{shown} is a directory, not a file")
        if exists and not host.is_file():
            raise MemoryFailure("NOT_FOUND", f"{shown} does not exist")
        if not exists and not shown.endswith(SUFFIXES):
            raise _invalid(f"{shown}: a memory file must end in {' '.join(SUFFIXES)}")
        return host, shown

    # ------------------------------------------------------------ commands

    def view(self, path: str, view_range: list[int] | None = None) -> str:
        host, shown = self.resolve(path)
        if host.is_dir():
            if view_range is not None:
                raise _invalid("view_range applies to files, not directories")
            lines = [f"Directory: {shown}"]
            for entry in sorted(os.scandir(host), key=lambda e: e.name):
                if entry.name.startswith(".") or entry.is_symlink():
                    continue
                lines.append(f"- {entry.name}/" if entry.is_dir() else f"- {entry.name}")
            return "\n".join(lines) if len(lines) > 1 else f"{lines[0]}\n(empty)"
        host, shown = self._file(path)
        lines = _read(host).split("\n")
        first, last = 1, len(lines)
        if view_range is not None:
            first, last = _range(view_range, len(lines))
        return "\n".join(f"{n:>6}: {lines[n - 1]}" for n in range(first, last + 1))

    def create(self, path: str, file_text: str = "") -> str:
        host, shown = self._file(path, exists=False)
        self._check_room(host, file_text)
        host.parent.mkdir(parents=True, exist_ok=True)
        host.write_text(file_text, encoding="utf-8")
        return f"File created successfully at {shown}"

    def str_replace(self, path: str, old_str: str, new_str: str = "") -> str:
        host, shown = self._file(path)
        if not old_str:
            raise _invalid("old_str must not be empty")
        text = _read(host)
        count = text.count(old_str)
        if count != 1:
            raise _invalid(f"old_str occurs {count} times in {shown}; it must occur exactly once")
        updated = text.replace(old_str, new_str, 1)
        self._check_room(host, updated)
        host.write_text(updated, encoding="utf-8")
        return f"File {shown} has been edited"

    def insert(self, path: str, insert_line: int, insert_text: str = "") -> str:
        host, shown = self._file(path)
        lines = _read(host).split("\n")
        if isinstance(insert_line, bool) or not isinstance(insert_line, int) \
                or not 0 <= insert_line <= len(lines):
            raise _invalid(f"insert_line must be between 0 and {len(lines)} (the file has "
                           f"{len(lines)} lines), got {insert_line!r}")
        updated = "\n".join([*lines[:insert_line], insert_text, *lines[insert_line:]])
        self._check_room(host, updated)
        host.write_text(updated, encoding="utf-8")
        return f"Text inserted at line {insert_line} of {shown}"

    def delete(self, path: str) -> str:
        host, shown = self.resolve(path)
        if host == self.root:
            raise MemoryFailure("FAILED_PRECONDITION", "/memories itself cannot be deleted")
        if host.is_dir():
            shutil.rmtree(host)
        elif host.is_file():
            host.unlink()
        else:
            raise MemoryFailure("NOT_FOUND", f"{shown} does not exist")
        return f"Deleted {shown}"

    def rename(self, old_path: str, new_path: str) -> str:
        old, old_shown = self.resolve(old_path)
        new, new_shown = self.resolve(new_path)
        if old == self.root or new == self.root:
            raise MemoryFailure("FAILED_PRECONDITION", "/memories itself cannot be renamed")
        if not old.exists():
            raise MemoryFailure("NOT_FOUND", f"{old_shown} does not exist")
        if new.exists():
            raise MemoryFailure("ALREADY_EXISTS", f"{new_shown} already exists")
        if old.is_dir() and old in new.parents:
            raise _invalid(f"{old_shown} cannot move into itself")
        if old.is_file() and not new_shown.endswith(SUFFIXES):
            raise _invalid(f"{new_shown}: a memory file must end in {' '.join(SUFFIXES)}")
        if new.parent.exists() and not new.parent.is_dir():
            raise _invalid(f"{new_shown}: its parent is a file")
        new.parent.mkdir(parents=True, exist_ok=True)
        old.rename(new)
        return f"Renamed {old_shown} to {new_shown}"

    # ------------------------------------------------------------ limits

    def usage(self) -> tuple[int, int]:
        """(files, bytes) held now."""
        files = size = 0
        for folder, _dirs, names in os.walk(self.root):
            for name in names:
                files += 1
                size += os.lstat(os.path.join(folder, name)).st_size
        return files, size

    def _check_room(self, host: Path, text: str) -> None:
        """Refuse a write that would break a limit; `host` is the file written."""
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > FILE_BYTES:
            raise MemoryFailure("RESOURCE_EXHAUSTED", f"the file would hold {size} bytes; a "
                                f"memory file holds at most {FILE_BYTES}")
        if host.parent.exists() and not host.parent.is_dir():
            raise _invalid(f"{host.parent.name} is a file, not a directory")
        files, total = self.usage()
        old = host.stat().st_size if host.is_file() else 0
        if not host.is_file() and files + 1 > MAX_FILES:
            raise MemoryFailure("RESOURCE_EXHAUSTED", f"the memory already holds {files} files, "
                                f"the most it may")
        if total - old + size > TOTAL_BYTES:
            raise MemoryFailure("RESOURCE_EXHAUSTED", f"the memory would hold {total - old + size}"
                                f" bytes in all; at most {TOTAL_BYTES}")


def _read(host: Path) -> str:
    return host.read_bytes().decode("utf-8", "replace")


def _range(view_range: list[int], count: int) -> tuple[int, int]:
    """1-based inclusive lines of `view_range` ([start, end], end -1 = the last line)."""
    if not isinstance(view_range, list | tuple) or len(view_range) != 2 \
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in view_range):
        raise _invalid("view_range must be two integers [start, end]")
    first, last = view_range
    last = count if last == -1 else last
    if not 1 <= first <= count or not first <= last <= count:
        raise _invalid(f"view_range {list(view_range)} is outside the file's lines 1..{count}")
    return first, last
