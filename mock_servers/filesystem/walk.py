"""Walking a workspace folder: glob matching, exclusions, and the nested tree view."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

_WILDCARDS = set("*?[")


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


def _variants(pattern: str) -> set[str]:
    """Spellings of one glob that mean the same thing for fnmatch (`**/x`, `x/**`, `a/**/b`)."""
    base = pattern.strip().lower().removeprefix("./")
    variants = {base, base.replace("/**/", "/"), base.removesuffix("/**"), base.removesuffix("/")}
    if base.startswith("**/"):
        variants.add(base[3:])
    return {v for v in variants if v}


def glob_match(pattern: str, entry: Entry) -> bool:
    """Case-insensitive glob: a pattern with `/` matches the relative path, one without
    matches the name (`*` also crosses folders in a path pattern)."""
    for variant in _variants(pattern):
        subject = entry.rel if "/" in variant else entry.name
        if fnmatchcase(subject.lower(), variant):
            return True
    return False


def search_match(pattern: str, entry: Entry) -> bool:
    """`glob_match`, except that a plain word without wildcards matches names containing it."""
    if _WILDCARDS.isdisjoint(pattern) and "/" not in pattern:
        return pattern.strip().lower() in entry.name.lower()
    return glob_match(pattern, entry)


def walk(root: Path, exclude: list[str]) -> Iterator[Entry]:
    """Depth-first, pre-order, each folder's entries sorted by name. Excluded entries (and
    everything below an excluded folder) are skipped; symlinked folders are not entered."""

    def visit(folder: Path, prefix: str, depth: int) -> Iterator[Entry]:
        with os.scandir(folder) as it:
            children = sorted(it, key=lambda e: e.name)
        for child in children:
            entry = Entry(Path(child.path), prefix + child.name, depth,
                          child.is_dir(follow_symlinks=False))
            if any(glob_match(p, entry) for p in exclude):
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
