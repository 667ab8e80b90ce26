"""Filesystem tools over the world's workspace (official MCP filesystem server names)."""

import base64
import os
from itertools import islice
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from loca.core.clock import iso_z
from loca.core.world import write_text_atomic
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.files import DISPLAY_ROOT, content_type, display, resolve
from mock_servers.core.output import dump_json, most_that_fit
from mock_servers.core.toolkit import Call, Toolbox
from mock_servers.core.types import Int
from mock_servers.filesystem.edits import apply_edits, unified_diff
from mock_servers.filesystem.walk import Entry, glob_matcher, nest, walk

toolbox = Toolbox("filesystem", instructions=(
    f"Files of the task live under {DISPLAY_ROOT}. Paths may be relative to it or absolute "
    f"under {DISPLAY_ROOT}; nothing outside is reachable."))
build = toolbox.build

MAX_LISTED = 1000
MAX_TREE_NODES = 2000
MAX_FILES_PER_READ = 50
MAX_MEDIA_BYTES = 10 * 1024 * 1024
_SNIFF_BYTES = 8192
_BINARY_HINT = "use read_media_file for images and audio, or the tool made for that file type"

PathArg = Annotated[str, Field(
    description=f"path relative to {DISPLAY_ROOT}, or absolute under it")]
ExcludeArg = Annotated[list[str] | None, Field(
    description="glob patterns to skip (matched case-insensitively against names, or against "
                "relative paths when they contain '/'), e.g. ['node_modules', '*.tmp']")]


class Edit(BaseModel):
    """One replacement of `edit_file`."""

    model_config = ConfigDict(extra="forbid")
    oldText: str = Field(description="text to replace; must match exactly once")
    newText: str = Field(description="replacement text")


# ---- helpers ---------------------------------------------------------------------------------

def _existing(call: Call, path: str) -> Path:
    target = resolve(call.world, path)
    if not target.exists():
        raise not_found(f"no such file or directory: {path}",
                        hint="list_directory or search_files shows what exists")
    return target


def _file(call: Call, path: str) -> Path:
    target = _existing(call, path)
    if target.is_dir():
        raise invalid(f"{display(call.world, target)} is a directory", hint="use list_directory")
    return target


def _folder(call: Call, path: str) -> Path:
    target = _existing(call, path)
    if not target.is_dir():
        raise invalid(f"{display(call.world, target)} is not a directory")
    return target


def _decode_text(call: Call, target: Path) -> str:
    data = target.read_bytes()
    shown = display(call.world, target)
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise invalid(f"{shown} is a binary file", hint=_BINARY_HINT)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise invalid(f"{shown} is not UTF-8 text", hint=_BINARY_HINT) from None


def _writable_parent(call: Call, target: Path) -> None:
    if not target.parent.exists():
        raise not_found(f"folder {display(call.world, target.parent)} does not exist",
                        hint="create it first with create_directory")
    if not target.parent.is_dir():
        raise invalid(f"{display(call.world, target.parent)} is not a directory")


def _listed(lines: list[str], total: int, what: str, narrow: str) -> str:
    if total > len(lines):
        lines = [*lines, f"[showing first {len(lines)} of {total} {what}; {narrow}]"]
    return "\n".join(lines)


def _human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    value = size / 1024
    for unit in ("KB", "MB", "GB"):
        if value < 1024:
            return f"{value:.2f} {unit}"
        value /= 1024
    return f"{value:.2f} TB"


# ---- reading ---------------------------------------------------------------------------------

@toolbox.tool(rw="read", core=True,
              narrow_hint="read part of the file with head=N or tail=N (lines)")
