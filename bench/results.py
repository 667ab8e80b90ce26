"""`bench/RESULTS.md` is shared by the benchmark scripts: each owns whole top-level sections
(`## title`, with their `###` subsections) and replaces only those when it writes."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADER = "# Benchmarks\n"


def put_section(lines: list[str]) -> None:
    """Replace the section whose heading is `lines[0]` (a `## ` line), or append it."""
    title = lines[0]
    assert title.startswith("## "), title
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.is_file() else HEADER
    start = text.find(f"\n{title}\n")
    if start >= 0:
        end = text.find("\n## ", start + len(title) + 2)
        text = text[:start + 1] + (text[end + 1:] if end >= 0 else "")
    RESULTS.write_text(text.rstrip("\n") + "\n\n" + "\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
