"""The memory tools (spec §3.4.6): schemas, argument checks and dispatch onto `FileMemory`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from loca.core.outcome import ToolOutcome
from scaffolds.harness.base import HarnessTool, error_text, integer, params, string
from scaffolds.harness.memory import FILE_BYTES, SUFFIXES, FileMemory, MemoryFailure

SERVER = "memory"
MEMORY_DIR = "memories"
"""The memory directory inside the episode directory (next to `world/`, outside it)."""
COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
_PATH = string("a path under /memories, e.g. /memories/progress.md")

_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "view": ("Show the memory directory: a directory lists its entries (sub-directories end in "
             "'/'); a file shows its lines numbered from 1, optionally only `view_range`.",
             params({"path": _PATH, "view_range": {
                 "type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2,
                 "description": "[first, last] line, 1-based and inclusive; -1 as last means "
                                "the end of the file"}}, "path")),
    "create": (f"Create a memory file, or overwrite it, with `file_text`; missing directories "
               f"are created. Files end in {' '.join(SUFFIXES)} and hold at most "
               f"{FILE_BYTES // 1024} KiB.",
               params({"path": _PATH, "file_text": string("the whole content of the file")},
                      "path", "file_text")),
    "str_replace": ("Replace the one occurrence of `old_str` in a memory file by `new_str`; it "
                    "fails unless `old_str` occurs exactly once.",
                    params({"path": _PATH, "old_str": string("the exact text to replace"),
                            "new_str": string("the replacement (default: empty)")},
                           "path", "old_str")),
    "insert": ("Insert `insert_text` as new lines after line `insert_line` of a memory file "
               "(0 inserts before the first line).",
               params({"path": _PATH, "insert_line": integer(
                   "the line after which the text goes, 0-based (0 = at the top)", minimum=0),
                   "insert_text": string("the text to insert")},
                   "path", "insert_line", "insert_text")),
    "delete": ("Delete a memory file or directory (with everything in it).",
               params({"path": _PATH}, "path")),
    "rename": ("Rename or move a memory file or directory; it never overwrites an existing "
               "path.",
               params({"old_path": _PATH, "new_path": _PATH}, "old_path", "new_path")),
}
_TYPES: dict[str, type | tuple[type, ...]] = {
    "path": str, "old_path": str, "new_path": str, "file_text": str, "old_str": str,
    "new_str": str, "insert_text": str, "insert_line": int, "view_range": list,
}


def tool_name(command: str, naming: str) -> str:
    return f"memory_tool_{command}" if naming == "paper" else f"memory_{command}"


def memory_tools(root: Path, naming: str) -> list[HarnessTool]:
    """The six memory tools over the directory `root`."""
    memory = FileMemory(root)
    tools = []
    for command in COMMANDS:
        description, parameters = _SPECS[command]
        tools.append(HarnessTool(tool_name(command, naming), description, parameters,
                                 _handler(memory, command, tool_name(command, naming)), SERVER))
    return tools


def _handler(memory: FileMemory, command: str, name: str) -> Any:
    parameters = _SPECS[command][1]

    async def handle(_call_id: str, arguments: Mapping[str, Any], _turn: int) -> ToolOutcome:
        given = {k: v for k, v in arguments.items()
                 if v is not None or k in parameters["required"]}
        try:
            _check(given, parameters)
            text = getattr(memory, command)(**given)
        except MemoryFailure as exc:
            return ToolOutcome(error_text(exc.code, name, exc.message), is_error=True,
                               server=SERVER)
        except OSError as exc:
            return ToolOutcome(error_text("FAILED_PRECONDITION", name,
                                          exc.strerror or type(exc).__name__),
                               is_error=True, server=SERVER)
        return ToolOutcome(text, server=SERVER)

    return handle


def _check(arguments: Mapping[str, Any], parameters: Mapping[str, Any]) -> None:
    known = parameters["properties"]
    unknown = sorted(set(arguments) - set(known))
    if unknown:
        raise MemoryFailure("INVALID_ARGUMENT", f"unknown argument(s) {', '.join(unknown)}; "
                            f"known: {', '.join(known)}")
    missing = [k for k in parameters["required"] if k not in arguments]
    if missing:
        raise MemoryFailure("INVALID_ARGUMENT", f"missing argument(s) {', '.join(missing)}")
    for key, value in arguments.items():
        expected = _TYPES[key]
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise MemoryFailure("INVALID_ARGUMENT", f"{key} must be a "
                                f"{known[key]['type']}, got {type(value).__name__}")
