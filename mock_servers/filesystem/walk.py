"""Walking a workspace folder: glob matching (`{a,b}` alternatives included), exclusions, and the
nested tree view."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from itertools import pairwise
from pathlib import Path
from typing import Any

from mock_servers.core.errors import invalid

_WILDCARDS = set("*?[")
MAX_ALTERNATIVES = 256
_RANGE = re.compile(r"(-?\d+\.\.-?\d+|[A-Za-z]\.\.[A-Za-z])(\.\.-?\d+)?")


@dataclass(frozen=True)
class Entry:
    """One file or folder under the walked root; `rel` is its POSIX path from that root."""

    path: Path
    rel: str
    depth: int
    is_dir: bool

    @property
    def name(self) -> str:
        return self.path.name


Matcher = Callable[[Entry], bool]


def glob_matcher(pattern: str, words: bool = False) -> Matcher:
    """Whether an entry matches glob `pattern`, case-insensitively: an alternative with `/`
    matches the relative path, one without matches the name (`*` also crosses folders in a path
    pattern). `{a,b}` groups stand for their alternatives, as in minimatch. With `words`, an
    alternative without wildcards or `/` matches the names containing it."""
    parts, globs = set(), set()
    for alternative in expand_braces(pattern):
        if words and _WILDCARDS.isdisjoint(alternative) and "/" not in alternative:
            parts.add(alternative.strip().lower())
        else:
            globs |= _spellings(alternative)

    def match(entry: Entry) -> bool:
        name = entry.name.lower()
        return any(part in name for part in parts) or any(
            fnmatchcase(entry.rel.lower() if "/" in glob else name, glob) for glob in globs)

    return match


def expand_braces(pattern: str) -> list[str]:
    """The patterns `pattern` stands for, its `{a,b}` groups (nested too) expanded; a group
    without a comma at its own level is literal. A range (`{1..9}`) or more than
    MAX_ALTERNATIVES patterns is INVALID_ARGUMENT rather than a search that finds nothing."""
    done: list[str] = []
    todo = [pattern]
    while todo:
        current = todo.pop()
        group = _first_group(current)
        if group is None:
            done.append(current)
        else:
            start, end, commas = group
            todo += [current[:start] + current[a + 1:b] + current[end + 1:]
                     for a, b in pairwise([start, *commas, end])]
        if len(done) + len(todo) > MAX_ALTERNATIVES:
            raise invalid(f"pattern '{pattern[:200]}' stands for more than {MAX_ALTERNATIVES} "
                          "alternatives; narrow it")
    return done


def _first_group(text: str) -> tuple[int, int, list[int]] | None:
    """The first `{...}` group of `text` with a comma at its own level: the positions of its
    braces and of those commas."""
    opened: list[int] = []
    commas: dict[int, list[int]] = {}
    first: tuple[int, int, list[int]] | None = None
    for at, char in enumerate(text):
        if char == "{":
            opened.append(at)
        elif char == "," and opened:
            commas.setdefault(opened[-1], []).append(at)
        elif char == "}" and opened:
            start = opened.pop()
            if start in commas:
                if first is None or start < first[0]:
                    first = (start, at, commas[start])
            elif _RANGE.fullmatch(text[start + 1:at]):
                raise invalid(f"pattern range '{text[start:at + 1]}' is not supported; list the "
                              "alternatives instead, e.g. {1,2,3}")
    return first


def _spellings(pattern: str) -> set[str]:
    """Spellings of one glob that mean the same thing for fnmatch (`**/x`, `x/**`, `a/**/b`)."""
    base = pattern.strip().lower().removeprefix("./")
    variants = {base, base.replace("/**/", "/"), base.removesuffix("/**"), base.removesuffix("/")}
    if base.startswith("**/"):
        variants.add(base[3:])
    return {v for v in variants if v}


def walk(root: Path, exclude: list[str]) -> Iterator[Entry]:
    """Depth-first, pre-order, each folder's entries sorted by name. Excluded entries (and
    everything below an excluded folder) are skipped; symlinked folders are not entered."""

    excluded = [glob_matcher(pattern) for pattern in exclude]

    def visit(folder: Path, prefix: str, depth: int) -> Iterator[Entry]:
        with os.scandir(folder) as it:
            children = sorted(it, key=lambda e: e.name)
        for child in children:
            entry = Entry(Path(child.path), prefix + child.name, depth,
                          child.is_dir(follow_symlinks=False))
            if any(match(entry) for match in excluded):
                continue
            yield entry
            if entry.is_dir:
                yield from visit(entry.path, entry.rel + "/", depth + 1)

    yield from visit(root, "", 0)


def nest(entries: list[Entry]) -> list[dict[str, Any]]:
    """Turn a pre-order list of entries into `[{name,type,children}]` (files carry no
    `children`)."""
    tree: list[dict[str, Any]] = []
    stack: list[tuple[int, list[dict[str, Any]]]] = [(-1, tree)]
    for entry in entries:
        while stack[-1][0] >= entry.depth:
            stack.pop()
        node: dict[str, Any] = {"name": entry.name, "type": "directory" if entry.is_dir else "file"}
        stack[-1][1].append(node)
        if entry.is_dir:
            node["children"] = []
            stack.append((entry.depth, node["children"]))
    return tree
