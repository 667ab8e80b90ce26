"""toy: a tiny task for tests of the machinery every task shares, never shipped nor listed (see
`envs.core.registry`: `register_task("tests.toy")` or `LOCA_EXTRA_TASKS=tests.toy`). The
memory graph names the tracked items; the workspace's `notes/` folder holds stock notes, each
listing items as `- ITEM: COUNT` among remarks; the agent sums each tracked item's counts into
`totals.csv`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loca.core.outputs import Column, TableFile
from loca.core.script import Script, ToolRequest, Tools, call, call_all
from loca.core.task import Scale, TaskSpec

if TYPE_CHECKING:
    from loca.core.world import World

NOTES = "notes"
TRACKED = "tracked_item"  # the entity type of a tracked item in the memory graph
TOTALS = TableFile("totals.csv", columns=(Column("item"), Column("total", norm="I")), key=("item",))
READ_BATCH = 20  # notes per read_multiple_files call

INSTRUCTION = f"""\
The tracked items are the entities of type `{TRACKED}` in the memory graph. Every file in the \
`{NOTES}` folder of the workspace is a stock note that lists items on lines `- ITEM: COUNT`. \
Write `{TOTALS.file}` in the workspace with the header `{",".join(TOTALS.headers)}` and one row per \
tracked item: its counts summed over all the notes (0 when no note lists it), rows sorted by item \
name. Change nothing else."""


def instruction(world: World) -> str:
    return INSTRUCTION


def read_everything(tools: Tools) -> Script:
    """The read set: the memory graph, the notes folder's listing, then every note (in
    batches). Returns the tracked items, sorted, and the notes' texts in name order."""
    graph = yield from call(tools("memory", "read_graph"), {})
    tracked = sorted(e["name"] for e in graph["entities"] if e["entityType"] == TRACKED)
    listing = yield from call(tools("filesystem", "list_directory"), {"path": NOTES})
    names = [line.removeprefix("[FILE] ") for line in str(listing).splitlines() if line.startswith("[FILE] ")]
    read = tools("filesystem", "read_multiple_files")
    batches = [names[i:i + READ_BATCH] for i in range(0, len(names), READ_BATCH)]
    replies = yield from call_all([ToolRequest(read, {"paths": [f"{NOTES}/{n}" for n in batch]})
                                      for batch in batches])
    return tracked, [block for reply in replies for block in str(reply).split("\n---\n")]


def read_set(_instruction: str, tools: list[dict[str, Any]]) -> Script:
    yield from read_everything(Tools(tools))


TASK = TaskSpec(
    name="toy",
    version=0,
    summary="sum each tracked item's counts over the workspace's notes into totals.csv",
    servers={"memory": "memory", "filesystem": "filesystem", "python_execute": "python_execute",
             "claim_done": "claim_done"},
    scale=Scale(primary="num_notes", lo=10, hi=900, fine="num_remarks"),
    instruction=instruction,
    read_set=read_set,
    outputs=(TOTALS,),
    tools=(("memory", "read_graph"), ("memory", "search_nodes"), ("memory", "open_nodes"),
           ("filesystem", "list_directory"), ("filesystem", "read_multiple_files"),
           ("filesystem", "read_text_file"), ("filesystem", "write_file"), ("python_execute", "python_execute")),
)
