"""What a report covers, in one line: tasks, lengths, seeds, trials and N (the figures' titles,
the report's opening)."""

from __future__ import annotations

from collections import Counter

from loca.report.load import Dataset
from loca.report.tables import heading


def ranges(values: list[int]) -> str:
    """`0-4, 7, 9-10` for sorted distinct integers."""
    spans: list[list[int]] = []
    for v in sorted(set(values)):
        if spans and v == spans[-1][1] + 1:
            spans[-1][1] = v
        else:
            spans.append([v, v])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)


def caption(data: Dataset, max_tasks: int = 3) -> str:
    """Tasks (named up to `max_tasks`, else counted), lengths, seeds, trials and N per row."""
    tasks = sorted({e.task for e in data.episodes})
    named = ", ".join(tasks) if len(tasks) <= max_tasks else f"{len(tasks)} tasks"
    lengths = data.lengths
    tiers = heading(lengths[0]) if len(lengths) == 1 else \
        f"{heading(lengths[0])}-{heading(lengths[-1])} ({len(lengths)} lengths)"
    per_row = sorted(set(Counter(e.row for e in data.episodes).values()))
    n = f"{per_row[0]}" if len(per_row) == 1 else f"{per_row[0]}-{per_row[-1]}"
    trials = data.trials()
    return (f"{named} · {tiers} · seeds {ranges([e.seed for e in data.episodes])}"
            + (f" · {trials} trials" if trials > 1 else "")
            + f" · N = {n} planned episodes per row")