def read_text_file(
    call: Call,
    path: PathArg,
    head: Annotated[Int | None, Field(ge=1, description="return only the first N lines")] = None,
    tail: Annotated[Int | None, Field(ge=1, description="return only the last N lines")] = None,
) -> str:
    """Read a UTF-8 text file and return its content as plain text. `head` or `tail` (not both)
    limit the result to the first or last N lines. Binary files are refused (use
    read_media_file). Output longer than the output cap is cut at a line boundary with a
    notice."""
    if head is not None and tail is not None:
        raise invalid("give head or tail, not both")
    text = _decode_text(call, _file(call, path))
    if head is not None:
        return "".join(text.splitlines(keepends=True)[:head])
    if tail is not None:
        return "".join(text.splitlines(keepends=True)[-tail:])
    return text


@toolbox.tool(rw="read")
def read_media_file(call: Call, path: PathArg) -> dict:
    """Read an image or audio file (at most 10 MB) and return compact JSON
    `{mimeType,data}` with the content base64-encoded; the MIME type comes from the file
    extension (application/octet-stream when unknown). Files whose encoding would exceed the
    output cap are refused."""
    target = _file(call, path)
    shown = display(call.world, target)
    size = target.stat().st_size
    if size > MAX_MEDIA_BYTES:
        raise ToolFailure(Code.RESOURCE_EXHAUSTED,
                          f"{shown} has {size} bytes; read_media_file reads at most "
                          f"{MAX_MEDIA_BYTES}")
    mime = content_type(target.name)
    data = base64.b64encode(target.read_bytes()).decode("ascii")
    result = {"mimeType": mime, "data": data}
    if len(dump_json(result)) > call.max_output_chars:
        raise ToolFailure(Code.RESOURCE_EXHAUSTED,
                          f"{shown} encodes to {len(data)} base64 characters, over the output cap "
                          f"of {call.max_output_chars}")
    return result


@toolbox.tool(rw="read", core=True,
              narrow_hint="read fewer files per call, or one file with read_text_file head/tail")
def read_multiple_files(
    call: Call,
    paths: Annotated[list[str], Field(min_length=1, max_length=MAX_FILES_PER_READ,
                                      description=f"files to read (1 to {MAX_FILES_PER_READ})")],
) -> str:
    """Read several UTF-8 text files at once. Each file appears as `<path>:` followed by its
    content; files are separated by `---`. A file that cannot be read shows its error inline;
    the call fails only when every file fails. At most 50 paths."""
    blocks: list[str] = []
    failures: list[ToolFailure] = []
    for path in paths:
        try:
            target = _file(call, path)
            blocks.append(f"{display(call.world, target)}:\n{_decode_text(call, target)}")
        except ToolFailure as exc:
            failures.append(exc)
            blocks.append(f"{path}: Error [{exc.code.value}]: {exc.message}")
    if len(failures) == len(paths):
        raise ToolFailure(failures[0].code, "no file could be read: " + "; ".join(
            f"{path}: {exc.message}" for path, exc in zip(paths, failures)))
    return "\n---\n".join(blocks)


# ---- writing ---------------------------------------------------------------------------------

@toolbox.tool(rw="write", core=True, destructive=True, idempotent=True)
def write_file(
    call: Call,
    path: PathArg,
    content: Annotated[str, Field(description="the complete new content (UTF-8 text)")],
) -> str:
    """Create a file or replace its whole content (atomic write). The parent folder must exist
    (create it with create_directory). Returns `Successfully wrote to <path>`."""
    target = resolve(call.world, path)
    if target.is_dir():
        raise invalid(f"{display(call.world, target)} is a directory")
    _writable_parent(call, target)
    write_text_atomic(target, content)
    return f"Successfully wrote to {display(call.world, target)}"


@toolbox.tool(rw="write", core=True, destructive=True,
              narrow_hint="the diff is long; check the result with read_text_file head/tail")
