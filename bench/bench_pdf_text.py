"""What the PDF tools' page texts (pypdf's public `extract_text`) cost where users feel it: per
invoice PDF, and in resets of payable_invoice_checker, whose read set reads every invoice.

    python bench/bench_pdf_text.py            # print the section
    python bench/bench_pdf_text.py --write    # also put it in bench/RESULTS.md

Per PDF: the invoices of the seed-0 256K world, each recognised, parsed and its page's text
extracted from scratch in this process (the tools keep parsed files per server, so that is once
per file and server, when the texts were not extracted ahead); medians over `--repeats` rounds.
Resets: seed 0 with the world cache off (generate + measure + serve; the generator hands its
invoices to the worker of `loca.core.pdf_text`), medians over `--repeats`."""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import time
from pathlib import Path

from results import put_section  # a sibling script (run from bench/)

from envs.core.env import LocaEnv
from envs.payable_invoice_checker import FILES
from loca.core import pdf_text
from loca.core.world_cache import LIMIT_ENV
from mock_servers.pdf_tools.documents import Pdf

SECTION = "## PDF page text"
TASK = "payable_invoice_checker"
TIERS = ("8k", "64k", "256k")


def per_pdf_ms(paths: list[Path], repeats: int) -> float:
    """Median over rounds of the time to open every PDF and extract its page text, per PDF."""
    datas = [(path.read_bytes(), path.name) for path in paths]
    pdf_text.extract_soon([])  # no texts extracted ahead: each is extracted here
    rounds = []
    for _ in range(repeats):
        started = time.perf_counter()
        for data, name in datas:
            Pdf(data, name, hashlib.sha256(data).digest()).text(1)
        rounds.append((time.perf_counter() - started) / len(datas))
    return statistics.median(rounds) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="put the section in bench/RESULTS.md")
    args = parser.parse_args()
    os.environ[LIMIT_ENV] = "0"
    load = os.getloadavg()[0]
    env = LocaEnv(TASK)
    rows = []
    try:
        for tier in TIERS:
            times = []
            for _ in range(args.repeats):
                started = time.perf_counter()
                env.reset(seed=0, options={"length": tier})
                times.append(time.perf_counter() - started)
            paths = sorted((env.world.workspace / FILES).glob("*.pdf"))
            rows.append(f"| {tier} | {len(paths)} | {statistics.median(times):.2f} | "
                        f"{per_pdf_ms(paths, args.repeats):.2f} |")
    finally:
        env.close()
    lines = [SECTION, "",
             f"{TASK}, seed 0, world cache off, medians of {args.repeats}, load average {load:.1f} at the start "
             f"(`python bench/bench_pdf_text.py`).", "",
             "| tier | invoice PDFs | reset s | open + extract_text ms per PDF |", "|---|---|---|---|", *rows]
    print("\n".join(lines))
    if args.write:
        put_section(lines)


if __name__ == "__main__":
    main()
