"""nhl_b2b_analysis: count and classify every team's back-to-back games from a long schedule
sheet read in ranges, into a new spreadsheet and a CSV."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import date, timedelta
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from loca.core.outputs import Column, NewSpreadsheet, TableFile
from loca.core.script import Script, Tools, call
from loca.core.task import Scale, TaskSpec

if TYPE_CHECKING:
    from loca.core.world import World

SCHEDULE_HEADERS = ("Date", "Start Time (Sask)", "Start Time (ET)", "Visitor", "Score", "Home", "Score.1",
                    "Status")
SCHEDULE_SHEET = "Schedule"
SCHEDULE_PREFIX = "NHL Regular Season Schedule"  # the title goes on with the season's date span
POSTPONED = "Postponed"
KINDS = ("HA", "AH", "HH", "AA")  # where the team played the first and the second game of a set
REPORT_HEADERS = ("Team", *KINDS, "Total")
OUTPUT_TITLE = "nhl_b2b_analysis"
CSV = TableFile(file="nhl_b2b_analysis.csv", key=("Team",),
                columns=(Column("Team", "S"), *(Column(h, "I") for h in (*KINDS, "Total"))))
SHEET = NewSpreadsheet(title=OUTPUT_TITLE)
# The oracle reads the schedule in ranges of READ_ROWS rows (fewer when the output cap cuts
# one). The first-range mutant reads only rows 1-FIRST_RANGE_ROWS: every world has more games
# than that, and a back-to-back set beyond it that changes a count.
READ_ROWS, FIRST_RANGE_ROWS = 1000, 100

TOOLS: dict[str, tuple[str, ...]] = {
    "google_sheet": ("list_spreadsheets", "get_multiple_spreadsheet_summary", "list_sheets", "get_sheet_data",
                     "create_spreadsheet", "rename_sheet", "update_cells"),
    "filesystem": ("list_directory", "read_text_file", "write_file"),
    "terminal": ("run_command",),
    "python_execute": ("python_execute",),
    "claim_done": ("claim_done",),
}

INSTRUCTION = """\
The Google Sheet `{title}` lists NHL games ({columns}), one game per row under the header; it is \
long, so read it in ranges. Ignore games whose Status is `{postponed}`. For each team, a \
back-to-back set is a pair of consecutive games of that team on dates exactly one day apart (three \
games on three consecutive days are 2 sets). Classify each set by where the team played the first \
and the second game: HA (home, then away), AH (away, then home), HH (home both) or AA (away both). \
Create a new Google Sheet titled exactly `{output}` whose first tab has the header \
`{header}` and one row per team appearing in the schedule (teams with no set included, with \
zeros), sorted by Team ascending, where Total = HA + AH + HH + AA. Save the same table as `{csv}` \
in the workspace. Write nothing else. Change nothing else."""


def schedule_title(world: World) -> str:
    """The schedule spreadsheet's title, which names the season's date span."""
    title: str = world.meta.accounts["google_sheet"]["schedule_title"]
    return title


def instruction(world: World) -> str:
    return INSTRUCTION.format(title=schedule_title(world), columns=", ".join(SCHEDULE_HEADERS),
                              postponed=POSTPONED, output=OUTPUT_TITLE, header=",".join(REPORT_HEADERS),
                              csv=CSV.file)


def read_schedule(tools: Tools, rows: int = READ_ROWS, first_range_only: bool = False) -> Script:
    """Find the schedule (the spreadsheet whose title starts with `SCHEDULE_PREFIX`) and read
    it range by range, `rows` rows a range, until a range comes back short. Returns (its
    spreadsheet id, its rows, header first)."""
    found = yield from call(tools("google_sheet", "list_spreadsheets"), {})
    [book] = [b for b in found["spreadsheets"] if b["title"].startswith(SCHEDULE_PREFIX)]
    values: list[list[Any]] = []
    start, grid = 1, rows  # the grid's row count is known after the first read
    while True:
        page = yield from call(tools("google_sheet", "get_sheet_data"), {
            "spreadsheet_id": book["id"], "sheet": SCHEDULE_SHEET,
            "range": f"A{start}:H{min(start + rows, grid + 1) - 1}"})
        [block] = page["valueRanges"]
        values += block["values"]
        grid = page["rowCount"]
        last = int(block["range"].rsplit(":", 1)[1].lstrip("ABCDEFGH"))
        if first_range_only or len(block["values"]) < last - start + 1 or last >= grid:
            return book["id"], values
        start = last + 1


def read_set(_instruction: str, tools: list[dict[str, Any]]) -> Script:
    yield from read_schedule(Tools(tools))


Counts = dict[str, dict[str, int]]  # team -> kind (and "Total") -> back-to-back sets


def back_to_backs(games: Iterable[tuple[date, str, str, str]], count_postponed: bool = False) -> Counts:
    """Per team appearing in `games` ((day, visitor, home, status) rows), its back-to-back sets by
    kind and in total; postponed games do not count (unless `count_postponed`)."""
    played: dict[str, list[tuple[date, str]]] = defaultdict(list)
    teams: set[str] = set()
    for day, visitor, home, status in games:
        teams |= {visitor, home}
        if status != POSTPONED or count_postponed:
            played[visitor].append((day, "A"))
            played[home].append((day, "H"))
    counts = {team: dict.fromkeys(KINDS, 0) for team in teams}
    for team, dates in played.items():
        dates.sort()
        for (first, where), (second, then) in pairwise(dates):
            if second - first == timedelta(days=1):
                counts[team][where + then] += 1
    return {team: {**kinds, "Total": sum(kinds.values())} for team, kinds in counts.items()}


def report(counts: Counts) -> list[dict[str, object]]:
    """The expected table: one row per team, by Team ascending."""
    return [dict(zip(REPORT_HEADERS, (team, *(counts[team][h] for h in REPORT_HEADERS[1:])), strict=True))
            for team in sorted(counts)]


TASK = TaskSpec(
    name="nhl_b2b_analysis",
    version=0,
    summary="count and classify each team's back-to-back games from a long schedule sheet",
    servers={key: key for key in TOOLS},
    scale=Scale(primary="num_games", lo=120, hi=75000),
    instruction=instruction,
    read_set=read_set,
    outputs=(CSV, SHEET),
    tools=tuple((key, tool) for key, names in TOOLS.items() for tool in names),
)