def edit_file(
    call: Call,
    path: PathArg,
    edits: Annotated[list[Edit], Field(min_length=1, description="replacements, applied in order")],
    dryRun: Annotated[bool, Field(description="preview the diff without writing")] = False,
) -> str:
    """Replace text in a file and return a unified diff of the change. Each oldText must match
    exactly once: first as exact text, else line by line ignoring leading and trailing
    whitespace (new lines then take the file's indentation). Either every edit applies or the
    file is left unchanged. With dryRun=true nothing is written. Line endings are preserved."""
    target = _file(call, path)
    original = _decode_text(call, target)
    crlf = "\r\n" in original
    before = original.replace("\r\n", "\n")
    after = apply_edits(before, [(e.oldText, e.newText) for e in edits])
    shown = display(call.world, target)
    if after == before:
        return f"No changes: the edits leave {shown} as it was"
    diff = unified_diff(before, after, shown) or "(only the final newline changed)"
    if dryRun:
        return f"Dry run, {shown} not changed:\n{diff}"
    write_text_atomic(target, after.replace("\n", "\r\n") if crlf else after)
    return diff


@toolbox.tool(rw="write", core=True, idempotent=True)
def create_directory(call: Call, path: PathArg) -> str:
    """Create a folder, with any missing parents; an existing folder is fine. Returns
    `Successfully created directory <path>`."""
    target = resolve(call.world, path)
    shown = display(call.world, target)
    if target.exists() and not target.is_dir():
        raise ToolFailure(Code.ALREADY_EXISTS, f"{shown} exists and is a file")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise invalid(f"cannot create {shown}: a file is in the way") from None
    return f"Successfully created directory {shown}"


@toolbox.tool(rw="write", core=True)
def move_file(
    call: Call,
    source: Annotated[str, Field(description=f"file or folder to move (under {DISPLAY_ROOT})")],
    destination: Annotated[str, Field(description="new path; must not exist yet")],
) -> str:
    """Move or rename a file or folder. The destination must not exist and its parent folder
    must exist. Returns `Successfully moved <source> to <destination>`."""
    src = _existing(call, source)
    dst = resolve(call.world, destination)
    root = call.world.workspace.resolve()
    if src == root:
        raise invalid(f"cannot move the workspace root {DISPLAY_ROOT}")
    if dst.exists():
        raise ToolFailure(Code.ALREADY_EXISTS, f"{display(call.world, dst)} already exists",
                          hint="choose another destination or move the existing one first")
    if src in dst.parents:
        raise invalid("cannot move a folder into itself")
    _writable_parent(call, dst)
    shown = display(call.world, src)
    os.rename(src, dst)
    return f"Successfully moved {shown} to {display(call.world, dst)}"


# ---- listing ---------------------------------------------------------------------------------

def _children(folder: Path) -> list[os.DirEntry[str]]:
    with os.scandir(folder) as it:
        return sorted(it, key=lambda e: e.name)


@toolbox.tool(rw="read", core=True,
              narrow_hint="list a subfolder, or use search_files with a pattern")
def list_directory(call: Call, path: PathArg) -> str:
    """List a folder: one line per entry, `[DIR] name` or `[FILE] name`, sorted by name. At most
    1000 entries, then a notice (use search_files to narrow)."""
    folder = _folder(call, path)
    entries = _children(folder)
    if not entries:
        return f"{display(call.world, folder)} is empty"
    lines = [f"[{'DIR' if e.is_dir() else 'FILE'}] {e.name}" for e in entries[:MAX_LISTED]]
    return _listed(lines, len(entries), "entries", "use search_files with a pattern to narrow")


@toolbox.tool(rw="read", narrow_hint="list a subfolder, or use search_files with a pattern")
def list_directory_with_sizes(
    call: Call,
    path: PathArg,
    sortBy: Annotated[Literal["name", "size"], Field(
        description="order entries by name, or by size (largest first)")] = "name",
) -> str:
    """List a folder with file sizes: `[DIR] name` or `[FILE] name  <size>`, then totals (file
    and folder counts, combined size of the files). At most 1000 entries, then a notice."""
    folder = _folder(call, path)
    sized = [(e, 0 if e.is_dir() else e.stat(follow_symlinks=False).st_size)
             for e in _children(folder)]
    if sortBy == "size":
        sized.sort(key=lambda pair: (-pair[1], pair[0].name))
    lines = [f"[DIR] {e.name}" if e.is_dir() else f"[FILE] {e.name:<30} {_human_size(size):>10}"
             for e, size in sized[:MAX_LISTED]]
    files = sum(1 for e, _ in sized if not e.is_dir())
    listing = _listed(lines, len(sized), "entries", "use search_files with a pattern to narrow")
    totals = (f"Total: {files} files, {len(sized) - files} directories\n"
              f"Combined size: {_human_size(sum(size for _, size in sized))}")
    return f"{listing}\n\n{totals}" if lines else totals


