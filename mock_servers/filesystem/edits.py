"""Text edits for `edit_file`: exact or whitespace-tolerant matching, and the unified diff."""

from __future__ import annotations

import difflib

from mock_servers.core.errors import invalid

_REREAD = "read the file again with read_text_file and copy oldText from it"


def apply_edits(text: str, edits: list[tuple[str, str]]) -> str:
    """Apply `(old, new)` pairs in order to LF-normalised `text`; each `old` must match once."""
    for number, (old, new) in enumerate(edits, start=1):
        text = _apply_one(text, _lf(old), _lf(new), number)
    return text


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def _apply_one(text: str, old: str, new: str, number: int) -> str:
    if not old:
        raise invalid(f"edit {number}: oldText is empty")
    count = text.count(old)
    if count == 1:
        return text.replace(old, new, 1)
    if count > 1:
        raise invalid(f"edit {number}: oldText matches {count} times; it must match exactly once",
                      hint="include more surrounding lines in oldText")
    return _apply_by_lines(text, old, new, number)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _apply_by_lines(text: str, old: str, new: str, number: int) -> str:
    """Match whole lines ignoring leading/trailing whitespace; re-indent the new lines to the
    indentation found in the file."""
    lines = text.split("\n")
    old_lines = old.removesuffix("\n").split("\n")
    size = len(old_lines)
    wanted = [line.strip() for line in old_lines]
    starts = [i for i in range(len(lines) - size + 1)
              if [line.strip() for line in lines[i:i + size]] == wanted]
    if not starts:
        raise invalid(f"edit {number}: oldText not found", hint=_REREAD)
    if len(starts) > 1:
        raise invalid(f"edit {number}: oldText matches {len(starts)} places (ignoring whitespace); "
                      "it must match exactly once",
                      hint="include more surrounding lines in oldText")
    at = starts[0]
    file_indent, old_indent = _indent(lines[at]), _indent(old_lines[0])
    new_lines = [] if not new else new.removesuffix("\n").split("\n")
    adjusted = [file_indent + line[len(old_indent):] if line.startswith(old_indent) else line
                for line in new_lines]
    return "\n".join(lines[:at] + adjusted + lines[at + size:])


def unified_diff(before: str, after: str, label: str) -> str:
    """A unified diff of two LF texts, both sides labelled with the displayed path."""
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(),
                                fromfile=label, tofile=label, lineterm="")
    return "\n".join(diff)
