"""Harness overhead of context management per turn (numbers, not pass/fail tests).

    python bench/bench_context.py           # print the tables
    python bench/bench_context.py --write   # also put them into bench/RESULTS.md

A synthetic episode (one tool call per turn, each result `new` tokens of text) is played into a
real ledger up to a target size; then, for the next turns, the time of `ContextPipeline.prepare`
(render + budget + strategy decisions, recorded events included; no model, no tools) is measured
turn by turn, and separately the appends of the turn's messages (their token counts). Medians.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT.parent), str(ROOT)]

from results import put_section  # noqa: E402  (a sibling script, not a package)

from loca.core.lengths import label  # noqa: E402
from scaffolds.clients import Sampling  # noqa: E402
from scaffolds.context import ContextPipeline, choose  # noqa: E402
from scaffolds.ledger import Ledger  # noqa: E402
from scaffolds.messages import (  # noqa: E402
    ToolCallPart,
    assistant_message,
    system_message,
    tool_message,
    user_message,
)

SECTION = "## Context management: harness overhead per turn"
MEASURED_TURNS = 60
SETUPS = {
    "react, W=2M (nothing fires; the view is the whole ledger)": ("react", 2_000_000),
    "react, W=1M (nothing fires; the view is the whole ledger)": ("react", 1_000_000),
    "react, W=128K (hard truncation every turn)": ("react", 128_000),
    "clear_tool_results+compaction, W=128K (scripted summary)":
        ("clear_tool_results+compaction", 128_000),
}
GROWTH_WINDOW = 4_000_000
"""The growth table's window: its input budget is above every ledger there, so nothing fires."""
GROWTH_LEDGERS = (32_000, 64_000, 128_000, 256_000, 512_000, 1_000_000, 2_000_000)


class Episode:
    def __init__(self, folder: Path, strategy: str, window: int, new: int) -> None:
        choice = choose(strategy, {"context": {"max_context_tokens": window}})
        context = choice.context
        self.ledger = Ledger(folder / "trajectory.jsonl", {"format": "bench"})
        self.pipeline = ContextPipeline(context, Sampling(), client=None,  # type: ignore[arg-type]
                                        tools=[], terminal_tool="done", context_blind=True)
        self.ledger.append_message(system_message("Act through the tools."), turn=0)
        self.ledger.append_message(user_message(["Do the task."], "task"), turn=0)
        self.ledger.record("tools", {"tokens": 3000})
        self.turn = 0
        self.text = " ".join(f"w{i % 997}" for i in range(new // 2))

    def append_turn(self) -> float:
        started = time.perf_counter()
        self.turn += 1
        call = ToolCallPart.parse(f"c{self.turn}", "read", f'{{"page": {self.turn}}}')
        self.ledger.append_message(assistant_message(None, [call]), turn=self.turn)
        self.ledger.append_message(tool_message(call.call_id, "read", f"{self.turn} {self.text}"),
                                   turn=self.turn)
        return time.perf_counter() - started

    async def prepare(self) -> float:
        started = time.perf_counter()
        await self.pipeline.prepare(self.ledger, self.turn + 1)
        return time.perf_counter() - started


async def measure(strategy: str, window: int, ledger_tokens: int, new: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        episode = Episode(Path(folder), strategy, window, new)
        while episode.ledger.message_tokens_total < ledger_tokens:
            episode.append_turn()
            await episode.prepare()
        appends, prepares = [], []
        for _ in range(MEASURED_TURNS):
            appends.append(episode.append_turn())
            prepares.append(await episode.prepare())
        view = len(episode.pipeline.renderer.entries)
        episode.ledger.close()
    return {"prepare_ms": 1000 * statistics.median(prepares),
            "p95_ms": 1000 * sorted(prepares)[int(0.95 * len(prepares))],
            "append_ms": 1000 * statistics.median(appends), "view": view,
            "messages": 2 + 2 * episode.turn}


def table(rows: list[tuple[str, dict[str, Any]]], first: str) -> list[str]:
    lines = [f"| {first} | prepare median ms | prepare p95 ms | append median ms | view messages "
             f"| ledger messages |", "|---|---|---|---|---|---|"]
    for name, r in rows:
        lines.append(f"| {name} | {r['prepare_ms']:.3f} | {r['p95_ms']:.3f} | "
                     f"{r['append_ms']:.3f} | {r['view']} | {r['messages']} |")
    return lines


async def main_async(write: bool) -> None:
    lines = [SECTION, "", f"Machine: {platform.machine()}, Python {platform.python_version()}. "
             f"`prepare` = render + budget + strategy decisions before a main call; `append` = "
             f"the turn's two messages appended (token counts). Median of {MEASURED_TURNS} turns."]
    rows = [(label, await measure(s, w, 256_000, 1000)) for label, (s, w) in SETUPS.items()]
    lines += ["", "### At a 256K-token ledger, 1,000 new tokens per turn", "",
              *table(rows, "setup")]
    rows = [(label(size).upper(), await measure("react", GROWTH_WINDOW, size, 1000))
            for size in GROWTH_LEDGERS]
    lines += ["", f"### Growth with the ledger's size (react, W={label(GROWTH_WINDOW).upper()}, so the "
              "view is the whole ledger; 1,000 new tokens per turn)", "",
              *table(rows, "ledger tokens")]
    rows = [(f"{new:,}", await measure("clear_tool_results+compaction", 128_000, 256_000, new))
            for new in (250, 1000, 4000, 16000)]
    lines += ["", "### Growth with the new tokens per turn (clear_tool_results+compaction, "
              "W=128K, 256K ledger)", "", *table(rows, "new tokens per turn")]
    print("\n".join(lines))
    if write:
        put_section(lines)

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write into bench/RESULTS.md")
    asyncio.run(main_async(parser.parse_args().write))


if __name__ == "__main__":
    main()