def _tree_text(entries: list[Entry], truncated: bool) -> str:
    text = dump_json(nest(entries))
    if truncated:
        text += (f"\n[tree truncated after {len(entries)} nodes; call directory_tree on a "
                 "subfolder or add excludePatterns]")
    return text


@toolbox.tool(rw="read")
def directory_tree(call: Call, path: PathArg, excludePatterns: ExcludeArg = None) -> str:
    """Recursive tree of a folder as compact JSON `[{name,type,children}]`, type `file` or
    `directory` (only directories carry `children`), sorted by name. At most 2000 nodes (and
    the output cap), then a notice line. Symlinked folders are not entered."""
    folder = _folder(call, path)
    entries = list(islice(walk(folder, excludePatterns or []), MAX_TREE_NODES + 1))
    truncated = len(entries) > MAX_TREE_NODES
    entries = entries[:MAX_TREE_NODES]
    text = _tree_text(entries, truncated)
    if len(text) <= call.max_output_chars:
        return text
    kept = most_that_fit(0, len(entries) - 1,
                         lambda n: len(_tree_text(entries[:n], True)) <= call.max_output_chars)
    return _tree_text(entries[:kept], True)


@toolbox.tool(rw="read", core=True, narrow_hint="narrow the pattern or search a subfolder")
def search_files(
    call: Call,
    path: PathArg,
    pattern: Annotated[str, Field(min_length=1, description=(
        "glob such as '*.csv' or 'reports/**/*.pdf'; a plain word without wildcards matches "
        "names containing it"))],
    excludePatterns: ExcludeArg = None,
) -> str:
    """Search a folder recursively for files and folders whose name (or, for patterns with
    '/', relative path) matches a glob, case-insensitively. Returns full paths one per line,
    sorted; at most 1000, then a notice; `No matches found` when nothing matches."""
    folder = _folder(call, path)
    base = display(call.world, folder)
    matches = glob_matcher(pattern, words=True)
    found = sorted(f"{base}/{e.rel}" for e in walk(folder, excludePatterns or []) if matches(e))
    if not found:
        return "No matches found"
    return _listed(found[:MAX_LISTED], len(found), "matches", "narrow the pattern or the folder")


@toolbox.tool(rw="read", core=True)
def get_file_info(call: Call, path: PathArg) -> str:
    """Metadata of a file or folder, one `key: value` line each: size (bytes; 0 for folders),
    created, modified, accessed, isDirectory, isFile, permissions (octal). The three times are
    the world's virtual clock now (ISO 8601 UTC), which keeps outputs reproducible."""
    target = _existing(call, path)
    info = target.stat()
    is_dir = target.is_dir()
    moment = iso_z(call.now)
    return "\n".join([
        f"size: {0 if is_dir else info.st_size}",
        f"created: {moment}",
        f"modified: {moment}",
        f"accessed: {moment}",
        f"isDirectory: {str(is_dir).lower()}",
        f"isFile: {str(target.is_file()).lower()}",
        f"permissions: {info.st_mode & 0o777:o}",
    ])


@toolbox.tool(rw="read", core=True)
def list_allowed_directories(call: Call) -> str:
    """The folders this server may access: only the workspace root. Relative paths in the
    other tools start from it."""
    return f"Allowed directories:\n{DISPLAY_ROOT}"

