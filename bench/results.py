"""`bench/RESULTS.md` is shared by the benchmark scripts: each owns whole top-level sections
(`## title`, with their `###` subsections) and replaces only those when it writes, in place; a
section written for some of its subsections (one per task) keeps the others."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADER = "# Benchmarks\n"


def put_section(lines: list[str]) -> None:
    """Replace the section whose heading is `lines[0]` (a `## ` line) where it stands, or
    append it."""
    title = lines[0]
    assert title.startswith("## "), title
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.is_file() else HEADER
    body = "\n".join(lines).rstrip("\n") + "\n"
    start = text.find(f"\n{title}\n")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + body
    else:
        end = text.find("\n## ", start + len(title) + 2)
        text = text[:start + 1] + body + (text[end:] if end >= 0 else "")
    RESULTS.write_text(text, encoding="utf-8")


def put_subsections(lines: list[str]) -> None:
    """Merge a section into the one already written: its `###` subsections replace those of
    the same heading and join the others (kept in heading order); its text before the first
    subsection replaces the old one."""
    title = lines[0]
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.is_file() else HEADER
    start = text.find(f"\n{title}\n")
    old: list[str] = []
    if start >= 0:
        end = text.find("\n## ", start + len(title) + 2)
        old = text[start + 1:end if end >= 0 else len(text)].splitlines()
    intro, subsections = _split(lines)
    _, kept = _split(old) if old else ([], {})
    merged = {**kept, **subsections}
    put_section([*intro, *(line for heading in sorted(merged) for line in [*_trimmed(merged[heading]), ""])])


def _trimmed(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def _split(lines: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """A section's lines before its first `###` subsection, and each subsection by heading."""
    intro: list[str] = []
    subsections: dict[str, list[str]] = {}
    current = intro
    for line in lines:
        if line.startswith("### "):
            current = subsections[line] = []
        current.append(line)
    return intro, subsections
