"""In-process latency of the commerce family's most used read tools on 256K worlds: WooCommerce
order listings with a date filter, product listings, and a 1,000-row Google Sheet range read.

    python bench/bench_commerce.py            # print the section
    python bench/bench_commerce.py --write    # also put it in bench/RESULTS.md

Each call is timed through the gateway the env uses (argument checks, transaction, JSON, output
cap, audit row), in one warm process with one event loop, on seed 0's 256K world of the task
named in its row; the output size is given beside the latency, which grows with it."""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import envs  # noqa: F401  (registers the gym ids)
from envs.core.build import dispatcher
from envs.core.env import LocaEnv
from loca.core.script import ToolRequest
from loca.core.world import World
from mock_servers.gateway import Gateway

ROOT = Path(__file__).resolve().parent
SECTION = "## Commerce tools on 256K worlds"
sys.path.insert(0, str(ROOT))
from results import put_section  # noqa: E402  (a sibling script, not a package)

SKU, BOOK = "<the newest product's SKU>", "<the schedule's spreadsheet id>"  # looked up in the world
# (label, task whose 256K world is read, tool, arguments)
CALLS: list[tuple[str, str, str, dict[str, Any]]] = [
    ("orders of one week (date filter), default page", "woocommerce_new_welcome", "woocommerce_woo_orders_list",
     {"dateAfter": "2025-03-03T12:00:00Z", "dateBefore": "2025-03-10T12:00:00Z"}),
    ("orders of one week (date filter), 100 a page", "woocommerce_new_welcome", "woocommerce_woo_orders_list",
     {"dateAfter": "2025-03-03T12:00:00Z", "dateBefore": "2025-03-10T12:00:00Z", "perPage": 100}),
    ("orders by status, 100 a page", "update_material_inventory", "woocommerce_woo_orders_list",
     {"status": ["processing"], "perPage": 100}),
    ("one order", "woocommerce_new_welcome", "woocommerce_woo_orders_get", {"orderId": 1}),
    ("products, default page", "woocommerce_stock_alert", "woocommerce_woo_products_list", {}),
    ("products, 100 a page", "woocommerce_stock_alert", "woocommerce_woo_products_list", {"perPage": 100}),
    ("one product by SKU", "filter_low_selling_products", "woocommerce_woo_products_list", {"sku": SKU}),
    ("sheet range of 1,000 rows x 8 columns", "nhl_b2b_analysis", "google_sheet_get_sheet_data",
     {"spreadsheet_id": BOOK, "sheet": "Schedule", "range": "A2:H1001"}),
    ("sheet range of 10 rows", "nhl_b2b_analysis", "google_sheet_get_sheet_data",
     {"spreadsheet_id": BOOK, "sheet": "Schedule", "range": "A2:H11"}),
]


async def _filled(call: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments with the values that depend on the world looked up."""
    if arguments.get("sku") == SKU:
        page = await call(ToolRequest("woocommerce_woo_products_list", {"perPage": 1}))
        return {**arguments, "sku": json.loads(page.text)["items"][0]["sku"]}
    if arguments.get("spreadsheet_id") == BOOK:
        found = await call(ToolRequest("google_sheet_list_spreadsheets", {}))
        books = json.loads(found.text)["spreadsheets"]
        return {**arguments, "spreadsheet_id": next(b["id"] for b in books if b["title"].startswith("NHL"))}
    return arguments


def measure(world: World, task: str, tool: str, arguments: dict[str, Any], repeats: int,
            loop: asyncio.AbstractEventLoop) -> tuple[float, float, int]:
    """Median and p95 ms of the call, and its output's size in bytes."""
    from envs.core.registry import get_task

    gateway = Gateway(world, get_task(task).spec.servers)
    call = dispatcher(gateway, errors_raise=True)
    try:
        arguments = loop.run_until_complete(_filled(call, arguments))
        samples, size = [], 0
        for _ in range(repeats + 3):
            started = time.perf_counter()
            reply = loop.run_until_complete(call(ToolRequest(tool, arguments)))
            samples.append(time.perf_counter() - started)
            size = len(reply.text.encode())
        ordered = sorted(samples[3:])
        return 1000 * statistics.median(ordered), 1000 * ordered[int(0.95 * (len(ordered) - 1))], size
    finally:
        gateway.close()


def section(repeats: int) -> list[str]:
    lines = [SECTION, "",
             f"Seed 0's 256K world of each task, one warm process, median and p95 of {repeats} calls through the "
             "gateway (`python bench/bench_commerce.py`). The time grows with the bytes a call returns.", "",
             "| call | task world | tool | median ms | p95 ms | output KB | µs per KB |",
             "|---|---|---|---|---|---|---|"]
    loop = asyncio.new_event_loop()
    worlds: dict[str, World] = {}
    with tempfile.TemporaryDirectory(prefix="loca-bench-") as tmp:
        for label, task, tool, arguments in CALLS:
            if task not in worlds:
                env = LocaEnv(task)
                root = Path(tmp) / task
                env.reset(seed=0, options={"length": "256k", "episode_dir": str(root)})
                env.close()
                worlds[task] = World.load(root)
            median, p95, size = measure(worlds[task], task, tool, arguments, repeats, loop)
            lines.append(f"| {label} | `{task}` | `{tool}` | {median:.2f} | {p95:.2f} | {size / 1024:.1f} | "
                         f"{1000 * median / max(size / 1024, 0.001):.0f} |")
    loop.close()
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--write", action="store_true", help="write the section of bench/RESULTS.md")
    args = parser.parse_args()
    lines = section(args.repeats)
    print("\n".join(lines))
    if args.write:
        put_section(lines)


if __name__ == "__main__":
    main()
